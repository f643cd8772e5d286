"""Job state-change events → JobContext. Pure: an EventBridge event in, a JobContext out, or
an UnusableEvent saying why the event cannot become a trial record.

Shapes follow AWS's documented events: "SageMaker Training Job State Change" (times as epoch
milliseconds, numbers or strings; no billable time in the event), "Batch Job State Change",
and trncost's own "Trial Run Completed" from the trial agent.

Every malformed event is an UnusableEvent with its reason, never another exception (which
would retry the message into the dead-letter queue). The classes, each tested
(tests/unit/test_malformed_events.py):

1. a time out of range or not a number (NaN, infinite, 1e20 ms, year 9999);
2. a count that is not a whole number in range (NaN, infinite, 2.5, 10**30, a boolean);
3. a part that should be an object and is not (detail.ResourceConfig, Tags, tags, parameters);
4. an identifier AWS would refuse, or not a string (region, job name, instance type, tags);
5. (services/ingest.py) a message body JSON cannot parse safely (nested deeper than 64, an
   integer over 30 digits), besides one that is not JSON at all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trncost.errors import JobTagError, UnusableEvent
from trncost.events import AGENT_SOURCE, DetailType
from trncost.metrics.jobs import (
    ALL_TAGS,
    ESTIMATE_ID_TAG,
    INSTANCE_COUNT_TAG,
    INSTANCE_TYPE_TAG,
    PHASE_TAG,
    WORKLOAD_ID_TAG,
    WORKLOAD_TAG,
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

# What AWS accepts, so that nothing the event names makes an AWS call fail with a 4xx.
REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")
SAGEMAKER_JOB_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
INSTANCE_TYPE = re.compile(r"^(ml\.)?[a-z][a-z0-9-]*\.[a-z0-9-]+$")
MAX_ID_LENGTH = 256  # a Batch job id (UUID), an agent run id, a tag value
# Epoch milliseconds trncost takes: 2000-01-01 to 2100-01-01 (a job's times, an event's time).
MIN_EPOCH_MS = 946_684_800_000
MAX_EPOCH_MS = 4_102_444_800_000
MAX_INSTANCE_COUNT = 100_000  # Candidate.instance_count's bound

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


def _time(value: Any, what: str = "time") -> datetime | None:
    """Epoch milliseconds (number or string) or ISO 8601 → aware UTC datetime, between 2000
    and 2100 (class 1)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UnusableEvent(f"{what} {_shown(value)} is neither epoch milliseconds nor ISO 8601")
    if isinstance(value, int | float) or value.isdigit():
        number = float(value) if isinstance(value, float) else int(value)
        if not (isinstance(number, int) or math.isfinite(number)):
            raise UnusableEvent(f"{what} {_shown(value)} is not a number of milliseconds")
        if not MIN_EPOCH_MS <= number <= MAX_EPOCH_MS:
            raise UnusableEvent(f"{what} {_shown(value)} ms is not between 2000 and 2100")
        return datetime.fromtimestamp(int(number) / 1000, tz=UTC)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UnusableEvent(
            f"{what} {_shown(value)} is neither epoch milliseconds nor ISO 8601"
        ) from None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if not 2000 <= parsed.year < 2100:
        raise UnusableEvent(f"{what} {_shown(value)} is not between 2000 and 2100")
    return parsed


def _count(value: Any, what: str) -> int | None:
    """A whole number of instances, 1..100,000 (class 2)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UnusableEvent(f"{what} {_shown(value)} is not a whole number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise UnusableEvent(f"{what} {_shown(value)} is not a whole number")
    try:
        count = int(value)
    except (TypeError, ValueError, OverflowError):
        raise UnusableEvent(f"{what} {_shown(value)} is not a whole number") from None
    if count < 1:
        raise UnusableEvent(f"{what} must be at least 1, got {count}")
    if count > MAX_INSTANCE_COUNT:
        raise UnusableEvent(f"{what} must be at most {MAX_INSTANCE_COUNT}, got {_shown(value)}")
    return count


def _object(value: Any, what: str) -> dict[str, Any]:
    """A part of the event that must be an object (class 3); missing is empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UnusableEvent(f"{what} is {type(value).__name__}, not an object")
    return value


