"""Issue 17 on the synthesized templates, statement by statement: the trial steps act only on
trncost:plan-tagged jobs, the training role sends only the agent's event, the personas are
scoped by method and path, every function has reserved concurrency and every SQS source a
MaximumConcurrency from the stage config, every log group the stage's KMS key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stacks.api import PERSONAS
from stacks.config import load_stage_configs
from stacks.keys import LOGS_ENCRYPTION_CONTEXT, LOGS_KEY_ACTIONS
from tests.support.cdk import cdk_json_context
from tests.support.template_kit import listed, one, resources, statements
from trncost.events import AGENT_SOURCE, DetailType

pytestmark = pytest.mark.infra
STAGE = "dev"
CONFIG = load_stage_configs(cdk_json_context())[STAGE]
WITH_PLAN_TAG = {"Null": {"aws:RequestTag/trncost:plan": "false"}}
ON_PLAN_TAGGED = {"Null": {"aws:ResourceTag/trncost:plan": "false"}}


def _template(synthesized, stack: str) -> dict:
    synthesized.require()
    return synthesized.templates[f"{STAGE}/{stack}"]


def _role(template: dict, prefix: str) -> str:
    (role,) = [k for k in resources(template, "AWS::IAM::Role") if k.startswith(prefix)]
    return role


def _arn_tail(resource: Any) -> str:
    """The literal tail of an Fn::Join ARN ("...:training-job/*" → "training-job/*")."""
    if isinstance(resource, dict) and "Fn::Join" in resource:
        return str(resource["Fn::Join"][1][-1]).rsplit(":", 1)[-1]
    return str(resource)


def _by_actions(stmts: list[dict]) -> dict[tuple[str, ...], list[dict]]:
    found: dict[tuple[str, ...], list[dict]] = {}
    for s in stmts:
        assert s["Effect"] == "Allow"
        found.setdefault(tuple(sorted(listed(s["Action"]))), []).append(s)
    return found


# -- the trial steps ------------------------------------------------------------------------------
def test_each_trial_steps_statement_on_jobs_is_pinned(synthesized) -> None:
    template = _template(synthesized, "TrncostWorkflow")
    stmts = _by_actions(statements(template, _role(template, "TrialStepsRole")))

    def only(actions: tuple[str, ...]) -> list[tuple[list[str], Any]]:
        return [
            (sorted(_arn_tail(r) for r in listed(s["Resource"])), s.get("Condition"))
            for s in stmts[tuple(sorted(actions))]
        ]

    # SageMaker: create only with the plan tag; tags only inside that create (issue 23: an
    # AddTags on any job, then a stop, stopped another team's job); stop only a tagged job
    assert only(("sagemaker:CreateTrainingJob",)) == [(["training-job/*"], WITH_PLAN_TAG)]
    assert only(("sagemaker:AddTags",)) == [
        (
            ["training-job/*"],
            {"StringEquals": {"sagemaker:TaggingAction": "CreateTrainingJob"}, **WITH_PLAN_TAG},
        )
    ]
    assert only(("sagemaker:StopTrainingJob",)) == [(["training-job/*"], ON_PLAN_TAGGED)]
    assert only(("sagemaker:DescribeTrainingJob",)) == [(["training-job/*"], None)]
    # EC2: the instance and its volumes launched with the plan tag, tags only at launch, terminate
    # only a tagged instance; what RunInstances merely uses is not tag-conditioned
    run = only(("ec2:RunInstances",))
    assert (["instance/*", "volume/*"], WITH_PLAN_TAG) in run
    (used,) = [r for r, c in run if c is None]
    assert used == sorted(
        ["network-interface/*", "subnet/*", "security-group/*", "key-pair/*"]
        + ["launch-template/*", "image/*"]
    )
    assert len(run) == 2
    assert only(("ec2:CreateTags",)) == [
        (
            ["instance/*", "volume/*"],
            {"StringEquals": {"ec2:CreateAction": "RunInstances"}, **WITH_PLAN_TAG},
        )
    ]
    assert only(("ec2:TerminateInstances",)) == [(["instance/*"], ON_PLAN_TAGGED)]
    # Batch: submit only with the plan tag (SubmitJob authorizes its own tags: no
    # batch:TagResource, so no existing job can be tagged), terminate only a tagged job
    assert only(("batch:SubmitJob",)) == [
        (["job-definition/*", "job-queue/*", "job/*"], WITH_PLAN_TAG)
    ]
    every_action = {a for s in statements(template, _role(template, "TrialStepsRole"))
                    for a in listed(s["Action"])}  # fmt: skip
    assert "batch:TagResource" not in every_action
    assert only(("batch:TerminateJob",)) == [(["job/*"], ON_PLAN_TAGGED)]


def test_no_trial_steps_statement_stops_or_tags_without_a_condition(synthesized) -> None:
    template = _template(synthesized, "TrncostWorkflow")
    for s in statements(template, _role(template, "TrialStepsRole")):
        acts = set(listed(s["Action"]))
        stops_or_tags = {a for a in acts if any(w in a for w in ("Stop", "Terminate", "Tag"))}
        if stops_or_tags:
            assert s.get("Condition"), (sorted(stops_or_tags), s)


def test_the_training_role_sends_only_the_agents_event(synthesized) -> None:
    template = _template(synthesized, "TrncostWorkflow")
    stmts = _by_actions(statements(template, _role(template, "TrainingRole")))
    (put,) = stmts[("events:PutEvents",)]
    assert put["Condition"] == {
        "StringEquals": {
            "events:source": AGENT_SOURCE,
            "events:detail-type": DetailType.trial_run_completed.value,
        }
    }
    assert "Fn::ImportValue" in put["Resource"]  # the project bus only


# -- the personas ---------------------------------------------------------------------------------
def test_each_persona_is_a_managed_policy_scoped_by_method_and_path(synthesized) -> None:
    template = _template(synthesized, "TrncostApi")
    rest_api, _ = one(template, "AWS::ApiGateway::RestApi")
    stage, _ = one(template, "AWS::ApiGateway::Stage")
    policies = resources(template, "AWS::IAM::ManagedPolicy")
    by_name = {p["Properties"]["ManagedPolicyName"]: p["Properties"] for p in policies.values()}
    assert set(by_name) == {f"trncost-{STAGE}-{persona}" for persona in PERSONAS}
    for persona, (_, routes) in PERSONAS.items():
        (statement,) = by_name[f"trncost-{STAGE}-{persona}"]["PolicyDocument"]["Statement"]
        assert statement["Action"] == "execute-api:Invoke" and statement["Effect"] == "Allow"
        arns = listed(statement["Resource"])
        assert len(arns) == len(routes)
        for arn, (method, path) in zip(arns, routes, strict=True):
            parts = arn["Fn::Join"][1]
            assert {"Ref": rest_api} in parts and {"Ref": stage} in parts  # this API's stage
            assert parts[-1] == f"/{method}{path}"
    # only the reader reads; only the planner may start paid trial plans
    assert [p for p, (_, r) in PERSONAS.items() if ("GET", "/*") in r] == ["reader"]
    plans = ("POST", "/workloads/*/trial-plans")
    assert [p for p, (_, r) in PERSONAS.items() if plans in r] == ["planner"]
    # only the planner makes AWS Budgets from estimates
    budgets = ("POST", "/estimates/*/budget")
    assert [p for p, (_, r) in PERSONAS.items() if budgets in r] == ["planner"]


def test_each_persona_policy_is_an_output(synthesized) -> None:
    template = _template(synthesized, "TrncostApi")
    outputs = template["Outputs"]
    policies = resources(template, "AWS::IAM::ManagedPolicy")
    exported = {o["Value"]["Ref"] for k, o in outputs.items() if k.endswith("PolicyArn")}
    assert exported == set(policies)


def test_the_api_function_knows_the_stage_plan_bounds(synthesized) -> None:
    template = _template(synthesized, "TrncostApi")
    _, function = one(template, "AWS::Lambda::Function")
    env = function["Properties"]["Environment"]["Variables"]
    assert env["TRNCOST_TRIAL_PLAN_MAX_BUDGET_USD"] == str(CONFIG.trial_plans.max_budget_usd)
    assert env["TRNCOST_TRIAL_PLAN_MAX_RUN_HOURS"] == str(CONFIG.trial_plans.max_run_hours)
    assert env["TRNCOST_TRIAL_PLAN_MAX_RUNS"] == str(CONFIG.trial_plans.max_runs)


# -- the actuals ---------------------------------------------------------------------------------
def test_the_actuals_function_reads_cost_explorer_and_writes_only_the_table_and_bus(
    synthesized,
) -> None:
    template = _template(synthesized, "TrncostActuals")
    stmts = _by_actions(statements(template, _role(template, "CostExplorerActualsRole")))
    on_star = {
        a for actions, found in stmts.items() for s in found
        if s["Resource"] == "*" for a in actions
    }  # fmt: skip
    assert on_star == {"ce:GetCostAndUsage", "xray:PutTraceSegments", "xray:PutTelemetryRecords"}
    every = {a for actions in stmts for a in actions}
    assert not any(a.startswith(("budgets:", "ce:Update", "ce:Start")) for a in every)
    table = stmts[("dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query")]
    assert len(table) == 1 and "Fn::ImportValue" in json.dumps(table[0]["Resource"])


def test_the_api_makes_only_budgets_named_trncost(synthesized) -> None:
    template = _template(synthesized, "TrncostApi")
    stmts = _by_actions(statements(template, _role(template, "ApiHandlerRole")))
    (budget,) = stmts[("budgets:ModifyBudget", "budgets:ViewBudget")]
    assert _arn_tail(budget["Resource"]) == "budget/trncost-*"


# -- concurrency ----------------------------------------------------------------------------------
def test_every_function_has_its_reserved_concurrency(synthesized) -> None:
    seen = {}
    for template in synthesized.templates.values():
        for function in resources(template, "AWS::Lambda::Function").values():
            props = function["Properties"]
            service = props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
            seen[service] = props["ReservedConcurrentExecutions"]
    assert seen == {s: CONFIG.concurrency.reserved_for(s) for s in seen}
    assert set(seen) == {"api", "ingest", "refresh", "prices", "trial_steps", "actuals", "outbox"}


def test_every_sqs_event_source_has_a_maximum_concurrency(synthesized) -> None:
    template = _template(synthesized, "TrncostIngest")
    mappings = resources(template, "AWS::Lambda::EventSourceMapping")
    assert len(mappings) == 2
    functions = resources(template, "AWS::Lambda::Function")
    for mapping in mappings.values():
        props = mapping["Properties"]
        function = functions[props["FunctionName"]["Ref"]]["Properties"]
        service = function["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
        expected = getattr(CONFIG.concurrency.sqs_maximum, service)
        assert props["ScalingConfig"] == {"MaximumConcurrency": expected}
        assert expected <= function["ReservedConcurrentExecutions"]


# -- log encryption -------------------------------------------------------------------------------
def test_every_log_group_is_encrypted_with_the_stage_key(synthesized) -> None:
    data = _template(synthesized, "TrncostData")
    key_id, key = one(data, "AWS::KMS::Key")
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    groups = 0
    for path, template in synthesized.templates.items():
        for group in resources(template, "AWS::Logs::LogGroup").values():
            kms = group["Properties"]["KmsKeyId"]
            assert "Fn::ImportValue" in kms and "LogKey" in kms["Fn::ImportValue"], path
            groups += 1
    assert groups >= 8
    # CloudWatch Logs of this region may use it, for this account's and region's log groups only
    (logs,) = [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Sid") == "AllowCloudWatchLogsOfThisAccountAndRegion"
    ]
    assert sorted(listed(logs["Action"])) == sorted(LOGS_KEY_ACTIONS)
    principal = logs["Principal"]["Service"]
    assert principal["Fn::Join"][1] == ["logs.", {"Ref": "AWS::Region"}, ".amazonaws.com"]
    (condition,) = logs["Condition"]["ArnLike"].items()
    assert condition[0] == LOGS_ENCRYPTION_CONTEXT
    assert condition[1]["Fn::Join"][1][-1].endswith(":log-group:*")
    assert key_id.startswith("LogKey")
