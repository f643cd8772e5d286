"""Issue #3 infrastructure: the table (from the schema), the bus, the prices Lambda built by the
house factory, its least-privilege role, its schedule and the dead-letter queues."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3

from stacks import lambda_factory, nag
from stacks.config import StageConfigError, load_stage_configs
from stacks.data import EVENT_ARCHIVE_RETENTION
from stacks.lambda_factory import (
    LAYERS_DIR,
    RUNTIME,
    TrncostLayer,
    copy_package,
    python_version,
)
from stacks.nag import (
    ACKNOWLEDGEMENTS,
    CONSTRUCT_ACKNOWLEDGEMENTS,
    apply_nag,
    construct_acknowledgement_targets,
)
from stacks.permissions import (
    BUS_ACTIONS,
    CAPACITY_BLOCK_ACTIONS,
    INDEX_ACTIONS,
    PRICE_LIST_ACTIONS,
)
from stacks.pricing import TABLE_ACTIONS
from tests.support.cdk import DATA, STAGE
from tests.support.template_kit import exported as _exported
from tests.support.template_kit import one as _one
from tests.support.template_kit import resources as _resources
from tests.support.template_kit import statements as _statements
from trncost.events import AGENT_SOURCE, SOURCE
from trncost.model.catalog import Catalog
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    PRICE_LIST_REGION_ENV,
    TABLE_NAME_ENV,
)
from trncost.store.schema import TABLE

pytestmark = pytest.mark.infra

PRICING = f"{STAGE}/TrncostPricing"
LOG_ACTIONS = ["logs:CreateLogStream", "logs:PutLogEvents"]
XRAY_ACTIONS = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]


# --- helpers over synthesized templates -------------------------------------------------------


def _actions(statement: dict) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)


def _resources_of(statement: dict) -> list[Any]:
    resources = statement["Resource"]
    return resources if isinstance(resources, list) else [resources]


def _by_action(statements: list[dict]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for statement in statements:
        assert statement["Effect"] == "Allow"
        for action in _actions(statement):
            found.setdefault(action, []).extend(_resources_of(statement))
    return found


@pytest.fixture(scope="module")
def pricing(synthesized) -> dict:
    return synthesized.template(PRICING)


@pytest.fixture(scope="module")
def prices(pricing) -> tuple[str, dict]:
    return _one(pricing, "AWS::Lambda::Function")


# --- data stack -----------------------------------------------------------------------------


def test_table_is_built_from_the_schema(data) -> None:
    # Given the one table schema, When the data stack is synthesized
    _, table = _one(data, "AWS::DynamoDB::Table")
    props = table["Properties"]
    expected = TABLE.create_table_kwargs("unused")
    # Then keys, attributes, indexes and billing are exactly the schema's
    assert props["KeySchema"] == expected["KeySchema"]
    by_name = sorted(props["AttributeDefinitions"], key=lambda a: a["AttributeName"])
    assert by_name == expected["AttributeDefinitions"]
    assert props["GlobalSecondaryIndexes"] == expected["GlobalSecondaryIndexes"]
    assert props["BillingMode"] == expected["BillingMode"]


def test_table_is_protected_and_encrypted(data) -> None:
    _, table = _one(data, "AWS::DynamoDB::Table")
    props = table["Properties"]
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["DeletionProtectionEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True  # KMS, AWS managed key
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"


def test_bus_is_named_for_the_stage_and_archived(data, bus_id) -> None:
    bus = data["Resources"][bus_id]
    assert bus["Properties"]["Name"] == f"trncost-{STAGE}"
    _, archive = _one(data, "AWS::Events::Archive")
    props = archive["Properties"]
    assert props["SourceArn"] == {"Fn::GetAtt": [bus_id, "Arn"]}
    assert props["RetentionDays"] == EVENT_ARCHIVE_RETENTION.to_days() > 0
    assert props["EventPattern"] == {"source": [SOURCE, AGENT_SOURCE]}


def test_data_stack_outputs_table_and_bus_names(data, table_id, bus_id) -> None:
    outputs = data["Outputs"]
    assert outputs["TableName"]["Value"] == {"Ref": table_id}
    assert outputs["BusName"]["Value"] == {"Ref": bus_id}


# --- the prices function (house factory) ------------------------------------------------------


def test_prices_function_is_arm64_newest_python_with_the_layer(pricing, prices) -> None:
    _, function = prices
    props = function["Properties"]
    assert props["Architectures"] == ["arm64"]
    assert re.fullmatch(r"python3\.\d+", props["Runtime"])
    assert props["Runtime"] == RUNTIME.name
    assert props["Handler"] == "handler.handler"
    assert props["MemorySize"] == 1024
    assert props["Timeout"] == 300
    assert props["TracingConfig"] == {"Mode": "Active"}
    layer_id, layer = _one(pricing, "AWS::Lambda::LayerVersion")
    assert props["Layers"] == [{"Ref": layer_id}]
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    assert layer["Properties"]["CompatibleRuntimes"] == [RUNTIME.name]


def test_prices_function_environment_uses_the_names_of_the_modules(
    synthesized, prices, stage_config, table_id, bus_id
) -> None:
    env = prices[1]["Properties"]["Environment"]["Variables"]
    assert set(env) == {
        TABLE_NAME_ENV,
        BUS_NAME_ENV,
        PRICE_LIST_REGION_ENV,
        ACCEPT_UPLOADS_ENV,
        CATALOG_ENV,
        ACCEPT_UPLOADS_ENV,
        "POWERTOOLS_SERVICE_NAME",
        "POWERTOOLS_METRICS_NAMESPACE",
        "POWERTOOLS_LOG_LEVEL",
        "PYDANTIC_DISABLE_PLUGINS",
    }
    assert _exported(synthesized, env[TABLE_NAME_ENV]) == (DATA, {"Ref": table_id})
    assert _exported(synthesized, env[BUS_NAME_ENV]) == (DATA, {"Ref": bus_id})
    assert env[PRICE_LIST_REGION_ENV] == stage_config.price_list_endpoint_region
    catalog = Catalog.model_validate_json(env[CATALOG_ENV])  # what the handler parses
    assert catalog.instance_types == stage_config.catalog.instance_types
    assert catalog.regions == stage_config.catalog.regions
    assert env[ACCEPT_UPLOADS_ENV] == "false"  # prices.accept_uploads: off unless a stage says
    assert env["POWERTOOLS_SERVICE_NAME"] == "prices"
    assert env["POWERTOOLS_METRICS_NAMESPACE"] == "trncost"
    assert env["POWERTOOLS_LOG_LEVEL"] == "INFO"


def test_prices_function_logs_json_to_its_own_retained_log_group(
    pricing, prices, stage_config
) -> None:
    logging = prices[1]["Properties"]["LoggingConfig"]
    assert logging["LogFormat"] == "JSON"
    log_group = pricing["Resources"][logging["LogGroup"]["Ref"]]
    assert log_group["Properties"]["RetentionInDays"] == stage_config.log_retention_days
    assert log_group["DeletionPolicy"] == "Retain"


def test_prices_function_async_failures_go_to_its_dlq(pricing, prices) -> None:
    function_id, function = prices
    queue_arn = function["Properties"]["DeadLetterConfig"]["TargetArn"]
    assert queue_arn["Fn::GetAtt"][0] in _resources(pricing, "AWS::SQS::Queue")
    _, invoke_config = _one(pricing, "AWS::Lambda::EventInvokeConfig")
    assert invoke_config["Properties"]["FunctionName"] == {"Ref": function_id}
    assert invoke_config["Properties"]["MaximumRetryAttempts"] == 2


def test_prices_role_has_exactly_the_needed_actions(synthesized, pricing, prices, table_id, bus_id):
    # Given the prices function's own role
    role_id = prices[1]["Properties"]["Role"]["Fn::GetAtt"][0]
    role = pricing["Resources"][role_id]["Properties"]
    assert "ManagedPolicyArns" not in role  # no AWS managed policies (AwsSolutions-IAM4)
    principal = role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
    assert principal == {"Service": "lambda.amazonaws.com"}
    statements = _statements(pricing, role_id)
    by_action = _by_action(statements)
    # Then it may do exactly this, with no wildcard action
    expected = (
        PRICE_LIST_ACTIONS
        + CAPACITY_BLOCK_ACTIONS
        + TABLE_ACTIONS
        + INDEX_ACTIONS
        + BUS_ACTIONS
        + LOG_ACTIONS
        + XRAY_ACTIONS
        + ["sqs:SendMessage"]
    )
    assert set(by_action) == set(expected)
    assert not any("*" in action for action in by_action)
    # Resource "*" only where the service has no resource-level permissions (the nag reason)
    on_star = {a for s in statements if "*" in _resources_of(s) for a in _actions(s)}
    assert on_star == set(PRICE_LIST_ACTIONS + CAPACITY_BLOCK_ACTIONS + XRAY_ACTIONS)
    for statement in statements:
        assert statement["Resource"] == "*" or "*" not in json.dumps(statement["Resource"])
    # DynamoDB on the table and on its named indexes only
    table_arn = {"Fn::GetAtt": [table_id, "Arn"]}
    table_statement = next(s for s in statements if "dynamodb:PutItem" in _actions(s))
    assert _actions(table_statement) == TABLE_ACTIONS
    assert _exported(synthesized, table_statement["Resource"]) == (DATA, table_arn)
    index_statements = [
        s for s in statements if _actions(s) == INDEX_ACTIONS and "Fn::Join" in s["Resource"]
    ]
    index_resources = [s["Resource"]["Fn::Join"][1] for s in index_statements]
    assert [parts[1] for parts in index_resources] == [
        f"/index/{index.name}" for index in TABLE.indexes
    ]
    for parts in index_resources:
        assert _exported(synthesized, parts[0]) == (DATA, table_arn)
    # events:PutEvents on the trncost bus only
    (bus_arn,) = by_action["events:PutEvents"]
    assert _exported(synthesized, bus_arn) == (DATA, {"Fn::GetAtt": [bus_id, "Arn"]})
    # logs to its own log group, DLQ messages to its own queue
    log_group_id = prices[1]["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    for action in LOG_ACTIONS:
        assert by_action[action] == [{"Fn::GetAtt": [log_group_id, "Arn"]}]
    assert by_action["sqs:SendMessage"] == [
        prices[1]["Properties"]["DeadLetterConfig"]["TargetArn"]
    ]


# --- the schedule -----------------------------------------------------------------------------


def test_schedule_invokes_the_prices_function_with_retries_and_a_dlq(
    pricing, prices, stage_config
) -> None:
    function_id, function = prices
    _, schedule = _one(pricing, "AWS::Scheduler::Schedule")
    props = schedule["Properties"]
    assert props["ScheduleExpression"] == stage_config.price_schedule
    assert props["State"] == "ENABLED"
    target = props["Target"]
    function_arn = {"Fn::GetAtt": [function_id, "Arn"]}
    assert target["Arn"] == function_arn
    assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0
    assert target["RetryPolicy"]["MaximumEventAgeInSeconds"] > 0
    dlq_arn = target["DeadLetterConfig"]["Arn"]
    dlq_id = dlq_arn["Fn::GetAtt"][0]
    assert dlq_id in _resources(pricing, "AWS::SQS::Queue")
    assert dlq_arn != function["Properties"]["DeadLetterConfig"]["TargetArn"]
    # its role may only invoke exactly this function (and park events in its DLQ)
    role_id = target["RoleArn"]["Fn::GetAtt"][0]
    role = pricing["Resources"][role_id]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert set(trust["Condition"]["StringEquals"]) == {"aws:SourceAccount", "aws:SourceArn"}
    assert _by_action(_statements(pricing, role_id)) == {
        "lambda:InvokeFunction": [function_arn],
        "sqs:SendMessage": [dlq_arn],
    }


def test_every_queue_is_encrypted_and_tls_only(synthesized) -> None:
    synthesized.require()
    queues = 0
    for template in synthesized.templates.values():
        policies = _resources(template, "AWS::SQS::QueuePolicy").values()
        for queue_id, queue in _resources(template, "AWS::SQS::Queue").items():
            queues += 1
            props = queue["Properties"]
            assert props.get("SqsManagedSseEnabled") is True or "KmsMasterKeyId" in props
            deny_plain = [
                s
                for p in policies
                if {"Ref": queue_id} in p["Properties"]["Queues"]
                for s in p["Properties"]["PolicyDocument"]["Statement"]
                if s["Effect"] == "Deny"
                and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
            ]
            assert deny_plain, f"{queue_id} accepts requests without TLS"
    assert queues >= 2  # the function's DLQ and the schedule's DLQ


# --- bundling is skipped here; the layer asset hash follows its sources ------------------------


def test_session_synth_did_not_bundle_the_layer(synthesized) -> None:
    synthesized.require()
    bundled = [p for p in synthesized.outdir.glob("asset.*/python") if p.is_dir()]
    assert bundled == []


def _layer_asset_hash(tmp_path: Path, cli_context: dict, source_dir: Path, name: str) -> str:
    outdir = tmp_path / f"out-{name}"
    app = cdk.App(outdir=str(outdir), context=cli_context)
    stack = cdk.Stack(app, "LayerOnly", env=cdk.Environment(region="us-east-1"))
    TrncostLayer(stack, "Layer", source_dir=source_dir)
    template = app.synth().get_stack_by_name("LayerOnly").template
    _, layer = _one(template, "AWS::Lambda::LayerVersion")
    return layer["Properties"]["Content"]["S3Key"].removesuffix(".zip")


def test_layer_asset_hash_follows_package_requirements_and_pip_options_not_caches(
    tmp_path: Path, cli_context, monkeypatch
) -> None:
    source = tmp_path / "layers"
    shutil.copytree(LAYERS_DIR, source, ignore=shutil.ignore_patterns("__pycache__"))
    base = _layer_asset_hash(tmp_path, cli_context, source, "base")
    # caches do not change it
    (source / "trncost" / "__pycache__").mkdir(exist_ok=True)
    (source / "trncost" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (source / "trncost" / "estimate" / "__pycache__").mkdir(exist_ok=True)
    (source / "trncost" / "estimate" / "__pycache__" / "y.cpython-311.pyc").write_bytes(b"\0")
    assert _layer_asset_hash(tmp_path, cli_context, source, "cache") == base
    # the requirements do
    requirements = source / "trncost" / "requirements.txt"
    requirements.write_text(requirements.read_text() + "six==1.17.0\n")
    after_requirements = _layer_asset_hash(tmp_path, cli_context, source, "reqs")
    assert after_requirements != base
    # and so does the package source
    (source / "trncost" / "events.py").write_text("# changed\n")
    after_source = _layer_asset_hash(tmp_path, cli_context, source, "src")
    assert after_source not in {base, after_requirements}
    # and how pip builds it (platform, Python version, options)
    options = [o.replace(python_version(), "3.13") for o in lambda_factory.PIP_INSTALL_OPTIONS]
    monkeypatch.setattr(lambda_factory, "PIP_INSTALL_OPTIONS", tuple(options))
    after_options = _layer_asset_hash(tmp_path, cli_context, source, "pip")
    assert after_options not in {base, after_requirements, after_source}


def test_layer_copy_leaves_out_caches(tmp_path: Path) -> None:
    source = tmp_path / "layers"
    for relative in (
        "trncost/__init__.py",
        "trncost/estimate/engine.py",
        "trncost/report/template.html",
        "trncost/services/estimates.py",
        "trncost/.hidden",
        "trncost/__pycache__/events.cpython-311.pyc",
        "trncost/estimate/__pycache__/engine.cpython-311.pyc",
    ):
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_text("x")
    copy_package(source, tmp_path / "out")
    copied = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")
    )
    assert copied == [
        "trncost",
        "trncost/__init__.py",
        "trncost/estimate",
        "trncost/estimate/engine.py",
        "trncost/report",
        "trncost/report/template.html",
        "trncost/services",
        "trncost/services/estimates.py",
    ]


# --- nag bookkeeping and config ---------------------------------------------------------------


def test_every_construct_acknowledgement_still_matches_a_construct(synthesized) -> None:
    targets = construct_acknowledgement_targets(synthesized.app)
    assert len(targets) == len({pattern for pattern, _, _ in CONSTRUCT_ACKNOWLEDGEMENTS})
    stale = [pattern for pattern, paths in targets.items() if not paths]
    assert stale == []


def test_bad_price_schedule_is_named(cdk_context) -> None:
    cdk_context["stages"]["dev"]["price_schedule"] = "every day"
    with pytest.raises(StageConfigError, match=r"(?s)stage 'dev'.*field 'price_schedule'"):
        load_stage_configs(cdk_context)


@pytest.mark.parametrize("expression", ["rate(1 day)", "rate(12 hours)", "cron(0 6 * * ? *)"])
def test_price_schedule_accepts_recurring_expressions(cdk_context, expression: str) -> None:
    cdk_context["stages"]["dev"]["price_schedule"] = expression
    assert load_stage_configs(cdk_context)["dev"].price_schedule == expression


def test_construct_acknowledgement_covers_only_the_matching_construct(
    tmp_path: Path, cli_context, synthesize
) -> None:
    # Given two bucket stacks that break AwsSolutions-S1 and -S10 the same way
    app = cdk.App(outdir=str(tmp_path), context=cli_context)
    for name in ("Acked", "Other"):
        s3.Bucket(cdk.Stack(app, name), "Bucket", enforce_ssl=True)
    # When S1 is acknowledged on one bucket by its path below the stage
    apply_nag(
        app,
        acknowledgements=[],
        construct_acknowledgements=[
            ("Acked/Bucket", "AwsSolutions::AwsSolutions-S1", "throwaway test bucket")
        ],
    )
    result = synthesize(app, tmp_path)
    # Then only that bucket's finding is suppressed, with its reason on record
    report = result.validation_report
    reported = [
        (v["ruleName"], c["constructPath"])
        for plugin in report["pluginReports"]
        for v in plugin["violations"]
        for c in v["violatingConstructs"]
    ]
    assert ("AwsSolutions-S1", "Other/Bucket/Resource") in reported
    assert not any(path.startswith("Acked/") for _, path in reported)
    suppressed = {
        (v["acknowledgedId"], v["reason"], v["acknowledgedAt"])
        for plugin in report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
    }
    assert suppressed == {
        ("AwsSolutions::AwsSolutions-S1", "throwaway test bucket", "Acked/Bucket")
    }


def test_every_suppressed_finding_has_a_written_acknowledgement(synthesized) -> None:
    synthesized.require()
    declared = (
        {(rule_id, reason) for rule_id, reason in ACKNOWLEDGEMENTS}
        | {(rule_id, reason) for _, rule_id, reason in CONSTRUCT_ACKNOWLEDGEMENTS}
        # the persona policies' findings, derived from the API's constructs (one reason)
        | {(rule_id, nag.PERSONA_PATHS) for _, rule_id in nag.persona_findings(synthesized.app)}
        # the API's DescribeExecution on its stage's state machine (derived likewise)
        | {
            (rule_id, nag.DESCRIBE_EXECUTIONS)
            for _, rule_id in nag.execution_findings(synthesized.app)
        }
    )
    suppressed = {
        (v["acknowledgedId"], v["reason"])
        for plugin in synthesized.validation_report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
    }
    assert suppressed and suppressed <= declared


def test_decision_changes_reach_an_encrypted_tls_only_topic_with_a_dlq(pricing) -> None:
    # Given the pricing stack: "Estimate Decision Changed" goes to a topic people subscribe to
    from trncost.events import DetailType, pattern

    (topic_id, topic) = _one(pricing, "AWS::SNS::Topic")
    key_ref = topic["Properties"]["KmsMasterKeyId"]
    key_id = key_ref["Fn::GetAtt"][0]
    key = pricing["Resources"][key_id]["Properties"]
    assert key["EnableKeyRotation"] is True
    # EventBridge may use the key to publish (what the SNS target adds), and nothing more
    (allow_events,) = [
        s
        for s in key["KeyPolicy"]["Statement"]
        if s.get("Principal") == {"Service": "events.amazonaws.com"}
    ]
    assert set(_actions(allow_events)) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    # TLS only, and EventBridge may publish
    statements = [
        s
        for p in _resources(pricing, "AWS::SNS::TopicPolicy").values()
        if {"Ref": topic_id} in p["Properties"]["Topics"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in statements
    )
    assert any(s.get("Principal") == {"Service": "events.amazonaws.com"} for s in statements)
    # the rule matches exactly the layer's pattern and has retries and a DLQ
    rules = [
        r
        for r in _resources(pricing, "AWS::Events::Rule").values()
        if r["Properties"]["EventPattern"] == pattern(DetailType.estimate_decision_changed)
    ]
    (rule,) = rules
    (target,) = rule["Properties"]["Targets"]
    assert target["Arn"] == {"Ref": topic_id}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0
    assert target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0] in _resources(
        pricing, "AWS::SQS::Queue"
    )
    assert "DecisionTopicArn" in pricing["Outputs"]
