"""Decimal arithmetic for money and Price List tiers. No float ever touches an amount."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal

from trncost.errors import DomainError
from trncost.model.price import PriceTier

MICRO = Decimal("0.000001")
HOURS_PER_MONTH = Decimal(730)  # AWS prices GB-months and metric-months on 730 hours
EC2_MINIMUM_BILLED_SECONDS = 60


def dec(x: float | int | Decimal) -> Decimal:
    """A float quantity as the Decimal of its shortest repr (exact for ints)."""
    if isinstance(x, Decimal):
        return x
    if isinstance(x, int):
        return Decimal(x)
    if not math.isfinite(x):
        raise DomainError(f"quantity must be finite, got {x!r}")
    return Decimal(repr(x))


def usd(amount: Decimal) -> Decimal:
    """Amounts are kept to the micro-dollar; rounding for display happens in the views."""
    return amount.quantize(MICRO, rounding=ROUND_HALF_EVEN)


def tiered_amount(quantity: Decimal, tiers: Sequence[PriceTier]) -> Decimal:
    """Charge `quantity` through contiguous tiers [begin, end) at each tier's rate."""
    total = Decimal(0)
    for tier in tiers:
        if quantity <= tier.begin:
            break
        upper = quantity if tier.end is None else min(quantity, tier.end)
        total += (upper - tier.begin) * tier.usd
    return total


def ec2_billed_seconds(held_seconds: float) -> int:
    """EC2 per-second billing with its 60-second minimum, per instance."""
    return max(EC2_MINIMUM_BILLED_SECONDS, math.ceil(round(held_seconds, 6)))


def sagemaker_billed_seconds(held_seconds: float) -> int:
    """SageMaker bills whole seconds of training time."""
    return max(1, math.ceil(round(held_seconds, 6)))
