"""AWS Batch `SubmitJob` launcher.

The job definition (given in the plan) holds the image and resources; the launcher overrides
the command with the agent-wrapped entry command, passes the trncost keys as job parameters
(`trncost_workload`, `trncost_phase`, … which the ingest reads from the "Batch Job State
Change" event) and as tags, and sets the attempt timeout to the plan's max run time. SubmitJob
has no idempotency token: the plan store claims each run before its launch, so only a crash
between SubmitJob and the store write could submit a run twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trncost.errors import LaunchRejected
from trncost.launch.base import (
    AGENT_PREFIX,
    LaunchedJob,
    LaunchRequest,
    RegionalClients,
    classify,
    job_name,
)


class BatchLauncher:
    """One instance serves every region: each call goes to the client of the run's region
    (`RegionalClients`; `clients`: injected ones, each for its own region)."""

    def __init__(self, *clients: Any, factory: Callable[[str], Any] | None = None) -> None:
        self.clients = RegionalClients("batch", clients, factory)

    def client(self, region: str) -> Any:
        return self.clients(region)

    @staticmethod
    def submit_kwargs(r: LaunchRequest) -> dict[str, Any]:
        s = r.settings
        if not s.get("job_queue") or not s.get("job_definition"):
            raise LaunchRejected(f"{r.trial_id}: Batch needs batch.job_queue and job_definition")
        env = {**r.environment(), "TRNCOST_SEND_EVENT": "0"}
        return {
            "jobName": job_name(r.trial_id, 128),
            "jobQueue": s["job_queue"],
            "jobDefinition": s["job_definition"],
            "parameters": {**r.parameters(), "trncost_steps": str(r.steps)},
            "containerOverrides": {
                "command": [*AGENT_PREFIX, *r.entry_command],
                "environment": [{"name": k, "value": v} for k, v in sorted(env.items())],
            },
            "timeout": {"attemptDurationSeconds": max(60, r.max_run_seconds)},
            "tags": r.tags(),
            "propagateTags": True,
        }

    def launch(self, request: LaunchRequest) -> LaunchedJob:
        from botocore.exceptions import ClientError

        kwargs = self.submit_kwargs(request)
        try:
            out = self.client(request.region).submit_job(**kwargs)
        except ClientError as exc:
            raise classify(exc, f"SubmitJob {kwargs['jobName']}") from None
        return LaunchedJob(out["jobId"], out.get("jobArn"))

    def stop(self, job_id: str, region: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self.client(region).terminate_job(jobId=job_id, reason="trncost: plan stopped")
        except ClientError as exc:
            raise classify(exc, f"TerminateJob {job_id}") from None
