"""POST /workloads/{id}/trial-plans and GET /trial-plans/{id}, through a throwaway resolver
that includes the router and the error mapping (as app.py does), on moto DynamoDB and Step
Functions."""

from __future__ import annotations

import json

import boto3
import pytest
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from tests.support.factories import workload
from tests.support.handlers import FakeContext, api_event
from tests.support.workflow_kit import plan_data
from trncost.api import errors, trial_plans
from trncost.api.context import serving
from trncost.model.plan import GateResult
from trncost.services.trial_plans import TrialPlanService
from trncost.settings import Settings
from trncost.store.plans import PlanStore
from trncost.store.records import RecordStore
from trncost.wiring import Wiring
from trncost.workflow.definition import render, substitutions

FN = "arn:aws:lambda:us-east-1:123456789012:function:steps"


@pytest.fixture
def api(table):
    records = RecordStore(table)
    records.put_workload(workload(), "2026-11-28T00:00:00+00:00")
    sfn = boto3.client("stepfunctions")
    arn = sfn.create_state_machine(
        name="trial-plans",
        definition=render(substitutions(FN)),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    service = TrialPlanService(PlanStore(table), records, sfn, arn)
    services = Wiring(Settings(table_name=table))
    services.trial_plans = service
    app = APIGatewayRestResolver(enable_validation=True)
    errors.register(app)  # the main app's mapping of errors (422 naming the field, ...)
    app.include_router(trial_plans.routes)

    def call(method: str, path: str, body=None) -> tuple[int, dict]:
        with serving(services):
            out = app.resolve(api_event(method, path, body), FakeContext())
        return out["statusCode"], json.loads(out["body"])

    call.service = service  # type: ignore[attr-defined]
    call.sfn = sfn  # type: ignore[attr-defined]
    call.arn = arn  # type: ignore[attr-defined]
    yield call


def _body(**over):
    data = plan_data(**over)
    data.pop("workload_id")
    return data


def test_post_starts_one_execution_named_after_the_plan_and_repeats_start_nothing(api) -> None:
    status, body = api("POST", "/workloads/wl-1/trial-plans", _body())
    assert status == 201, body
    assert body["plan_id"] == "plan-1" and body["status"] == "submitted"
    assert body["execution_arn"].endswith(":trial-plans:plan-1")
    again, body2 = api("POST", "/workloads/wl-1/trial-plans", _body())
    assert again == 200 and body2["execution_arn"] == body["execution_arn"]
    executions = api.sfn.list_executions(stateMachineArn=api.arn)["executions"]
    assert [e["name"] for e in executions] == ["plan-1"]
    started = api.sfn.describe_execution(executionArn=body["execution_arn"])
    assert json.loads(started["input"]) == {"plan_id": "plan-1", "workload_id": "wl-1"}


def test_without_plan_id_the_same_request_is_the_same_plan(api) -> None:
    body = _body()
    body.pop("plan_id")
    s1, b1 = api("POST", "/workloads/wl-1/trial-plans", body)
    s2, b2 = api("POST", "/workloads/wl-1/trial-plans", body)
    assert (s1, s2) == (201, 200) and b1["plan_id"] == b2["plan_id"]
    assert b1["plan_id"].startswith("plan-")


def test_same_plan_id_with_other_content_is_a_conflict(api) -> None:
    assert api("POST", "/workloads/wl-1/trial-plans", _body())[0] == 201
    status, body = api("POST", "/workloads/wl-1/trial-plans", _body(budget_cap_usd="5"))
    assert status == 409 and body["error"] == "conflict"


def test_bad_plans_are_4xx_naming_the_field(api) -> None:
    status, body = api(
        "POST", "/workloads/wl-1/trial-plans", _body(fit=None, baseline=None, target=None)
    )
    assert status == 422 and "no phase" in json.dumps(body)
    status, body = api(
        "POST",
        "/workloads/wl-1/trial-plans",
        _body(
            candidates=[
                {"instance_type": "ml.trn3.48xlarge", "instance_count": 1, "region": "us-east-1"}
            ]
        ),
    )
    assert status == 422 and "candidates.0.instance_type" in json.dumps(body)
    status, body = api("POST", "/workloads/wl-1/trial-plans", {**_body(), "workload_id": "x"})
    assert status == 422 and body["fields"] == ["workload_id"]
    status, body = api("POST", "/workloads/nope/trial-plans", _body())
    assert status == 404 and "workload nope" in body["message"]
    assert api.sfn.list_executions(stateMachineArn=api.arn)["executions"] == []


class _Down:
    """Step Functions answering StartExecution with a 503 (after botocore's retries)."""

    def __init__(self, sfn) -> None:
        self.sfn = sfn

    def start_execution(self, **kwargs):
        from botocore.exceptions import ClientError

        raise ClientError(
            {
                "Error": {"Code": "ServiceUnavailable", "Message": "try again"},
                "ResponseMetadata": {"HTTPStatusCode": 503},
            },
            "StartExecution",
        )

    def __getattr__(self, name):
        return getattr(self.sfn, name)


def test_step_functions_down_is_202_the_plan_says_not_started_and_a_retry_starts_it(api) -> None:
    # Given Step Functions refusing the start  When a plan is submitted
    api.service._sfn = _Down(api.sfn)
    status, body = api("POST", "/workloads/wl-1/trial-plans", _body())
    # Then it is stored (never a failure for a committed write: issue 23), and says so
    assert status == 202 and body["status"] == "not_started" and body["execution_arn"] is None
    # the stored plan does not stay "submitted" silently: it says why it did not start
    status, stored = api("GET", "/trial-plans/plan-1")
    assert status == 200 and stored["status"] == "not_started"
    assert "ServiceUnavailable" in stored["reasons"][0]
    api.service._sfn = api.sfn
    status, body = api("POST", "/workloads/wl-1/trial-plans", _body())
    assert status == 200 and body["execution_arn"]
    assert len(api.sfn.list_executions(stateMachineArn=api.arn)["executions"]) == 1


def test_without_a_state_machine_nothing_is_stored(api) -> None:
    api.service.state_machine_arn = None
    status, body = api("POST", "/workloads/wl-1/trial-plans", _body())
    assert status == 503 and "no trial plan state machine configured" in body["message"]
    assert api("GET", "/trial-plans/plan-1")[0] == 404


def test_get_shows_phases_trials_spend_and_gates(api) -> None:
    api("POST", "/workloads/wl-1/trial-plans", _body())
    plans = api.service.plans
    from trncost.model.plan import RunState

    plans.claim_run(
        "plan-1",
        RunState(
            index=0,
            phase="fit",
            candidate_index=0,
            run=1,
            instance_type="ml.trn2.48xlarge",
            instance_count=1,
            trial_id="plan-1-fit-c0-n1-r1",
            launched_at="2026-11-29T00:00:00+00:00",
            job_id="plan-1-fit-c0-n1-r1",
            landed=True,
            trial_status="completed",
        ),
    )
    plans.put_gate("plan-1", 0, GateResult(phase="fit", passed=True, trial_ids=["x"]))
    plans.set_spend("plan-1", "10.33", "2026-11-29T01:00:00+00:00")
    status, body = api("GET", "/trial-plans/plan-1")
    assert status == 200, body
    assert body["spent_usd"] == "10.33" and body["budget_cap_usd"] == "1000"
    assert body["execution_status"] == "RUNNING"
    phases = {(p["phase"], p["candidate_index"]): p for p in body["phases"]}
    assert phases[("fit", 0)]["status"] == "passed" and phases[("fit", 0)]["runs_recorded"] == 1
    assert phases[("baseline", 0)]["status"] == "pending"
    assert phases[("baseline", 0)]["runs_planned"] == 3
    assert body["trials"][0]["trial_id"] == "plan-1-fit-c0-n1-r1"
    assert body["gates"][0]["passed"] is True
    assert api("GET", "/trial-plans/nope")[0] == 404


# -- the launcher a plan gets, and the local launcher ---------------------------------------------
LOCAL_CANDIDATE = {"instance_type": "c7i.16xlarge", "instance_count": 1, "region": "us-east-1"}


def _local_body(**over):
    body = {
        "candidates": [LOCAL_CANDIDATE],
        "fit": {"steps": 10},
        "target": {"steps": 40, "instance_counts": [1]},
        "budget_cap_usd": "5",
    }
    body.update(over)
    return body


def test_a_plan_naming_no_launcher_needs_a_deployment_default(api) -> None:
    status, body = api("POST", "/workloads/wl-1/trial-plans", _local_body())
    assert status == 422 and body["fields"] == ["launcher"], body
    assert "this deployment has no default launcher" in body["message"]


def test_under_the_local_runtime_a_plan_defaults_to_local_and_the_tiny_training(
    api, tmp_path
) -> None:
    from trncost.settings import LocalRuns

    api.service.default_launcher = "local"
    api.service.local_runs = LocalRuns(runs_dir=tmp_path, region="us-east-1", bus_name="b")
    status, body = api("POST", "/workloads/wl-1/trial-plans", _local_body())
    assert status == 201, body
    assert body["plan"]["launcher"] == "local" and body["plan"]["dataset_uri"] is None
    assert body["plan"]["entry_command"] == ["python", "examples/train_tiny.py"]
    assert [p["phase"] for p in body["phases"]] == ["fit", "target"]
    own = _local_body(entry_command=["python", "train.py", "--fast"], plan_id="plan-own")
    status, body = api("POST", "/workloads/wl-1/trial-plans", own)
    assert status == 201 and body["plan"]["entry_command"] == ["python", "train.py", "--fast"]
    # a candidate outside the runtime's region would be recorded where it did not run
    away = _local_body(candidates=[{**LOCAL_CANDIDATE, "region": "us-east-2"}], plan_id="p-2")
    status, body = api("POST", "/workloads/wl-1/trial-plans", away)
    assert status == 422 and body["fields"] == ["candidates.0.region"], body


def test_a_deployed_stage_refuses_the_local_launcher(api) -> None:
    status, body = api("POST", "/workloads/wl-1/trial-plans", _local_body(launcher="local"))
    assert status == 422 and body["fields"] == ["launcher"], body
    assert "local runtime (make run)" in body["message"]
    executions = api.sfn.list_executions(stateMachineArn=api.arn)["executions"]
    assert executions == []  # nothing started
