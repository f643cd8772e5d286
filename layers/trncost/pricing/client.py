"""boto3 adapters for the AWS Price List Query API, EC2 Capacity Block offerings and SageMaker
Training Plan offerings.

Clients are created lazily by `trncost.aws` (standard retries: throttling and 5xx are retried
there, with exponential backoff and full jitter) and can be injected (tests pass clients whose
HTTP answers they stub). `calls` counts the API calls made (pages), for the prices metrics.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from trncost import aws

# The regions whose endpoint (api.pricing.<region>.amazonaws.com) serves the Price List Query
# API; any of them prices every region. The one list: the client and the stage config check
# against it, and a unit test holds it to botocore's endpoint data (read there, not here: a
# botocore session's endpoint data costs a cold start ~60 ms).
PRICE_LIST_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")


class PriceListClient(aws.RegionalAdapter):
    """`pricing:GetProducts` with filters and pagination, on a Price List endpoint region."""

    service = "pricing"

    def __init__(self, region: str = "us-east-1", client: Any = None) -> None:
        if region not in PRICE_LIST_REGIONS:
            raise ValueError(
                f"the Price List API is served from {', '.join(PRICE_LIST_REGIONS)}, not {region}"
            )
        super().__init__(region, client)

    def get_products(self, service_code: str, filters: list[dict[str, str]]) -> Iterator[str]:
        """Every PriceList item (a JSON string) matching the filters, page by page."""
        pages = self.client.get_paginator("get_products").paginate(
            ServiceCode=service_code, Filters=filters, FormatVersion="aws_v1", MaxResults=100
        )
        for page in pages:
            self.calls += 1
            yield from page.get("PriceList", [])


class CapacityBlockClient(aws.RegionalAdapter):
    """`ec2:DescribeCapacityBlockOfferings` in one region."""

    service = "ec2"

    def offerings(
        self,
        instance_type: str,
        instance_count: int,
        duration_hours: int,
        start: datetime,
        end: datetime,
    ) -> Iterator[dict[str, Any]]:
        pages = self.client.get_paginator("describe_capacity_block_offerings").paginate(
            InstanceType=instance_type,
            InstanceCount=instance_count,
            CapacityDurationHours=duration_hours,
            StartDateRange=start,
            EndDateRange=end,
        )
        for page in pages:
            self.calls += 1
            yield from page.get("CapacityBlockOfferings", [])


class TrainingPlanClient(aws.RegionalAdapter):
    """`sagemaker:SearchTrainingPlanOfferings` in one region (one call: the operation has no
    pagination), for SageMaker training jobs."""

    service = "sagemaker"

    def offerings(
        self,
        instance_type: str,
        instance_count: int,
        duration_hours: int,
        start: datetime,
        end: datetime,
    ) -> list[dict[str, Any]]:
        """The plan offerings for `instance_type` (an `ml.` type) × `instance_count` over
        `duration_hours`, starting after `start` and ending before `end`."""
        self.calls += 1
        answer = self.client.search_training_plan_offerings(
            InstanceType=instance_type,
            InstanceCount=instance_count,
            DurationHours=duration_hours,
            StartTimeAfter=start,
            EndTimeBefore=end,
            TargetResources=["training-job"],
        )
        return list(answer.get("TrainingPlanOfferings", []))
