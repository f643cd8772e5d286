"""Launchers against moto (SageMaker CreateTrainingJob, EC2 RunInstances) and botocore's
Stubber (Batch SubmitJob): the calls carry the trncost:* tags, idempotency and self-termination;
AWS errors become TransientError (retried) or LaunchRejected (recorded)."""

from __future__ import annotations

import base64

import boto3
import pytest
from botocore.stub import Stubber

from trncost.errors import LaunchRejected, TransientError
from trncost.launch.base import LaunchRequest, job_name
from trncost.launch.batch import BatchLauncher
from trncost.launch.ec2 import Ec2Launcher, user_data
from trncost.launch.sagemaker import SageMakerLauncher
from trncost.metrics.jobs import JobSource, read_tags
from trncost.model.trial import Phase

ROLE = "arn:aws:iam::123456789012:role/trncost-training"
PROFILE = "arn:aws:iam::123456789012:instance-profile/trncost-training"


def request(**over) -> LaunchRequest:
    data = dict(
        plan_id="plan-1",
        workload_id="wl-1",
        phase=Phase.baseline,
        run=2,
        trial_id="plan-1-baseline-c0-n1-r2",
        instance_type="ml.trn2.48xlarge",
        instance_count=1,
        region="us-east-1",
        entry_command=["python", "train.py", "--lr", "3e-4"],
        dataset_uri="s3://team-data/cpt",
        steps=500,
        max_run_seconds=3600,
        hyperparameters={"lr": "3e-4"},
        image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
        role_arn=ROLE,
        settings={"output_uri": "s3://team-data/out"},
    )
    data.update(over)
    return LaunchRequest(**data)


def test_tags_are_what_the_ingest_reads() -> None:
    fields = read_tags(request().tags(), "job", JobSource.sagemaker)
    assert fields["workload_id"] == "wl-1" and fields["phase"] == Phase.baseline
    assert fields["trial_id"] == "plan-1-baseline-c0-n1-r2"
    assert fields["plan_id"] == "plan-1" and fields["run"] == "2"


def test_job_names_are_stable_and_fit_the_limits() -> None:
    long = "p" * 60 + "-target-c0-n16-r3_x"
    assert job_name(long) == job_name(long) and len(job_name(long)) <= 63
    assert job_name("a_b:c") == "a-b-c"


def test_sagemaker_creates_a_tagged_job_and_a_retry_reuses_it(aws) -> None:
    sm = boto3.client("sagemaker")
    launcher = SageMakerLauncher(sm)
    job = launcher.launch(request())
    assert job.job_id == "plan-1-baseline-c0-n1-r2" and job.job_arn
    described = sm.describe_training_job(TrainingJobName=job.job_id)
    assert described["ResourceConfig"]["InstanceType"] == "ml.trn2.48xlarge"
    assert described["StoppingCondition"]["MaxRuntimeInSeconds"] == 3600
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=job.job_arn)["Tags"]}
    assert tags["trncost:trial"] == job.job_id and tags["trncost:phase"] == "baseline"
    assert tags["trncost:workload"] == "wl-1" and tags["trncost:plan"] == "plan-1"
    kwargs = SageMakerLauncher.create_kwargs(request())
    assert kwargs["AlgorithmSpecification"]["ContainerArguments"][:3] == [
        "-m",
        "trncost_client.agent",
        "--",
    ]
    assert kwargs["Environment"]["TRNCOST_SEND_EVENT"] == "0"


def test_sagemaker_retry_of_a_launched_run_reuses_the_job() -> None:
    # moto accepts a duplicate job name; SageMaker answers ResourceInUse
    sm = boto3.client("sagemaker", region_name="us-east-1")
    name = "plan-1-baseline-c0-n1-r2"
    arn = f"arn:aws:sagemaker:us-east-1:123456789012:training-job/{name}"
    with Stubber(sm) as stub:
        stub.add_client_error("create_training_job", "ResourceInUse", "name in use")
        stub.add_response(
            "describe_training_job",
            {
                "TrainingJobName": name,
                "TrainingJobArn": arn,
                "TrainingJobStatus": "InProgress",
                "SecondaryStatus": "Training",
                "AlgorithmSpecification": {"TrainingInputMode": "File"},
                "ResourceConfig": {"InstanceCount": 1, "VolumeSizeInGB": 100},
                "StoppingCondition": {},
                "ModelArtifacts": {"S3ModelArtifacts": "s3://team-data/out/m.tar.gz"},
                "CreationTime": "2026-11-29T00:00:00Z",
            },
            {"TrainingJobName": name},
        )
        again = SageMakerLauncher(sm).launch(request())
    assert again.already_running and again.job_id == name and again.job_arn == arn


