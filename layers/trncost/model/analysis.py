"""Analysis on top of estimates: scaling fit, uncertainty range, tornado, comparison ranking,
decision, credits runway and the MFU check. Pydantic out, like the estimate itself."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator

from trncost.model.basis import PriceBasis
from trncost.model.bounds import Usd
from trncost.model.common import DomainModel, Money
from trncost.model.estimate import Component, Estimate


# -- scaling -------------------------------------------------------------------------------
class ScalingPoint(DomainModel):
    count: int
    throughput: float = Field(description="measured target units/s at this count")
    fitted: float = Field(description="the chosen model's throughput at this count")
    residual: float = Field(description="measured − fitted, units/s")
    relative_residual: float = Field(description="(measured − fitted) / measured")
    efficiency: float = Field(description="measured X(n) / (n · X(1)), X(1) = fitted λ")
    fitted_efficiency: float = Field(description="1 / (1 + σ(n−1) + κn(n−1))")
    row_id: str = Field(description="the input-table row holding the measured throughput")


class ScalingParameters(DomainModel):
    lam: float = Field(description="λ: throughput of one instance, units/s")
    sigma: float = Field(description="σ: contention (serial share)")
    kappa: float = Field(description="κ: coherency (crosstalk); 0 for Amdahl")
    weighted_rss: float = Field(description="Σ relative residual² of the linearised fit")
    dof: int = Field(description="residual degrees of freedom: counts − free parameters")


class ScalingFit(DomainModel):
    model: Literal["usl", "amdahl", "linear"] = Field(
        description="the model with the largest weight (BIC)"
    )
    formula: str
    method: str
    parameters: ScalingParameters = Field(description="the parameters of `model`")
    usl: ScalingParameters | None = None
    amdahl: ScalingParameters | None = None
    linear: ScalingParameters | None = None
    weights: dict[str, float] = Field(
        default_factory=dict,
        description="BIC weight of each model (usl, amdahl, linear): the point value is "
        "their weighted geometric mean",
    )
    choice: str = Field(description="why these weights")
    points: list[ScalingPoint]
    max_measured_count: int
    min_measured_count: int | None = None
    noise: list[float] = Field(
        default_factory=list, description="each point's relative noise sᵢ, ascending counts"
    )
    notes: list[str] = Field(default_factory=list)

    def predict(self, count: float) -> float:
        """Throughput at `count`: the BIC-weighted geometric mean of the models."""
        if not self.weights:
            return _usl(self.parameters, count)
        log_x = 0.0
        for name, w in self.weights.items():
            p = getattr(self, name)
            if w > 0 and p is not None:
                log_x += w * math.log(_usl(p, count))
        return math.exp(log_x)


def _usl(p: ScalingParameters, count: float) -> float:
    return p.lam * count / (1 + p.sigma * (count - 1) + p.kappa * count * (count - 1))


# -- uncertainty ---------------------------------------------------------------------------
class Percentiles(DomainModel):
    """Percentiles of a physical quantity over the draws that finish (None only when none
    does: `Range.p_infeasible` is then 1)."""

    p10: float | None
    p50: float | None
    p90: float | None
    unit: str


class MoneyPercentiles(DomainModel):
    """USD percentiles over the draws that finish (None only when none does)."""

    p10: Money | None
    p50: Money | None
    p90: Money | None


class PendingQuantityRange(DomainModel):
    price_key: str
    unit: str
    quantity: Percentiles


class VariedInput(DomainModel):
    """One input the Monte Carlo draws, named by its input-table row id."""

    row_id: str
    label: str
    point: float
    distribution: str


class Range(DomainModel):
    samples: int
    seed: int
    spread: float = Field(description="1 = the evidence's spread; 0 = every input at its value")
    total_usd: MoneyPercentiles | None = Field(description="None while a price is PENDING")
    known_usd: MoneyPercentiles | None
    pending: list[PendingQuantityRange] = Field(default_factory=list)
    time_to_target_h: Percentiles | None
    held_h: Percentiles | None
    p_infeasible: float = Field(
        description="share of draws whose failures outpace the work: they never finish and "
        "are left out of the percentiles, which are over the draws that finish"
    )
    basis: list[str] = Field(
        default_factory=list,
        description="what the throughput draw rests on: the measured count, the scaling "
        "models and their weights, or the published scaling prior",
    )
    extrapolation_doublings: float = Field(
        default=0.0,
        description="how far the candidate's count lies outside the measured counts, in "
        "doublings (0 inside): the throughput range widens with it",
    )
    varied: list[VariedInput] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


# -- sensitivity ---------------------------------------------------------------------------
class SwingEnd(DomainModel):
    value: float
    total_usd: Money | None = Field(description="None if pending or infeasible at this value")
    known_usd: Money | None
    pending_quantities: dict[str, float] = Field(default_factory=dict)
    infeasible: bool = False


class Swing(DomainModel):
    rank: int
    input_id: str = Field(description="input-table row id")
    label: str
    unit: str | None = None
    point: float
    basis: str = Field(description="observed range of trial measurements, or ±20 %, …")
    low: SwingEnd
    high: SwingEnd
    effect: float | None = Field(
        description="USD (complete) or relative swing (pending); None: infeasible at one end "
        "(ranked first)"
    )
    effect_unit: Literal["usd", "relative"]


# -- comparison ----------------------------------------------------------------------------
class RankedCandidate(DomainModel):
    candidate_id: str
    group: int = Field(description="comparable candidates share a group; ranks are per group")
    instance_type: str
    instance_count: int
    status: str
    cost_per_target_usd: Money | None = None
    total_usd: Money | None = Field(
        default=None, description="what the ranking sorts on (cloud_usd + labour_usd)"
    )
    cloud_usd: Money | None = Field(default=None, description="what AWS bills")
    labour_usd: Money | None = Field(default=None, description="user-assumed engineering time")
    price_basis: PriceBasis | None = Field(
        default=None, description="the weakest basis among its priced lines"
    )
    total_known_usd: Money | None = None
    pending_formula: str | None = None
    time_to_target_h: float | None = None
    cost_rank: int | None = Field(
        default=None,
        description="by expected cost over paired draws within the group; None: not ranked "
        "by cost (why in note)",
    )
    time_rank: int | None = None
    note: str | None = None
    expected_usd: Money | None = Field(
        default=None,
        description="expected total per target over the Monte Carlo's paired draws that finish "
        "(what cost_rank sorts on); None without a range or while a price is PENDING",
    )
    p50_usd: Money | None = Field(default=None, description="the range's P50 of the total")
    p_cheapest: float | None = Field(
        default=None,
        description="share of the paired draws in which it is the cheapest of its group "
        "(fully priced candidates only)",
    )


class NotComparable(DomainModel):
    a: str
    b: str
    reasons: list[str]


class BreakEven(DomainModel):
    candidate_id: str
    price_key: str
    unit: str
    against: str | None = Field(description="the cheapest fully priced comparable candidate")
    price_usd: Money | None = Field(
        description="per unit of the pending quantity; never negative (null when no price makes "
        "it cheaper: see no_price_makes_it_cheaper)"
    )
    no_price_makes_it_cheaper: bool = Field(
        default=False,
        description="the known part alone already reaches the alternative's total: whatever the "
        "PENDING price, it cannot be cheaper",
    )
    note: str
    price_range: MoneyPercentiles | None = Field(
        default=None,
        description="P10/P50/P90 of the break-even price over the paired draws, (alternative's "
        "total − known part) / pending quantity in each draw (0 where no price makes it "
        "cheaper); None without ranges",
    )
    p_no_price_cheaper: float | None = Field(
        default=None,
        description="share of the paired draws in which the known part alone reaches the "
        "alternative's total (no price makes it cheaper there)",
    )


class CloseCall(DomainModel):
    """Two candidates the paired draws do not separate: the leader is cheaper in fewer than
    CLOSE_CALL of the draws."""

    group: int
    leader: str = Field(description="lowest expected cost per target")
    runner_up: str
    p_leader_cheaper: float = Field(
        description="share of the paired draws in which the leader costs less than the runner-up"
    )
    leader_expected_usd: Money
    runner_up_expected_usd: Money
    separating_trial: str | None = Field(
        default=None, description="the trial that would separate them, with its cost"
    )


class Comparison(DomainModel):
    by_cost: list[RankedCandidate]
    by_time: list[RankedCandidate]
    not_comparable: list[NotComparable] = Field(default_factory=list)
    break_evens: list[BreakEven] = Field(default_factory=list)
    excluded: dict[str, str] = Field(
        default_factory=dict, description="candidates that could not be estimated, and why"
    )
    ranked_by: str = Field(
        default="point total per target",
        description="what cost_rank sorts on: the expected total over paired draws when the "
        "comparison has ranges, else the point totals",
    )
    close_calls: list[CloseCall] = Field(
        default_factory=list, description="leaders the paired draws do not separate"
    )


# -- decision ------------------------------------------------------------------------------
class Action(StrEnum):
    continue_trials = "continue_trials"
    compare_alternatives = "compare_alternatives"
    pause_migration = "pause_migration"
    ready_to_budget = "ready_to_budget"


class Reason(DomainModel):
    code: str
    action: Action = Field(description="the action this reason points to")
    message: str
    evidence: list[str] = Field(
        default_factory=list, description="trial ids, warning codes or input rows behind it"
    )


class Decision(DomainModel):
    candidate_id: str
    action: Action
    reasons: list[Reason] = Field(description="every reason that triggered, strongest first")
    summary: str


# -- credits -------------------------------------------------------------------------------
class Credits(DomainModel):
    amount_usd: Usd
    expires_on: str = Field(description="ISO date YYYY-MM-DD")
    covers: list[Component] = Field(default_factory=lambda: [Component.instances])
    covers_trial_instance_lines: bool = Field(
        default=True, description="trial runs on the accelerator (adaptation & reruns lines)"
    )
    targets_per_month: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        description="a paced plan: this many targets start each month (from start_on, else "
        "as_of); omitted: back to back",
    )
    start_on: str | None = Field(
        default=None,
        description="ISO date the first target starts (default: as_of); with "
        "targets_per_month, the paced plan starts then, else targets run back to back from it",
    )
    as_of: str | None = Field(
        default=None,
        description="ISO date the runway is counted from, 'today' (default: the day the "
        "request is made); the same request with the same as_of is the same answer",
    )

    @field_validator("expires_on", "start_on", "as_of")
    @classmethod
    def _iso_date(cls, v: str | None) -> str | None:
        if v is None:
            return v
        parts = v.split("-")
        if len(parts) != 3 or not all(p.isdigit() for p in parts) or len(parts[0]) != 4:
            raise ValueError("must be an ISO date YYYY-MM-DD")
        y, m, d = map(int, parts)
        if not (1 <= m <= 12 and 1 <= d <= 31):
            raise ValueError("must be an ISO date YYYY-MM-DD")
        return v

    @model_validator(mode="after")
    def _start_before_expiry(self) -> Credits:
        if self.start_on is not None and self.as_of is not None and self.start_on < self.as_of:
            raise ValueError(f"start_on {self.start_on} is before as_of {self.as_of}")
        return self


class UncoveredLine(DomainModel):
    name: str
    component: Component
    amount_usd: Money | None = Field(description="per target; None while its price is PENDING")
    one_time: bool = Field(default=False, description="spent once (trials, engineering)")


class Runway(DomainModel):
    candidate_id: str
    as_of: str
    expires_on: str
    known: bool = Field(description="False while a covered line's price is PENDING")
    covered_per_target_usd: Money | None
    one_time_covered_usd: Money | None = Field(
        description="trial lines: spent once, not per target"
    )
    targets_fit: int | None = Field(description="completed targets the credits pay for")
    targets_before_expiry: int | None = Field(description="at the planned pace, before expiry")
    targets_on_credits: int | None = Field(description="min of the two")
    runs_out_on: str | None = Field(description="date the credits are spent at that pace")
    limited_by: Literal["credits", "expiry", "unknown"] | None
    pace: str
    formula: str | None = Field(default=None, description="the runway in the pending price")
    uncovered: list[UncoveredLine] = Field(default_factory=list)
    uncovered_per_target_usd: Money | None = None
    notes: list[str] = Field(default_factory=list)


# -- MFU -----------------------------------------------------------------------------------
class ChipPeak(DomainModel):
    chip: str
    chips_per_instance: int
    dense_flops: dict[str, float] = Field(description="dense peak FLOP/s per chip by precision")
    source: str


class MfuFinding(DomainModel):
    trial_id: str
    instance_type: str
    chips: int | None = None
    precision: str | None = None
    precision_assumed: bool = False
    tokens_per_s: float | None = None
    model_flops_per_s: float | None = None
    peak_flops_per_s: float | None = None
    mfu: float | None = None
    plausible_max: float
    implausible: bool = False
    source: str | None = None
    note: str


# -- the next trial worth running -----------------------------------------------------------
class TrialOption(DomainModel):
    """One trial trncost could run next, and how much it would narrow the range."""

    phase: Literal["fit", "baseline", "target"]
    instance_count: int
    why: str
    expected_instance_hours: float = Field(description="instance count × a trial's wall time")
    expected_cost_usd: Money | None = Field(
        description="on-demand price × instance-hours; None while that price is PENDING"
    )
    pending_price_key: str | None = Field(
        default=None, description="the PENDING price the instance-hours wait for"
    )
    width_after: float = Field(description="P90 − P10 of the measure with this trial's evidence")
    narrower_by: float = Field(description="(width now − width after) / width now")
    narrowing_per_usd: float | None = Field(
        default=None, description="width narrowed per USD of the trial (None while PENDING)"
    )


class NextTrial(DomainModel):
    """The trial that would narrow P90 − P10 the most per dollar, found by re-running the
    analysis with each option's expected evidence."""

    reason: str = Field(description="why trncost offers one: the decision or a wide range")
    measure: Literal["total_usd", "known_usd", "time_to_target_h"]
    unit: str
    width_now: float = Field(description="P90 − P10 of the measure now (same draws)")
    best: TrialOption | None
    options: list[TrialOption] = Field(default_factory=list)
    method: str
    notes: list[str] = Field(default_factory=list)


