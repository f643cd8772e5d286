"""The TrialPlansFailed alarm can fire: the real state machine (moto's Step Functions runs the
ASL) invokes the real trial steps handler (lambdas/trial_steps, Powertools Metrics), and a
failing plan emits the very metric the stage alarms on (namespace, name, service dimension as
stacks/monitoring builds the alarm); a completed plan emits TrialPlansSucceeded instead."""

from __future__ import annotations

import contextlib
import io
import json
import time

import boto3
import pytest
from moto import mock_aws
from moto.awslambda_simple.models import LambdaSimpleBackend

from stacks.lambda_factory import TrncostFunction
from stacks.monitoring.metrics import SERVICE_DIMENSION, TRIAL_PLANS_SERVICE
from tests.support.factories import workload
from tests.support.handlers import FakeContext, load_handler
from tests.support.workflow_kit import FakeLauncher, fixed_prices, good_trial, plan_data
from trncost.errors import LaunchRejected
from trncost.model.plan import TrialPlan
from trncost.observability import NAMESPACE, MetricName
from trncost.services.trial_steps import TrialSteps
from trncost.store.plans import PlanStore
from trncost.store.records import RecordStore
from trncost.store.schema import TABLE
from trncost.workflow.definition import render, substitutions

pytestmark = pytest.mark.slow

TABLE_NAME = "trncost-plan-metrics"
FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:trncost-trial-steps"
CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


def _metrics(out: str) -> list[tuple[str, str, dict[str, str], list[float]]]:
    """(namespace, metric name, dimensions, values) of every EMF document printed."""
    found = []
    for line in out.splitlines():
        if not (line.startswith("{") and '"_aws"' in line):
            continue
        doc = json.loads(line)
        for directive in doc["_aws"]["CloudWatchMetrics"]:
            dims = {d: doc[d] for group in directive["Dimensions"] for d in group}
            for m in directive["Metrics"]:
                value = doc[m["Name"]]
                values = value if isinstance(value, list) else [value]
                found.append((directive["Namespace"], m["Name"], dims, values))
    return found


@pytest.fixture
def world(monkeypatch):
    for k, v in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_TRACE_DISABLED": "true",
        # what the factory sets on the function: its service is the alarm's dimension
        **TrncostFunction.powertools_environment("trial_steps"),
    }.items():
        monkeypatch.setenv(k, v)
    module = load_handler("trial_steps")
    with mock_aws(config=CONFIG):
        boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
        records = RecordStore(TABLE_NAME)
        records.put_workload(workload(), "2026-11-28T00:00:00+00:00")
        launcher = FakeLauncher(records)
        module.services.trial_steps = TrialSteps(
            plans=PlanStore(TABLE_NAME),
            records=records,
            launchers=lambda kind: launcher,
            prices=fixed_prices("10"),
        )
        printed = io.StringIO()

        def invoke(self, function_name, qualifier, body, headers, response_headers):
            event = json.loads(body)
            try:
                with contextlib.redirect_stdout(printed):  # where Lambda's EMF lines go
                    return json.dumps(module.handler(event, FakeContext())).encode()
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
            roleArn="arn:aws:iam::123456789012:role/trncost-sfn",
        )["stateMachineArn"]

        def run(plan: TrialPlan) -> dict:
            module.services.trial_steps.plans.create(plan, "2026-11-29T00:00:00+00:00")
            ex = sfn.start_execution(
                stateMachineArn=arn,
                name=plan.plan_id,
                input=json.dumps({"plan_id": plan.plan_id, "workload_id": plan.workload_id}),
            )["executionArn"]
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                out = sfn.describe_execution(executionArn=ex)
                if out["status"] != "RUNNING":
                    return out
                time.sleep(0.05)
            raise AssertionError("execution still running")

        yield type("World", (), {"run": run, "launcher": launcher, "printed": printed})


def _alarmed(world) -> list[list[float]]:
    """The values of the metric the TrialPlansFailed alarm watches."""
    return [
        values
        for namespace, name, dims, values in _metrics(world.printed.getvalue())
        if namespace == NAMESPACE
        and name == MetricName.trial_plans_failed
        and dims == {SERVICE_DIMENSION: TRIAL_PLANS_SERVICE}
    ]


def test_a_failing_plan_emits_the_metric_the_alarm_watches(world) -> None:
    # Given a plan whose first launch AWS refuses
    world.launcher.fail_with = LaunchRejected("InsufficientInstanceCapacity: no trn2 capacity")
    plan = TrialPlan.model_validate(plan_data(plan_id="plan-metric-fail"))
    # When the state machine runs it
    out = world.run(plan)
    # Then the execution failed and TrialPlansFailed was emitted once, Count 1, under the
    # trial_steps service: the alarm's namespace, metric and dimension
    assert out["status"] == "FAILED", out
    assert _alarmed(world) == [[1.0]]
    names = [name for _, name, _, _ in _metrics(world.printed.getvalue())]
    assert MetricName.trial_plans_succeeded not in names


def test_a_failed_gate_counts_as_a_failed_plan(world) -> None:
    def outcome(request):
        return good_trial(request, checkpointing={"saves": 1, "restore_verified": False})

    world.launcher.outcome = outcome
    out = world.run(TrialPlan.model_validate(plan_data(plan_id="plan-metric-gate")))
    assert out["status"] == "FAILED" and out.get("error") == "trncost.GateFailed", out
    assert _alarmed(world) == [[1.0]]


def test_a_completed_plan_emits_succeeded_not_failed(world) -> None:
    out = world.run(TrialPlan.model_validate(plan_data(plan_id="plan-metric-ok")))
    assert out["status"] == "SUCCEEDED", out
    assert _alarmed(world) == []
    succeeded = [
        values
        for namespace, name, dims, values in _metrics(world.printed.getvalue())
        if name == MetricName.trial_plans_succeeded
    ]
    assert succeeded == [[1.0]]
