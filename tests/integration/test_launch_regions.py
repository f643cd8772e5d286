"""A run is launched, stopped and priced in its own candidate's region, and a plan whose
candidates lie outside the deployed region is refused at submission.

The launchers on moto in two regions through one launcher instance (SageMaker
CreateTrainingJob, EC2 RunInstances/TerminateInstances, Batch SubmitJob/TerminateJob): each job
exists only in its own region and is stopped there. moto has no StopTrainingJob: the SageMaker
clients answer it as the service would, from their own region's jobs, and note where it went."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from botocore.awsrequest import AWSResponse

from tests.support.factories import instance_quote, quote, snapshot, workload
from tests.support.handlers import FakeContext, api_event
from tests.support.moto_env import mocked_aws
from tests.support.workflow_kit import FakeLauncher, fixed_prices, plan, plan_data
from trncost import aws as aws_factory
from trncost.api import errors, trial_plans
from trncost.api.context import serving
from trncost.errors import InvalidInput, LaunchRejected
from trncost.launch.base import LaunchRequest, RegionalClients
from trncost.launch.batch import BatchLauncher
from trncost.launch.ec2 import Ec2Launcher
from trncost.launch.sagemaker import SageMakerLauncher
from trncost.model.price import PriceKey
from trncost.model.trial import Phase
from trncost.services.trial_plans import TrialPlanService
from trncost.services.trial_steps import TrialSteps, price_lookup_from
from trncost.settings import REGION_ENV, TABLE_NAME_ENV, Settings
from trncost.store.plans import PlanStore
from trncost.store.records import RecordStore
from trncost.wiring import Wiring
from trncost.workflow.definition import render, substitutions

EAST, WEST = "us-east-2", "us-west-2"
ROLE = "arn:aws:iam::123456789012:role/trncost-training"
PROFILE = "arn:aws:iam::123456789012:instance-profile/trncost-training"
AMI = "ami-0123456789abcdef0"  # moto does not check the image


def request(region: str, trial_id: str, **over: Any) -> LaunchRequest:
    data: dict[str, Any] = dict(
        plan_id="plan-1",
        workload_id="wl-1",
        phase=Phase.fit,
        run=1,
        trial_id=trial_id,
        instance_type="ml.trn2.48xlarge",
        instance_count=1,
        region=region,
        entry_command=["python", "train.py"],
        dataset_uri="s3://team-data/cpt",
        steps=50,
        max_run_seconds=3600,
        image="123456789012.dkr.ecr.us-east-2.amazonaws.com/train:1",
        role_arn=ROLE,
        settings={"output_uri": "s3://team-data/out"},
    )
    data.update(over)
    return LaunchRequest(**data)


# -- the clients --------------------------------------------------------------------------------
def _fake(region: str) -> Any:
    return SimpleNamespace(meta=SimpleNamespace(region_name=region))


def test_one_client_per_region_made_once_and_an_injected_one_only_for_its_own() -> None:
    # Given a us-east-2 client injected and a factory for the others
    made: list[str] = []

    def factory(region: str) -> Any:
        made.append(region)
        return _fake(region)

    east = _fake(EAST)
    clients = RegionalClients("sagemaker", [east], factory)
    # When each region is asked for twice
    got = [clients(r) for r in (EAST, WEST, EAST, WEST)]
    # Then us-east-2 is the injected client, us-west-2 was made once, for us-west-2
    assert got[0] is east and got[2] is east and got[1] is got[3]
    assert got[1].meta.region_name == WEST and made == [WEST]
    assert clients.regions == [EAST, WEST]
    with pytest.raises(LaunchRejected, match="no region"):
        clients("")


def test_the_default_clients_come_from_the_one_factory(monkeypatch) -> None:
    # Given the factory trncost.aws, watched
    asked: list[tuple[str, str | None]] = []
    monkeypatch.setattr(
        aws_factory, "client", lambda service, region=None: asked.append((service, region))
    )
    # When each launcher asks for a client in two regions
    for launcher in (SageMakerLauncher(), Ec2Launcher(), BatchLauncher()):
        launcher.client(EAST)
        launcher.client(WEST)
        launcher.client(EAST)
    # Then each service's client was made once per region, in that region
    assert asked == [
        ("sagemaker", EAST),
        ("sagemaker", WEST),
        ("ec2", EAST),
        ("ec2", WEST),
        ("batch", EAST),
        ("batch", WEST),
    ]


# -- SageMaker ------------------------------------------------------------------------------------
def _answering_stops(client: Any, stopped: list[tuple[str, str]]) -> Any:
    """moto has no StopTrainingJob: answer it as SageMaker does, in the client's own region (a
    job that is not there is a ValidationException), and note where the call went."""
    region = client.meta.region_name

    def stop(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        name = json.loads(params["body"])["TrainingJobName"]  # the serialized request
        client.describe_training_job(TrainingJobName=name)  # not in this region: raises
        stopped.append((region, name))
        return AWSResponse(f"https://api.sagemaker.{region}.amazonaws.com", 200, {}, None), {}

    client.meta.events.register("before-call.sagemaker.StopTrainingJob", stop)
    return client


def _training_jobs(region: str) -> list[str]:
    sm = boto3.client("sagemaker", region_name=region)
    return [j["TrainingJobName"] for j in sm.list_training_jobs()["TrainingJobSummaries"]]


def test_sagemaker_launches_and_stops_each_job_in_its_own_region(aws) -> None:
    # Given one launcher whose clients come from the one factory (stops answered per region)
    stopped: list[tuple[str, str]] = []
    launcher = SageMakerLauncher(
        factory=lambda region: _answering_stops(aws_factory.client("sagemaker", region), stopped)
    )
    # When it launches a run in us-east-2, then one in us-west-2
    east = launcher.launch(request(EAST, "plan-1-fit-c0-n1-r1"))
    west = launcher.launch(request(WEST, "plan-1-fit-c1-n1-r1"))
    # Then each job exists in its own region only
    assert _training_jobs(EAST) == [east.job_id] and _training_jobs(WEST) == [west.job_id]
    assert f":{EAST}:" in (east.job_arn or "") and f":{WEST}:" in (west.job_arn or "")
    # And each is stopped in its own region (the other order first: no first-region client)
    launcher.stop(west.job_id, WEST)
    launcher.stop(east.job_id, EAST)
    assert stopped == [(WEST, west.job_id), (EAST, east.job_id)]
    assert launcher.clients.regions == [EAST, WEST]


# -- EC2 ------------------------------------------------------------------------------------------
def _instances(region: str) -> dict[str, str]:
    ec2 = boto3.client("ec2", region_name=region)
    return {
        i["InstanceId"]: i["State"]["Name"]
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
    }


@pytest.mark.slow  # moto boots an EC2 instance in each region (~5 s)
def test_ec2_runs_and_terminates_each_instance_in_its_own_region(aws) -> None:
    # Given one EC2 launcher and the training instance profile
    boto3.client("iam").create_instance_profile(InstanceProfileName="trncost-training")
    launcher = Ec2Launcher()
    ec2_run = dict(instance_type="t3.micro", image=None, ami=AMI)
    settings = {"instance_profile_arn": PROFILE}
    # When it runs an instance in us-east-2, then one in us-west-2
    east = launcher.launch(request(EAST, "plan-1-fit-c0-n1-r1", settings=settings, **ec2_run))
    west = launcher.launch(request(WEST, "plan-1-fit-c1-n1-r1", settings=settings, **ec2_run))
    # Then each instance is in its own region only
    assert list(_instances(EAST)) == [east.job_id] and list(_instances(WEST)) == [west.job_id]
    # And each is terminated in its own region
    launcher.stop(west.job_id, WEST)
    assert _instances(EAST)[east.job_id] == "running"
    launcher.stop(east.job_id, EAST)
    assert _instances(EAST)[east.job_id] in ("shutting-down", "terminated")
    assert _instances(WEST)[west.job_id] in ("shutting-down", "terminated")


# -- Batch ----------------------------------------------------------------------------------------
@pytest.fixture
def simple_batch(monkeypatch) -> Any:
    """moto's Batch without Docker (a submitted job is marked done at once), with a queue and a
    job definition of the same names in both regions."""
    with mocked_aws(monkeypatch, config={"batch": {"use_docker": False}}):
        role = boto3.client("iam").create_role(RoleName="batch", AssumeRolePolicyDocument="{}")
        for region in (EAST, WEST):
            batch = boto3.client("batch", region_name=region)
            env = batch.create_compute_environment(
                computeEnvironmentName="trn",
                type="UNMANAGED",
                state="ENABLED",
                serviceRole=role["Role"]["Arn"],
            )
            batch.create_job_queue(
                jobQueueName="trn-queue",
                state="ENABLED",
                priority=1,
                computeEnvironmentOrder=[
                    {"order": 1, "computeEnvironment": env["computeEnvironmentArn"]}
                ],
            )
            batch.register_job_definition(
                jobDefinitionName="train",
                type="container",
                containerProperties={"image": "busybox", "vcpus": 1, "memory": 128},
            )
        yield


def _batch_job(region: str, job_id: str) -> dict[str, Any] | None:
    jobs = boto3.client("batch", region_name=region).describe_jobs(jobs=[job_id])["jobs"]
    return jobs[0] if jobs else None


def test_batch_submits_and_terminates_each_job_in_its_own_region(simple_batch) -> None:
    # Given one Batch launcher
    launcher = BatchLauncher()
    batch_run = dict(
        instance_type="trn2.48xlarge",
        image=None,
        settings={"job_queue": "trn-queue", "job_definition": "train"},
    )
    # When it submits a job in us-east-2, then one in us-west-2
    east = launcher.launch(request(EAST, "plan-1-fit-c0-n1-r1", **batch_run))
    west = launcher.launch(request(WEST, "plan-1-fit-c1-n1-r1", **batch_run))
    # Then each job exists in its own region only
    assert _batch_job(EAST, east.job_id) and _batch_job(WEST, west.job_id)
    assert _batch_job(WEST, east.job_id) is None and _batch_job(EAST, west.job_id) is None
    assert f":{EAST}:" in (east.job_arn or "") and f":{WEST}:" in (west.job_arn or "")
    # And each is terminated in its own region
    launcher.stop(west.job_id, WEST)
    launcher.stop(east.job_id, EAST)
    for region, job in ((EAST, east), (WEST, west)):
        found = _batch_job(region, job.job_id)
        assert found and found.get("statusReason") == "trncost: plan stopped", found


# -- the trial steps: stop and price each run in its own region -----------------------------------
@dataclass
class WhereLauncher(FakeLauncher):
    """A FakeLauncher that notes the region each stop is asked for."""

    stops: list[tuple[str, str]] = field(default_factory=list)

    def stop(self, job_id: str, region: str) -> None:
        self.stops.append((job_id, region))


def _two_region_plan(**over: Any):
    # stored as it is (not submitted): a plan from before the region rule, or a test's own
    candidates = [
        {"instance_type": "trn2.48xlarge", "instance_count": 1, "region": EAST},
        {"instance_type": "trn2.48xlarge", "instance_count": 1, "region": WEST},
    ]
    ec2 = {
        "launcher": "ec2",
        "image": None,
        "sagemaker": None,
        "ami": AMI,
        "ec2": {"subnet_id": "subnet-0123abcd", "security_group_ids": ["sg-0123abcd"]},
    }
    return plan(candidates=candidates, baseline=None, target=None, **{**ec2, **over})


def _steps(table: str, launcher: FakeLauncher, prices: Any) -> TrialSteps:
    records = launcher.records
    records.put_workload(workload(), "2026-11-28T00:00:00+00:00")
    return TrialSteps(PlanStore(table), records, lambda kind: launcher, prices)


def test_runs_are_launched_and_stopped_in_their_candidates_regions(table) -> None:
    # Given a plan with a candidate in each region, whose runs never report
    launcher = WhereLauncher(RecordStore(table), outcome=lambda r: None)
    steps = _steps(table, launcher, fixed_prices("10"))
    p = _two_region_plan()
    steps.plans.create(p, "2026-11-29T00:00:00+00:00")
    # When both runs are launched and the plan times out
    for index in (0, 1):
        steps.handle({"action": "launch", "plan_id": p.plan_id, "index": index})
    steps.handle({"action": "record_outcome", "plan_id": p.plan_id, "outcome": "timeout"})
    # Then each run went to, and was stopped in, its own candidate's region
    assert [r.region for r in launcher.launched] == [EAST, WEST]
    c0, c1 = (f"job-{r.trial_id}" for r in launcher.launched)
    assert sorted(launcher.stops) == [(c0, EAST), (c1, WEST)]


def test_each_run_is_priced_with_its_own_regions_quote(table) -> None:
    # Given the same instance type at 44.70 USD/h in us-east-2 and 50 USD/h in us-west-2
    snap = snapshot(
        quote(PriceKey.for_instance("trn2.48xlarge", EAST), [(0, None, "44.70")], "Hrs"),
        quote(PriceKey.for_instance("trn2.48xlarge", WEST), [(0, None, "50")], "Hrs"),
        usage=False,
    )
    launcher = WhereLauncher(RecordStore(table))  # each run records 3720 billed seconds
    steps = _steps(table, launcher, price_lookup_from(lambda: snap))
    p = _two_region_plan()
    steps.plans.create(p, "2026-11-29T00:00:00+00:00")
    # When the us-east-2 run has landed and the us-west-2 run is checked against the budget
    steps.handle({"action": "launch", "plan_id": p.plan_id, "index": 0})
    landed = {"plan_id": p.plan_id, "index": 0, "polls": 0, "max_polls": 3}
    steps.handle({"action": "check_record", **landed})
    check = steps.handle({"action": "budget_check", "plan_id": p.plan_id, "index": 1})
    # Then the landed run is priced at us-east-2's rate (3720 s × 44.70 / 3600 = 46.19)
    assert check["ok"] and check["spent_usd"] == "46.19", check
    # And the next run's worst case at us-west-2's (1 instance × 1 h × 50)
    assert check["next_max_usd"] == "50.00"
    state = steps.plans.get(p.plan_id)
    spend = steps.spend(p, state.runs if state else [])
    assert "× 44.70 USD/h" in spend.lines[0] and spend.unpriced == []


def test_a_snapshot_without_the_runs_region_does_not_price_it() -> None:
    # Given a snapshot with trn2.48xlarge in us-east-1 only
    snap = snapshot(instance_quote("trn2.48xlarge", "44.70"), usage=False)
    p = _two_region_plan()
    lookup = price_lookup_from(lambda: snap)
    # When a us-west-2 run is priced: PENDING there, never us-east-1's quote
    rate = lookup("trn2.48xlarge", WEST, p)
    assert rate.usd_per_hour is None and WEST in rate.basis
    assert lookup("trn2.48xlarge", "us-east-1", p).usd_per_hour == Decimal("44.70")


# -- submission: the deployed region -------------------------------------------------------------
FN = "arn:aws:lambda:us-east-2:123456789012:function:steps"


@pytest.fixture
def api(monkeypatch, table_name):
    """The trial plan routes of a stage deployed to us-east-2 (its region from settings)."""
    from tests.support.moto_env import create_table

    with mocked_aws(monkeypatch, AWS_DEFAULT_REGION=EAST):
        table = create_table(table_name)
        records = RecordStore(table)
        records.put_workload(workload(), "2026-11-28T00:00:00+00:00")
        sfn = boto3.client("stepfunctions")
        arn = sfn.create_state_machine(
            name="trial-plans",
            definition=render(substitutions(FN)),
            roleArn="arn:aws:iam::123456789012:role/sfn",
        )["stateMachineArn"]
        settings = Settings.from_env({TABLE_NAME_ENV: table, REGION_ENV: EAST})
        services = Wiring(settings.model_copy(update={"state_machine_arn": arn}))
        app = APIGatewayRestResolver(enable_validation=True)
        errors.register(app)
        app.include_router(trial_plans.routes)

        def call(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            path = "/workloads/wl-1/trial-plans"
            with serving(services):
                out = app.resolve(api_event("POST", path, body), FakeContext())
            return out["statusCode"], json.loads(out["body"])

        call.sfn, call.arn, call.services = sfn, arn, services  # type: ignore[attr-defined]
        yield call


def _body(*regions: str) -> dict[str, Any]:
    data = plan_data(
        candidates=[
            {"instance_type": "ml.trn2.48xlarge", "instance_count": 1, "region": r} for r in regions
        ]
    )
    data.pop("workload_id")
    return data


def test_a_plan_with_a_candidate_outside_the_deployed_region_is_refused(api) -> None:
    # Given a stage deployed to us-east-2
    assert api.services.trial_plans.region == EAST
    # When a plan with candidates in us-east-2 and us-west-2 is submitted
    status, body = api(_body(EAST, WEST))
    # Then it is a 422 naming the candidate outside, and nothing is stored or started
    assert status == 422 and body["fields"] == ["candidates.1.region"], body
    assert body["message"] == (
        "candidates.1.region: us-west-2 is not this stage's region (us-east-2): "
        "a trial plan launches in the region trncost is deployed to"
    )
    assert api.services.plans.get("plan-1") is None
    assert api.sfn.list_executions(stateMachineArn=api.arn)["executions"] == []
    # And the same plan within the region is started
    status, body = api(_body(EAST))
    assert status == 201 and body["status"] == "submitted", body


def test_every_candidate_outside_is_named() -> None:
    # Given a service of a stage in us-east-2, and a plan with two candidates elsewhere
    service = TrialPlanService(None, None, region=EAST)  # type: ignore[arg-type]
    away = plan(candidates=_body(WEST, EAST, "eu-west-1")["candidates"])
    # When its regions are checked: both are named
    with pytest.raises(InvalidInput) as refused:
        service._check_region(away)
    assert refused.value.fields == ["candidates.0.region", "candidates.2.region"]
    assert "eu-west-1 is not this stage's region (us-east-2)" in str(refused.value)


@pytest.mark.parametrize(
    ("env", "region"),
    [
        ({"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1"}, "eu-west-1"),  # Lambda
        ({"AWS_REGION": "eu-west-1"}, "eu-west-1"),
        ({"AWS_DEFAULT_REGION": "us-east-2", "AWS_REGION": "eu-west-1"}, "us-east-2"),  # botocore's
        ({}, None),
    ],
)
def test_the_deployed_region_comes_from_the_environment(env, region) -> None:
    settings = Settings.from_env({TABLE_NAME_ENV: "t", **env})
    assert settings.region == region
    assert Wiring(settings).trial_plans.region == region
