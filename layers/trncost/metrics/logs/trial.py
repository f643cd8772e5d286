"""A trial's logs → its trial record, through the record's own rules (`metrics.record`):
the Timeline's series stand where the agent's would, so compile, warm-up, work, steady
samples, loss, failures and the rest follow the same rules and leave the same notes. Pure.

On top of the record:

- **status** when not given: completed if a log shows the end of training, failed if an
  error follows the last step without it, else stopped (the log may be cut short) — a note
  says which;
- **provenance**: every measured figure names its file, format and lines
  (`metrics.figures`);
- **impossible numbers**: lines with negative times or non-finite rates were dropped when
  read (a note counts them); a throughput above the chip's dense peak (MFU > 1, from
  `estimate.mfu`) excludes the trial: its quality-meeting work is 0 and `excluded` says why;
- **what the log cannot say**, given by the caller: the precision, parallelism and Neuron SDK
  version go to the candidate; a quality mapping (`val_loss=eval_loss`) reads the log's
  evaluation result of one name as the quality gate's metric — explicitly, never by guess: a
  log whose evaluations are named otherwise says so in a note and leaves quality unmeasured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from trncost.errors import DomainError, LogFormatError, RecordError
from trncost.estimate.mfu import mfu_check
from trncost.metrics import names as n
from trncost.metrics.figures import figure_provenance, not_measured
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.logs.scan import FileResult
from trncost.metrics.logs.timeline import Timeline
from trncost.metrics.record import build_trial_record
from trncost.model.candidate import Parallelism, Precision
from trncost.model.provenance import LineRange, MeasuredIn
from trncost.model.trial import Phase, TimingScope, TrialRun, TrialStatus, Work
from trncost.model.workload import Workload, WorkUnit

CLOCK_KEYS = (
    n.WORK_DONE[WorkUnit.steps].key,
    n.STEP_TIME.key,
    n.TRAINING_LOSS.key,
    "runtime",
)


@dataclass(frozen=True)
class LogTrial:
    """The trial record a trial's logs make, and what reading them found."""

    trial: TrialRun
    files: list[FileResult]
    measured: list[str]
    not_measured: list[str]
    excluded: list[str]


def log_sources(timeline: Timeline) -> dict[str, list[MeasuredIn]]:
    """Where each series key was read: file, format and lines."""
    out: dict[str, list[MeasuredIn]] = {}
    for (key, file, fmt), lines in timeline.lines.items():
        out.setdefault(key, []).append(
            MeasuredIn.model_construct(
                source="log",
                file=file,
                format=fmt,
                lines=[LineRange.model_construct(first=a, last=b) for a, b in lines.ranges],
                line_count=lines.count or None,
            )
        )
    return out


def inferred_status(timeline: Timeline, notes: list[str]) -> TrialStatus:
    """completed when the log shows the end (an end line, a summary, or a progress counter
    that reached its total), failed when an error follows the last step, else stopped."""
    completed = timeline.reading().figures.get("completed")
    if timeline.ended or (completed is not None and completed.value is True):
        if not timeline.ended and completed is not None:
            notes.append(f"completed: {completed.rule}")
        return TrialStatus.completed
    if timeline.error_after_steps:
        notes.append("the log ends in an error after training started: recorded as failed")
        return TrialStatus.failed
    if completed is not None and completed.value is False:
        notes.append(f"{completed.rule}: recorded as stopped; give the status if you know it")
        return TrialStatus.stopped
    notes.append(
        "the log does not show the end of training (cut short?): recorded as stopped; "
        "give the status if you know it"
    )
    return TrialStatus.stopped


def _exclusions(trial: TrialRun, workload: Workload) -> list[str]:
    finding = mfu_check(workload, trial)
    mfu = getattr(finding, "mfu", None) if finding is not None else None
    if mfu is not None and mfu > 1:
        return [
            f"throughput above the chip's peak: MFU {mfu:.2f} > 1 "
            f"({getattr(finding, 'note', '')}); physically impossible"
        ]
    return []


