"""Issue #5 item 4 infrastructure: the REST API (IAM auth on every method, request validator,
throttled stage with JSON access logs, execution logs and X-Ray) in front of the api function of
the house factory, with its least-privilege role, and the ApiUrl output. All but the last test
run on the session synth (tests/support/fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from stacks.api import API_MEMORY_MB, API_TIMEOUT, BUDGET_ACTIONS, TABLE_ACTIONS, TrncostApi
from stacks.config import StageConfigError, load_stage_configs
from stacks.data import TrncostData
from stacks.lambda_factory import RUNTIME
from stacks.nag import CONSTRUCT_ACKNOWLEDGEMENTS
from stacks.permissions import (
    BUS_ACTIONS,
    CAPACITY_BLOCK_ACTIONS,
    INDEX_ACTIONS,
    PRICE_LIST_ACTIONS,
    TRAINING_PLAN_ACTIONS,
)
from stacks.workflow import DESCRIBE_ACTIONS, START_ACTIONS, state_machine_name
from tests.support.cdk import DATA, STAGE
from tests.support.template_kit import by_action as _by_action
from tests.support.template_kit import exported as _exported
from tests.support.template_kit import listed as _listed
from tests.support.template_kit import one as _one
from tests.support.template_kit import resources as _resources
from tests.support.template_kit import statements as _statements
from trncost.model.catalog import Catalog
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    ACCOUNT_ID_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    PLAN_MAX_BUDGET_ENV,
    PLAN_MAX_RUN_HOURS_ENV,
    PLAN_MAX_RUNS_ENV,
    PRICE_LIST_REGION_ENV,
    STATE_MACHINE_ARN_ENV,
    TABLE_NAME_ENV,
)
from trncost.store.schema import TABLE

pytestmark = pytest.mark.infra

API = f"{STAGE}/TrncostApi"
LOG_ACTIONS = {"logs:CreateLogStream", "logs:PutLogEvents"}
XRAY_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
POWERTOOLS_ENV = {
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_LOG_LEVEL",
    "PYDANTIC_DISABLE_PLUGINS",
}
# The fields of aws_apigateway.AccessLogFormat.json_with_standard_fields, all switched on.
STANDARD_ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "ip": "$context.identity.sourceIp",
    "user": "$context.identity.user",
    "caller": "$context.identity.caller",
    "requestTime": "$context.requestTime",
    "httpMethod": "$context.httpMethod",
    "resourcePath": "$context.resourcePath",
    "status": "$context.status",
    "protocol": "$context.protocol",
    "responseLength": "$context.responseLength",
}


# --- helpers over synthesized templates -------------------------------------------------------


def _refs(value: Any) -> set[str]:
    """Every logical id an expression refers to (Ref or Fn::GetAtt)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if "Ref" in value:
            found.add(value["Ref"])
        if "Fn::GetAtt" in value:
            found.add(value["Fn::GetAtt"][0])
        for item in value.values():
            found |= _refs(item)
    elif isinstance(value, list):
        for item in value:
            found |= _refs(item)
    return found


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api_stack(synthesized) -> dict:
    return synthesized.template(API)


@pytest.fixture(scope="module")
def rest_api_id(api_stack) -> str:
    return _one(api_stack, "AWS::ApiGateway::RestApi")[0]


@pytest.fixture(scope="module")
def function(api_stack) -> tuple[str, dict]:
    """(logical id, properties) of the api function: the stack's only function."""
    function_id, resource = _one(api_stack, "AWS::Lambda::Function")
    return function_id, resource["Properties"]


@pytest.fixture(scope="module")
def methods(api_stack) -> dict[str, dict]:
    methods = _resources(api_stack, "AWS::ApiGateway::Method")
    assert methods, "the API has no methods"
    return {method_id: method["Properties"] for method_id, method in methods.items()}


@pytest.fixture(scope="module")
def stage(api_stack) -> tuple[str, dict]:
    stage_id, resource = _one(api_stack, "AWS::ApiGateway::Stage")
    return stage_id, resource


# --- the REST API -----------------------------------------------------------------------------


def test_every_method_requires_iam_authorization(methods) -> None:
    # Given every AWS::ApiGateway::Method of the stack, OPTIONS included if there ever is one
    for method_id, props in methods.items():
        # Then each requires SigV4-signed IAM callers, with no authorizer or API key instead
        assert props["AuthorizationType"] == "AWS_IAM", method_id
        assert "AuthorizerId" not in props and not props.get("ApiKeyRequired", False)


