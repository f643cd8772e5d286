"""EC2 Capacity Block offerings → quotes for a whole block. Pure: offerings in, quotes out.

A block is priced by its upfront fee for `instance_count` instances over `duration_hours`
(hours plus minutes, one instance type: pricing/offerings.py reads each offering).
A missing, zero or non-USD fee is rejected with its reason: it never becomes a price, and a
capacity-block quote is never keyed as on-demand.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from trncost.model.basis import OfficialOrigin, PriceBasis
from trncost.model.candidate import PurchaseOption
from trncost.model.capacity import CapacityOffering
from trncost.model.price import CapacityBlockTerms, PriceKey, PriceQuote, PriceTier, Rejection
from trncost.pricing.offerings import ec2_offering


def _usable(offering: dict[str, Any], instance_type: str) -> CapacityOffering | str:
    """The offering read (pricing/offerings.py: minutes, segments, fee checks), or why it
    cannot be priced."""
    read = ec2_offering(
        offering, instance_type, queried_at="", basis=PriceBasis.official, origin=None
    )
    return read if isinstance(read, CapacityOffering) else read.reason


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
    usable: list[tuple[Decimal, CapacityOffering, dict[str, Any], float, int]] = []
    for offering in offerings:
        checked = _usable(offering, instance_type)
        if isinstance(checked, str):
            rejected.append(
                Rejection(key=str(key), sku=offering.get("CapacityBlockOfferingId"), reason=checked)
            )
            continue
        hours, count = checked.duration_hours, checked.instance_count
        usable.append((checked.per_instance_hour_usd, checked, offering, hours, count))
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
    _, read, best, hours, count = min(usable, key=lambda u: u[0])
    offering_id = read.offering_id
    quote = PriceQuote(
        key=key,
        status="official",
        unit="block",
        tiers=[
            PriceTier(
                usd=read.upfront_fee_usd,
                rate_code=offering_id,
                description=f"upfront fee for {count}× {instance_type} for {hours:g} h",
            )
        ],
        sku=offering_id,
        attributes={
            "availabilityZone": str(best.get("AvailabilityZone", "")),
            "startDate": read.start or "",
            "endDate": read.end or "",
        },
        effective_date=queried_at,
        snapshot_id=snapshot_id,
        source="capacity_block_query",
        basis=PriceBasis.official,
        origin=origin,
        capacity_block=CapacityBlockTerms(
            duration_hours=hours,
            instance_count=count,
            start_date=read.start,
            queried_at=queried_at,
        ),
    )
    return quote, rejected
