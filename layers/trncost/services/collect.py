"""The collector the ingest uses on AWS: SageMaker job facts + CloudWatch series → trial record.

Batch and agent jobs are read from CloudWatch only (the agent publishes under the trial id);
SageMaker jobs add DescribeTrainingJob (billable seconds, status transitions).
"""

from __future__ import annotations

from collections.abc import Callable

from trncost.metrics.cloudwatch import MetricsReader
from trncost.metrics.events import UnusableEvent
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.names import AGENT_NAMESPACE, TRIAL_DIMENSION, trial_queries
from trncost.metrics.record import RecordError, build_trial_record
from trncost.metrics.sagemaker import TrainingJobFacts, TrainingJobReader
from trncost.model import Candidate, TrialRun, Workload


class AwsCollector:
    def __init__(
        self,
        metrics: Callable[[str], MetricsReader] = MetricsReader,
        sagemaker: Callable[[str], TrainingJobReader] = TrainingJobReader,
    ) -> None:
        self.metrics = metrics
        self.sagemaker = sagemaker
        self.calls = 0  # CloudWatch calls of the last collect (for the ingest metrics)

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
        accelerator = Candidate.model_construct(instance_type=instance_type).accelerator
        reader = self.metrics(ctx.region)
        queries = trial_queries(ctx.trial_id, workload.quality_gate.metric, accelerator)
        series = reader.read(queries, *window)
        custom = reader.count_metrics(AGENT_NAMESPACE, {TRIAL_DIMENSION: ctx.trial_id})
        self.calls = reader.calls
        try:
            record = build_trial_record(ctx, workload, series, facts, custom_metrics=custom)
        except RecordError as exc:
            raise UnusableEvent(str(exc)) from None
        return record.trial, record.notes