def test_api_is_one_proxy_to_the_api_function_at_the_root_and_below(
    api_stack, methods, function, rest_api_id
) -> None:
    # Given the resources of the API: the root, and {proxy+} right under it
    (proxy_id,) = _resources(api_stack, "AWS::ApiGateway::Resource")
    proxy = api_stack["Resources"][proxy_id]["Properties"]
    root = {"Fn::GetAtt": [rest_api_id, "RootResourceId"]}
    assert proxy["PathPart"] == "{proxy+}"
    assert proxy["ParentId"] == root
    # Then ANY on each is a Lambda proxy integration of the api function (routes in the Lambda)
    by_resource = {json.dumps(m["ResourceId"], sort_keys=True): m for m in methods.values()}
    assert set(by_resource) == {
        json.dumps(root, sort_keys=True),
        json.dumps({"Ref": proxy_id}, sort_keys=True),
    }
    function_id, _ = function
    for props in methods.values():
        assert props["HttpMethod"] == "ANY"
        assert props["RestApiId"] == {"Ref": rest_api_id}
        integration = props["Integration"]
        assert integration["Type"] == "AWS_PROXY"
        assert integration["IntegrationHttpMethod"] == "POST"
        separator, parts = integration["Uri"]["Fn::Join"]
        assert separator == ""
        # the `live` alias of the function's published version (SnapStart serves versions)
        assert parts[-2:] == [{"Ref": _live_alias(api_stack, function_id)}, "/invocations"]
        assert ":lambda:path/2015-03-31/functions/" in parts[-3]
        assert integration["TimeoutInMillis"] == API_TIMEOUT.to_milliseconds() == 29_000


def test_only_this_api_may_invoke_the_function(api_stack, function, rest_api_id, stage) -> None:
    function_id, _ = function
    permissions = _resources(api_stack, "AWS::Lambda::Permission")
    assert len(permissions) == 2  # one per method; no test-invoke permissions
    for permission in permissions.values():
        props = permission["Properties"]
        assert props["Action"] == "lambda:InvokeFunction"
        assert props["Principal"] == "apigateway.amazonaws.com"
        assert props["FunctionName"] == {"Ref": _live_alias(api_stack, function_id)}
        assert _refs(props["SourceArn"]) >= {rest_api_id, stage[0]}


def _live_alias(api_stack: dict, function_id: str) -> str:
    """The logical id of the function's `live` alias, on its one published version."""
    alias_id, alias = _one(api_stack, "AWS::Lambda::Alias")
    version_id, version = _one(api_stack, "AWS::Lambda::Version")
    assert alias["Properties"]["Name"] == "live"
    assert alias["Properties"]["FunctionName"] == {"Ref": function_id}
    assert alias["Properties"]["FunctionVersion"] == {"Fn::GetAtt": [version_id, "Version"]}
    assert version["Properties"]["FunctionName"] == {"Ref": function_id}
    return alias_id


