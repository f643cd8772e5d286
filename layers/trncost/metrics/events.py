"""Job state-change events → JobContext. Pure: an EventBridge event in, a JobContext out, or
an UnusableEvent saying why the event cannot become a trial record.

Shapes follow AWS's documented events: "SageMaker Training Job State Change" (times as epoch
milliseconds, numbers or strings; no billable time in the event), "Batch Job State Change",
and trncost's own "Trial Run Completed" from the trial agent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from trncost.errors import JobTagError, UnusableEvent
from trncost.events import AGENT_SOURCE, DetailType
from trncost.metrics.jobs import (
    ALL_TAGS,
    INSTANCE_COUNT_TAG,
    INSTANCE_TYPE_TAG,
    JobContext,
    JobSource,
    parameter_name,
    read_tags,
)

SAGEMAKER_SOURCE = "aws.sagemaker"
SAGEMAKER_DETAIL_TYPE = "SageMaker Training Job State Change"
SAGEMAKER_TERMINAL = ("Completed", "Failed", "Stopped")
BATCH_SOURCE = "aws.batch"
BATCH_DETAIL_TYPE = "Batch Job State Change"
BATCH_TERMINAL = ("SUCCEEDED", "FAILED")
AGENT_TERMINAL = ("completed", "failed", "diverged", "stopped")

# The EventBridge patterns the ingest rules use (CDK builds its rules from these).
SAGEMAKER_PATTERN: dict[str, Any] = {
    "source": [SAGEMAKER_SOURCE],
    "detail-type": [SAGEMAKER_DETAIL_TYPE],
    "detail": {"TrainingJobStatus": list(SAGEMAKER_TERMINAL)},
}
BATCH_PATTERN: dict[str, Any] = {
    "source": [BATCH_SOURCE],
    "detail-type": [BATCH_DETAIL_TYPE],
    "detail": {"status": list(BATCH_TERMINAL)},
}
AGENT_PATTERN: dict[str, Any] = {
    "source": [AGENT_SOURCE],
    "detail-type": [DetailType.trial_run_completed.value],
}


def _time(value: Any) -> datetime | None:
    """Epoch milliseconds (number or string) or ISO 8601 → aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) or (isinstance(value, str) and value.isdigit()):
        return datetime.fromtimestamp(int(value) / 1000, tz=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise UnusableEvent(
                f"time {value!r} is neither epoch milliseconds nor ISO 8601"
            ) from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise UnusableEvent(f"time {value!r} is neither epoch milliseconds nor ISO 8601")


def _count(value: Any, what: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise UnusableEvent(f"{what} {value!r} is not a whole number") from None
    if count < 1:
        raise UnusableEvent(f"{what} must be at least 1, got {count}")
    return count


def _context(
    event: dict[str, Any],
    source: JobSource,
    job_id: str,
    job_arn: str | None,
    status: str,
    tags: dict[str, str],
    *,
    instance_type: str | None,
    instance_count: int | None,
    started_at: datetime | None,
    ended_at: datetime | None,
) -> JobContext:
    try:
        fields = read_tags(tags, job_id, source)
    except JobTagError as exc:
        raise UnusableEvent(str(exc)) from None
    return JobContext(
        source=source,
        job_id=job_id,
        job_arn=job_arn,
        status=status,
        region=str(event.get("region") or ""),
        account=event.get("account"),
        event_time=_time(event.get("time")) or datetime.now(UTC),
        instance_type=instance_type,
        instance_count=instance_count,
        started_at=started_at,
        ended_at=ended_at,
        **fields,
    )


def parse_job_event(event: Any) -> JobContext:
    if not isinstance(event, dict) or not isinstance(event.get("detail"), dict):
        raise UnusableEvent("not an EventBridge event with a detail object")
    source, detail_type, detail = event.get("source"), event.get("detail-type"), event["detail"]
    if not event.get("region"):
        raise UnusableEvent("event has no region")
    if source == SAGEMAKER_SOURCE and detail_type == SAGEMAKER_DETAIL_TYPE:
        return _sagemaker(event, detail)
    if source == BATCH_SOURCE and detail_type == BATCH_DETAIL_TYPE:
        return _batch(event, detail)
    if source == AGENT_SOURCE and detail_type == DetailType.trial_run_completed:
        return _agent(event, detail)
    raise UnusableEvent(f"unknown event {source!r} / {detail_type!r}")


def _sagemaker(event: dict[str, Any], d: dict[str, Any]) -> JobContext:
    name, status = d.get("TrainingJobName"), d.get("TrainingJobStatus")
    if not name:
        raise UnusableEvent("SageMaker event without TrainingJobName")
    if status not in SAGEMAKER_TERMINAL:
        raise UnusableEvent(f"SageMaker job {name} is {status!r}, not finished")
    tags = d.get("Tags") or {}
    if isinstance(tags, list):  # [{"Key": .., "Value": ..}] as the API returns them
        tags = {t.get("Key"): t.get("Value") for t in tags if isinstance(t, dict)}
    resources = d.get("ResourceConfig") or {}
    return _context(
        event,
        JobSource.sagemaker,
        str(name),
        d.get("TrainingJobArn"),
        str(status),
        tags,
        instance_type=resources.get("InstanceType"),
        instance_count=_count(resources.get("InstanceCount"), "ResourceConfig.InstanceCount"),
        started_at=_time(d.get("TrainingStartTime")),
        ended_at=_time(d.get("TrainingEndTime")),
    )


def _batch(event: dict[str, Any], d: dict[str, Any]) -> JobContext:
    job_id, status = d.get("jobId"), d.get("status")
    if not job_id:
        raise UnusableEvent("Batch event without jobId")
    if status not in BATCH_TERMINAL:
        raise UnusableEvent(f"Batch job {job_id} is {status!r}, not finished")
    tags = {str(k): str(v) for k, v in (d.get("tags") or {}).items()}
    # Job parameters can carry the same keys (trncost_workload, ...) where tags are not used.
    params = {str(k): str(v) for k, v in (d.get("parameters") or {}).items()}
    for tag in ALL_TAGS:
        if parameter_name(tag) in params:
            tags.setdefault(tag, params[parameter_name(tag)])
    return _context(
        event,
        JobSource.batch,
        str(job_id),
        d.get("jobArn"),
        str(status),
        tags,
        instance_type=tags.get(INSTANCE_TYPE_TAG),
        instance_count=_count(tags.get(INSTANCE_COUNT_TAG), INSTANCE_COUNT_TAG) or 1,
        started_at=_time(d.get("startedAt")),
        ended_at=_time(d.get("stoppedAt")),
    )


def _agent(event: dict[str, Any], d: dict[str, Any]) -> JobContext:
    run_id, status = d.get("run_id"), d.get("status")
    if not run_id:
        raise UnusableEvent("agent event without run_id")
    if status not in AGENT_TERMINAL:
        raise UnusableEvent(f"agent run {run_id} is {status!r}, not finished")
    tags = {str(k): str(v) for k, v in (d.get("tags") or {}).items()}
    return _context(
        event,
        JobSource.agent,
        str(run_id),
        None,
        str(status),
        tags,
        instance_type=d.get("instance_type") or tags.get(INSTANCE_TYPE_TAG),
        instance_count=_count(
            d.get("instance_count") or tags.get(INSTANCE_COUNT_TAG), "instance_count"
        )
        or 1,
        started_at=_time(d.get("started_at")),
        ended_at=_time(d.get("ended_at")),
    )
