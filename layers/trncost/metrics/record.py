"""A finished job's metric series and SageMaker facts, turned into a trial record. Pure: no
boto3, no clock, no I/O; the series come from `MetricsReader.read(trial_queries(...))`.
`build_trial_record` assembles the record from one function per measured quantity
(`metrics.quantities`), each reading the series through `metrics.readings.SeriesReader`.

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
- **Warm-up work.** The agent's <Unit>Warmup counter (the work of the warm-up steps, capped at
  work done) in the work's unit, kept only with the warm-up seconds: work and time on one clock.
  Without it the warm-up's work stays in `done` and the engine keeps its seconds on the steady
  clock (estimate/evidence.py).
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

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from pydantic import ValidationError

from trncost.errors import RecordError
from trncost.metrics import names as n
from trncost.metrics import quantities as q
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.readings import SeriesReader
from trncost.model.candidate import Candidate, Platform
from trncost.model.trial import Phase, TrialRun, TrialStatus, Work
from trncost.model.workload import Workload

if TYPE_CHECKING:
    from trncost.metrics.cloudwatch import Series
    from trncost.metrics.sagemaker import TrainingJobFacts

STATUS: dict[JobSource, dict[str, TrialStatus]] = {
    JobSource.sagemaker: {
        "Completed": TrialStatus.completed,
        "Failed": TrialStatus.failed,
        "Stopped": TrialStatus.stopped,
    },
    JobSource.batch: {"SUCCEEDED": TrialStatus.completed, "FAILED": TrialStatus.failed},
    JobSource.agent: {s.value: s for s in TrialStatus},
    JobSource.log: {s.value: s for s in TrialStatus},
}


class TrialRecord(NamedTuple):
    trial: TrialRun
    notes: list[str]


def _status(ctx: JobContext, facts: TrainingJobFacts | None, notes: list[str]) -> TrialStatus:
    table = STATUS[ctx.source]
    raw = ctx.status.lower() if ctx.source in (JobSource.agent, JobSource.log) else ctx.status
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
            precision=ctx.precision,
        )
    except ValidationError as exc:
        raise RecordError(f"job {ctx.job_id}: not a valid candidate: {exc}") from None


def _tags_or_workload(ctx: JobContext, workload: Workload, notes: list[str]) -> tuple[str, str]:
    """The job's code version and dataset tags; the workload's (assumed, with a note) if absent."""
    code_version, dataset_id = ctx.code_version, ctx.dataset_id
    if not code_version:
        code_version = workload.code_version
        notes.append(f"job has no code version tag: the workload's {code_version} assumed")
    if not dataset_id:
        dataset_id = workload.dataset_id
        notes.append(f"job has no dataset tag: the workload's {dataset_id} assumed")
    return code_version, dataset_id


def _unusable_reasons(trial: TrialRun) -> list[str]:
    why = []
    if trial.phase == Phase.fit:
        why.append("fit phase")
    if trial.status != TrialStatus.completed:
        why.append(f"status {trial.status}")
    if trial.work.quality_meeting <= 0:
        why.append("no quality-meeting work")
    if trial.wall.steady_s <= 0:
        why.append("no steady time")
    return why


def build_trial_record(
    ctx: JobContext,
    workload: Workload,
    series: Mapping[str, Series],
    facts: TrainingJobFacts | None = None,
    *,
    source: n.AcceleratorSource | None = None,
    custom_metrics: int | None = None,
) -> TrialRecord:
    """The trial record of a finished job, and notes on everything that was not measured.
    The quantities are read in this order (a note's place in the list follows it)."""
    notes: list[str] = list(ctx.notes)
    if ctx.workload_id != workload.workload_id:
        raise RecordError(f"job {ctx.job_id} is for {ctx.workload_id}, not {workload.workload_id}")
    status = _status(ctx, facts, notes)
    candidate = _candidate(ctx, facts, notes)
    clock = q.job_clock(ctx, facts, notes)
    r = SeriesReader(series, clock.job, notes)
    split = q.clock_split(r, ctx.timing_scope, clock, notes)
    failures = q.failure_count(r, facts, notes)
    wall = q.wall_time(r, split, clock, failures)
    loss_finite = q.loss_finite(r, notes)
    status = q.status_after_loss(status, loss_finite, ctx, notes)
    done = q.work_done(r, workload, clock, split, notes)
    quality_meeting = q.quality_meeting(done, status, loss_finite, failures, notes)
    samples = q.steady_samples(done.rate, done.unit, split.parts["warm-up"], notes)
    src = source or n.DEFAULT_SOURCE[candidate.accelerator]
    utilization = q.utilization(r, src, candidate, clock, notes)
    reliability = q.reliability(r, src, failures, notes)
    checkpointing = q.checkpointing(r, notes)
    quality = q.quality_result(r, series, workload.quality_gate, facts, loss_finite, notes)
    usage = q.usage(r, custom_metrics)
    code_version, dataset_id = _tags_or_workload(ctx, workload, notes)
    billed = q.billed_instance_seconds(ctx, facts, notes)
    try:
        trial = TrialRun(
            trial_id=ctx.trial_id,
            workload_id=ctx.workload_id,
            phase=ctx.phase,
            status=status,
            candidate=candidate,
            timing_scope=ctx.timing_scope,
            work=Work(
                unit=done.unit,
                done=done.done,
                quality_meeting=quality_meeting,
                # the warm-up's work apart only with its seconds: one clock for both
                warmup=done.warmup if wall.warmup_s is not None else None,
            ),
            wall=wall,
            steady_throughput_samples=samples,
            utilization=utilization,
            reliability=reliability,
            checkpointing=checkpointing,
            quality=quality,
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
        notes.append("not usable for throughput: " + ", ".join(_unusable_reasons(trial)))
    return TrialRecord(trial.model_copy(update={"notes": list(notes)}), notes)