def test_the_api_function_restores_from_a_snapshot(api_stack, function) -> None:
    # SnapStart on published versions (Python 3.12+, aws-cdk-lib knows it for the runtime), and
    # API Gateway invokes the `live` alias of the published version, never $LATEST
    function_id, props = function
    assert props["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert props["Runtime"] == RUNTIME.name and RUNTIME.supports_snap_start
    _live_alias(api_stack, function_id)
    # and no provisioned concurrency, EFS or large ephemeral storage (SnapStart refuses them)
    assert "FileSystemConfigs" not in props
    assert props.get("EphemeralStorage", {"Size": 512})["Size"] <= 512
    alias = next(iter(_resources(api_stack, "AWS::Lambda::Alias").values()))
    assert "ProvisionedConcurrencyConfig" not in alias["Properties"]


def test_rest_api_is_regional_and_binary_only_for_billing_exports(api_stack, rest_api_id) -> None:
    props = api_stack["Resources"][rest_api_id]["Properties"]
    assert props["EndpointConfiguration"] == {"Types": ["REGIONAL"]}
    # POST /actuals: gzip and Parquet exports reach the Lambda base64-encoded; every answer
    # (JSON, text/html reports, text/csv) is text, none of them a binary type
    assert props["BinaryMediaTypes"] == [
        "application/gzip",
        "application/x-gzip",
        "application/vnd.apache.parquet",
        "application/x-parquet",
        "application/octet-stream",
    ]
    assert "Policy" not in props  # no resource policy: principals of this account only
    assert props["Name"] == f"trncost-{STAGE}"


def test_request_validator_checks_parameters_and_is_on_every_method(
    api_stack, methods, rest_api_id
) -> None:
    # Given the API's one request validator
    validator_id, validator = _one(api_stack, "AWS::ApiGateway::RequestValidator")
    props = validator["Properties"]
    assert props["RestApiId"] == {"Ref": rest_api_id}
    assert props["ValidateRequestParameters"] is True
    # bodies are validated by the api Lambda, against the schemas (acknowledged APIG2)
    assert props["ValidateRequestBody"] is False
    # Then every method uses it
    for method_id, method in methods.items():
        assert method["RequestValidatorId"] == {"Ref": validator_id}, method_id
    (proxy_method,) = [m for m in methods.values() if "RequestParameters" in m]
    assert proxy_method["RequestParameters"] == {"method.request.path.proxy": True}


# --- the stage: throttling, logs, tracing -----------------------------------------------------


def test_stage_is_throttled_logs_at_info_without_data_and_traces(stage, stage_config) -> None:
    _, resource = stage
    props = resource["Properties"]
    assert props["StageName"] == STAGE  # the URL ends in /dev/
    assert props["TracingEnabled"] is True
    # one setting for every method of every resource, from the stage config
    (settings,) = props["MethodSettings"]
    assert settings["HttpMethod"] == "*" and settings["ResourcePath"] == "/*"
    assert settings["ThrottlingRateLimit"] == stage_config.api.throttle_rate_limit == 50
    assert settings["ThrottlingBurstLimit"] == stage_config.api.throttle_burst_limit == 100
    assert settings["LoggingLevel"] == "INFO"
    assert settings["DataTraceEnabled"] is False


def test_access_logs_are_json_to_a_dedicated_retained_log_group(
    api_stack, stage, function, stage_config
) -> None:
    _, resource = stage
    setting = resource["Properties"]["AccessLogSetting"]
    assert json.loads(setting["Format"]) == STANDARD_ACCESS_LOG_FIELDS
    (log_group_id,) = _refs(setting["DestinationArn"])
    assert setting["DestinationArn"] == {"Fn::GetAtt": [log_group_id, "Arn"]}
    log_group = api_stack["Resources"][log_group_id]
    assert log_group["Type"] == "AWS::Logs::LogGroup"
    assert log_group["Properties"]["RetentionInDays"] == stage_config.log_retention_days
    assert log_group["DeletionPolicy"] == "Retain"
    # dedicated: not the function's log group
    assert function[1]["LoggingConfig"]["LogGroup"] != {"Ref": log_group_id}


def test_execution_log_group_exists_with_retention_before_the_stage(
    api_stack, stage, rest_api_id, stage_config
) -> None:
    # API Gateway would create it on first use, never expiring
    name_parts = ["API-Gateway-Execution-Logs_", {"Ref": rest_api_id}, f"/{STAGE}"]
    expected_name = {"Fn::Join": ["", name_parts]}
    (log_group_id,) = [
        k
        for k, v in _resources(api_stack, "AWS::Logs::LogGroup").items()
        if v["Properties"].get("LogGroupName") == expected_name
    ]
    log_group = api_stack["Resources"][log_group_id]
    assert log_group["Properties"]["RetentionInDays"] == stage_config.log_retention_days
    assert log_group["DeletionPolicy"] == "Retain"
    assert log_group_id in stage[1]["DependsOn"]


def test_account_cloudwatch_role_is_retained_and_set_before_the_stage(
    api_stack, stage, stage_config
) -> None:
    assert stage_config.api.account_cloudwatch_role is True  # cdk.json, dev
    account_id, account = _one(api_stack, "AWS::ApiGateway::Account")
    (role_id,) = _refs(account["Properties"]["CloudWatchRoleArn"])
    role = api_stack["Resources"][role_id]
    assert role["Type"] == "AWS::IAM::Role"
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "apigateway.amazonaws.com"}
    assert trust["Action"] == "sts:AssumeRole"
    # shared by every REST API of the account and region: deleting the stack must not take it
    assert role["DeletionPolicy"] == "Retain" and account["DeletionPolicy"] == "Retain"
    assert account_id in stage[1]["DependsOn"]