def test_sagemaker_errors_are_classified() -> None:
    sm = boto3.client("sagemaker", region_name="us-east-1")
    launcher = SageMakerLauncher(sm)
    with Stubber(sm) as stub:
        stub.add_client_error("create_training_job", "ResourceLimitExceeded", "quota")
        with pytest.raises(LaunchRejected, match="ResourceLimitExceeded: quota"):
            launcher.launch(request())
        stub.add_client_error("create_training_job", "ThrottlingException", "slow down")
        with pytest.raises(TransientError, match="ThrottlingException"):
            launcher.launch(request())


@pytest.mark.slow  # moto boots an EC2 instance (~5 s)
def test_ec2_runs_a_self_terminating_tagged_instance(aws) -> None:
    ec2 = boto3.client("ec2")
    boto3.client("iam").create_instance_profile(InstanceProfileName="trncost-training")
    ami = "ami-0123456789abcdef0"  # moto does not check the image
    r = request(
        instance_type="trn3.48xlarge",
        ami=ami,
        image=None,
        settings={"instance_profile_arn": PROFILE, "agent_bus": "trncost-dev"},
    )
    kwargs = Ec2Launcher.run_kwargs(r)
    assert kwargs["InstanceInitiatedShutdownBehavior"] == "terminate"
    assert kwargs["ClientToken"] == job_name(r.trial_id, 64)
    script = user_data(r)
    assert script.rstrip().endswith("shutdown -h now") and "trap 'shutdown -h now' EXIT" in script
    assert "python3 -m trncost_client.agent --send-event -- python train.py --lr 3e-4" in script
    assert "export TRNCOST_BUS=trncost-dev" in script
    # moto has no trn3 in its catalog: run the same call with a type it knows
    job = Ec2Launcher(ec2).launch(
        request(
            instance_type="t3.micro",
            ami=ami,
            image=None,
            settings={"instance_profile_arn": PROFILE},
        )
    )
    (instance,) = ec2.describe_instances(InstanceIds=[job.job_id])["Reservations"][0]["Instances"]
    tags = {t["Key"]: t["Value"] for t in instance["Tags"]}
    assert tags["trncost:trial"] == r.trial_id and tags["trncost:instance-type"] == "t3.micro"
    attr = ec2.describe_instance_attribute(
        InstanceId=job.job_id, Attribute="instanceInitiatedShutdownBehavior"
    )
    assert attr["InstanceInitiatedShutdownBehavior"]["Value"] == "terminate"
    data = ec2.describe_instance_attribute(InstanceId=job.job_id, Attribute="userData")
    assert "shutdown -h now" in base64.b64decode(data["UserData"]["Value"]).decode()
    Ec2Launcher(ec2).stop(job.job_id, "us-east-1")
    state = ec2.describe_instances(InstanceIds=[job.job_id])["Reservations"][0]["Instances"][0]
    assert state["State"]["Name"] in ("shutting-down", "terminated")


def test_ec2_needs_an_instance_profile() -> None:
    with pytest.raises(LaunchRejected, match="instance profile"):
        Ec2Launcher.run_kwargs(request(ami="ami-12345678", settings={}))


def test_batch_submits_with_trncost_parameters_and_terminates() -> None:
    batch = boto3.client("batch", region_name="us-east-1")
    r = request(
        instance_type="trn2.48xlarge",
        image=None,
        settings={"job_queue": "trn-queue", "job_definition": "train:3"},
    )
    kwargs = BatchLauncher.submit_kwargs(r)
    assert kwargs["parameters"]["trncost_workload"] == "wl-1"
    assert kwargs["parameters"]["trncost_phase"] == "baseline"
    assert kwargs["parameters"]["trncost_trial"] == r.trial_id
    assert kwargs["containerOverrides"]["command"][:4] == [
        "python3",
        "-m",
        "trncost_client.agent",
        "--",
    ]
    with Stubber(batch) as stub:
        stub.add_response(
            "submit_job",
            {
                "jobName": kwargs["jobName"],
                "jobId": "job-123",
                "jobArn": "arn:aws:batch:us-east-1:123456789012:job/job-123",
            },
            kwargs,
        )
        stub.add_response(
            "terminate_job", {}, {"jobId": "job-123", "reason": "trncost: plan stopped"}
        )
        launcher = BatchLauncher(batch)
        assert launcher.launch(r).job_id == "job-123"
        launcher.stop("job-123", "us-east-1")
    with Stubber(batch) as stub:
        stub.add_client_error("submit_job", "ClientException", "queue not found")
        with pytest.raises(LaunchRejected, match="ClientException"):
            BatchLauncher(batch).launch(r)
