"""Which job finished, and which workload, phase and trial it belongs to.

A training job joins trncost through tags (SageMaker, Batch) or job parameters (Batch), or
through the trial agent's own event. The keys are defined here, once:

| key                  | meaning                                                   | required |
|----------------------|-----------------------------------------------------------|----------|
| trncost:workload-id  | workload id (also read as trncost:workload, the old key)  | yes      |
| trncost:phase        | fit, baseline or target                                   | yes      |
| trncost:trial-id     | trial id (also read as trncost:trial; default: derived    | no       |
|                      | from the job identity)                                    |          |
| trncost:estimate-id  | the estimate a run executes (its billed actuals)          | no       |
| trncost:plan         | trial plan id (set by the trial workflow)                 | no       |
| trncost:run          | run number within the phase                               | no       |
| trncost:code-version | code version (e.g. git SHA)                               | no       |
| trncost:dataset      | dataset id                                                | no       |
| trncost:scope        | what the job's clock includes, comma-separated subset of  | no       |
|                      | compile,data_loading,checkpoints,evaluation (default all) |          |
| trncost:instance-type| instance type (Batch and agent jobs; SageMaker says it)   | Batch    |
| trncost:instance-count| instance count (Batch and agent jobs)                    | no (1)   |

Batch job parameters use the same keys with `_` for `:` and `-` (`trncost_workload_id`).

`trncost:workload-id`, `trncost:estimate-id` and `trncost:trial-id` are the cost-allocation tags
that join a forecast to its bill (docs/ingest.md, "Tags that join forecast and bill"): lower-case
ASCII with only `:` and `-`, so every spelling AWS billing data may give them
(`user:trncost:estimate-id`, `user_trncost_estimate_id`) names one key. Every job trncost
launches carries both the new keys and the old ones (`trncost:workload`, `trncost:trial`); the
ingest reads either, the new key first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TypedDict

from trncost.errors import JobTagError
from trncost.model.candidate import Precision
from trncost.model.trial import Phase, TimingScope

WORKLOAD_TAG = "trncost:workload"  # the old key, still written and read
PHASE_TAG = "trncost:phase"
TRIAL_TAG = "trncost:trial"  # the old key, still written and read
# The cost-allocation tags (activated in the billing console: docs/ingest.md).
WORKLOAD_ID_TAG = "trncost:workload-id"
ESTIMATE_ID_TAG = "trncost:estimate-id"
TRIAL_ID_TAG = "trncost:trial-id"
PLAN_TAG = "trncost:plan"
RUN_TAG = "trncost:run"
CODE_VERSION_TAG = "trncost:code-version"
DATASET_TAG = "trncost:dataset"
SCOPE_TAG = "trncost:scope"
INSTANCE_TYPE_TAG = "trncost:instance-type"
INSTANCE_COUNT_TAG = "trncost:instance-count"
PRECISION_TAG = "trncost:precision"  # bf16, fp16, tf32, fp32, fp8, mxfp8, mxfp4
SCOPE_FIELDS = ("compile", "data_loading", "checkpoints", "evaluation")
ALL_TAGS = (
    WORKLOAD_TAG,
    PHASE_TAG,
    TRIAL_TAG,
    WORKLOAD_ID_TAG,
    ESTIMATE_ID_TAG,
    TRIAL_ID_TAG,
    PLAN_TAG,
    RUN_TAG,
    CODE_VERSION_TAG,
    DATASET_TAG,
    SCOPE_TAG,
    INSTANCE_TYPE_TAG,
    INSTANCE_COUNT_TAG,
    PRECISION_TAG,
)


class JobSource(StrEnum):
    sagemaker = "sagemaker"
    batch = "batch"
    agent = "agent"
    log = "log"  # a trial imported from its own logs (`trncost trial import`, the API)


def parameter_name(tag: str) -> str:
    """The Batch job parameter name for a tag key: trncost:code-version → trncost_code_version."""
    return re.sub(r"[:\-]", "_", tag)


@dataclass(frozen=True)
class JobContext:
    """A finished job, identified, with what its tags say. Times are UTC."""

    source: JobSource
    job_id: str  # SageMaker training job name, Batch job id, or the agent's run id
    job_arn: str | None
    status: str  # the terminal status as the source spells it (Completed, FAILED, ...)
    region: str
    account: str | None
    event_time: datetime
    workload_id: str
    phase: Phase
    trial_id: str
    plan_id: str | None
    run: str | None
    code_version: str | None
    dataset_id: str | None
    timing_scope: TimingScope
    instance_type: str | None
    instance_count: int | None
    started_at: datetime | None
    ended_at: datetime | None
    log_stream: str | None = None  # the job's CloudWatch Logs stream, when its event names it
    notes: tuple[str, ...] = ()  # what the job itself reported for the record (the agent)
    precision: Precision | None = None  # the trncost:precision tag (the MFU check's peak)
    estimate_id: str | None = None  # the trncost:estimate-id tag: the estimate the run executes

    @property
    def dedup_key(self) -> str:
        """Job identity and terminal status: the same pair is the same fact."""
        return f"{self.source}#{self.region}#{self.job_id}#{self.status}"


class TagFields(TypedDict):
    """The JobContext fields a job's tags give."""

    workload_id: str
    phase: Phase
    trial_id: str
    plan_id: str | None
    run: str | None
    code_version: str | None
    dataset_id: str | None
    timing_scope: TimingScope
    precision: Precision | None
    estimate_id: str | None


