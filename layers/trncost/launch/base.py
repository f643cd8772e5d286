"""The launcher protocol and what every launcher shares: the request, the tags, job names,
the clients (one per region: a run is launched and stopped in its own candidate's region), and
the mapping of AWS errors to transient (retry) or rejected (record and stop)."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from trncost import aws
from trncost.errors import LaunchRejected, TransientError
from trncost.metrics.jobs import (
    INSTANCE_COUNT_TAG,
    INSTANCE_TYPE_TAG,
    PHASE_TAG,
    PLAN_TAG,
    RUN_TAG,
    TRIAL_ID_TAG,
    TRIAL_TAG,
    WORKLOAD_ID_TAG,
    WORKLOAD_TAG,
    parameter_name,
)
from trncost.model.trial import Phase

# AWS error codes worth retrying (after botocore's own standard retries gave up).
TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "ServerException",
        "RequestTimeout",
    }
)


def classify(exc: Exception, what: str) -> Exception:
    """A botocore ClientError as TransientError or LaunchRejected, with the AWS code."""
    code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
    message = getattr(exc, "response", {}).get("Error", {}).get("Message", str(exc))
    text = f"{what}: {code}: {message}"
    if code in TRANSIENT_CODES:
        return TransientError(text)
    return LaunchRejected(text)


@dataclass(frozen=True)
class LaunchRequest:
    """One run of a trial plan, as any launcher needs it."""

    plan_id: str
    workload_id: str
    phase: Phase
    run: int
    trial_id: str
    instance_type: str
    instance_count: int
    region: str
    entry_command: list[str]
    dataset_uri: str | None
    steps: int
    max_run_seconds: int
    hyperparameters: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    ami: str | None = None
    role_arn: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # the launcher's own plan settings
    code_version: str | None = None

    def tags(self) -> dict[str, str]:
        """The trncost:* tags that join the job to its workload, phase, plan, run and trial:
        the cost-allocation keys (trncost:workload-id, trncost:trial-id: what joins the run's
        bill to trncost, docs/ingest.md) beside the keys trncost has always written. A trial
        executes no estimate: no trncost:estimate-id (a team puts that on the runs it starts
        from an estimate)."""
        tags = {
            WORKLOAD_ID_TAG: self.workload_id,
            TRIAL_ID_TAG: self.trial_id,
            WORKLOAD_TAG: self.workload_id,
            PHASE_TAG: self.phase.value,
            PLAN_TAG: self.plan_id,
            RUN_TAG: str(self.run),
            TRIAL_TAG: self.trial_id,
            INSTANCE_TYPE_TAG: self.instance_type.removeprefix("ml."),
            INSTANCE_COUNT_TAG: str(self.instance_count),
        }
        # No trncost:dataset tag: the dataset URI is not the workload's dataset id, and a
        # trial whose dataset differs from its workload's is not comparable (the ingest
        # assumes the workload's and says so in the record's notes).
        return tags

    def parameters(self) -> dict[str, str]:
        """The same keys as Batch job parameters (trncost_workload, ...)."""
        return {parameter_name(k): v for k, v in self.tags().items()}

    def environment(self) -> dict[str, str]:
        """What the trial agent in the job reads (trncost_client.agent), and the training the
        steps of its phase (TRNCOST_STEPS) and its data (TRNCOST_DATASET_URI, when the plan
        gives it)."""
        env = {
            "TRNCOST_TRIAL_ID": self.trial_id,
            "TRNCOST_TAGS": ",".join(f"{k}={v}" for k, v in sorted(self.tags().items())),
            "TRNCOST_STEPS": str(self.steps),
        }
        if self.dataset_uri:
            env["TRNCOST_DATASET_URI"] = self.dataset_uri
        return env


@dataclass(frozen=True)
class LaunchedJob:
    job_id: str  # SageMaker job name, EC2 instance id(s) comma-separated, Batch job id
    job_arn: str | None = None
    already_running: bool = False


class Launcher(Protocol):
    def launch(self, request: LaunchRequest) -> LaunchedJob:
        """Start the run's job in `request.region`. Idempotent where the service allows (a job
        name or token)."""

    def stop(self, job_id: str, region: str) -> None:
        """Stop the job (cancel, timeout) in `region`, the run's candidate's: where it was
        launched. Stopping a finished job is not an error."""


def job_name(trial_id: str, limit: int = 63) -> str:
    """A name SageMaker and Batch accept ([A-Za-z0-9-], ≤ limit), stable for the trial id."""
    name = re.sub(r"-+", "-", re.sub(r"[^A-Za-z0-9-]", "-", trial_id)).strip("-") or "trial"
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(trial_id.encode()).hexdigest()[:12]
    return f"{name[: limit - 13].rstrip('-')}-{digest}"


class RegionalClients:
    """One boto3 client per region for one service: a run is launched, described and stopped
    in its candidate's region, whatever region another run of the same launcher used.

    Each client is made on first use through `trncost.aws` (the one factory and retry policy)
    and kept, keyed by region. Tests inject their own clients (moto, or a client under a
    botocore Stubber): each is filed under its own region (`client.meta.region_name`), so an
    injected client never answers for another region; `factory` replaces the making."""

    def __init__(
        self,
        service: str,
        clients: Iterable[Any] = (),
        factory: Callable[[str], Any] | None = None,
    ) -> None:
        self.service = service
        self._factory = factory or (lambda region: aws.client(service, region))
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()
        for client in clients:
            self._clients[str(client.meta.region_name)] = client

    def __call__(self, region: str) -> Any:
        """The client of `region` (made now if this is the region's first call)."""
        if not region:
            raise LaunchRejected(f"{self.service}: no region given: a run is launched in its own")
        with self._lock:
            if region not in self._clients:
                self._clients[region] = self._factory(region)
            return self._clients[region]

    @property
    def regions(self) -> list[str]:
        """The regions a client was made or injected for."""
        with self._lock:
            return sorted(self._clients)


# Every launched job runs its entry command under the trial agent.
AGENT_PREFIX = ["python3", "-m", "trncost_client.agent", "--"]