def _strings(value: Any, what: str) -> dict[str, str]:
    """Tags or parameters: an object of strings (numbers are written as text, as AWS does)."""
    out: dict[str, str] = {}
    for key, item in _object(value, what).items():
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise UnusableEvent(f"{what}.{key} is {type(item).__name__}, not a string")
        text = str(item)
        if len(text) > MAX_ID_LENGTH:
            raise UnusableEvent(f"{what}.{key} is longer than {MAX_ID_LENGTH} characters")
        out[str(key)] = text
    return out


def _identifier(
    value: Any, what: str, pattern: re.Pattern[str] | None = None, required: bool = True
) -> str | None:
    """A name AWS will be asked about: a string of the shape AWS accepts (class 4)."""
    if value is None or value == "":
        if required:
            raise UnusableEvent(f"event has no {what}")
        return None
    if not isinstance(value, str) or len(value) > MAX_ID_LENGTH:
        raise UnusableEvent(f"{what} {_shown(value)} is not a name AWS uses")
    if pattern is not None and not pattern.match(value):
        raise UnusableEvent(f"{what} {_shown(value)} is not a valid {what}")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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
    log_stream: str | None = None,
    notes: tuple[str, ...] = (),
) -> JobContext:
    try:
        fields = read_tags(tags, job_id, source)
    except JobTagError as exc:
        raise UnusableEvent(str(exc)) from None
    account = event.get("account")
    return JobContext(
        source=source,
        job_id=job_id,
        job_arn=job_arn if isinstance(job_arn, str) else None,
        status=status,
        region=str(_identifier(event.get("region"), "region", REGION)),
        account=account if isinstance(account, str) else None,
        event_time=_time(event.get("time")) or datetime.now(UTC),
        instance_type=instance_type,
        instance_count=instance_count,
        started_at=started_at,
        ended_at=ended_at,
        log_stream=log_stream,
        notes=notes,
        **fields,
    )


def parse_job_event(event: Any) -> JobContext:
    if not isinstance(event, dict) or not isinstance(event.get("detail"), dict):
        raise UnusableEvent("not an EventBridge event with a detail object")
    source, detail_type, detail = event.get("source"), event.get("detail-type"), event["detail"]
    _identifier(event.get("region"), "region", REGION)
    if source == SAGEMAKER_SOURCE and detail_type == SAGEMAKER_DETAIL_TYPE:
        return _sagemaker(event, detail)
    if source == BATCH_SOURCE and detail_type == BATCH_DETAIL_TYPE:
        return _batch(event, detail)
    if source == AGENT_SOURCE and detail_type == DetailType.trial_run_completed:
        return _agent(event, detail)
    raise UnusableEvent(f"unknown event {source!r} / {detail_type!r}")


def _sagemaker(event: dict[str, Any], d: dict[str, Any]) -> JobContext:
    if not d.get("TrainingJobName"):
        raise UnusableEvent("SageMaker event without TrainingJobName")
    name = _identifier(d.get("TrainingJobName"), "training job name", SAGEMAKER_JOB_NAME)
    status = d.get("TrainingJobStatus")
    if status not in SAGEMAKER_TERMINAL:
        raise UnusableEvent(f"SageMaker job {name} is {_shown(status)}, not finished")
    tags = d.get("Tags") or {}
    if isinstance(tags, list):  # [{"Key": .., "Value": ..}] as the API returns them
        tags = {t.get("Key"): t.get("Value") for t in tags if isinstance(t, dict)}
    resources = _object(d.get("ResourceConfig"), "detail.ResourceConfig")
    return _context(
        event,
        JobSource.sagemaker,
        str(name),
        d.get("TrainingJobArn"),
        str(status),
        _strings(tags, "detail.Tags"),
        instance_type=_identifier(
            resources.get("InstanceType"), "instance type", INSTANCE_TYPE, required=False
        ),
        instance_count=_count(resources.get("InstanceCount"), "ResourceConfig.InstanceCount"),
        started_at=_time(d.get("TrainingStartTime"), "TrainingStartTime"),
        ended_at=_time(d.get("TrainingEndTime"), "TrainingEndTime"),
    )


@dataclass(frozen=True)
class EstimateRun:
    """A finished SageMaker training job tagged with the estimate it executes."""

    job_name: str
    region: str
    estimate_id: str
    workload_id: str | None
    status: str
    is_trial: bool  # it is a trial too (a trncost:phase tag): a trial record is made as well


