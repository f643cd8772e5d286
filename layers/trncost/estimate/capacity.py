"""Capacity you can book: EC2 Capacity Blocks and SageMaker Training Plans weighed against the
run's held-time draws, beside on-demand.

The run holds its n instances for H hours, H drawn from the estimate's own range (the same
Monte Carlo: estimate/uncertainty.py). A block is requested for the P50 and the P90 of H, each
rounded up to what can be booked::

    block hours = ⌈H / 24⌉ × 24           up to 14 days
                = ⌈H / 168⌉ × 168         up to 182 days (none beyond)

(EC2 DescribeCapacityBlockOfferings: "1-day increments up to 14 days, and 7-day increments up to
182 days"). For each offering (fee F for n instances over D hours; rate r = F / (n·D)):

    usable        U = D − 0.5                          EC2 ends instances in the last 30 minutes
    P(inside)     = P(H ≤ U)                           over the draws
    overrun       O = max(0, H − U)
    extend        ⌈O / 24⌉ × 24 × n × r                whole days at the block's own rate
    on demand     O × n × on-demand rate               finishing outside the block
    with block    F + E[min(extend, on demand)]        (extend alone while on-demand is PENDING)
    on-demand     E[H] × n × on-demand rate
    saving        on-demand − with block               (> 0: the block is cheaper)

No extension can be quoted before a block is bought (DescribeCapacityBlockExtensionOfferings
needs its reservation), so extending is priced at the block's own rate and says so. A Training
Plan is weighed the same way (SageMaker documents no end-of-plan margin: EC2's is assumed).

References
----------
botocore 1.44 EC2 and SageMaker service models (DescribeCapacityBlockOfferings,
SearchTrainingPlanOfferings, DescribeCapacityBlockExtensionOfferings); AWS EC2 User Guide,
"Capacity Blocks for ML" (durations, start at 11:30 UTC, instances ended in the last 30
minutes); DESIGN.md, "The cost model" (Capacity Blocks: upfront fee for whole blocks) and
principle 3 (official prices only, each with its basis).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal

import numpy as np

from trncost.errors import DomainError
from trncost.estimate.money import dec, usd
from trncost.estimate.vector import Array
from trncost.model.analysis import Percentiles
from trncost.model.basis import PriceBasis
from trncost.model.candidate import Candidate
from trncost.model.capacity import (
    BlockQuote,
    CapacityOffering,
    CapacityPlan,
    CapacityRejection,
    DurationQuotes,
    OnDemandBeside,
)

DAY_H, WEEK_H = 24, 168
MAX_DAYS_BY_DAY, MAX_BLOCK_H = 14, 182 * 24
END_MARGIN_H = 0.5  # EC2 ends a block's instances in its last 30 minutes
MAX_BLOCK_INSTANCES = 64  # per Capacity Block (256 across blocks)
METHOD = (
    "the run's held hours drawn from the estimate's own Monte Carlo; a block requested for their "
    "P50 and P90, rounded up to whole days (to 14 days) or weeks (to 182); each offering's "
    "P(inside) = P(held ≤ duration − 30 min), an overrun finished by extending in whole days at "
    "the block's rate or on demand, whichever costs less; beside the on-demand instance cost"
)


def block_hours(held_h: float) -> int | None:
    """The Capacity Block duration that covers `held_h`::

        ⌈h / 24⌉ × 24 (≤ 14 days), else ⌈h / 168⌉ × 168 (≤ 182 days)

    Parameters
    ----------
    held_h : float
        Hours the run holds its instances [h].

    Returns
    -------
    int or None
        [h]; None past 182 days (several blocks are needed).
    """
    need = held_h + END_MARGIN_H
    if need <= MAX_DAYS_BY_DAY * DAY_H:
        return max(DAY_H, math.ceil(need / DAY_H) * DAY_H)
    weeks = math.ceil(need / WEEK_H) * WEEK_H
    return weeks if weeks <= MAX_BLOCK_H else None


def held_percentiles(held: Array) -> dict[str, float]:
    """P10, P50 and P90 of the held hours of the draws that finish (inverted CDF: the ⌈p·N⌉-th
    smallest, as the range's).

    Parameters
    ----------
    held : Array
        Held hours per draw, +inf where the plan cannot finish [h].

    Returns
    -------
    dict[str, float]
        "P10", "P50", "P90" → [h].

    Raises
    ------
    DomainError
        No draw finishes.
    """
    finite = np.sort(held[np.isfinite(held)])
    if not finite.size:
        raise DomainError("no draw of the plan finishes: no block can hold it")
    k = finite.size
    return {
        label: float(finite[max(0, math.ceil(p * k) - 1)])
        for label, p in (("P10", 0.1), ("P50", 0.5), ("P90", 0.9))
    }


def _money(x: float) -> Decimal:
    return usd(dec(round(x, 6)))


def weigh(
    offering: CapacityOffering,
    held: Array,
    instances: int,
    on_demand: Decimal | None,
    *,
    applies: bool,
) -> BlockQuote:
    """One offering against the held-time draws (the module docstring gives each formula).

    Parameters
    ----------
    offering : CapacityOffering
        Its fee [USD], duration [h] and instances [instances].
    held : Array
        The run's held hours, one per draw that finishes [h].
    instances : int
        The candidate's instances n [instances].
    on_demand : Decimal or None
        The on-demand rate [USD/instance-hour]; None while PENDING.
    applies : bool
        Whether it runs on the candidate's platform.

    Returns
    -------
    BlockQuote
        P(inside) [unitless], the mean overrun [h], the expected extension, on-demand finish
        and instance cost [USD], the saving against on-demand [USD].
    """
    usable = max(offering.duration_hours - END_MARGIN_H, 0.0)
    over = np.maximum(held - usable, 0.0)
    rate = float(offering.per_instance_hour_usd)
    extend = np.ceil(over / DAY_H) * DAY_H * instances * rate
    finish = None if on_demand is None else over * instances * float(on_demand)
    cheaper = extend if finish is None else np.minimum(extend, finish)
    with_block = float(offering.upfront_fee_usd) + float(np.mean(cheaper))
    saving = (
        None
        if on_demand is None
        else _money(float(np.mean(held)) * instances * float(on_demand) - with_block)
    )
    return BlockQuote(
        offering=offering,
        applies=applies,
        usable_hours=usable,
        p_finish_inside=float(np.mean(held <= usable)),
        expected_overrun_h=float(np.mean(over)),
        expected_extension_usd=_money(float(np.mean(extend))),
        expected_on_demand_finish_usd=None if finish is None else _money(float(np.mean(finish))),
        expected_instances_usd=_money(with_block),
        saving_vs_on_demand_usd=saving,
    )


def capacity_plan(
    candidate: Candidate,
    held: Array,
    offerings: Mapping[str, Sequence[CapacityOffering]],
    none_offered: Mapping[str, Sequence[str]],
    *,
    on_demand_key: str,
    on_demand: Decimal | None,
    on_demand_basis: PriceBasis | None,
    queried_at: str,
    rejected: Sequence[CapacityRejection] = (),
    estimate_id: str | None = None,
    version: int | None = None,
) -> CapacityPlan:
    """The capacity plan of one estimate: for its P50 and P90 held time, every offering
    weighed (`weigh`), beside on-demand.

    Parameters
    ----------
    candidate : Candidate
        What runs (instance type, count, platform).
    held : Array
        The held hours per draw, +inf where the plan cannot finish [h].
    offerings : Mapping[str, Sequence[CapacityOffering]]
        "P50" / "P90" → the offerings AWS answered for that duration.
    none_offered : Mapping[str, Sequence[str]]
        "P50" / "P90" → per source, why nothing usable came back.
    on_demand_key : str
        The on-demand instance price key.
    on_demand : Decimal or None
        Its rate [USD/instance-hour]; None while PENDING.
    on_demand_basis : PriceBasis or None
        Its basis.
    queried_at : str
        When the offerings were asked for (UTC, ISO 8601).
    rejected : Sequence[CapacityRejection]
        Offerings AWS answered that are not usable quotes, with why.
    estimate_id : str or None
        The stored estimate it is for.
    version : int or None
        Its version [unitless].

    Returns
    -------
    CapacityPlan
        Held-hour percentiles [h], the on-demand expected instance cost [USD], per duration its
        quotes (each with P(inside) [unitless] and expected costs [USD]), the notes.
    """
    n = candidate.instance_count
    finite = held[np.isfinite(held)]
    pct = held_percentiles(held)
    p10, p50, p90 = pct["P10"], pct["P50"], pct["P90"]
    expected_od = (
        None if on_demand is None else _money(float(np.mean(finite)) * n * float(on_demand))
    )
    runs_on = "sagemaker_training_plan" if candidate.on_sagemaker else "ec2_capacity_block"
    durations = []
    for label, h in (("P50", p50), ("P90", p90)):
        quotes = [
            weigh(o, finite, n, on_demand, applies=o.source == runs_on)
            for o in offerings.get(label, ())
        ]
        quotes.sort(key=lambda q: (not q.applies, q.expected_instances_usd))
        durations.append(
            DurationQuotes(
                percentile=label,
                held_h=h,
                block_hours=block_hours(h),
                quotes=quotes,
                none_offered=list(none_offered.get(label, ())),
            )
        )
    notes = [
        "each offering is an official priced input only when trncost asked AWS for it "
        "(basis official); it holds until its start at most, and AWS re-prices blocks with "
        "supply and demand",
        "extending is priced at the block's own instance-hour rate in whole days: AWS quotes an "
        "extension only for a block already bought",
    ]
    if on_demand is None:
        notes.append(
            f"the on-demand price is PENDING ({on_demand_key}): no saving against on-demand is "
            "stated, and an overrun is priced by extending"
        )
    if n > MAX_BLOCK_INSTANCES:
        notes.append(
            f"{n} instances is more than one Capacity Block holds ({MAX_BLOCK_INSTANCES}): book "
            "several"
        )
    return CapacityPlan(
        estimate_id=estimate_id,
        version=version,
        candidate=candidate,
        instances=n,
        held_h=Percentiles(p10=p10, p50=p50, p90=p90, unit="h"),
        on_demand=OnDemandBeside(
            price_key=on_demand_key,
            rate_usd=on_demand,
            basis=on_demand_basis,
            expected_instances_usd=expected_od,
        ),
        durations=durations,
        rejected=list(rejected),
        queried_at=queried_at,
        draws=int(finite.size),
        method=METHOD,
        notes=notes,
    )
