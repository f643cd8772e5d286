"""A finished job's event → one trial record, exactly once in effect, then "Trial Recorded".

Bad events (unknown shape, unknown workload, missing tags, a message that is not JSON or JSON
that cannot be parsed safely, and every class of malformed event trncost.metrics.events names)
become rejected ingests with their reason, never an exception loop; the API lists them. Only
infrastructure failures raise (`infrastructure`: an AWS service throttling or failing after its
retries, or refusing trncost's own credentials), so the message goes back to the queue, is
retried, and ends in the DLQ if it keeps failing: nothing is lost. Anything else a job's event
or data raises is rejected with its reason: a retry would fail the same way.

The collector the ingest uses on AWS (`AwsCollector`) turns SageMaker job facts + CloudWatch
series into the trial record: Batch and agent jobs are read from CloudWatch only (the agent
publishes under the trial id); SageMaker jobs add DescribeTrainingJob (billable seconds,
status transitions). A SageMaker or Batch job whose agent published no work or throughput
(it ran without the agent) has its own CloudWatch Logs read and parsed by format
(`metrics.joblogs`): their series fill the keys the agent left empty. Every figure of the
record says where it came from (`TrialRun.provenance`: agent metrics, a log stream's format
and lines, or the job's description). A SageMaker job that does not exist is a rejected
ingest; throttling and 5xx are retried (botocore), then the queue, then the DLQ.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from trncost import aws, safejson
from trncost.bus import EventPublisher
from trncost.errors import Busy, PublishFailed, RecordError, Unavailable, UnusableEvent
from trncost.metrics import names as n
from trncost.metrics.cloudwatch import MetricsReader, Series
from trncost.metrics.events import EstimateRun, estimate_run, parse_job_event
from trncost.metrics.figures import figure_provenance
from trncost.metrics.joblogs import JobLogsReader
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.names import AGENT_NAMESPACE, TRIAL_DIMENSION, trial_queries
from trncost.metrics.record import build_trial_record
from trncost.metrics.sagemaker import TrainingJobFacts, TrainingJobReader
from trncost.model import Candidate, MeasuredIn, TrialRun, Workload, WorkUnit
from trncost.model.records import RejectedIngest
from trncost.services.trials import TrialService
from trncost.store.ingest import Claim, IngestStore
from trncost.store.records import RecordStore

log = logging.getLogger(__name__)
__all__ = [
    "AwsCollector",
    "Collector",
    "SameDayActuals",
    "IngestOutcome",
    "IngestService",
    "event_id",
    "infrastructure",
]
LEASE_S = 900  # longer than the ingest Lambda's timeout, shorter than the queue's visibility


# AWS refusing trncost's own credentials: a deployment fault, fixed by a deploy, not by the
# event; retried (then the DLQ, then a redrive), never rejected.
CREDENTIAL_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "UnauthorizedOperation",
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "ExpiredToken",
        "ExpiredTokenException",
    }
)


def infrastructure(exc: BaseException) -> bool:
    """Whether a failure is the infrastructure's (retry the message) rather than the event's
    (reject it): an AWS service throttling or failing after botocore's retries, no answer at
    all, trncost's credentials refused, or trncost's own Unavailable / Busy / PublishFailed."""
    if isinstance(exc, Unavailable | Busy | PublishFailed):
        return True
    return aws.unavailable(exc) or aws.error_code(exc) in CREDENTIAL_CODES


class SameDayActuals(Protocol):
    def record_training_job(self, run: EstimateRun) -> str:
        """Record a SageMaker job's same-day actual for its estimate; say what was done
        (UnusableEvent: why nothing could be)."""


class Collector(Protocol):
    def collect(self, ctx: JobContext, workload: Workload) -> tuple[TrialRun, list[str]]:
        """The trial record for a finished job, and notes on what was missing."""


@dataclass(frozen=True)
class IngestOutcome:
    status: str  # recorded | already_recorded | duplicate | rejected | actual_recorded
    reason: str
    trial_id: str | None = None
    workload_id: str | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def event_id(event: Any) -> str:
    if isinstance(event, dict) and event.get("id"):
        return str(event["id"])
    return hashlib.sha256(json.dumps(event, sort_keys=True, default=str).encode()).hexdigest()


class IngestService:
    def __init__(
        self,
        records: RecordStore,
        claims: IngestStore,
        collector: Collector,
        publisher: EventPublisher | None = None,
        clock: Callable[[], datetime] = _now,
        lease_s: int = LEASE_S,
        trials: TrialService | None = None,
        actuals: SameDayActuals | None = None,
    ) -> None:
        self.records = records
        self.claims = claims
        self.collector = collector
        self.publisher = publisher
        self.clock = clock
        self.lease_s = lease_s
        # the one way a trial record is written and announced ("Trial Recorded")
        self.trials = trials or TrialService(records, clock, publisher=publisher)
        # a SageMaker job tagged with an estimate: its billable time, the first actual
        self.actuals = actuals

    def reject(self, event: Any, reason: str) -> IngestOutcome:
        """Keep an event that cannot become a trial record, with the reason."""
        at = (event.get("time") if isinstance(event, dict) else None) or self.clock().isoformat()
        log.warning("ingest rejected: %s", reason)
        self.claims.reject(str(at), event_id(event), reason, event)
        return IngestOutcome("rejected", reason)

    def rejected(self, limit: int = 50) -> list[RejectedIngest]:
        """The latest rejected ingests, newest first."""
        return self.claims.rejected(limit)

    def ingest_message(self, body: str, message_id: str) -> IngestOutcome:
        """One queue message: its JSON body ingested, or a body that is not JSON (or is JSON
        that cannot be parsed safely: nested deeper than 64, an integer over 30 digits)
        rejected."""
        try:
            event: Any = safejson.loads(body)
        except safejson.UnsafeJson as exc:
            unparsed = {"id": message_id, "unparsed_body": body[:1000]}
            return self.reject(unparsed, f"message body is not JSON trncost reads: {exc.reason}")
        return self.ingest(event)

    def ingest(self, event: Any) -> IngestOutcome:
        run = estimate_run(event) if self.actuals is not None else None
        if run is not None:
            done = self._same_day_actual(event, run)
            if done is not None:
                return done
        try:
            ctx = parse_job_event(event)
        except UnusableEvent as exc:
            return self.reject(event, str(exc))
        except Exception as exc:  # noqa: BLE001 - a shape the parser missed: still the event's
            return self.reject(event, f"malformed event ({type(exc).__name__}: {exc})"[:1000])
        workload = self.records.get_workload(ctx.workload_id)
        if workload is None:
            return self.reject(
                event, f"unknown workload {ctx.workload_id} (job {ctx.job_id}): create it first"
            )
        now = self.clock()
        claim = self.claims.claim(ctx.dedup_key, int(now.timestamp()), self.lease_s)
        if claim == Claim.done:
            return IngestOutcome(
                "duplicate", f"{ctx.dedup_key} already ingested", ctx.trial_id, ctx.workload_id
            )
        if claim == Claim.busy:
            raise Busy(f"{ctx.dedup_key} is being ingested by another delivery")
        try:
            outcome = self._record(ctx, workload, now)
        except UnusableEvent as exc:
            # The job's own data cannot make a record (no window, no instance type): a
            # retry would not help, so it is rejected, and the claim is closed.
            outcome = self.reject(event, str(exc))
        except Exception as exc:
            if infrastructure(exc):
                self.claims.release(ctx.dedup_key)
                raise
            # Anything else is about this job (an AWS 4xx on its name, data that breaks the
            # record): retrying fails the same way, so it is rejected with the reason.
            outcome = self.reject(event, f"{type(exc).__name__}: {exc}"[:1000])
        self.claims.complete(ctx.dedup_key, outcome.__dict__)
        return outcome

    def _same_day_actual(self, event: Any, run: EstimateRun) -> IngestOutcome | None:
        """A SageMaker job of an estimate: its same-day actual (replaced by itself on a
        repeat: nothing changes). The outcome when the job is not a trial as well (no
        trncost:phase tag): recorded, or rejected with why not; None when it is a trial (its
        trial record is made next, whatever became of the actual)."""
        assert self.actuals is not None
        try:
            note = self.actuals.record_training_job(run)
        except Exception as exc:
            if infrastructure(exc):
                raise
            why = str(exc) if isinstance(exc, UnusableEvent) else f"{type(exc).__name__}: {exc}"
            if run.is_trial:
                log.warning("no same-day actual of %s: %s", run.job_name, why)
                return None
            return self.reject(event, why[:1000])
        if run.is_trial:
            return None
        return IngestOutcome("actual_recorded", note, None, run.workload_id)

    def _record(self, ctx: JobContext, workload: Workload, now: datetime) -> IngestOutcome:
        trial, notes = self.collector.collect(ctx, workload)
        if notes and trial.notes != notes:
            trial = trial.model_copy(update={"notes": list(notes)})
        # Written once; "Trial Recorded" is published on every first ingest of this (job,
        # status), so an event lost to a crash after the write is sent on the retry.
        written = self.trials.record(trial, str(ctx.source), now)
        if written:
            outcome = IngestOutcome(
                "recorded",
                f"{ctx.source} job {ctx.job_id} {ctx.status}",
                trial.trial_id,
                trial.workload_id,
            )
        else:
            # The first terminal record of a job stands; a later status replaces nothing.
            outcome = IngestOutcome(
                "already_recorded",
                f"trial {trial.trial_id} was already recorded; {ctx.status} changes nothing",
                trial.trial_id,
                trial.workload_id,
            )
        return outcome


# -- the collector on AWS ---------------------------------------------------------------------
# The keys whose series make work and throughput: without any of them, the agent did not run.
WORK_KEYS = (
    *(n.WORK_DONE[u].key for u in WorkUnit),
    n.TOKENS_PER_SECOND.key,
    n.SAMPLES_PER_SECOND.key,
    n.STEP_TIME.key,
)


def _has_points(series: Series | None) -> bool:
    return series is not None and bool(series.values)


def agent_sources(series: dict[str, Series]) -> dict[str, list[MeasuredIn]]:
    """Where each agent (or AWS) metric series came from: its namespace and metric name."""
    out: dict[str, list[MeasuredIn]] = {}
    for key, s in series.items():
        if not _has_points(s):
            continue
        query = s.query
        members = getattr(query, "members", None)
        metric_query = members[0] if members else query
        out[key] = [
            MeasuredIn(
                source="agent_metrics",
                file=f"CloudWatch {getattr(metric_query, 'namespace', n.AGENT_NAMESPACE)}",
                format=getattr(metric_query, "metric", key),
            )
        ]
    return out


class AwsCollector:
    def __init__(
        self,
        metrics: Callable[[str], MetricsReader] = MetricsReader,
        sagemaker: Callable[[str], TrainingJobReader] = TrainingJobReader,
        job_logs: Callable[[str], JobLogsReader] = JobLogsReader,
    ) -> None:
        self.metrics = metrics
        self.sagemaker = sagemaker
        self.job_logs = job_logs
        self.calls = 0  # CloudWatch calls of the last collect (for the ingest metrics)
        self.log_calls = 0  # CloudWatch Logs calls of the last collect

    def collect(self, ctx: JobContext, workload: Workload) -> tuple[TrialRun, list[str]]:
        facts: TrainingJobFacts | None = None
        if ctx.source == JobSource.sagemaker:
            facts = self.sagemaker(ctx.region).describe(ctx.job_id)
        window = (facts.wall_window if facts else None) or (
            (ctx.started_at, ctx.ended_at) if ctx.started_at and ctx.ended_at else None
        )
        if window is None or window[1] <= window[0]:
            raise UnusableEvent(f"job {ctx.job_id} has no start and end time to read metrics in")
        instance_type = ctx.instance_type or (facts.instance_type if facts else None)
        if not instance_type:
            raise UnusableEvent(f"job {ctx.job_id} does not say its instance type")
        accelerator = Candidate.model_construct(
            instance_type=instance_type, instance_count=1, region=ctx.region
        ).accelerator
        reader = self.metrics(ctx.region)
        queries = trial_queries(ctx.trial_id, workload.quality_gate.metric, accelerator)
        series = reader.read(queries, *window)
        custom = reader.count_metrics(AGENT_NAMESPACE, {TRIAL_DIMENSION: ctx.trial_id})
        self.calls = reader.calls
        sources = agent_sources(series)
        pre: list[str] = []
        if ctx.source != JobSource.agent and not any(_has_points(series.get(k)) for k in WORK_KEYS):
            series, log_sources_ = self._from_logs(ctx, workload, window, series, pre)
            sources.update(log_sources_)
        try:
            record = build_trial_record(ctx, workload, series, facts, custom_metrics=custom)
        except RecordError as exc:
            raise UnusableEvent(str(exc)) from None
        job = MeasuredIn(
            source="training_job" if facts else "job_event",
            file=f"{ctx.source} job {ctx.job_id}",
            format="SecondaryStatusTransitions" if facts else "start and end times",
        )
        billing = [MeasuredIn(source="training_job", file=f"sagemaker job {ctx.job_id}",
                              format="BillableTimeInSeconds × InstanceCount")]  # fmt: skip
        provenance = figure_provenance(record.trial, sources, clock=[job], billing=billing)
        notes = [*pre, *record.notes]
        trial = record.trial.model_copy(update={"provenance": provenance, "notes": notes})
        return trial, notes

    def _from_logs(
        self,
        ctx: JobContext,
        workload: Workload,
        window: tuple[datetime, datetime],
        series: dict[str, Series],
        notes: list[str],
    ) -> tuple[dict[str, Series], dict[str, list[MeasuredIn]]]:
        """The job's own logs, for a job the agent did not measure: series for the keys the
        agent left empty, and where each was read."""
        from trncost.metrics.logs.timeline import Timeline
        from trncost.metrics.logs.trial import log_sources

        logs_reader = self.job_logs(ctx.region)
        timeline = Timeline()
        found = logs_reader.read(ctx, window, timeline)
        self.log_calls = logs_reader.calls
        notes.extend(found.notes)
        read = [r for r in found.results if r.format]
        if not read:
            notes.append(
                "no agent metrics and no training log format in the job's CloudWatch Logs "
                f"({', '.join(found.streams) or 'no stream'}): work not measured"
            )
            return series, {}
        for r in read:
            notes.append(
                f"no agent metrics: read the job's log {r.file} as {r.format} "
                f"({r.matched_lines} of {r.lines} lines)"
            )
        notes.extend(timeline.notes + timeline.reject_notes())
        merged = dict(series)
        from_logs = timeline.series(workload.quality_gate.metric)
        for key, s in from_logs.items():
            if not _has_points(merged.get(key)):
                merged[key] = s
        where = {k: v for k, v in log_sources(timeline).items() if k in from_logs}
        gate = f"eval:{workload.quality_gate.metric}"
        if gate in timeline.evals:
            where[n.EVAL_METRIC.key] = log_sources(timeline)[gate]
        return merged, where
