"""SageMaker `CreateTrainingJob` launcher (ml.* instance types).

The job runs the plan's image with its entry command wrapped by the trial agent
(`python3 -m trncost_client.agent -- CMD …`, so the image must have the agent installed); the job's
tags carry the trncost:* keys, so its "SageMaker Training Job State Change" event becomes the
trial record (the agent's own event is off: TRNCOST_SEND_EVENT=0). The job name is derived
from the trial id, so a retried launch meets ResourceInUse and re-uses the running job.
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


class SageMakerLauncher:
    """One instance serves every region: each call goes to the client of the run's region
    (`RegionalClients`; `clients`: injected ones, each for its own region)."""

    def __init__(self, *clients: Any, factory: Callable[[str], Any] | None = None) -> None:
        self.clients = RegionalClients("sagemaker", clients, factory)

    def client(self, region: str) -> Any:
        return self.clients(region)

    @staticmethod
    def create_kwargs(r: LaunchRequest) -> dict[str, Any]:
        if not r.image or not r.role_arn or not r.dataset_uri:
            raise LaunchRejected(
                f"{r.trial_id}: SageMaker needs a training image, a role ARN and a dataset URI"
            )
        output = r.settings.get("output_uri")
        if not output:
            raise LaunchRejected(f"{r.trial_id}: SageMaker needs sagemaker.output_uri")
        env = {**r.environment(), "TRNCOST_SEND_EVENT": "0"}
        return {
            "TrainingJobName": job_name(r.trial_id),
            "AlgorithmSpecification": {
                "TrainingImage": r.image,
                "TrainingInputMode": "File",
                "ContainerEntrypoint": AGENT_PREFIX[:1],
                "ContainerArguments": [*AGENT_PREFIX[1:], *r.entry_command],
            },
            "RoleArn": r.role_arn,
            "HyperParameters": {**r.hyperparameters, "trncost_steps": str(r.steps)},
            "InputDataConfig": [
                {
                    "ChannelName": "train",
                    "DataSource": {
                        "S3DataSource": {
                            "S3DataType": "S3Prefix",
                            "S3Uri": r.dataset_uri,
                            "S3DataDistributionType": "FullyReplicated",
                        }
                    },
                }
            ],
            "OutputDataConfig": {"S3OutputPath": output},
            "ResourceConfig": {
                "InstanceType": r.instance_type,
                "InstanceCount": r.instance_count,
                "VolumeSizeInGB": int(r.settings.get("volume_gb") or 100),
            },
            "StoppingCondition": {"MaxRuntimeInSeconds": r.max_run_seconds},
            "Environment": env,
            "Tags": [{"Key": k, "Value": v} for k, v in r.tags().items()],
        }

    def launch(self, request: LaunchRequest) -> LaunchedJob:
        from botocore.exceptions import ClientError

        kwargs = self.create_kwargs(request)
        client = self.client(request.region)
        try:
            arn = client.create_training_job(**kwargs)["TrainingJobArn"]
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code == "ResourceInUse":  # launched before (a retried step): the same job
                found = client.describe_training_job(TrainingJobName=kwargs["TrainingJobName"])
                return LaunchedJob(kwargs["TrainingJobName"], found.get("TrainingJobArn"), True)
            raise classify(exc, f"CreateTrainingJob {kwargs['TrainingJobName']}") from None
        return LaunchedJob(kwargs["TrainingJobName"], arn)

    def stop(self, job_id: str, region: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self.client(region).stop_training_job(TrainingJobName=job_id)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ValidationException":
                return  # already finished or stopping
            raise classify(exc, f"StopTrainingJob {job_id}") from None
