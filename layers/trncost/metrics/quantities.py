"""One function per measured quantity of a trial record (the rules are in `metrics.record`).
Pure: no boto3, no clock, no I/O. Each function reads what it needs through a `SeriesReader`
(and the job's SageMaker facts where they say something), returns the quantity, and appends a
note for every rule that could not apply.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from trncost.metrics import names as n
from trncost.metrics.jobs import JobContext
from trncost.metrics.readings import Point, SeriesReader, Window
from trncost.model.candidate import Candidate
from trncost.model.trial import (
    MAX_THROUGHPUT_SAMPLES,
    Checkpointing,
    QualityResult,
    Reliability,
    TimingScope,
    TrialStatus,
    Usage,
    Utilization,
    WallTime,
)
from trncost.model.workload import QualityGate, Workload, WorkUnit

if TYPE_CHECKING:
    from trncost.metrics.cloudwatch import Series
    from trncost.metrics.sagemaker import TrainingJobFacts

DEFAULT_WARMUP_EXCLUSION_S = 600.0  # the first 10 minutes of throughput, when not measured
UNIT_ORDER = (WorkUnit.tokens, WorkUnit.samples, WorkUnit.steps)

# The agent's measured parts of the training clock, and which timing-scope flag holds each.
PHASE_SPECS: dict[str, n.MetricSpec] = {
    "compile": n.COMPILE_SECONDS,
    "warm-up": n.WARMUP_SECONDS,
    "data wait": n.DATA_WAIT_SECONDS,
    "checkpoint save": n.CHECKPOINT_SAVE_SECONDS,
    "checkpoint restore": n.CHECKPOINT_RESTORE_SECONDS,
    "evaluation": n.EVALUATION_SECONDS,
    "restart": n.RESTART_SECONDS,
}
PHASE_SCOPE: dict[str, str] = {
    "compile": "compile",
    "data wait": "data_loading",
    "checkpoint save": "checkpoints",
    "checkpoint restore": "checkpoints",
    "evaluation": "evaluation",
}


# -- the clock -----------------------------------------------------------------------------
@dataclass
class Clock:
    """The job's wall window, the training window inside it and its seconds, the seconds of
    SageMaker's other phases, and SageMaker's time in Interrupted/Restarting."""

    job: Window
    training: Window
    training_s: float | None
    other_s: float | None
    sm_restart_s: float | None


def job_clock(ctx: JobContext, facts: TrainingJobFacts | None, notes: list[str]) -> Clock:
    if facts is not None and facts.training_window is not None:
        phases = facts.phase_seconds
        lo, hi = facts.training_window
        job = facts.wall_window or (lo, hi)
        other = sum(s for p, s in phases.items() if p not in ("training", "restarting"))
        return Clock(
            job=Window(*job),
            training=Window(lo, hi),
            training_s=phases.get("training", 0.0),
            other_s=other,
            sm_restart_s=phases.get("restarting"),
        )
    if facts is not None:
        notes.append("DescribeTrainingJob has no ended Training transition")
    if ctx.started_at and ctx.ended_at and ctx.ended_at > ctx.started_at:
        w = Window(ctx.started_at, ctx.ended_at)
        return Clock(w, w, (ctx.ended_at - ctx.started_at).total_seconds(), None, None)
    notes.append(
        "the job's start and end are unknown: no wall clock, steady time 0 "
        "(unusable for throughput)"
    )
    return Clock(Window(None, None), Window(None, None), None, None, None)


# -- the split of the training clock ---------------------------------------------------------
@dataclass
class Split:
    """The measured parts (None: not published, or outside the timing scope), the seconds the
    timing scope took out of the clock, and the rest of the training clock: steady."""

    parts: dict[str, float | None]
    excluded_s: float
    steady_s: float


def clock_split(r: SeriesReader, scope: TimingScope, clock: Clock, notes: list[str]) -> Split:
    parts: dict[str, float | None] = {p: r.total(spec.key) for p, spec in PHASE_SPECS.items()}
    excluded_s = 0.0
    for part, flag in PHASE_SCOPE.items():
        included: bool = getattr(scope, flag)
        seconds = parts[part]
        if not included and seconds is not None:
            excluded_s += seconds
            notes.append(
                f"{part}: {seconds:g} s measured but the timing scope excludes it; "
                "left out of the clock"
            )
            parts[part] = None
        elif included and seconds is None:
            notes.append(f"{part} seconds not published: not measured")
    if parts["warm-up"] is None:
        notes.append("warm-up seconds not published: not measured")
    return Split(parts, excluded_s, _steady_seconds(parts, excluded_s, clock, notes))


def _steady_seconds(
    parts: dict[str, float | None], excluded_s: float, clock: Clock, notes: list[str]
) -> float:
    parts_s = math.fsum(v for v in parts.values() if v is not None)
    if clock.training_s is None:
        return 0.0
    steady_s = clock.training_s - excluded_s - parts_s
    if steady_s < 0:
        notes.append(
            f"the agent's phase seconds ({parts_s:g} s) exceed the training clock "
            f"({clock.training_s - excluded_s:g} s): the split is inconsistent, steady "
            "time set to 0 (unusable for throughput)"
        )
        return 0.0
    return steady_s


# -- failures and restarts --------------------------------------------------------------------
@dataclass(frozen=True)
class Failures:
    """`agent`: the agent's Failures total (None: not published); `count`: the record's."""

    agent: float | None
    count: int

    @property
    def recorded(self) -> int | None:
        """What the record holds: the count when the agent counted failures; SageMaker's
        interruptions when it saw some (a lower bound: in-process failures are not seen);
        else None (not known: the trial adds no failure exposure, never failure-free hours)."""
        return self.count if self.agent is not None or self.count > 0 else None

    @property
    def none_counted(self) -> bool:
        """The agent counted failures, and there were none."""
        return self.agent is not None and self.count == 0


def failure_count(r: SeriesReader, facts: TrainingJobFacts | None, notes: list[str]) -> Failures:
    # The agent counts every interruption it restarted from; SageMaker counts the ones it saw
    # (spot, auto-resume). Two views of the same events: the larger count is kept.
    agent = r.total(n.FAILURES.key)
    sm_restarts = facts.restarts if facts is not None else 0
    count = max(int(round(agent or 0)), sm_restarts)
    if agent is None:
        if count > 0:
            notes.append(
                "failures not published by the agent: in-process failures not measured "
                f"(recorded: {count}, SageMaker's interruptions: a lower bound)"
            )
        else:
            notes.append(
                "failures not published: not known (recorded as null: the trial adds no "
                "exposure to the failure rate)"
            )
    return Failures(agent, count)


def restart_seconds(split: Split, clock: Clock, failures: Failures) -> float | None:
    """The agent's RestartSeconds + SageMaker's interruptions; 0 when nothing failed."""
    restart_parts = [v for v in (split.parts["restart"], clock.sm_restart_s) if v is not None]
    if not restart_parts and failures.none_counted:
        restart_parts = [0.0]  # no failure, so no restart time: measured, not assumed
    return math.fsum(restart_parts) if restart_parts else None


def wall_time(r: SeriesReader, split: Split, clock: Clock, failures: Failures) -> WallTime:
    parts = split.parts
    cache = r.minimum(n.COMPILE_CACHE_HIT.key)
    return WallTime(
        compile_s=parts["compile"],
        compile_cache_hit=None if cache is None or parts["compile"] is None else cache >= 1,
        warmup_s=parts["warm-up"],
        steady_s=split.steady_s,
        data_wait_s=parts["data wait"],
        checkpoint_save_s=parts["checkpoint save"],
        checkpoint_restore_s=parts["checkpoint restore"],
        evaluation_s=parts["evaluation"],
        restart_s=restart_seconds(split, clock, failures),
        other_s=clock.other_s,
    )


# -- loss ---------------------------------------------------------------------------------------
def loss_finite(r: SeriesReader, notes: list[str]) -> bool | None:
    """False if the loss went non-finite, True if it was published and stayed finite."""
    non_finite = r.total(n.NON_FINITE_LOSS.key)
    loss = r.points(n.TRAINING_LOSS.key)
    if (non_finite or 0) > 0 or (loss and not all(math.isfinite(v) for _, v in loss)):
        return False
    if loss is not None or non_finite is not None:
        return True
    notes.append("training loss not published: its finiteness was not checked")
    return None


def status_after_loss(
    status: TrialStatus, finite: bool | None, ctx: JobContext, notes: list[str]
) -> TrialStatus:
    if finite is not False:
        return status
    if status != TrialStatus.diverged:
        notes.append(f"the loss went non-finite: recorded as diverged (job: {ctx.status})")
    return TrialStatus.diverged


# -- work ---------------------------------------------------------------------------------------
class Rate(NamedTuple):
    """Work units per second, one point per period, and how they were obtained."""

    points: list[Point]
    period: int
    how: str


@dataclass(frozen=True)
class WorkDone:
    """Work done in `unit`; `quality`: the agent's quality-meeting counter, if published;
    `rate`: the throughput series in `unit`, if there is one."""

    unit: WorkUnit
    done: float
    quality: float | None
    rate: Rate | None
    warmup: float | None = None  # the agent's warm-up work counter (also in `done`)


def _native_rate(r: SeriesReader, unit: WorkUnit, window: Window) -> tuple[list[Point], int] | None:
    if unit == WorkUnit.steps:
        pts = r.points(n.STEP_TIME.key, window)
        if pts is None:
            return None
        rates = [(t, 1.0 / v) for t, v in pts if v > 0]
        return (rates, r.period(n.STEP_TIME.key)) if rates else None
    spec = n.RATE_OF[unit]
    found = r.points(spec.key, window)
    return (found, r.period(spec.key)) if found else None


def rate_points(
    r: SeriesReader, unit: WorkUnit, w: Workload, window: Window, convert: bool = True
) -> Rate | None:
    """Work units per second per period, in `unit`: the unit's own series, else (`convert`)
    another unit's series converted with the workload's tokens_per_sample / samples_per_step."""
    own = _native_rate(r, unit, window)
    if own is not None:
        return Rate(own[0], own[1], f"{unit} per second")
    if not convert:
        return None
    for other in UNIT_ORDER:
        if other == unit:
            continue
        found = _native_rate(r, other, window)
        a, b = w.units_per(other), w.units_per(unit)
        if found is None or a is None or b is None:
            continue
        factor = a / b  # one `other` is this many `unit`
        pts, period = found
        return Rate([(t, v * factor) for t, v in pts], period, f"{other} per second × {factor:g}")
    return None


def covers(pts: list[Point], period: int, clock: Clock, allowance_s: float) -> tuple[bool, str]:
    """Whether the rate series covers the training clock, but for `allowance_s` and one period
    at each end; and why (or why not)."""
    if clock.training_s is None:
        return False, "no training clock to cover"
    covered = len(pts) * period
    missing = clock.training_s - covered
    allowed = allowance_s + 2 * period
    if missing <= allowed:
        return True, f"{len(pts)} periods of {period} s cover {clock.training_s:g} s"
    return False, (
        f"{len(pts)} periods of {period} s leave {missing:g} s of the {clock.training_s:g} s "
        f"training clock without a rate (more than the {allowed:g} s that measured compile, "
        "restart, restore, parts outside the timing scope and one period at each end explain)"
    )


def work_done(
    r: SeriesReader, workload: Workload, clock: Clock, split: Split, notes: list[str]
) -> WorkDone:
    """From the agent's counters (the target unit first); else Σ rate × period over a covered
    training clock; else 0."""
    target = workload.target.unit
    order = (target, *(u for u in UNIT_ORDER if u != target))
    for u in order:
        done = r.total(n.WORK_DONE[u].key)
        if done is not None:
            quality = r.total(n.WORK_QUALITY[u].key)
            if u != target:
                notes.append(f"work counted in {u} (no {target} counter published)")
            rate = rate_points(r, u, workload, clock.training)
            warmup = r.total(n.WORK_WARMUP[u].key)
            if warmup is not None:
                warmup = min(max(warmup, 0.0), max(done, 0.0))
            return WorkDone(u, max(done, 0.0), quality, rate, warmup)
    for u, convert in [(u, False) for u in order] + [(u, True) for u in order]:
        found = rate_points(r, u, workload, clock.training, convert)
        if found is not None:
            done = _work_from_rate(found, clock, split, notes)
            return WorkDone(u, max(done, 0.0), None, found)
    notes.append(
        "no work counter and no throughput series published: work 0 (unusable for throughput)"
    )
    return WorkDone(target, 0.0, None, None)


def _work_from_rate(rate: Rate, clock: Clock, split: Split, notes: list[str]) -> float:
    pts, period, how = rate
    parts = split.parts
    allowance = split.excluded_s + math.fsum(
        v
        for v in (parts["compile"], parts["restart"], parts["checkpoint restore"])
        if v is not None
    )
    ok, why = covers(pts, period, clock, allowance)
    if ok:
        notes.append(f"work not counted by the agent: Σ rate × period ({how}); {why}")
        return math.fsum(v * period for _, v in pts)
    notes.append(
        f"work not counted by the agent and the rate series does not cover the "
        f"training clock: {why}; work 0 (unusable for throughput)"
    )
    return 0.0


def quality_meeting(
    done: WorkDone,
    status: TrialStatus,
    finite: bool | None,
    failures: Failures,
    notes: list[str],
) -> float:
    """The agent's counter, capped at work done; else all work for a clean completed run;
    else 0."""
    if done.quality is not None:
        if done.quality > done.done:
            notes.append(f"quality-meeting work {done.quality:g} > work done {done.done:g}: capped")
        return min(max(done.quality, 0.0), done.done)
    if status == TrialStatus.completed and finite is True and failures.none_counted:
        if done.done > 0:
            notes.append(
                "quality-meeting work not published: all work counted "
                "(completed, finite loss, no failure)"
            )
        return done.done
    loss_word = {True: "finite", False: "non-finite", None: "unchecked"}[finite]
    failed = "unknown" if failures.agent is None else str(failures.count)
    notes.append(
        f"quality-meeting work not published and the run is {status}, loss {loss_word}, "
        f"failures {failed}: none counted (unusable for throughput)"
    )
    return 0.0


def steady_samples(
    rate: Rate | None, unit: WorkUnit, warmup_s: float | None, notes: list[str]
) -> list[float]:
    """The rate per period after the warm-up (measured, else the default exclusion), > 0."""
    if rate is None:
        notes.append(f"no throughput series in {unit}: no steady samples")
        return []
    pts = rate.points
    first = pts[0][0]
    if warmup_s is None:
        warmup_s = DEFAULT_WARMUP_EXCLUSION_S
        notes.append(
            f"warm-up not measured: the first {DEFAULT_WARMUP_EXCLUSION_S / 60:g} minutes "
            "of throughput are left out of the steady samples"
        )
    # A period counts only if it starts at or after the end of the warm-up (seconds, not
    # timedelta: a timedelta would round a fraction of a microsecond away).
    steady = [v for t, v in pts if (t - first).total_seconds() >= warmup_s]
    samples = [v for v in steady if v > 0 and math.isfinite(v)]
    if len(samples) < len(steady):
        notes.append(f"{len(steady) - len(samples)} steady period(s) at zero rate dropped")
    if not samples:
        notes.append("no throughput period after the warm-up: no steady samples")
    if len(samples) > MAX_THROUGHPUT_SAMPLES:
        # a long job (a week at one sample a minute): every k-th period, evenly spread, so the
        # record keeps the periods' own spread (pooling them would shrink it) within its bound
        k = math.ceil(len(samples) / MAX_THROUGHPUT_SAMPLES)
        notes.append(
            f"{len(samples):,} steady periods: one in every {k} kept as a sample (the record holds "
            f"at most {MAX_THROUGHPUT_SAMPLES:,}); work and time still count every period"
        )
        samples = samples[::k]
    return samples


# -- the accelerator ------------------------------------------------------------------------
def utilization(
    r: SeriesReader,
    src: n.AcceleratorSource,
    candidate: Candidate,
    clock: Clock,
    notes: list[str],
) -> Utilization:
    util_pts = r.points(src.utilization.key, clock.training)
    util = None
    if util_pts:
        mean = math.fsum(v for _, v in util_pts) / len(util_pts) / 100
        util = min(1.0, max(0.0, mean))
    else:
        notes.append(f"{candidate.accelerator} utilization not published ({src.name})")
    mem = r.maximum(src.memory.key) if src.memory else None
    return Utilization(
        neuroncore=util if src.accelerator == "neuron" else None,
        gpu=util if src.accelerator == "gpu" else None,
        device_memory_gb=None if mem is None else mem * src.memory_unit_bytes / n.BYTES_PER_GB,
    )


def reliability(
    r: SeriesReader, src: n.AcceleratorSource, failures: Failures, notes: list[str]
) -> Reliability:
    errors_parts = [
        r.total(n.ERRORS.key),
        r.total(src.execution_errors.key) if src.execution_errors else None,
    ]
    if all(v is None for v in errors_parts):
        notes.append("errors not published: recorded as 0")
    return Reliability(
        errors=int(round(math.fsum(v for v in errors_parts if v is not None))),
        failures=failures.recorded,
    )


# -- checkpoints, quality, usage, billing -----------------------------------------------------
def checkpointing(r: SeriesReader, notes: list[str]) -> Checkpointing:
    saves = r.total(n.CHECKPOINT_SAVES.key)
    size = r.maximum(n.CHECKPOINT_SIZE.key)
    restore_ok = r.minimum(n.CHECKPOINT_RESTORE_OK.key)
    if restore_ok is None:
        notes.append("no checkpoint restore verified in this run")
    return Checkpointing(
        saves=int(round(saves or 0)),
        size_gb=None if size is None else size / n.BYTES_PER_GB,
        restore_verified=None if restore_ok is None else restore_ok >= 1,
    )


def _gate_value(
    r: SeriesReader,
    series: Mapping[str, Series],
    gate: QualityGate,
    facts: TrainingJobFacts | None,
    notes: list[str],
) -> float | None:
    """The last EvalMetric value for the gate's metric, else SageMaker's final metric."""
    eval_series = series.get(n.EVAL_METRIC.key)
    asked = getattr(eval_series.query, "dimension", None) if eval_series else None
    named = asked(n.EVAL_METRIC_DIMENSION) if asked else gate.metric
    evals = r.points(n.EVAL_METRIC.key) if named == gate.metric else None
    if eval_series is not None and named != gate.metric:
        notes.append(f"EvalMetric read for {named!r}, the gate is on {gate.metric!r}: ignored")
    if evals:
        return evals[-1][1]
    if facts is not None and gate.metric in facts.final_metrics:
        notes.append(f"{gate.metric} from SageMaker's FinalMetricDataList (not the agent)")
        return facts.final_metrics[gate.metric]
    return None


def quality_result(
    r: SeriesReader,
    series: Mapping[str, Series],
    gate: QualityGate,
    facts: TrainingJobFacts | None,
    finite: bool | None,
    notes: list[str],
) -> QualityResult | None:
    value = _gate_value(r, series, gate, facts, notes)
    if value is None or not math.isfinite(value):
        notes.append(f"no {gate.metric} result published: quality not measured")
        return None
    result = QualityResult(metric=gate.metric, value=value, loss_finite=finite)
    notes.append(
        f"{gate.metric} = {value:g}: gate {gate.direction} {gate.threshold:g} "
        + ("met" if gate.passes(value) else "not met")
    )
    return result


def usage(r: SeriesReader, custom_metrics: int | None) -> Usage:
    log_bytes = r.total(n.LOG_INGEST_BYTES.key)
    return Usage(
        log_ingest_gb=None if log_bytes is None else log_bytes / n.BYTES_PER_GB,
        custom_metrics=custom_metrics,
    )


def billed_instance_seconds(
    ctx: JobContext, facts: TrainingJobFacts | None, notes: list[str]
) -> float | None:
    """BillableTimeInSeconds × InstanceCount from DescribeTrainingJob (> 0), else None."""
    if facts is None:
        notes.append(f"no billing record for {ctx.source} jobs: billed time not known")
        return None
    billed = facts.billed_instance_seconds
    if billed is None:
        notes.append("DescribeTrainingJob has no BillableTimeInSeconds: billed time not known")
    elif billed <= 0:
        notes.append("SageMaker billed 0 s: recorded as not known (the record needs > 0)")
        return None
    return billed
