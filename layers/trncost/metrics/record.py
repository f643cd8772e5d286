"""A finished job's metric series and SageMaker facts, turned into a trial record. Pure: no
boto3, no clock, no I/O; the series come from `MetricsReader.read(trial_queries(...))`.

What goes where (every rule below leaves a note when it could not apply):

- **Status.** SageMaker Completed/Failed/Stopped and Batch SUCCEEDED/FAILED map to completed,
  failed and stopped; the agent says a TrialStatus itself. A loss that went non-finite
  (NonFiniteLoss > 0) makes the trial `diverged`, whatever the job's own status was.
- **Wall time.** The job's wall is split without gaps or overlaps. SageMaker: the training
  phase of SecondaryStatusTransitions is the training clock; starting, downloading, uploading,
  stopping and other phases go to `other_s`, interruptions (Interrupted, Restarting) to
  `restart_s`. Elsewhere the clock is the job's start to end. Inside the training clock, the
  agent's measured compile, warm-up, data-wait, checkpoint save and restore, evaluation and
  restart seconds are their own parts and the rest is `steady_s`. A part the timing scope
  excludes is not recorded and is taken out of the clock. A part not published stays None
  (and is then inside `steady_s`, which makes the throughput lower, never higher).
- **Work.** From the agent's work counters (TokensDone ..., in the workload's target unit when
  published, else tokens, samples, steps). Without counters, work = Σ rate × period over the
  training clock, but only if the rate series covers it: the periods without a datapoint add
  up to no more than the measured compile, restart and restore time (and parts outside the
  timing scope) plus one period at each end; a series in the work's own unit is preferred to
  one converted from another unit. Otherwise work is 0 and the trial is unusable for
  throughput: never guessed.
- **Quality-meeting work.** The agent's QualityMeeting counter (capped at work done). Without
  it, all work counts only for a completed run whose loss was checked and stayed finite and
  whose agent counted no failure (nothing was rolled back or diverged); otherwise it is 0
  (unusable for throughput).
- **Steady throughput samples.** The rate series in the work's unit, one sample per period,
  excluding the warm-up: periods that start before the first datapoint + the agent's
  WarmupSeconds, or + the first `DEFAULT_WARMUP_EXCLUSION_S` when the agent did not say.
  Zero-rate periods are dropped (a sample must be positive) and counted in a note.
- **Quality.** The last EvalMetric value for the gate's metric (the end of training, not the
  best value); else SageMaker's FinalMetricDataList value of that name. loss_finite is true only
  if the loss (or its NonFiniteLoss count) was published and never went non-finite.
- **Utilization.** Mean of the accelerator utilization series over the training clock (percent
  → 0..1); device memory is the peak, in GiB.
- **Reliability.** errors = agent Errors + accelerator execution errors; failures = the larger
  of the agent's Failures and SageMaker's interruptions (two views of the same events);
  restart_s = the agent's RestartSeconds + SageMaker's time in Interrupted/Restarting (inside
  and outside the training phase: disjoint), 0 when the agent counted no failure.
- **Billing.** BillableTimeInSeconds × InstanceCount from DescribeTrainingJob, else None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from pydantic import ValidationError

from trncost.errors import RecordError
from trncost.metrics import names as n
from trncost.metrics.jobs import JobContext, JobSource
from trncost.model.candidate import Candidate, Platform
from trncost.model.trial import (
    Checkpointing,
    Phase,
    QualityResult,
    Reliability,
    TrialRun,
    TrialStatus,
    Usage,
    Utilization,
    WallTime,
    Work,
)
from trncost.model.workload import Workload, WorkUnit

if TYPE_CHECKING:
    from trncost.metrics.cloudwatch import Series
    from trncost.metrics.sagemaker import TrainingJobFacts

DEFAULT_WARMUP_EXCLUSION_S = 600.0  # the first 10 minutes of throughput, when not measured
UNIT_ORDER = (WorkUnit.tokens, WorkUnit.samples, WorkUnit.steps)

STATUS: dict[JobSource, dict[str, TrialStatus]] = {
    JobSource.sagemaker: {
        "Completed": TrialStatus.completed,
        "Failed": TrialStatus.failed,
        "Stopped": TrialStatus.stopped,
    },
    JobSource.batch: {"SUCCEEDED": TrialStatus.completed, "FAILED": TrialStatus.failed},
    JobSource.agent: {s.value: s for s in TrialStatus},
}


class TrialRecord(NamedTuple):
    trial: TrialRun
    notes: list[str]


Point = tuple[datetime, float]


@dataclass
class _Window:
    lo: datetime | None
    hi: datetime | None


class _Reader:
    """The series by key, cut to a window; a missing or incomplete series reads as None."""

    def __init__(self, series: Mapping[str, Series], window: _Window, notes: list[str]) -> None:
        self.series = series
        self.window = window
        self.notes = notes
        self._warned: set[str] = set()

    def period(self, key: str) -> int:
        s = self.series.get(key)
        return s.period if s is not None else n.DEFAULT_PERIOD_S

    def points(self, key: str, window: _Window | None = None) -> list[Point] | None:
        s = self.series.get(key)
        if s is None:
            return None
        if not s.complete:
            if key not in self._warned:
                self._warned.add(key)
                why = "; ".join(s.messages) or "no message"
                self.notes.append(
                    f"{key}: CloudWatch returned {s.status} ({why}); treated as not measured"
                )
            return None
        w = window or self.window
        after = None if w.lo is None else w.lo - timedelta(seconds=s.period)
        pts = [
            (t, v)
            for t, v in s.points()
            if (after is None or t > after) and (w.hi is None or t < w.hi)
        ]
        return pts or None

    def total(self, key: str) -> float | None:
        pts = self.points(key)
        return None if pts is None else math.fsum(v for _, v in pts)

    def minimum(self, key: str) -> float | None:
        pts = self.points(key)
        return None if pts is None else min(v for _, v in pts)

    def maximum(self, key: str) -> float | None:
        pts = self.points(key)
        return None if pts is None else max(v for _, v in pts)


def _status(ctx: JobContext, facts: TrainingJobFacts | None, notes: list[str]) -> TrialStatus:
    table = STATUS[ctx.source]
    raw = ctx.status.lower() if ctx.source == JobSource.agent else ctx.status
    if raw not in table:
        raise RecordError(
            f"{ctx.source} job {ctx.job_id} ended {ctx.status!r}: not a terminal status trncost "
            f"records (expected one of {', '.join(table)})"
        )
    if facts is not None and facts.status != ctx.status:
        notes.append(
            f"the event says {ctx.status} but DescribeTrainingJob says {facts.status}; "
            f"recorded the event's status"
        )
    if facts is not None and facts.failure_reason:
        notes.append(f"SageMaker failure reason: {facts.failure_reason}")
    return table[raw]


def _candidate(ctx: JobContext, facts: TrainingJobFacts | None, notes: list[str]) -> Candidate:
    itype, count = ctx.instance_type, ctx.instance_count
    if facts is not None:
        if facts.instance_groups and len(facts.instance_groups) > 1:
            raise RecordError(
                f"training job {facts.job_name} ran a heterogeneous cluster "
                f"({facts.instance_groups}): one trial record describes one instance type"
            )
        for field, mine, theirs in (
            ("instance type", itype, facts.instance_type),
            ("instance count", count, facts.instance_count),
        ):
            if mine is not None and theirs is not None and mine != theirs:
                notes.append(
                    f"{field}: the event says {mine}, DescribeTrainingJob {theirs}; "
                    "used DescribeTrainingJob's"
                )
        itype = facts.instance_type or itype
        count = facts.instance_count or count
    if not itype or not count:
        raise RecordError(
            f"{ctx.source} job {ctx.job_id}: instance type and count unknown "
            "(neither the event nor the job description says)"
        )
    platform = (
        Platform.sagemaker
        if ctx.source == JobSource.sagemaker or itype.startswith("ml.")
        else Platform.ec2
    )
    try:
        return Candidate(
            instance_type=itype,
            instance_count=count,
            region=ctx.region,
            platform=platform,
            framework=facts.framework if facts else None,
            framework_version=facts.framework_version if facts else None,
            neuron_sdk_version=facts.neuron_sdk_version if facts else None,
        )
    except ValidationError as exc:
        raise RecordError(f"job {ctx.job_id}: not a valid candidate: {exc}") from None


@dataclass
class _Clock:
    job: _Window
    training: _Window
    training_s: float | None
    other_s: float | None
    sm_restart_s: float | None


def _clock(ctx: JobContext, facts: TrainingJobFacts | None, notes: list[str]) -> _Clock:
    if facts is not None and facts.training_window is not None:
        phases = facts.phase_seconds
        lo, hi = facts.training_window
        job = facts.wall_window or (lo, hi)
        other = sum(s for p, s in phases.items() if p not in ("training", "restarting"))
        return _Clock(
            job=_Window(*job),
            training=_Window(lo, hi),
            training_s=phases.get("training", 0.0),
            other_s=other,
            sm_restart_s=phases.get("restarting"),
        )
    if facts is not None:
        notes.append("DescribeTrainingJob has no ended Training transition")
    if ctx.started_at and ctx.ended_at and ctx.ended_at > ctx.started_at:
        w = _Window(ctx.started_at, ctx.ended_at)
        return _Clock(w, w, (ctx.ended_at - ctx.started_at).total_seconds(), None, None)
    notes.append(
        "the job's start and end are unknown: no wall clock, steady time 0 "
        "(unusable for throughput)"
    )
    return _Clock(_Window(None, None), _Window(None, None), None, None, None)


def _rate_points(
    r: _Reader, unit: WorkUnit, w: Workload, window: _Window, convert: bool = True
) -> tuple[list[Point], int, str] | None:
    """Work units per second per period, in `unit`: the unit's own series, else (`convert`)
    another unit's series converted with the workload's tokens_per_sample / samples_per_step."""

    def native(u: WorkUnit) -> tuple[list[Point], int] | None:
        if u == WorkUnit.steps:
            pts = r.points(n.STEP_TIME.key, window)
            if pts is None:
                return None
            rates = [(t, 1.0 / v) for t, v in pts if v > 0]
            return (rates, r.period(n.STEP_TIME.key)) if rates else None
        spec = n.RATE_OF[u]
        pts = r.points(spec.key, window)
        return (pts, r.period(spec.key)) if pts else None

    own = native(unit)
    if own is not None:
        return own[0], own[1], f"{unit} per second"
    if not convert:
        return None
    for other in UNIT_ORDER:
        if other == unit:
            continue
        found = native(other)
        a, b = w.units_per(other), w.units_per(unit)
        if found is None or a is None or b is None:
            continue
        factor = a / b  # one `other` is this many `unit`
        pts, period = found
        return [(t, v * factor) for t, v in pts], period, f"{other} per second × {factor:g}"
    return None


def _covers(pts: list[Point], period: int, clock: _Clock, allowance_s: float) -> tuple[bool, str]:
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


def build_trial_record(  # noqa: C901 - split under issue 11 (remove this when done)
    ctx: JobContext,
    workload: Workload,
    series: Mapping[str, Series],
    facts: TrainingJobFacts | None = None,
    *,
    source: n.AcceleratorSource | None = None,
    custom_metrics: int | None = None,
) -> TrialRecord:
    """The trial record of a finished job, and notes on everything that was not measured."""
    notes: list[str] = []
    if ctx.workload_id != workload.workload_id:
        raise RecordError(f"job {ctx.job_id} is for {ctx.workload_id}, not {workload.workload_id}")
    status = _status(ctx, facts, notes)
    candidate = _candidate(ctx, facts, notes)
    clock = _clock(ctx, facts, notes)
    scope = ctx.timing_scope
    r = _Reader(series, clock.job, notes)

    # -- phases of the training clock ------------------------------------------------------
    measured = {
        "compile": r.total(n.COMPILE_SECONDS.key),
        "warm-up": r.total(n.WARMUP_SECONDS.key),
        "data wait": r.total(n.DATA_WAIT_SECONDS.key),
        "checkpoint save": r.total(n.CHECKPOINT_SAVE_SECONDS.key),
        "checkpoint restore": r.total(n.CHECKPOINT_RESTORE_SECONDS.key),
        "evaluation": r.total(n.EVALUATION_SECONDS.key),
        "restart": r.total(n.RESTART_SECONDS.key),
    }
    in_scope = {
        "compile": scope.compile,
        "data wait": scope.data_loading,
        "checkpoint save": scope.checkpoints,
        "checkpoint restore": scope.checkpoints,
        "evaluation": scope.evaluation,
    }
    excluded_s = 0.0
    for part, included in in_scope.items():
        seconds = measured[part]
        if not included and seconds is not None:
            excluded_s += seconds
            notes.append(
                f"{part}: {seconds:g} s measured but the timing scope excludes it; "
                "left out of the clock"
            )
            measured[part] = None
        elif included and seconds is None:
            notes.append(f"{part} seconds not published: not measured")
    if measured["warm-up"] is None:
        notes.append("warm-up seconds not published: not measured")

    parts_s = math.fsum(v for v in measured.values() if v is not None)
    if clock.training_s is None:
        steady_s = 0.0
    else:
        steady_s = clock.training_s - excluded_s - parts_s
        if steady_s < 0:
            notes.append(
                f"the agent's phase seconds ({parts_s:g} s) exceed the training clock "
                f"({clock.training_s - excluded_s:g} s): the split is inconsistent, steady "
                "time set to 0 (unusable for throughput)"
            )
            steady_s = 0.0

    # -- failures and restarts ------------------------------------------------------------
    # The agent counts every interruption it restarted from; SageMaker counts the ones it saw
    # (spot, auto-resume). Two views of the same events: the larger count is kept.
    agent_failures = r.total(n.FAILURES.key)
    sm_restarts = facts.restarts if facts is not None else 0
    failures = max(int(round(agent_failures or 0)), sm_restarts)
    if agent_failures is None:
        notes.append(
            "failures not published by the agent: in-process failures not measured "
            f"(recorded: {failures}, from SageMaker's transitions)"
            if facts is not None
            else "failures not published: recorded as 0"
        )
    restart_parts = [v for v in (measured["restart"], clock.sm_restart_s) if v is not None]
    if not restart_parts and agent_failures is not None and failures == 0:
        restart_parts = [0.0]  # no failure, so no restart time: measured, not assumed

    cache = r.minimum(n.COMPILE_CACHE_HIT.key)
    wall = WallTime(
        compile_s=measured["compile"],
        compile_cache_hit=None if cache is None or measured["compile"] is None else cache >= 1,
        warmup_s=measured["warm-up"],
        steady_s=steady_s,
        data_wait_s=measured["data wait"],
        checkpoint_save_s=measured["checkpoint save"],
        checkpoint_restore_s=measured["checkpoint restore"],
        evaluation_s=measured["evaluation"],
        restart_s=math.fsum(restart_parts) if restart_parts else None,
        other_s=clock.other_s,
    )

    # -- loss, status ------------------------------------------------------------------------
    non_finite = r.total(n.NON_FINITE_LOSS.key)
    loss = r.points(n.TRAINING_LOSS.key)
    if (non_finite or 0) > 0 or (loss and not all(math.isfinite(v) for _, v in loss)):
        loss_finite: bool | None = False
    elif loss is not None or non_finite is not None:
        loss_finite = True
    else:
        loss_finite = None
        notes.append("training loss not published: its finiteness was not checked")
    if loss_finite is False:
        if status != TrialStatus.diverged:
            notes.append(f"the loss went non-finite: recorded as diverged (job: {ctx.status})")
        status = TrialStatus.diverged

    # -- work --------------------------------------------------------------------------------
    target = workload.target.unit
    order = (target, *(u for u in UNIT_ORDER if u != target))
    unit, done, quality = target, None, None
    for u in order:
        done = r.total(n.WORK_DONE[u].key)
        if done is not None:
            unit, quality = u, r.total(n.WORK_QUALITY[u].key)
            if u != target:
                notes.append(f"work counted in {u} (no {target} counter published)")
            break
    rate = _rate_points(r, unit, workload, clock.training) if done is not None else None
    if done is None:
        for u, convert in [(u, False) for u in order] + [(u, True) for u in order]:
            rate = _rate_points(r, u, workload, clock.training, convert)
            if rate is not None:
                unit = u
                break
        if rate is None:
            notes.append(
                "no work counter and no throughput series published: work 0 "
                "(unusable for throughput)"
            )
            done = 0.0
        else:
            pts, period, how = rate
            allowance = excluded_s + math.fsum(
                v
                for v in (measured["compile"], measured["restart"], measured["checkpoint restore"])
                if v is not None
            )
            ok, why = _covers(pts, period, clock, allowance)
            if ok:
                done = math.fsum(v * period for _, v in pts)
                notes.append(f"work not counted by the agent: Σ rate × period ({how}); {why}")
            else:
                done = 0.0
                notes.append(
                    f"work not counted by the agent and the rate series does not cover the "
                    f"training clock: {why}; work 0 (unusable for throughput)"
                )
    done = max(done, 0.0)
    if quality is not None:
        if quality > done:
            notes.append(f"quality-meeting work {quality:g} > work done {done:g}: capped")
        quality = min(max(quality, 0.0), done)
    elif (
        status == TrialStatus.completed
        and loss_finite is True
        and agent_failures is not None
        and failures == 0
    ):
        quality = done
        if done > 0:
            notes.append(
                "quality-meeting work not published: all work counted "
                "(completed, finite loss, no failure)"
            )
    else:
        quality = 0.0
        loss_word = {True: "finite", False: "non-finite", None: "unchecked"}[loss_finite]
        failed = "unknown" if agent_failures is None else str(failures)
        notes.append(
            f"quality-meeting work not published and the run is {status}, loss {loss_word}, "
            f"failures {failed}: none counted (unusable for throughput)"
        )

    # -- steady throughput samples -------------------------------------------------------
    samples: list[float] = []
    if rate is None:
        notes.append(f"no throughput series in {unit}: no steady samples")
    else:
        pts, period, _ = rate
        first = pts[0][0]
        warmup = measured["warm-up"]
        if warmup is None:
            warmup = DEFAULT_WARMUP_EXCLUSION_S
            notes.append(
                f"warm-up not measured: the first {DEFAULT_WARMUP_EXCLUSION_S / 60:g} minutes "
                "of throughput are left out of the steady samples"
            )
        # A period counts only if it starts at or after the end of the warm-up (seconds, not
        # timedelta: a timedelta would round a fraction of a microsecond away).
        steady = [v for t, v in pts if (t - first).total_seconds() >= warmup]
        samples = [v for v in steady if v > 0 and math.isfinite(v)]
        if len(samples) < len(steady):
            notes.append(f"{len(steady) - len(samples)} steady period(s) at zero rate dropped")
        if not samples:
            notes.append("no throughput period after the warm-up: no steady samples")

    # -- utilization ------------------------------------------------------------------------
    src = source or n.DEFAULT_SOURCE[candidate.accelerator]
    util_pts = r.points(src.utilization.key, clock.training)
    util = None
    if util_pts:
        mean = math.fsum(v for _, v in util_pts) / len(util_pts) / 100
        util = min(1.0, max(0.0, mean))
    else:
        notes.append(f"{candidate.accelerator} utilization not published ({src.name})")
    mem = r.maximum(src.memory.key) if src.memory else None
    utilization = Utilization(
        neuroncore=util if src.accelerator == "neuron" else None,
        gpu=util if src.accelerator == "gpu" else None,
        device_memory_gb=None if mem is None else mem * src.memory_unit_bytes / n.BYTES_PER_GB,
    )

    errors_parts = [
        r.total(n.ERRORS.key),
        r.total(src.execution_errors.key) if src.execution_errors else None,
    ]
    if all(v is None for v in errors_parts):
        notes.append("errors not published: recorded as 0")
    reliability = Reliability(
        errors=int(round(math.fsum(v for v in errors_parts if v is not None))),
        failures=failures,
    )

    # -- checkpoints -------------------------------------------------------------------------
    saves = r.total(n.CHECKPOINT_SAVES.key)
    size = r.maximum(n.CHECKPOINT_SIZE.key)
    restore_ok = r.minimum(n.CHECKPOINT_RESTORE_OK.key)
    if restore_ok is None:
        notes.append("no checkpoint restore verified in this run")
    checkpointing = Checkpointing(
        saves=int(round(saves or 0)),
        size_gb=None if size is None else size / n.BYTES_PER_GB,
        restore_verified=None if restore_ok is None else restore_ok >= 1,
    )

    # -- quality --------------------------------------------------------------------------
    gate = workload.quality_gate
    quality_result = None
    eval_series = series.get(n.EVAL_METRIC.key)
    asked = getattr(eval_series.query, "dimension", None) if eval_series else None
    named = asked(n.EVAL_METRIC_DIMENSION) if asked else gate.metric
    evals = r.points(n.EVAL_METRIC.key) if named == gate.metric else None
    if eval_series is not None and named != gate.metric:
        notes.append(f"EvalMetric read for {named!r}, the gate is on {gate.metric!r}: ignored")
    value = None
    if evals:
        value = evals[-1][1]
    elif facts is not None and gate.metric in facts.final_metrics:
        value = facts.final_metrics[gate.metric]
        notes.append(f"{gate.metric} from SageMaker's FinalMetricDataList (not the agent)")
    if value is not None and math.isfinite(value):
        quality_result = QualityResult(metric=gate.metric, value=value, loss_finite=loss_finite)
        notes.append(
            f"{gate.metric} = {value:g}: gate {gate.direction} {gate.threshold:g} "
            + ("met" if gate.passes(value) else "not met")
        )
    else:
        notes.append(f"no {gate.metric} result published: quality not measured")

    # -- usage, identity, billing -------------------------------------------------------
    log_bytes = r.total(n.LOG_INGEST_BYTES.key)
    usage = Usage(
        log_ingest_gb=None if log_bytes is None else log_bytes / n.BYTES_PER_GB,
        custom_metrics=custom_metrics,
    )
    code_version, dataset_id = ctx.code_version, ctx.dataset_id
    if not code_version:
        code_version = workload.code_version
        notes.append(f"job has no code version tag: the workload's {code_version} assumed")
    if not dataset_id:
        dataset_id = workload.dataset_id
        notes.append(f"job has no dataset tag: the workload's {dataset_id} assumed")
    billed = facts.billed_instance_seconds if facts is not None else None
    if facts is not None and billed is None:
        notes.append("DescribeTrainingJob has no BillableTimeInSeconds: billed time not known")
    elif billed is not None and billed <= 0:
        notes.append("SageMaker billed 0 s: recorded as not known (the record needs > 0)")
        billed = None
    elif facts is None:
        notes.append(f"no billing record for {ctx.source} jobs: billed time not known")

    try:
        trial = TrialRun(
            trial_id=ctx.trial_id,
            workload_id=ctx.workload_id,
            phase=ctx.phase,
            status=status,
            candidate=candidate,
            timing_scope=scope,
            work=Work(unit=unit, done=done, quality_meeting=quality),
            wall=wall,
            steady_throughput_samples=samples,
            utilization=utilization,
            reliability=reliability,
            checkpointing=checkpointing,
            quality=quality_result,
            usage=usage,
            code_version=code_version,
            dataset_id=dataset_id,
            framework_version=candidate.framework_version,
            neuron_sdk_version=candidate.neuron_sdk_version,
            billed_instance_seconds=billed,
        )
    except ValidationError as exc:
        raise RecordError(f"job {ctx.job_id}: the record does not validate: {exc}") from None
    if not trial.usable_for_throughput:
        why = []
        if trial.phase == Phase.fit:
            why.append("fit phase")
        if trial.status != TrialStatus.completed:
            why.append(f"status {trial.status}")
        if trial.work.quality_meeting <= 0:
            why.append("no quality-meeting work")
        if trial.wall.steady_s <= 0:
            why.append("no steady time")
        notes.append("not usable for throughput: " + ", ".join(why))
    return TrialRecord(trial.model_copy(update={"notes": list(notes)}), notes)