def read_tags(tags: dict[str, str], job_id: str, source: JobSource) -> TagFields:
    """The trncost fields from a job's tags (or Batch parameters, already renamed)."""
    workload = tags.get(WORKLOAD_ID_TAG) or tags.get(WORKLOAD_TAG)
    if not workload:
        raise JobTagError(
            f"job {job_id} has no {WORKLOAD_TAG} tag (nor {WORKLOAD_ID_TAG}): which workload is it?"
        )
    phase_raw = tags.get(PHASE_TAG)
    try:
        phase = Phase(phase_raw or "")
    except ValueError:
        raise JobTagError(
            f"job {job_id} has {PHASE_TAG}={phase_raw!r}; use fit, baseline or target"
        ) from None
    scope_raw = tags.get(SCOPE_TAG)
    if scope_raw is None:
        included = set(SCOPE_FIELDS)
    else:
        included = {s.strip() for s in scope_raw.split(",") if s.strip()}
        unknown = included - set(SCOPE_FIELDS)
        if unknown:
            raise JobTagError(
                f"job {job_id} has {SCOPE_TAG} with unknown parts {sorted(unknown)}; "
                f"use a subset of {','.join(SCOPE_FIELDS)}"
            )
    precision_raw = tags.get(PRECISION_TAG)
    try:
        precision = Precision(precision_raw.strip().lower()) if precision_raw else None
    except ValueError:
        raise JobTagError(
            f"job {job_id} has {PRECISION_TAG}={precision_raw!r}; use one of "
            + ", ".join(p.value for p in Precision)
        ) from None
    trial_id = (
        tags.get(TRIAL_ID_TAG)
        or tags.get(TRIAL_TAG)
        or f"{source}-{re.sub(r'[^A-Za-z0-9._:+-]', '-', job_id)}"
    )
    return TagFields(
        workload_id=workload,
        phase=phase,
        trial_id=trial_id[:128],
        plan_id=tags.get(PLAN_TAG),
        run=tags.get(RUN_TAG),
        code_version=tags.get(CODE_VERSION_TAG),
        dataset_id=tags.get(DATASET_TAG),
        timing_scope=TimingScope(**{f: f in included for f in SCOPE_FIELDS}),
        precision=precision,
        estimate_id=tags.get(ESTIMATE_ID_TAG) or None,
    )
