"""Trial spend and the budget cap. Pure: Decimal money, no clock, no I/O.

Spend of a plan = Σ over its runs of billed instance-seconds × the hourly price / 3600:

- a run with a trial record: its `billed_instance_seconds` (SageMaker BillableTimeInSeconds ×
  InstanceCount), else instance count × the record's end-to-end wall seconds, at least 60 s
  per instance (EC2 per-second billing has a 60 s minimum), said in the lines;
- a run launched without a record yet (running, or lost): its worst case, instance count ×
  the plan's max run time, because it may still be billing.

The next launch is allowed only if spend + its worst case (instance count × max run time ×
price) stays within the cap. A run is priced in its own region: its rate is the one for its
instance type in its candidate's region (`rate_key`), never another region's rate for the same
type. A price comes from the latest official snapshot; a PENDING price falls back to the plan's
`assumed_hourly_usd` (a user_assumption, said so); with neither the cap cannot be enforced and
the launch is refused, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

MIN_BILLED_S = 60
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Rate:
    usd_per_hour: Decimal | None
    # "official_price <snapshot>/<sku>" (or "example price …", "saved_file price …": the
    # quote's own basis), "user_assumption", or why there is none
    basis: str


@dataclass(frozen=True)
class RunCost:
    trial_id: str
    instance_type: str
    instance_count: int
    recorded: bool
    billed_instance_seconds: float | None = None
    wall_seconds: float | None = None
    max_run_seconds: float = 0.0
    region: str | None = None  # where it runs: it is priced there

    @property
    def priced_as(self) -> str:
        """Its key in the rates (`rate_key`)."""
        return rate_key(self.instance_type, self.region)


def rate_key(instance_type: str, region: str | None = None) -> str:
    """The key of a rate: an instance type in a region ("trn2.48xlarge@us-east-2"), or the
    instance type alone where no region is given."""
    return f"{instance_type}@{region}" if region else instance_type


@dataclass(frozen=True)
class Spend:
    usd: Decimal
    lines: list[str] = field(default_factory=list)
    unpriced: list[str] = field(default_factory=list)  # rate keys (type@region) without a rate


@dataclass(frozen=True)
class BudgetCheck:
    ok: bool
    spent_usd: Decimal
    next_max_usd: Decimal | None
    cap_usd: Decimal
    reasons: list[str]


def _seconds(run: RunCost) -> tuple[float, str]:
    if run.recorded and run.billed_instance_seconds is not None:
        return run.billed_instance_seconds, "billed"
    if run.recorded and run.wall_seconds is not None:
        secs = run.instance_count * max(run.wall_seconds, MIN_BILLED_S)
        return secs, "estimated from wall time"
    return run.instance_count * run.max_run_seconds, "worst case (no record yet)"


def cost(seconds: float, rate: Decimal) -> Decimal:
    return Decimal(str(seconds)) * rate / Decimal(3600)


def spend(runs: Sequence[RunCost], rates: dict[str, Rate]) -> Spend:
    total = Decimal(0)
    lines: list[str] = []
    unpriced: list[str] = []
    for run in runs:
        rate = rates.get(run.priced_as)
        seconds, how = _seconds(run)
        if rate is None or rate.usd_per_hour is None:
            unpriced.append(run.priced_as)
            lines.append(f"{run.trial_id}: {seconds:g} instance-s ({how}), no price")
            continue
        usd = cost(seconds, rate.usd_per_hour)
        total += usd
        lines.append(
            f"{run.trial_id}: {seconds:g} instance-s ({how}) × {rate.usd_per_hour} USD/h "
            f"({rate.basis}) = {usd.quantize(CENT)} USD"
        )
    return Spend(total, lines, sorted(set(unpriced)))


def check_next(
    spent: Spend,
    next_run: RunCost,
    rate: Rate | None,
    cap_usd: Decimal,
) -> BudgetCheck:
    """May the next run be launched without possibly exceeding the cap?"""
    reasons: list[str] = []
    if spent.unpriced:
        reasons.append(
            f"spend so far cannot be priced for {', '.join(spent.unpriced)}: "
            "the cap cannot be enforced"
        )
    if rate is None or rate.usd_per_hour is None:
        why = rate.basis if rate else "no price"
        reasons.append(f"{next_run.priced_as}: {why}; the cap cannot be enforced")
        return BudgetCheck(False, spent.usd, None, cap_usd, reasons)
    worst = cost(next_run.instance_count * next_run.max_run_seconds, rate.usd_per_hour)
    if spent.usd + worst > cap_usd:
        reasons.append(
            f"{next_run.trial_id}: spent {spent.usd.quantize(CENT)} USD + up to "
            f"{worst.quantize(CENT)} USD for the next run ({next_run.instance_count} × "
            f"{next_run.instance_type} × {next_run.max_run_seconds / 3600:g} h at "
            f"{rate.usd_per_hour} USD/h, {rate.basis}) would exceed the cap {cap_usd} USD"
        )
    return BudgetCheck(not reasons, spent.usd, worst, cap_usd, reasons)
