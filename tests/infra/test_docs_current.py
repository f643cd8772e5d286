"""docs/deploy.md, docs/security.md and the README say what the synthesized templates hold:
every stack (and how many), every output, every role and persona policy with its actions, and
for every kind of resource the stacks create, the deployer's IAM table names the action that
creates it. The app is synthesized once per session (the `synthesized` fixture)."""

from __future__ import annotations

import re

import pytest

from tests.support import docs_kit
from tests.support.docs_kit import DEPLOY, ROOT, SECURITY

pytestmark = pytest.mark.infra

NUMBERS = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
# Each kind of resource → (the deployer table's row, an action that row must name for it).
# A kind the stacks start to create that is not here fails the test: say in docs/deploy.md
# what the deployer needs for it, then add it here.
DEPLOYER_NEEDS = {
    "AWS::IAM::Role": ("IAM", "CreateRole"),
    "AWS::IAM::Policy": ("IAM", "PutRolePolicy"),
    "AWS::IAM::InstanceProfile": ("IAM", "CreateInstanceProfile"),
    "AWS::IAM::ManagedPolicy": ("IAM (personas)", "CreatePolicy"),
    "AWS::Lambda::Function": ("Lambda", "CreateFunction"),
    "AWS::Lambda::LayerVersion": ("Lambda", "PublishLayerVersion"),
    "AWS::Lambda::Permission": ("Lambda", "AddPermission"),
    "AWS::Lambda::EventSourceMapping": ("Lambda", "*EventSourceMapping"),
    "AWS::Lambda::EventInvokeConfig": ("Lambda", "*FunctionEventInvokeConfig"),
    "AWS::Lambda::Version": ("Lambda (SnapStart)", "PublishVersion"),
    "AWS::Lambda::Alias": ("Lambda (SnapStart)", "CreateAlias"),
    "AWS::DynamoDB::Table": ("DynamoDB", "CreateTable"),
    "AWS::SQS::Queue": ("SQS", "CreateQueue"),
    "AWS::SQS::QueuePolicy": ("SQS", "SetQueueAttributes"),
    "AWS::Events::EventBus": ("EventBridge", "CreateEventBus"),
    "AWS::Events::Rule": ("EventBridge", "PutRule"),
    "AWS::Events::Archive": ("EventBridge", "CreateArchive"),
    "AWS::Scheduler::Schedule": ("Scheduler", "CreateSchedule"),
    "AWS::StepFunctions::StateMachine": ("Step Functions", "CreateStateMachine"),
    "AWS::ApiGateway::RestApi": ("API Gateway", "POST"),
    "AWS::ApiGateway::Resource": ("API Gateway", "POST"),
    "AWS::ApiGateway::Method": ("API Gateway", "PUT"),
    "AWS::ApiGateway::RequestValidator": ("API Gateway", "POST"),
    "AWS::ApiGateway::Deployment": ("API Gateway", "POST"),
    "AWS::ApiGateway::Stage": ("API Gateway", "POST"),
    "AWS::ApiGateway::Account": ("API Gateway", "PATCH /account"),
    "AWS::Logs::LogGroup": ("CloudWatch Logs", "CreateLogGroup"),
    "AWS::Logs::SubscriptionFilter": ("CloudWatch Logs", "PutSubscriptionFilter"),
    "AWS::CloudWatch::Alarm": ("CloudWatch", "PutMetricAlarm"),
    "AWS::CloudWatch::Dashboard": ("CloudWatch", "PutDashboard"),
    "AWS::SNS::Topic": ("SNS", "CreateTopic"),
    "AWS::SNS::TopicPolicy": ("SNS", "SetTopicAttributes"),
    "AWS::KMS::Key": ("KMS", "CreateKey"),
    "AWS::CDK::Metadata": (None, None),  # CDK's version report: no permission of its own
}


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    rest = text[start + len(heading) :]
    end = re.search(r"^## ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def _table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header


def test_every_stack_is_in_deploy_md_and_the_readme_counts_them(synthesized):
    stacks = docs_kit.stacks(synthesized.templates)
    deploy = DEPLOY.read_text(encoding="utf-8")
    intro = deploy[: deploy.index("## ")]
    documented = re.findall(r"^\| `<stage>-(Trncost\w+)` \|", intro, re.MULTILINE)
    assert sorted(documented) == sorted(stacks)
    count = NUMBERS[len(stacks)]
    assert f"{count} CloudFormation stacks" in intro
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"{count} CloudFormation stacks" in readme


def test_the_outputs_table_is_the_templates_outputs(synthesized):
    expected = docs_kit.outputs_table(synthesized.templates)
    assert docs_kit.generated(DEPLOY, "outputs") == expected, (
        "docs/deploy.md's outputs are stale: run `.venv/bin/python -m tests.support.docs_kit`"
    )


def test_every_role_and_its_actions_are_in_security_md(synthesized):
    expected = docs_kit.roles_table(synthesized.templates)
    assert docs_kit.generated(SECURITY, "roles") == expected, (
        "docs/security.md's roles are stale: run `.venv/bin/python -m tests.support.docs_kit`"
    )


def test_the_persona_outputs_named_in_security_md_exist(synthesized):
    api = docs_kit.outputs(synthesized.template("dev/TrncostApi"))
    personas = _section(SECURITY.read_text(encoding="utf-8"), "## Personas")
    named = set(re.findall(r"`(\w+PolicyArn)`", personas))
    assert named and named <= set(api)
    assert {o for o in api if o.endswith("PolicyArn")} <= named


def test_the_deployer_table_covers_every_kind_of_resource(synthesized):
    table = _section(DEPLOY.read_text(encoding="utf-8"), "## The IAM the deployer needs")
    rows = {cells[0]: " | ".join(cells[1:]) for cells in _table_rows(table) if len(cells) >= 2}
    kinds = {
        resource["Type"]
        for template in synthesized.templates.values()
        for resource in template["Resources"].values()
    }
    unknown = sorted(kinds - set(DEPLOYER_NEEDS))
    assert unknown == [], f"resource kinds docs/deploy.md does not cover yet: {unknown}"
    for kind in sorted(kinds):
        row, action = DEPLOYER_NEEDS[kind]
        if row is None:
            continue
        assert row in rows, f"{kind}: no {row!r} row in the deployer's IAM table"
        assert action in rows[row], f"{kind}: the {row!r} row does not name {action}"