def test_no_account_cloudwatch_role_when_the_stage_says_the_account_has_one(
    tmp_path: Path, cdk_context, cli_context
) -> None:
    # Given a stage whose account already has API Gateway's CloudWatch role
    raw = {**cdk_context["stages"][STAGE], "api": {"account_cloudwatch_role": False}}
    config = load_stage_configs({"stages": {STAGE: raw}})[STAGE]
    assert config.api.throttle_rate_limit == 50  # the other fields keep their defaults
    app = cdk.App(outdir=str(tmp_path), context=cli_context)
    data = TrncostData(app, "Data", config=config)
    api = TrncostApi(app, "Api", config=config, table=data.table, bus=data.bus)
    # When the API stack is synthesized
    template = app.synth().get_stack_by_name(api.stack_name).template
    # Then it neither creates nor sets one, and still logs
    assert _resources(template, "AWS::ApiGateway::Account") == {}
    assert len(_resources(template, "AWS::IAM::Role")) == 1  # the function's
    (stage_resource,) = _resources(template, "AWS::ApiGateway::Stage").values()
    assert stage_resource["Properties"]["MethodSettings"][0]["LoggingLevel"] == "INFO"
    assert "AccessLogSetting" in stage_resource["Properties"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("throttle_rate_limit", 0), ("throttle_burst_limit", 0), ("colour", "blue")],
)
def test_bad_api_config_is_named(cdk_context, field: str, value: Any) -> None:
    cdk_context["stages"][STAGE]["api"] = {field: value}
    with pytest.raises(StageConfigError, match=rf"(?s)stage 'dev'.*field 'api\.{field}'"):
        load_stage_configs(cdk_context)


# --- the api function (house factory) ---------------------------------------------------------


def test_function_is_arm64_with_the_layer_memory_and_timeout(api_stack, function) -> None:
    _, props = function
    assert props["Architectures"] == ["arm64"]
    assert props["Runtime"] == RUNTIME.name
    assert props["Handler"] == "handler.handler"
    assert props["MemorySize"] == API_MEMORY_MB == 1024
    # never outlives API Gateway's 29 s integration timeout
    assert props["Timeout"] == API_TIMEOUT.to_seconds() == 29
    assert props["TracingConfig"] == {"Mode": "Active"}
    assert props["LoggingConfig"]["LogFormat"] == "JSON"
    layer_id, _ = _one(api_stack, "AWS::Lambda::LayerVersion")
    assert props["Layers"] == [{"Ref": layer_id}]
    assert props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == "api"


def test_function_environment_uses_the_names_of_the_modules(
    synthesized, function, stage_config, table_id, bus_id
) -> None:
    env = function[1]["Environment"]["Variables"]
    assert (
        set(env)
        == {TABLE_NAME_ENV, BUS_NAME_ENV, PRICE_LIST_REGION_ENV, CATALOG_ENV, STATE_MACHINE_ARN_ENV}
        | {PLAN_MAX_BUDGET_ENV, PLAN_MAX_RUN_HOURS_ENV, PLAN_MAX_RUNS_ENV, ACCEPT_UPLOADS_ENV}
        | {ACCOUNT_ID_ENV}
        | POWERTOOLS_ENV
    )
    assert env[ACCOUNT_ID_ENV] == {"Ref": "AWS::AccountId"}  # where budgets are made
    # uploads become latest only where the stage says so (prices.accept_uploads; off here)
    assert env[ACCEPT_UPLOADS_ENV] == "false" and not stage_config.prices.accept_uploads
    assert _exported(synthesized, env[TABLE_NAME_ENV]) == (DATA, {"Ref": table_id})
    assert _exported(synthesized, env[BUS_NAME_ENV]) == (DATA, {"Ref": bus_id})
    assert env[PRICE_LIST_REGION_ENV] == stage_config.price_list_endpoint_region
    assert Catalog.model_validate_json(env[CATALOG_ENV]) == stage_config.catalog


