"""The real state machine definition (state_machine.asl.json) executed by moto's Step Functions
interpreter, with its Task states invoking the real trial steps in-process (moto's Lambda
without Docker, its invoke patched to call `TrialSteps.handle`), and waits of 0 s through the
definition's substitutions. Jobs are a fake launcher that writes the run's trial record."""

from __future__ import annotations

import json
import time

import boto3
import pytest
from moto import mock_aws
from moto.awslambda_simple.models import LambdaSimpleBackend

from tests.support.factories import workload
from tests.support.workflow_kit import FakeLauncher, fixed_prices, good_trial, plan_data
from trncost.model.plan import TrialPlan
from trncost.services.trial_steps import TrialSteps
from trncost.store.plans import PlanStore
from trncost.store.records import RecordStore
from trncost.store.schema import TABLE
from trncost.workflow.definition import render, substitutions

TABLE_NAME = "trncost-wf"
FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:trncost-trial-steps"
SM_ROLE = "arn:aws:iam::123456789012:role/trncost-sfn"
CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


@pytest.fixture
def world(monkeypatch):
    for k, v in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(k, v)
    with mock_aws(config=CONFIG):
        boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
        records = RecordStore(TABLE_NAME)
        records.put_workload(workload(), "2026-11-28T00:00:00+00:00")
        launcher = FakeLauncher(records)
        steps = TrialSteps(
            plans=PlanStore(TABLE_NAME),
            records=records,
            launchers=lambda kind: launcher,
            prices=fixed_prices("10"),
        )
        calls: list[dict] = []

        def invoke(self, function_name, qualifier, body, headers, response_headers):
            event = json.loads(body)
            calls.append(event)
            try:
                return json.dumps(steps.handle(event)).encode()
            except Exception as exc:  # as the Lambda runtime reports an unhandled error
                response_headers["x-amz-function-error"] = "Unhandled"
                return json.dumps(
                    {"errorType": type(exc).__name__, "errorMessage": str(exc)}
                ).encode()

        monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
        sfn = boto3.client("stepfunctions")
        arn = sfn.create_state_machine(
            name="trial-plans",
            definition=render(substitutions(FUNCTION_ARN, poll_interval_s=0, max_polls=3)),
            roleArn=SM_ROLE,
        )["stateMachineArn"]
        yield type(
            "World",
            (),
            {
                "sfn": sfn,
                "arn": arn,
                "steps": steps,
                "launcher": launcher,
                "calls": calls,
                "records": records,
            },
        )


def run(world, plan: TrialPlan, timeout: float = 20.0) -> dict:
    world.steps.plans.create(plan, "2026-11-29T00:00:00+00:00")
    ex = world.sfn.start_execution(
        stateMachineArn=world.arn,
        name=plan.plan_id,
        input=json.dumps({"plan_id": plan.plan_id, "workload_id": plan.workload_id}),
    )["executionArn"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = world.sfn.describe_execution(executionArn=ex)
        if out["status"] != "RUNNING":
            return out
        time.sleep(0.05)
    raise AssertionError("execution still running")


@pytest.mark.slow  # the whole state machine in moto (~2 s)
def test_a_plan_that_passes_every_gate_completes(world) -> None:
    plan = TrialPlan.model_validate(plan_data())
    out = run(world, plan)
    assert out["status"] == "SUCCEEDED", out
    state = world.steps.plans.get(plan.plan_id)
    assert state.status == "completed"
    assert [g.passed for g in state.gates] == [True, True, True]
    assert len(world.launcher.launched) == len(plan.schedule()) == 6
    assert all(r.landed for r in state.runs)
    assert state.execution_arn and state.execution_arn.endswith(plan.plan_id)


def test_a_failed_fit_gate_ends_the_plan_with_the_reasons(world) -> None:
    # Given a model whose checkpoint restore fails in the fit run
    def outcome(request):
        return good_trial(request, checkpointing={"saves": 1, "restore_verified": False})

    world.launcher.outcome = outcome
    plan = TrialPlan.model_validate(plan_data(plan_id="plan-fitfail"))
    # When the plan runs
    out = run(world, plan)
    # Then only the fit run was launched, and the plan says why it stopped
    assert out["status"] == "FAILED" and out.get("error") == "trncost.GateFailed", out
    assert len(world.launcher.launched) == 1
    state = world.steps.plans.get(plan.plan_id)
    assert state.status == "gate_failed"
    assert any("checkpoint_restored" in r for r in state.outcome_reasons), state.outcome_reasons
    assert [(g.phase, g.passed) for g in state.gates] == [("fit", False)]


def test_the_budget_cap_stops_the_plan_before_a_launch_would_exceed_it(world) -> None:
    # Given 10 USD/h, 60 min runs (worst case 10 USD each) and a 35 USD cap
    plan = TrialPlan.model_validate(plan_data(plan_id="plan-budget", budget_cap_usd="35"))
    out = run(world, plan)
    # Then runs were launched while spend + the next worst case fit under the cap, and no more
    assert out["status"] == "FAILED" and out.get("error") == "trncost.BudgetCapReached", out
    state = world.steps.plans.get(plan.plan_id)
    assert state.status == "budget_cap"
    # billed 3720 s at 10 USD/h = 10.33 USD per run: 3 runs (31.00) then the 4th could exceed 35
    assert len(world.launcher.launched) == 3
    assert state.spent_usd == "31.00"
    assert any("would exceed the cap 35 USD" in r for r in state.outcome_reasons)


def test_a_rejected_launch_is_recorded_as_a_failure_with_the_aws_error(world) -> None:
    from trncost.errors import LaunchRejected

    world.launcher.fail_with = LaunchRejected(
        "CreateTrainingJob plan-1: ResourceLimitExceeded: account quota for ml.trn2.48xlarge"
    )
    plan = TrialPlan.model_validate(plan_data(plan_id="plan-quota"))
    out = run(world, plan)
    assert out["status"] == "FAILED" and out.get("error") == "trncost.WorkflowFailed", out
    state = world.steps.plans.get(plan.plan_id)
    assert state.status == "failed"
    assert state.outcome_reasons[0].startswith("LaunchRejected: CreateTrainingJob")
    assert "ResourceLimitExceeded" in state.outcome_reasons[0]


def test_a_run_whose_record_never_lands_times_out_and_is_stopped(world) -> None:
    world.launcher.outcome = lambda request: None  # the job never reports
    plan = TrialPlan.model_validate(plan_data(plan_id="plan-lost"))
    out = run(world, plan)
    assert out["status"] == "FAILED" and out.get("error") == "trncost.TrialRecordTimeout", out
    state = world.steps.plans.get(plan.plan_id)
    assert state.status == "timeout"
    polls = [c for c in world.calls if c["action"] == "check_record"]
    assert len(polls) == 3  # MaxPolls substitution
    assert world.launcher.stopped == [f"job-{plan.schedule()[0].trial_id}"]
    assert any("no trial record after 3 polls" in r for r in state.outcome_reasons)


def test_a_missing_plan_fails_the_execution_without_hanging(world) -> None:
    ex = world.sfn.start_execution(
        stateMachineArn=world.arn,
        name="ghost",
        input=json.dumps({"plan_id": "ghost", "workload_id": "wl-1"}),
    )["executionArn"]
    deadline = time.monotonic() + 10
    while world.sfn.describe_execution(executionArn=ex)["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert world.sfn.describe_execution(executionArn=ex)["status"] == "FAILED"
