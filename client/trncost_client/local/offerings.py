"""Constructed Capacity Block and Training Plan offerings for the local runtime and
`trncost capacity --example` (moto has neither operation): an offering in botocore's model shape
for the asked instance type, count and duration, at the example rate of local/data/
capacity_offerings.json — basis `example`, never official. A type with no example rate is offered
nothing."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from trncost.model.capacity import CapacitySource

EXAMPLE_FILE = Path(__file__).parent / "data" / "capacity_offerings.json"
BLOCK_START_UTC = (11, 30)  # Capacity Blocks start and end at 11:30 UTC


@cache
def _rates() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE_FILE.read_text())
    return data


def _next_start(after: datetime) -> datetime:
    """The first 11:30 UTC at least a day after `after`."""
    day = (after + timedelta(days=1)).astimezone(UTC)
    start = day.replace(hour=BLOCK_START_UTC[0], minute=BLOCK_START_UTC[1], second=0, microsecond=0)
    return start if start >= day else start + timedelta(days=1)


class ExampleOfferings:
    """One source's constructed offerings in one region (the OfferingClient shape)."""

    endpoint = "example (constructed)"

    def __init__(self, source: CapacitySource, region: str) -> None:
        self.source, self.region, self.calls = source, region, 0

    def offerings(
        self,
        instance_type: str,
        instance_count: int,
        duration_hours: int,
        start: datetime,
        end: datetime,
    ) -> list[dict[str, Any]]:
        self.calls += 1
        rate = _rates()[self.source].get(instance_type)
        if rate is None or self.region not in rate["regions"]:
            return []
        begin = _next_start(start)
        finish = begin + timedelta(hours=duration_hours)
        if finish > end:
            return []
        fee = str(Decimal(rate["usd_per_instance_hour"]) * instance_count * duration_hours)
        tag = hashlib.sha256(
            f"{instance_type}/{instance_count}/{duration_hours}/{begin}".encode()
        ).hexdigest()[:17]
        zone = f"{self.region}a"
        if self.source == "ec2_capacity_block":
            return [
                {
                    "CapacityBlockOfferingId": f"cbr-{tag}",
                    "InstanceType": instance_type,
                    "AvailabilityZone": zone,
                    "InstanceCount": instance_count,
                    "StartDate": begin,
                    "EndDate": finish,
                    "CapacityBlockDurationHours": duration_hours,
                    "CapacityBlockDurationMinutes": 0,
                    "UpfrontFee": fee,
                    "CurrencyCode": "USD",
                    "Tenancy": "default",
                    "ZoneType": "availability-zone",
                }
            ]
        return [
            {
                "TrainingPlanOfferingId": f"tpo-{tag}",
                "TargetResources": ["training-job"],
                "RequestedStartTimeAfter": start,
                "RequestedEndTimeBefore": end,
                "DurationHours": duration_hours,
                "DurationMinutes": 0,
                "UpfrontFee": fee,
                "CurrencyCode": "USD",
                "ReservedCapacityOfferings": [
                    {
                        "ReservedCapacityType": "Instance",
                        "InstanceType": instance_type,
                        "InstanceCount": instance_count,
                        "AvailabilityZone": zone,
                        "DurationHours": duration_hours,
                        "DurationMinutes": 0,
                        "StartTime": begin,
                        "EndTime": finish,
                    }
                ],
            }
        ]


def example_capacity(estimates: Any, store: Any) -> Any:
    """A CapacityService over the constructed offerings (the local runtime's, the CLI's)."""
    from trncost.services.capacity import CapacityService

    return CapacityService(
        estimates,
        store,
        lambda region: ExampleOfferings("ec2_capacity_block", region),
        lambda region: ExampleOfferings("sagemaker_training_plan", region),
        example_file=f"trncost_client/local/data/{EXAMPLE_FILE.name}",
    )
