"""Decimal arithmetic for money and Price List tiers. No float ever touches an amount.

References
----------
DESIGN.md, "The cost model" (money is Decimal end to end; round only for display; EC2
per-second billing with a 60 s minimum, SageMaker billable seconds); the Price List API's
price dimensions ([beginRange, endRange) tiers).
"""

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
    """A quantity `x` as the Decimal of its shortest repr (exact for ints and Decimals);
    DomainError for nan or ±inf.

    Parameters
    ----------
    x : float, int or Decimal
        A quantity [unit of the figure].

    Returns
    -------
    Decimal
        The same quantity [unit of the figure].
    """
    if isinstance(x, Decimal):
        return x
    if isinstance(x, int):
        return Decimal(x)
    if not math.isfinite(x):
        raise DomainError(f"quantity must be finite, got {x!r}")
    return Decimal(repr(x))


def usd(amount: Decimal) -> Decimal:
    """An amount kept to the micro-dollar (half-even); rounding for display happens in the
    views.

    Parameters
    ----------
    amount : Decimal
        [USD]

    Returns
    -------
    Decimal
        [USD], to 0.000001.
    """
    return amount.quantize(MICRO, rounding=ROUND_HALF_EVEN)


def tiered_amount(quantity: Decimal, tiers: Sequence[PriceTier]) -> Decimal:
    """Charge a quantity through contiguous Price List tiers::

        Σ over tiers with begin < quantity: (min(quantity, end) − begin) × rate

    Parameters
    ----------
    quantity : Decimal
        Usage in the tiers' unit [unit of the price] (GB, GB-months, metrics, hours).
    tiers : Sequence[PriceTier]
        [begin, end) ranges from 0, ascending, each with its rate in USD per unit (end None:
        no upper bound).

    Returns
    -------
    Decimal
        The amount [USD], unrounded.

    References
    ----------
    The Price List API's price dimensions (beginRange, endRange, pricePerUnit), as
    trncost.pricing parses them; DESIGN.md, "The cost model" (using the Price List tiers).
    """
    total = Decimal(0)
    for tier in tiers:
        if quantity <= tier.begin:
            break
        upper = quantity if tier.end is None else min(quantity, tier.end)
        total += (upper - tier.begin) * tier.usd
    return total


def ec2_billed_seconds(held_seconds: float) -> int:
    """EC2 per-second billing with its 60-second minimum, per instance::

        max(60, ceil(held seconds))      (held seconds rounded to 6 decimals first)

    Parameters
    ----------
    held_seconds : float
        The instance's held time [s].

    Returns
    -------
    int
        Billed seconds [s].

    References
    ----------
    https://aws.amazon.com/ec2/pricing/on-demand/ (per-second billing, 60-second minimum).
    """
    return max(EC2_MINIMUM_BILLED_SECONDS, math.ceil(round(held_seconds, 6)))


def sagemaker_billed_seconds(held_seconds: float) -> int:
    """SageMaker bills whole seconds of training time::

        max(1, ceil(held seconds))       (held seconds rounded to 6 decimals first)

    Parameters
    ----------
    held_seconds : float
        The instance's held time [s].

    Returns
    -------
    int
        Billed seconds [s].

    References
    ----------
    `BillableTimeInSeconds`, DescribeTrainingJob (SageMaker API reference):
    https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingJob.html
    """
    return max(1, math.ceil(round(held_seconds, 6)))
