"""Plausible ranges: a quote outside the range for its unit is refused (listed in the
snapshot's `rejected` with the reason) before it can enter a snapshot.

The rule: a unit's range runs from a tenth of the cheapest to ten times the dearest on-demand
rate AWS publishes in that unit among the prices trncost reads, rounded outward. A factor of
ten on each side leaves room for every region, for negotiated discounts and for price changes;
what falls outside is a unit or decimal-point error (a GB price read as a GB-month one, a
misplaced decimal), a forged file, or a free-tier zero — never a price to budget with. It is a
guard against nonsense, not a check that a price is right: a file whose instance rates were
all divided by 1,000 still passes for the instance-hours (the upload rules, not this range,
keep such a file from becoming `official`).

    unit     what trncost reads in it                    published (USD, approx.)  range (USD)
    Hrs      EC2 and SageMaker instance-hours            0.0042 (t4g.nano) … ~400  0.0004 … 5,000
    GB-Mo    EBS gp3, S3 Standard, Logs storage          0.021 (S3) … ~0.19 (gp3)  0.002 … 2
    GB       Logs ingestion, transfer out, inter-region  0.01 … ~0.9               0.001 … 10
    Metrics  CloudWatch custom metrics (metric-month)    0.02 … ~0.5               0.002 … 5
    block    EC2 Capacity Blocks (fee per instance-hour) as Hrs                    as Hrs

A tier at $0 (a free tier, the first 10 metrics) is not checked; a price whose every tier is
$0 is refused on its own ("zero price").
"""

from __future__ import annotations

from decimal import Decimal

RANGES: dict[str, tuple[Decimal, Decimal]] = {
    "Hrs": (Decimal("0.0004"), Decimal("5000")),
    "GB-Mo": (Decimal("0.002"), Decimal("2")),
    "GB": (Decimal("0.001"), Decimal("10")),
    "Metrics": (Decimal("0.002"), Decimal("5")),
}


def implausible(unit: str, rates: list[Decimal]) -> str | None:
    """Why the positive `rates` (USD per `unit`) are outside the unit's plausible range; None
    when they are inside, or the unit has no range."""
    bounds = RANGES.get(unit)
    if bounds is None:
        return None
    low, high = bounds
    for rate in rates:
        if rate > 0 and not low <= rate <= high:
            return (
                f"${rate.normalize():f} per {unit} is outside the plausible range "
                f"${low.normalize():f}–${high.normalize():f} per {unit} (a tenth of the cheapest "
                "to ten times the dearest published on-demand rate in that unit)"
            )
    return None