def estimate_run(event: Any) -> EstimateRun | None:
    """The SageMaker job of an estimate an event announces (its `trncost:estimate-id` tag);
    None for any other event, or one the trial ingest will judge (a malformed one)."""
    if not isinstance(event, dict) or not isinstance(event.get("detail"), dict):
        return None
    if (event.get("source"), event.get("detail-type")) != (SAGEMAKER_SOURCE, SAGEMAKER_DETAIL_TYPE):
        return None
    d = event["detail"]
    tags = d.get("Tags") or {}
    if isinstance(tags, list):
        tags = {t.get("Key"): t.get("Value") for t in tags if isinstance(t, dict)}
    if not isinstance(tags, dict):
        return None
    estimate = tags.get(ESTIMATE_ID_TAG)
    name, region, status = d.get("TrainingJobName"), event.get("region"), d.get("TrainingJobStatus")
    if not isinstance(estimate, str) or not estimate or len(estimate) > 128:
        return None
    if not (isinstance(name, str) and SAGEMAKER_JOB_NAME.match(name)):
        return None
    if not (isinstance(region, str) and REGION.match(region)) or status not in SAGEMAKER_TERMINAL:
        return None
    workload = tags.get(WORKLOAD_ID_TAG) or tags.get(WORKLOAD_TAG)
    return EstimateRun(
        job_name=name,
        region=region,
        estimate_id=estimate,
        workload_id=workload if isinstance(workload, str) and workload else None,
        status=str(status),
        is_trial=bool(tags.get(PHASE_TAG)),
    )


def _batch(event: dict[str, Any], d: dict[str, Any]) -> JobContext:
    if not d.get("jobId"):
        raise UnusableEvent("Batch event without jobId")
    job_id = _identifier(d.get("jobId"), "Batch job id")
    status = d.get("status")
    if status not in BATCH_TERMINAL:
        raise UnusableEvent(f"Batch job {job_id} is {_shown(status)}, not finished")
    tags = _strings(d.get("tags"), "detail.tags")
    # Job parameters can carry the same keys (trncost_workload, ...) where tags are not used.
    params = _strings(d.get("parameters"), "detail.parameters")
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
        instance_type=_identifier(
            tags.get(INSTANCE_TYPE_TAG), "instance type", INSTANCE_TYPE, required=False
        ),
        instance_count=_count(tags.get(INSTANCE_COUNT_TAG), INSTANCE_COUNT_TAG) or 1,
        started_at=_time(d.get("startedAt"), "startedAt"),
        ended_at=_time(d.get("stoppedAt"), "stoppedAt"),
        log_stream=_batch_stream(d),
    )


def _batch_stream(d: dict[str, Any]) -> str | None:
    """The job's CloudWatch Logs stream: container.logStreamName (DescribeJobs' field, which
    the event carries), else the last attempt's."""
    container: dict[str, Any] = d["container"] if isinstance(d.get("container"), dict) else {}
    stream = container.get("logStreamName")
    attempts: list[Any] = d["attempts"] if isinstance(d.get("attempts"), list) else []
    for attempt in reversed(attempts):
        if stream:
            break
        if isinstance(attempt, dict) and isinstance(attempt.get("container"), dict):
            stream = attempt["container"].get("logStreamName")
    return str(stream) if stream else None


def _notes(value: Any) -> tuple[str, ...]:
    """The agent's notes for the record (neuron-monitor's instance facts): strings only, at most
    ten of 500 characters; anything else is no notes, never a failure."""
    if not isinstance(value, list):
        return ()
    return tuple(x[:500] for x in value[:10] if isinstance(x, str))


def _agent(event: dict[str, Any], d: dict[str, Any]) -> JobContext:
    if not d.get("run_id"):
        raise UnusableEvent("agent event without run_id")
    run_id = _identifier(d.get("run_id"), "agent run id")
    status = d.get("status")
    if status not in AGENT_TERMINAL:
        raise UnusableEvent(f"agent run {run_id} is {_shown(status)}, not finished")
    tags = _strings(d.get("tags"), "detail.tags")
    return _context(
        event,
        JobSource.agent,
        str(run_id),
        None,
        str(status),
        tags,
        instance_type=_identifier(
            d.get("instance_type") or tags.get(INSTANCE_TYPE_TAG),
            "instance type",
            INSTANCE_TYPE,
            required=False,
        ),
        instance_count=_count(
            d.get("instance_count") or tags.get(INSTANCE_COUNT_TAG), "instance_count"
        )
        or 1,
        started_at=_time(d.get("started_at"), "started_at"),
        ended_at=_time(d.get("ended_at"), "ended_at"),
        notes=_notes(d.get("notes")),
    )
