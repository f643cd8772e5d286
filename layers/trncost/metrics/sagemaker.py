"""What `sagemaker:DescribeTrainingJob` says about a finished training job.

The state-change event does not carry the billable time; DescribeTrainingJob does:
billed instance-seconds = BillableTimeInSeconds × ResourceConfig.InstanceCount (AWS: "multiply
BillableTimeInSeconds by the number of instances ... to get the total compute time SageMaker
bills you"). When either is missing (a job that failed early, a heterogeneous cluster of
instance groups) the figure is None: never invented.

SecondaryStatusTransitions split the job's wall time: each transition has a status, a start and
(except the terminal one) an end. They are grouped into phases:

| phase       | SecondaryStatus                                                     |
|-------------|---------------------------------------------------------------------|
| starting    | Pending, Starting, LaunchingMLInstances, PreparingTrainingStack      |
| downloading | Downloading, DownloadingTrainingImage                               |
| training    | Training                                                            |
| uploading   | Uploading                                                           |
| restarting  | Interrupted, Restarting (spot interruption, cluster auto-resume)    |
| stopping    | Stopping                                                            |
| other       | anything else with an end time (Updating, MaxRuntimeExceeded, ...)  |
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trncost import aws
from trncost.errors import UnusableEvent

PHASES: dict[str, str] = {
    "Pending": "starting",
    "Starting": "starting",
    "LaunchingMLInstances": "starting",
    "PreparingTrainingStack": "starting",
    "Downloading": "downloading",
    "DownloadingTrainingImage": "downloading",
    "Training": "training",
    "Uploading": "uploading",
    "Interrupted": "restarting",
    "Restarting": "restarting",
    "Stopping": "stopping",
}
# DescribeTrainingJob's answers for a job that does not exist (SageMaker says
# ValidationException "Requested resource not found"; ResourceNotFound in other services)
MISSING_JOB_CODES = frozenset(
    {"ResourceNotFound", "ResourceNotFoundException", "ValidationException"}
)
RESTART_STATUSES = frozenset(s for s, p in PHASES.items() if p == "restarting")

# AWS Deep Learning Container image names: <framework>-training[-neuronx]:<version>-<device>-
# py<NN>[-sdk<neuron sdk>]-..., e.g. pytorch-training-neuronx:2.9.0-neuronx-py311-sdk2.27.0-...
_DLC = re.compile(
    r"/(?P<framework>[a-z0-9-]+?)-training(?:-neuronx?)?:(?P<version>\d+(?:\.\d+)+)-(?P<rest>.*)$"
)
_SDK = re.compile(r"(?:^|-)sdk(?P<sdk>\d+(?:\.\d+)+)(?:-|$)")


def to_utc(value: Any) -> datetime | None:
    """A SageMaker time as boto3 returns it (datetime) or as the event carries it (epoch
    milliseconds, as a string or a number), or ISO 8601; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, int | float) or (isinstance(value, str) and value.isdigit()):
        return datetime.fromtimestamp(int(value) / 1000, tz=UTC)
    if isinstance(value, str):
        return to_utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    raise ValueError(f"not a SageMaker time: {value!r}")


@dataclass(frozen=True)
class StatusSpan:
    status: str
    start: datetime
    end: datetime | None
    message: str | None = None

    @property
    def phase(self) -> str:
        return PHASES.get(self.status, "other")

    @property
    def seconds(self) -> float | None:
        return None if self.end is None else max(0.0, (self.end - self.start).total_seconds())