def trial_from_logs(
    timeline: Timeline,
    files: Sequence[FileResult],
    workload: Workload,
    *,
    trial_id: str,
    phase: Phase,
    instance_type: str,
    instance_count: int,
    region: str,
    imported_at: datetime,
    status: TrialStatus | None = None,
    code_version: str | None = None,
    dataset_id: str | None = None,
    timing_scope: TimingScope | None = None,
    precision: Precision | None = None,
    parallelism: Parallelism | None = None,
    neuron_sdk_version: str | None = None,
    quality_metric: tuple[str, str] | None = None,
) -> LogTrial:
    """The trial record of one trial's logs (already read into `timeline`). `quality_metric`
    is (the log's evaluation name, the gate's metric): the first read as the second."""
    if not timeline.lines:
        raise LogFormatError(
            "log: the files hold no training step, summary or compile: nothing to record",
            tried=[f"{f.file}: {f.format or 'companion lines only'}" for f in files],
        )
    pre: list[str] = []
    chosen = status or inferred_status(timeline, pre)
    window = timeline.window
    ctx = JobContext(
        source=JobSource.log,
        job_id=trial_id,
        job_arn=None,
        status=chosen.value,
        region=region,
        account=None,
        event_time=imported_at,
        workload_id=workload.workload_id,
        phase=phase,
        trial_id=trial_id,
        plan_id=None,
        run=None,
        code_version=code_version,
        dataset_id=dataset_id,
        timing_scope=timing_scope
        or TimingScope(compile=True, data_loading=True, checkpoints=True, evaluation=True),
        instance_type=instance_type,
        instance_count=instance_count,
        started_at=window[0] if window else None,
        ended_at=window[1] if window else None,
        precision=precision,
    )
    gate = workload.quality_gate.metric
    log_metric, quality_notes = _quality_metric(timeline, gate, quality_metric)
    series = timeline.series(log_metric)
    try:
        record = build_trial_record(ctx, workload, series)
    except RecordError as exc:
        raise LogFormatError(f"log: {exc}", tried=[]) from None
    sources = log_sources(timeline)
    gate_key = f"eval:{log_metric}"
    if gate_key in sources:
        sources[n.EVAL_METRIC.key] = sources[gate_key]
    clock = next((sources[k] for k in CLOCK_KEYS if k in sources), [])
    trial = record.trial
    provenance = figure_provenance(trial, sources, clock=clock)
    notes = [
        *pre,
        *quality_notes,
        *_clock_notes(timeline),
        *timeline.notes,
        *timeline.reject_notes(),
        *record.notes,
    ]
    given = {
        k: v
        for k, v in (("parallelism", parallelism), ("neuron_sdk_version", neuron_sdk_version))
        if v is not None
    }
    if given:
        trial = trial.model_copy(update={"candidate": trial.candidate.model_copy(update=given)})
        if neuron_sdk_version is not None:
            trial = trial.model_copy(update={"neuron_sdk_version": neuron_sdk_version})
    excluded = _exclusions(trial, workload)
    update: dict[str, object] = {"provenance": provenance, "notes": notes}
    if excluded:
        notes.append("excluded: " + "; ".join(excluded) + " (no work counts toward the target)")
        update["work"] = Work(unit=trial.work.unit, done=trial.work.done, quality_meeting=0.0)
    trial = trial.model_copy(update=update)
    return LogTrial(
        trial=trial,
        files=list(files),
        measured=sorted(provenance),
        not_measured=not_measured(provenance),
        excluded=excluded,
    )


def _quality_metric(
    timeline: Timeline, gate: str, mapping: tuple[str, str] | None
) -> tuple[str, list[str]]:
    """The log's evaluation name to read as the gate's metric, and what the record says."""
    names = sorted(timeline.evals)
    if mapping is not None:
        log_name, gate_metric = mapping
        if gate_metric != gate:
            raise DomainError(
                f"quality_metric: maps {log_name} to {gate_metric}, but the workload's quality "
                f"gate is {gate}",
                fields=["quality_metric"],
            )
        if log_name not in timeline.evals:
            seen = ", ".join(names) or "none"
            return log_name, [
                f"quality: no evaluation named {log_name} in the logs (they name: {seen}): "
                "quality not measured"
            ]
        return log_name, [f"quality: the logs' {log_name} read as the gate's {gate} (as given)"]
    if gate not in timeline.evals and names:
        return gate, [
            f"quality: the logs have no {gate} (the gate's metric); they evaluate "
            f"{', '.join(names)}: give --quality-metric NAME={gate} to read one as the gate's, "
            "quality not measured"
        ]
    return gate, []


def _clock_notes(timeline: Timeline) -> list[str]:
    mode = timeline.mode
    if mode == "timestamps":
        return ["clock: the log lines' own timestamps (first to last timed line)"]
    if mode == "elapsed":
        return ["clock: the progress bar's elapsed time (the log has no timestamps)"]
    if mode == "step_time":
        return [
            "clock: the sum of the logged step times (the log has no timestamps): time "
            "outside the steps (start-up, compile before the first step) is not in it"
        ]
    if timeline.runtime_s is not None:
        return ["clock: the log's own train_runtime (the log has no timestamps)"]
    return []
