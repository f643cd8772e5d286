"""EC2 Capacity Block offerings → quotes for a whole block. Pure: offerings in, quotes out.

A block is priced by its upfront fee for `instance_count` instances over `duration_hours`.
A missing, zero or non-USD fee is rejected with its reason: it never becomes a price, and a
capacity-block quote is never keyed as on-demand.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from trncost.model.basis import OfficialOrigin, PriceBasis
from trncost.model.candidate import PurchaseOption
from trncost.model.price import CapacityBlockTerms, PriceKey, PriceQuote, PriceTier, Rejection
from trncost.pricing.plausible import implausible


def _iso(value: Any) -> str | None:
    if isinstance(value, datetime):
        return value.isoformat()
    return None if value is None else str(value)


def _usable(offering: dict[str, Any]) -> tuple[Decimal, float, int] | str:
    """(fee, hours, count) or the reason the offering cannot be priced."""
    if offering.get("CurrencyCode", "USD") != "USD":
        return f"currency {offering.get('CurrencyCode')} is not USD"
    try:
        fee = Decimal(str(offering.get("UpfrontFee")))
    except (InvalidOperation, ValueError):
        return f"upfront fee {offering.get('UpfrontFee')!r} is not a number"
    if not fee.is_finite() or fee <= 0:
        return f"upfront fee {offering.get('UpfrontFee')!r} is missing or not positive"
    hours = offering.get("CapacityBlockDurationHours")
    count = offering.get("InstanceCount")
    if not isinstance(hours, int | float) or hours <= 0 or not isinstance(count, int) or count < 1:
        return "offering lacks a positive duration or instance count"
    per_instance_hour = fee / Decimal(repr(float(hours) * count))
    problem = implausible("Hrs", [per_instance_hour])
    if problem:
        return f"upfront fee {fee} for {count} × {hours:g} h: {problem}"
    return fee, float(hours), count


def capacity_block_quote(
    instance_type: str,
    region: str,
    offerings: Iterable[dict[str, Any]],
    *,
    snapshot_id: str,
    queried_at: str,
    origin: OfficialOrigin | None = None,
) -> tuple[PriceQuote, list[Rejection]]:
    """The cheapest offering per instance-hour as a block quote, or PENDING with why not.
    `origin`: the DescribeCapacityBlockOfferings request (endpoint, time, parameters)."""
    key = PriceKey.for_instance(instance_type, region, PurchaseOption.capacity_block)
    rejected: list[Rejection] = []
    usable: list[tuple[Decimal, dict[str, Any], float, int]] = []
    for offering in offerings:
        if offering.get("InstanceType", instance_type) != instance_type:
            continue
        checked = _usable(offering)
        if isinstance(checked, str):
            rejected.append(
                Rejection(key=str(key), sku=offering.get("CapacityBlockOfferingId"), reason=checked)
            )
            continue
        fee, hours, count = checked
        usable.append((fee / Decimal(repr(hours * count)), offering, hours, count))
    if not usable:
        reason = (
            f"no priced Capacity Block offering for {instance_type} in {region} as of {queried_at}"
        )
        if rejected:
            reason += f"; {len(rejected)} rejected: {rejected[0].reason}"
        return PriceQuote(
            key=key,
            status="pending",
            snapshot_id=snapshot_id,
            source="capacity_block_query",
            basis=PriceBasis.official,
            origin=origin,
            pending_reason=reason,
        ), rejected
    _, best, hours, count = min(usable, key=lambda u: u[0])
    offering_id = str(best.get("CapacityBlockOfferingId") or "unknown-offering")
    quote = PriceQuote(
        key=key,
        status="official",
        unit="block",
        tiers=[
            PriceTier(
                usd=Decimal(str(best["UpfrontFee"])),
                rate_code=offering_id,
                description=f"upfront fee for {count}× {instance_type} for {hours:g} h",
            )
        ],
        sku=offering_id,
        attributes={
            "availabilityZone": str(best.get("AvailabilityZone", "")),
            "startDate": _iso(best.get("StartDate")) or "",
            "endDate": _iso(best.get("EndDate")) or "",
        },
        effective_date=queried_at,
        snapshot_id=snapshot_id,
        source="capacity_block_query",
        basis=PriceBasis.official,
        origin=origin,
        capacity_block=CapacityBlockTerms(
            duration_hours=hours,
            instance_count=count,
            start_date=_iso(best.get("StartDate")),
            queried_at=queried_at,
        ),
    )
    return quote, rejected