@dataclass(frozen=True)
class TrainingJobFacts:
    job_name: str
    status: str  # TrainingJobStatus: InProgress | Completed | Failed | Stopping | Stopped
    secondary_status: str | None = None
    failure_reason: str | None = None
    instance_type: str | None = None
    instance_count: int | None = None
    instance_groups: tuple[tuple[str, int], ...] = ()  # heterogeneous clusters
    creation_time: datetime | None = None
    training_start: datetime | None = None
    training_end: datetime | None = None
    billable_seconds: float | None = None
    training_seconds: float | None = None
    managed_spot: bool = False
    transitions: tuple[StatusSpan, ...] = ()
    hyperparameters: dict[str, str] = field(default_factory=dict)
    training_image: str | None = None
    final_metrics: dict[str, float] = field(default_factory=dict)

    @property
    def billed_instance_seconds(self) -> float | None:
        """BillableTimeInSeconds × InstanceCount, or None when SageMaker did not say."""
        if self.billable_seconds is None or self.instance_count is None:
            return None
        return self.billable_seconds * self.instance_count

    @property
    def phase_seconds(self) -> dict[str, float]:
        """Seconds per phase (see the module table), over transitions that have ended."""
        out: dict[str, float] = {}
        for span in self.transitions:
            if span.seconds is not None:
                out[span.phase] = out.get(span.phase, 0.0) + span.seconds
        return out

    @property
    def restarts(self) -> int:
        """Interruptions SageMaker itself reports (spot interruption, auto-resume)."""
        return sum(1 for s in self.transitions if s.status in RESTART_STATUSES)

    @property
    def training_spans(self) -> tuple[StatusSpan, ...]:
        return tuple(s for s in self.transitions if s.phase == "training" and s.end)

    @property
    def wall_window(self) -> tuple[datetime, datetime] | None:
        """First transition start to last transition end (the job's whole wall)."""
        ended = [s for s in self.transitions if s.end is not None]
        if not ended:
            return None
        return min(s.start for s in ended), max(s.end for s in ended if s.end)

    @property
    def training_window(self) -> tuple[datetime, datetime] | None:
        spans = self.training_spans
        if not spans:
            return None
        return min(s.start for s in spans), max(s.end for s in spans if s.end)

    @property
    def framework(self) -> str | None:
        m = _DLC.search(self.training_image or "")
        return m.group("framework") if m else None

    @property
    def framework_version(self) -> str | None:
        """From an AWS Deep Learning Container image tag; None for other images."""
        m = _DLC.search(self.training_image or "")
        return m.group("version") if m else None

    @property
    def neuron_sdk_version(self) -> str | None:
        m = _DLC.search(self.training_image or "")
        sdk = _SDK.search(m.group("rest")) if m else None
        return sdk.group("sdk") if sdk else None


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def facts_from_description(d: dict[str, Any]) -> TrainingJobFacts:
    """Parse a DescribeTrainingJob response (or an event detail of the same shape)."""
    rc = d.get("ResourceConfig") or {}
    groups = tuple(
        (g["InstanceType"], int(g["InstanceCount"])) for g in rc.get("InstanceGroups") or []
    )
    instance_type, count = rc.get("InstanceType"), rc.get("InstanceCount")
    if not instance_type and len(groups) == 1:
        instance_type, count = groups[0]
    transitions = []
    for t in d.get("SecondaryStatusTransitions") or []:
        start = to_utc(t.get("StartTime"))
        if start is None:
            continue
        transitions.append(
            StatusSpan(t["Status"], start, to_utc(t.get("EndTime")), t.get("StatusMessage"))
        )
    return TrainingJobFacts(
        job_name=d["TrainingJobName"],
        status=d["TrainingJobStatus"],
        secondary_status=d.get("SecondaryStatus"),
        failure_reason=d.get("FailureReason"),
        instance_type=instance_type or None,
        instance_count=int(count) if count else None,
        instance_groups=groups,
        creation_time=to_utc(d.get("CreationTime")),
        training_start=to_utc(d.get("TrainingStartTime")),
        training_end=to_utc(d.get("TrainingEndTime")),
        billable_seconds=_number(d.get("BillableTimeInSeconds")),
        training_seconds=_number(d.get("TrainingTimeInSeconds")),
        managed_spot=bool(d.get("EnableManagedSpotTraining")),
        transitions=tuple(sorted(transitions, key=lambda s: s.start)),
        hyperparameters=dict(d.get("HyperParameters") or {}),
        training_image=(d.get("AlgorithmSpecification") or {}).get("TrainingImage"),
        final_metrics={
            m["MetricName"]: float(m["Value"])
            for m in d.get("FinalMetricDataList") or []
            if "MetricName" in m and "Value" in m
        },
    )


class TrainingJobReader(aws.RegionalAdapter):
    """`sagemaker:DescribeTrainingJob` in one region."""

    service = "sagemaker"

    def describe(self, job_name: str) -> TrainingJobFacts:
        """The job's facts. A job SageMaker does not know is an UnusableEvent (a rejected
        ingest with the reason); throttling and 5xx raise (retried, then the DLQ)."""
        self.calls += 1
        try:
            found = self.client.describe_training_job(TrainingJobName=job_name)
        except Exception as exc:
            code = aws.error_code(exc)
            if code in MISSING_JOB_CODES and not aws.unavailable(exc):
                message = getattr(exc, "response", {}).get("Error", {}).get("Message", "")
                raise UnusableEvent(
                    f"SageMaker training job {job_name} does not exist in {self.region} "
                    f"({code}: {message})"
                ) from None
            raise
        return facts_from_description(found)