# -- checkpoint interval advice -------------------------------------------------------------
class IntervalWhatIf(DomainModel):
    """One checkpoint interval and what the estimate's model expects at it."""

    label: str = Field(description="now | advised | Young | Daly | ½× advised | 2× advised")
    interval_s: float
    saves: int = Field(description="checkpoint saves over the steady time")
    expected_held_h: float | None = Field(
        description="over the failure rate's posterior draws that finish (None: none does)"
    )
    p_infeasible: float = Field(
        default=0.0, description="share of the draws whose failures outpace the work"
    )
    expected_total_usd: Money | None = Field(
        default=None, description="expected total per target; None while a price is PENDING"
    )


class CheckpointAdvice(DomainModel):
    """The checkpoint interval that minimises the expected cost per target under the failure
    posterior (estimate/checkpoint.py), as a what-if against the interval the estimate uses."""

    current_interval_s: float | None = Field(
        description="the interval the estimate uses; None: no checkpoints (a failure loses "
        "the run so far)"
    )
    current_source: Literal["assumed", "measured", "none"]
    save_s: float | None = Field(description="measured seconds per checkpoint save")
    restart_s: float = Field(description="seconds per restart (0 when not measured)")
    failure_rate: float = Field(description="posterior mean failures per instance-hour")
    instances: int
    mtbf_h: float | None = Field(description="the job's mean time between failures, 1/(λ·n)")
    advised_s: float | None = Field(
        default=None, description="minimises the expected total (held hours while PENDING)"
    )
    young_s: float | None = Field(default=None, description="√(2·save·MTBF), Young (1974)")
    daly_s: float | None = Field(default=None, description="Daly (2006) higher-order optimum")
    expected_held_h_now: float | None = None
    expected_held_h_advised: float | None = None
    expected_total_usd_now: Money | None = None
    expected_total_usd_advised: Money | None = None
    saving_h: float | None = Field(default=None, description="expected held hours saved")
    saving_instance_hours: float | None = None
    saving_usd: Money | None = Field(
        default=None, description="expected total saved per target; None while PENDING"
    )
    p_advised_cheaper: float | None = Field(
        default=None, description="share of the failure-rate draws in which the advice costs less"
    )
    flat_from_s: float | None = Field(
        default=None, description="the intervals within 1 % of the least expected cost: from"
    )
    flat_to_s: float | None = Field(default=None, description="… to")
    what_if: list[IntervalWhatIf] = Field(default_factory=list)
    method: str
    notes: list[str] = Field(default_factory=list)


# -- bundle --------------------------------------------------------------------------------
class CandidateAnalysis(DomainModel):
    candidate_id: str
    estimate: Estimate | None = None
    error: str | None = Field(default=None, description="why no estimate could be made")
    scaling: ScalingFit | None = None
    range: Range | None = None
    tornado: list[Swing] = Field(default_factory=list)
    mfu: list[MfuFinding] = Field(default_factory=list)
    decision: Decision | None = None
    runway: Runway | None = None
    next_trial: NextTrial | None = Field(
        default=None,
        description="when the decision is continue_trials or the range is wide: the trial "
        "that narrows P90 − P10 the most per dollar",
    )
    checkpoint: CheckpointAdvice | None = Field(
        default=None,
        description="the checkpoint interval that minimises the expected cost per target "
        "under the failure posterior: a what-if against the interval used",
    )
    notes: list[str] = Field(default_factory=list)


class Analysis(DomainModel):
    seed: int
    samples: int
    candidates: list[CandidateAnalysis]
    comparison: Comparison
    decision: Decision | None = Field(
        description="for the migration: the most favourable Trainium candidate's decision"
    )
    notes: list[str] = Field(default_factory=list)
