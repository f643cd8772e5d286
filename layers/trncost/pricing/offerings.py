"""Capacity offerings as AWS answers them, read into `CapacityOffering`s. Pure: a response's
items in, offerings and rejections out.

EC2 `DescribeCapacityBlockOfferings` (botocore 1.44 `CapacityBlockOffering`): the fee is for
the whole block, `UpfrontFee` a string; the duration is `CapacityBlockDurationHours` PLUS
`CapacityBlockDurationMinutes` (a block off the 11:30 UTC grid has both); an offering may be
made of up to ten `CapacityBlockOfferingSegments`, each with its own instance type and fee (one
that mixes another type is not a quote for this one); an UltraServer offering names its
`UltraserverType` and still counts instances.

SageMaker `SearchTrainingPlanOfferings` (`TrainingPlanOffering`): the fee is the plan's, its
duration `DurationHours` + `DurationMinutes`, and it may join up to five
`ReservedCapacityOfferings` (at other times or zones): its instance-hours are Σ count × hours of
them.

A missing, zero, non-USD or implausible fee is a rejection with its reason, never a price.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from trncost.model.basis import PriceBasis, PriceOrigin
from trncost.model.capacity import CapacityOffering, CapacityRejection, CapacitySource
from trncost.pricing.plausible import implausible

Read = CapacityOffering | CapacityRejection


def iso(value: Any) -> str | None:
    """A response time (datetime from boto3, or a string from a file) as ISO 8601."""
    if isinstance(value, datetime):
        return value.isoformat()
    return None if value is None else str(value)


def _fee(raw: dict[str, Any]) -> Decimal | str:
    if raw.get("CurrencyCode", "USD") != "USD":
        return f"currency {raw.get('CurrencyCode')} is not USD"
    try:
        fee = Decimal(str(raw.get("UpfrontFee")))
    except (InvalidOperation, ValueError):
        return f"upfront fee {raw.get('UpfrontFee')!r} is not a number"
    if not fee.is_finite() or fee <= 0:
        return f"upfront fee {raw.get('UpfrontFee')!r} is missing or not positive"
    return fee


def _hours(raw: dict[str, Any], hours_key: str, minutes_key: str) -> float | None:
    hours, minutes = raw.get(hours_key), raw.get(minutes_key) or 0
    if not isinstance(hours, int | float) or not isinstance(minutes, int | float):
        return None
    total = float(hours) + float(minutes) / 60
    return total if total > 0 else None


def _priced(
    source: CapacitySource,
    offering_id: str,
    fee: Decimal,
    instance_hours: float,
    fields: dict[str, Any],
) -> Read:
    per = fee / Decimal(repr(instance_hours))
    problem = implausible("Hrs", [per])
    if problem:
        return CapacityRejection(
            source=source,
            offering_id=offering_id,
            reason=f"upfront fee {fee} for {instance_hours:g} instance-hours: {problem}",
        )
    return CapacityOffering(
        source=source,
        offering_id=offering_id,
        upfront_fee_usd=fee,
        per_instance_hour_usd=per.quantize(Decimal("0.000001")),
        **fields,
    )


def ec2_offering(
    raw: dict[str, Any],
    instance_type: str,
    *,
    queried_at: str,
    basis: PriceBasis,
    origin: PriceOrigin | None,
) -> Read:
    """One `CapacityBlockOffering` for `instance_type`, or why it is not a usable quote."""
    source: CapacitySource = "ec2_capacity_block"
    oid = str(raw.get("CapacityBlockOfferingId") or "")
    segments = raw.get("CapacityBlockOfferingSegments") or []
    types = {raw.get("InstanceType")} | {s.get("InstanceType") for s in segments}
    types.discard(None)
    if types and types != {instance_type}:
        return CapacityRejection(
            source=source,
            offering_id=oid or None,
            reason=f"offers {', '.join(sorted(str(t) for t in types))}, not only {instance_type}",
        )
    fee: Decimal | str
    if raw.get("UpfrontFee") is None and segments:
        parts = [_fee(s) for s in segments]
        bad = next((p for p in parts if isinstance(p, str)), None)
        fee = (
            bad
            if bad is not None
            else sum((p for p in parts if isinstance(p, Decimal)), Decimal(0))
        )
    else:
        fee = _fee(raw)
    hours = _hours(raw, "CapacityBlockDurationHours", "CapacityBlockDurationMinutes")
    count = raw.get("InstanceCount")
    if isinstance(fee, str) or hours is None or not isinstance(count, int) or count < 1:
        why = fee if isinstance(fee, str) else "no positive duration or instance count"
        return CapacityRejection(source=source, offering_id=oid or None, reason=why)
    start = iso(raw.get("StartDate"))
    return _priced(
        source,
        oid or "unknown-offering",
        fee,
        hours * count,
        {
            "instance_type": instance_type,
            "instance_count": count,
            "availability_zone": raw.get("AvailabilityZone"),
            "start": start,
            "end": iso(raw.get("EndDate")),
            "duration_hours": hours,
            "parts": max(1, len(segments)),
            "ultraserver_type": raw.get("UltraserverType"),
            "basis": basis,
            "origin": origin,
            "queried_at": queried_at,
            "expires_at": start,
        },
    )


def plan_offering(
    raw: dict[str, Any],
    instance_type: str,
    *,
    queried_at: str,
    basis: PriceBasis,
    origin: PriceOrigin | None,
) -> Read:
    """One `TrainingPlanOffering` for `instance_type` (an `ml.` type), or why it is not a
    usable quote."""
    source: CapacitySource = "sagemaker_training_plan"
    oid = str(raw.get("TrainingPlanOfferingId") or "")
    parts = raw.get("ReservedCapacityOfferings") or []
    types = {p.get("InstanceType") for p in parts} - {None}
    if types and types != {instance_type}:
        return CapacityRejection(
            source=source,
            offering_id=oid or None,
            reason=f"reserves {', '.join(sorted(str(t) for t in types))}, not only {instance_type}",
        )
    fee = _fee(raw)
    hours = _hours(raw, "DurationHours", "DurationMinutes")
    if isinstance(fee, str) or hours is None or not parts:
        why = fee if isinstance(fee, str) else "no positive duration or reserved capacity"
        return CapacityRejection(source=source, offering_id=oid or None, reason=why)
    counts = [p.get("InstanceCount") for p in parts]
    if not all(isinstance(c, int) and c >= 1 for c in counts):
        return CapacityRejection(
            source=source, offering_id=oid or None, reason="a reserved capacity has no instances"
        )
    instance_hours = sum(
        int(p["InstanceCount"])
        * (_hours(p, "DurationHours", "DurationMinutes") or hours / len(parts))
        for p in parts
    )
    starts = sorted(s for p in parts if (s := iso(p.get("StartTime"))))
    ends = sorted(e for p in parts if (e := iso(p.get("EndTime"))))
    zones = sorted({str(p["AvailabilityZone"]) for p in parts if p.get("AvailabilityZone")})
    return _priced(
        source,
        oid or "unknown-offering",
        fee,
        instance_hours,
        {
            "instance_type": instance_type,
            "instance_count": min(int(c) for c in counts if isinstance(c, int)),
            "availability_zone": ", ".join(zones) or None,
            "start": starts[0] if starts else None,
            "end": ends[-1] if ends else None,
            "duration_hours": hours,
            "parts": len(parts),
            "ultraserver_type": next(
                (p.get("UltraServerType") for p in parts if p.get("UltraServerType")), None
            ),
            "basis": basis,
            "origin": origin,
            "queried_at": queried_at,
            "expires_at": starts[0] if starts else None,
        },
    )


def read_offerings(
    source: CapacitySource,
    items: Iterable[dict[str, Any]],
    instance_type: str,
    *,
    queried_at: str,
    basis: PriceBasis,
    origin: PriceOrigin | None = None,
) -> tuple[list[CapacityOffering], list[CapacityRejection]]:
    """Every item of one answer read as an offering, or a rejection saying why not."""
    read = ec2_offering if source == "ec2_capacity_block" else plan_offering
    found: list[CapacityOffering] = []
    rejected: list[CapacityRejection] = []
    for raw in items:
        one = read(raw, instance_type, queried_at=queried_at, basis=basis, origin=origin)
        if isinstance(one, CapacityOffering):
            found.append(one)
        else:
            rejected.append(one)
    return found, rejected