def test_function_role_has_exactly_the_needed_actions(
    synthesized, api_stack, function, table_id, bus_id
) -> None:
    # Given the api function's own role
    _, props = function
    role_id = props["Role"]["Fn::GetAtt"][0]
    role = api_stack["Resources"][role_id]["Properties"]
    assert "ManagedPolicyArns" not in role and "Policies" not in role
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "lambda.amazonaws.com"}
    statements = _statements(api_stack, role_id)
    by_action = _by_action(statements)
    # Then it may do exactly this, with no wildcard action
    price_reads = set(PRICE_LIST_ACTIONS + CAPACITY_BLOCK_ACTIONS + TRAINING_PLAN_ACTIONS)
    assert set(by_action) == (
        price_reads
        | set(TABLE_ACTIONS)
        | set(INDEX_ACTIONS)
        | set(BUS_ACTIONS)
        | LOG_ACTIONS
        | XRAY_ACTIONS
        | {"sqs:SendMessage"}  # the house function's async-invoke DLQ
        | set(START_ACTIONS)  # trial plans: start the workflow, on its one state machine
        | set(BUDGET_ACTIONS)  # POST /estimates/{id}/budget, on budgets named trncost-* only
        | set(DESCRIBE_ACTIONS)  # ... and read its executions' status (GET /trial-plans/{id})
    )
    assert set(TABLE_ACTIONS) == {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
    }
    assert not any("*" in action for action in by_action)
    # Resource "*" only for Price List / Capacity Block / Training Plan reads and X-Ray (the nag
    # reason)
    on_star = {a for s in statements if "*" in _listed(s["Resource"]) for a in _listed(s["Action"])}
    assert on_star == price_reads | XRAY_ACTIONS
    for statement in statements:
        if set(_listed(statement["Action"])) == set(BUDGET_ACTIONS):
            assert json.dumps(statement["Resource"]).endswith(':budget/trncost-*"]]}')
            continue
        if _listed(statement["Action"]) == DESCRIBE_ACTIONS:
            # the executions of the stage's one named state machine (issue 23), nothing else
            assert f":execution:{state_machine_name(STAGE)}:*" in json.dumps(statement["Resource"])
            continue
        assert statement["Resource"] == "*" or "*" not in json.dumps(statement["Resource"])
    # DynamoDB: the table, and Query on its one index by name
    table_arn = {"Fn::GetAtt": [table_id, "Arn"]}
    (table_statement,) = [s for s in statements if "dynamodb:PutItem" in _listed(s["Action"])]
    assert set(_listed(table_statement["Action"])) == set(TABLE_ACTIONS)
    assert _exported(synthesized, table_statement["Resource"]) == (DATA, table_arn)
    assert [index.name for index in TABLE.indexes] == ["gsi1"]
    (index_statement,) = [s for s in statements if _listed(s["Action"]) == ["dynamodb:Query"]]
    separator, (table_part, suffix) = index_statement["Resource"]["Fn::Join"]
    assert separator == "" and suffix == "/index/gsi1"
    assert _exported(synthesized, table_part) == (DATA, table_arn)
    # events:PutEvents on the trncost bus only
    (bus_arn,) = by_action["events:PutEvents"]
    assert _exported(synthesized, bus_arn) == (DATA, {"Fn::GetAtt": [bus_id, "Arn"]})
    # logs to its own log group, DLQ messages to its own queue
    log_group_arn = {"Fn::GetAtt": [props["LoggingConfig"]["LogGroup"]["Ref"], "Arn"]}
    for action in LOG_ACTIONS:
        assert by_action[action] == [log_group_arn]
    assert by_action["sqs:SendMessage"] == [props["DeadLetterConfig"]["TargetArn"]]


# --- outputs ----------------------------------------------------------------------------------


def test_outputs_give_the_api_url_and_id(api_stack, rest_api_id, stage) -> None:
    outputs = api_stack["Outputs"]
    separator, parts = outputs["ApiUrl"]["Value"]["Fn::Join"]
    assert separator == ""
    assert parts[0] == "https://" and parts[1] == {"Ref": rest_api_id}
    assert parts[-2:] == [{"Ref": stage[0]}, "/"]
    assert outputs["ApiId"]["Value"] == {"Ref": rest_api_id}
    # RestApi's own Endpoint output is gone: one URL output, under a stable name
    urls = [k for k, v in outputs.items() if "execute-api" in json.dumps(v["Value"])]
    assert urls == ["ApiUrl"]


# --- nag: the API acknowledgements are used, where they say -----------------------------------


def test_api_acknowledgements_each_suppress_a_finding_in_the_api_stack(synthesized) -> None:
    ours = [
        (p, rule, reason)
        for p, rule, reason in CONSTRUCT_ACKNOWLEDGEMENTS
        if p.startswith("TrncostApi/")
    ]
    assert {rule.split("::")[1].split("[")[0] for _, rule, _ in ours} == {
        "AwsSolutions-IAM5",
        "AwsSolutions-APIG2",
        "AwsSolutions-APIG3",
        "AwsSolutions-COG4",
        "AwsSolutions-IAM4",
    }
    suppressed = [
        (v["acknowledgedId"], v["reason"], c["constructPath"])
        for plugin in synthesized.validation_report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
        for c in v["violatingConstructs"]
    ]
    for path, rule_id, reason in ours:
        hits = [p for r, why, p in suppressed if r == rule_id and why == reason]
        hits_here = [p for p in hits if p.startswith(f"{API}/")]
        assert hits_here, f"{rule_id} at {path} suppresses nothing"
        if rule_id.endswith("IAM5[Resource::*]"):  # shared with the prices role, same reason
            continue
        assert hits == hits_here, hits
