"""Issue #4 infrastructure: the rules (patterns imported from the layer), the ingest and refresh
queues with their DLQs, the two queue-driven functions of the house factory and their
least-privilege roles. All on the session synth (tests/support/fixtures.py): no extra synth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.ingest import (
    BATCH_JOB_ACTIONS,
    BATCH_SIZE,
    INGEST_TIMEOUT,
    JOB_LOG_ACTIONS,
    MAX_BATCHING_WINDOW,
    OUTBOX_SCHEDULE,
    OUTBOX_TABLE_ACTIONS,
    REFRESH_TIMEOUT,
    event_pattern,
)
from stacks.lambda_factory import DLQ_RETENTION, HANDLER_EXCLUDES, LAMBDAS_DIR, RUNTIME
from stacks.nag import CONSTRUCT_ACKNOWLEDGEMENTS
from tests.support.cdk import DATA, STAGE
from tests.support.template_kit import by_action as _by_action
from tests.support.template_kit import exported as _exported
from tests.support.template_kit import listed as _listed
from tests.support.template_kit import one as _one
from tests.support.template_kit import resources as _resources
from tests.support.template_kit import statements as _statements
from trncost.events import AGENT_SOURCE, SOURCE, DetailType, pattern
from trncost.metrics.events import AGENT_PATTERN, BATCH_PATTERN, SAGEMAKER_PATTERN
from trncost.metrics.joblogs import LOG_GROUPS
from trncost.services.ingest import LEASE_S
from trncost.settings import BUS_NAME_ENV, TABLE_NAME_ENV
from trncost.store.schema import TABLE, TTL_ATTRIBUTE

pytestmark = pytest.mark.infra

INGEST = f"{STAGE}/TrncostIngest"
LOG_ACTIONS = {"logs:CreateLogStream", "logs:PutLogEvents"}
XRAY_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
TABLE_ACTIONS = {
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
}
# What the SqsEventSource grants the consumer (sqs.Queue.grant_consume_messages)
CONSUME_ACTIONS = {
    "sqs:ReceiveMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueUrl",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
}
ASYNC_DLQ_ACTIONS = {"sqs:SendMessage"}  # the house function's own async-invoke DLQ
METRICS_ACTIONS = {"cloudwatch:GetMetricData", "cloudwatch:ListMetrics"}
JOB_LOG_GROUP_ARNS = [
    {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":logs:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                f":log-group:{group}:*",
            ],
        ]
    }
    for group in ("/aws/sagemaker/TrainingJobs", "/aws/batch/job")
]
TRAINING_JOB_ARN = {
    "Fn::Join": [
        "",
        [
            "arn:",
            {"Ref": "AWS::Partition"},
            ":sagemaker:",
            {"Ref": "AWS::Region"},
            ":",
            {"Ref": "AWS::AccountId"},
            ":training-job/*",
        ],
    ]
}

# Every rule of the stack: (pattern as the layer defines it, on the project bus?, consumer).
RULES = {
    "sagemaker": (SAGEMAKER_PATTERN, False, "ingest"),
    "batch": (BATCH_PATTERN, False, "ingest"),
    "agent": (AGENT_PATTERN, True, "ingest"),
    "trial_recorded": (pattern(DetailType.trial_recorded), True, "refresh"),
    "price_snapshot_taken": (pattern(DetailType.price_snapshot_taken), True, "refresh"),
}


# --- helpers over synthesized templates -------------------------------------------------------


def _json(value: Any) -> Any:
    """A Python constant as it reads back from JSON (tuples become lists, ...)."""
    return json.loads(json.dumps(value))


def _arn_of(resource_id: str) -> dict:
    return {"Fn::GetAtt": [resource_id, "Arn"]}


def _id_of_arn(arn: dict) -> str:
    assert set(arn) == {"Fn::GetAtt"} and arn["Fn::GetAtt"][1] == "Arn", arn
    return arn["Fn::GetAtt"][0]


# --- fixtures: the stack, and each consumer's function / queue / DLQ ---------------------------


@pytest.fixture(scope="module")
def ingest_stack(synthesized) -> dict:
    return synthesized.template(INGEST)


@pytest.fixture(scope="module")
def consumers(ingest_stack) -> dict[str, dict[str, Any]]:
    """Per Powertools service name ("ingest", "refresh"): function id and properties, its
    event source mapping, the queue it consumes and that queue's DLQ."""
    resources = ingest_stack["Resources"]
    found: dict[str, dict[str, Any]] = {}
    mappings = _resources(ingest_stack, "AWS::Lambda::EventSourceMapping")
    for function_id, function in _resources(ingest_stack, "AWS::Lambda::Function").items():
        props = function["Properties"]
        name = props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
        if name == "outbox":  # scheduled, no queue: test_outbox_function_is_scheduled
            continue
        (mapping,) = [
            m["Properties"]
            for m in mappings.values()
            if m["Properties"]["FunctionName"] == {"Ref": function_id}
        ]
        queue_id = _id_of_arn(mapping["EventSourceArn"])
        queue = resources[queue_id]["Properties"]
        dlq_id = _id_of_arn(queue["RedrivePolicy"]["deadLetterTargetArn"])
        found[name] = {
            "function_id": function_id,
            "function": props,
            "metadata": function["Metadata"],
            "mapping": mapping,
            "queue_id": queue_id,
            "queue": queue,
            "dlq_id": dlq_id,
            "dlq": resources[dlq_id]["Properties"],
            "role_id": _id_of_arn(props["Role"]),
        }
    assert set(found) == {"ingest", "refresh"}
    assert len(mappings) == 2
    return found


@pytest.fixture(scope="module")
def rules(ingest_stack) -> dict[str, tuple[str, dict]]:
    """Each expected rule (RULES key) → (logical id, properties), found by its pattern."""
    by_pattern = {
        json.dumps(r["Properties"]["EventPattern"], sort_keys=True): (rule_id, r["Properties"])
        for rule_id, r in _resources(ingest_stack, "AWS::Events::Rule").items()
    }
    assert len(by_pattern) == len(_resources(ingest_stack, "AWS::Events::Rule"))
    found = {}
    for key, (raw, _, _) in RULES.items():
        rendered = json.dumps(_json(raw), sort_keys=True)
        assert rendered in by_pattern, f"no rule with the {key} pattern {rendered}"
        found[key] = by_pattern.pop(rendered)
    assert by_pattern == {}, f"rules with patterns the layer does not define: {list(by_pattern)}"
    return found


# --- rules: patterns from the modules, the right bus, the right queue --------------------------


def test_rules_use_exactly_the_patterns_of_the_layer_modules(rules) -> None:
    # Given the patterns trncost.metrics.events and trncost.events define
    # Then the stack's rules are exactly those (the `rules` fixture matches them one to one),
    # byte for byte as JSON
    for key, (raw, _, _) in RULES.items():
        assert rules[key][1]["EventPattern"] == _json(raw)
        assert rules[key][1]["State"] == "ENABLED"
    assert AGENT_PATTERN["source"] == [AGENT_SOURCE]
    assert rules["trial_recorded"][1]["EventPattern"]["source"] == [SOURCE]


@pytest.mark.parametrize("key", sorted(RULES))
def test_aws_service_rules_are_on_the_default_bus_and_trncost_rules_on_the_project_bus(
    synthesized, rules, bus_id, key: str
) -> None:
    props = rules[key][1]
    on_project_bus = RULES[key][1]
    if on_project_bus:
        assert _exported(synthesized, props["EventBusName"]) == (DATA, {"Ref": bus_id})
    else:  # AWS service events arrive on the account's default bus only
        assert props.get("EventBusName", "default") == "default"


@pytest.mark.parametrize("key", sorted(RULES))
def test_each_rule_targets_its_consumers_queue_with_a_dlq_and_a_retry_policy(
    rules, consumers, key: str
) -> None:
    consumer = consumers[RULES[key][2]]
    (target,) = rules[key][1]["Targets"]
    assert target["Arn"] == _arn_of(consumer["queue_id"])
    assert "Input" not in target and "InputTransformer" not in target  # the event as it is
    # undeliverable events go to the DLQ of the same queue, after a stated retry policy
    assert target["DeadLetterConfig"] == {"Arn": _arn_of(consumer["dlq_id"])}
    retry = target["RetryPolicy"]
    assert retry["MaximumRetryAttempts"] > 0
    assert 60 <= retry["MaximumEventAgeInSeconds"] <= 86400


def _allow_statements(template: dict, queue_id: str) -> list[dict]:
    statements = []
    for policy in _resources(template, "AWS::SQS::QueuePolicy").values():
        if {"Ref": queue_id} in policy["Properties"]["Queues"]:
            statements += [
                s
                for s in policy["Properties"]["PolicyDocument"]["Statement"]
                if s["Effect"] != "Deny"
            ]
    return statements


@pytest.mark.parametrize("service", ["ingest", "refresh"])
def test_only_each_rule_may_send_to_its_queue_and_dlq(
    ingest_stack, rules, consumers, service: str
) -> None:
    # Given the rules that feed this consumer's queue
    consumer = consumers[service]
    feeding = {rules[k][0] for k, (_, _, to) in RULES.items() if to == service}
    for queue_id, allowed in (
        (consumer["queue_id"], {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}),
        (consumer["dlq_id"], {"sqs:SendMessage"}),
    ):
        # Then events.amazonaws.com may send, and only on behalf of exactly those rules
        statements = _allow_statements(ingest_stack, queue_id)
        source_rules = set()
        for statement in statements:
            assert statement["Principal"] == {"Service": "events.amazonaws.com"}
            assert set(_listed(statement["Action"])) <= allowed
            assert statement["Resource"] == _arn_of(queue_id)
            (condition,) = statement["Condition"].items()
            assert condition[0] == "ArnEquals"
            assert set(condition[1]) == {"aws:SourceArn"}
            source_rules.add(_id_of_arn(condition[1]["aws:SourceArn"]))
        assert len(statements) == len(feeding)
        assert source_rules == feeding


# --- queues -------------------------------------------------------------------------------


def _denies_plain_requests(template: dict, queue_id: str) -> bool:
    return any(
        s["Effect"] == "Deny"
        and s["Principal"] == {"AWS": "*"}
        and s["Action"] == "sqs:*"
        and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for policy in _resources(template, "AWS::SQS::QueuePolicy").values()
        if {"Ref": queue_id} in policy["Properties"]["Queues"]
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
    )


@pytest.mark.parametrize("service", ["ingest", "refresh"])
def test_queue_and_dlq_are_encrypted_tls_only_with_a_redrive_after_five_receives(
    ingest_stack, consumers, service: str
) -> None:
    consumer = consumers[service]
    queue, dlq = consumer["queue"], consumer["dlq"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] == 5
    for queue_id, props in ((consumer["queue_id"], queue), (consumer["dlq_id"], dlq)):
        assert props["SqsManagedSseEnabled"] is True
        assert _denies_plain_requests(ingest_stack, queue_id), f"{queue_id} accepts plain HTTP"
    assert dlq["MessageRetentionPeriod"] == DLQ_RETENTION.to_seconds() == 14 * 86400
    assert "RedrivePolicy" not in dlq
    # the DLQ outlives the queue's messages (SQS keeps a message's age when it moves)
    assert queue.get("MessageRetentionPeriod", 4 * 86400) < dlq["MessageRetentionPeriod"]


@pytest.mark.parametrize("service", ["ingest", "refresh"])
def test_visibility_timeout_is_at_least_six_function_timeouts_plus_the_batching_window(
    consumers, service: str
) -> None:
    consumer = consumers[service]
    timeout = consumer["function"]["Timeout"]
    window = consumer["mapping"]["MaximumBatchingWindowInSeconds"]
    assert consumer["queue"]["VisibilityTimeout"] >= 6 * timeout + window


def test_ingest_visibility_outlasts_the_claim_lease(consumers) -> None:
    # A delivery that died holding the claim (taken at most one timeout after receipt) is
    # retried only after its lease ran out, so the retry takes over instead of being "busy".
    ingest = consumers["ingest"]
    assert ingest["queue"]["VisibilityTimeout"] >= LEASE_S + ingest["function"]["Timeout"]


@pytest.mark.parametrize("service", ["ingest", "refresh"])
def test_event_source_mapping_reports_partial_batch_failures(consumers, service: str) -> None:
    mapping = consumers[service]["mapping"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == BATCH_SIZE == 10
    assert mapping["MaximumBatchingWindowInSeconds"] == MAX_BATCHING_WINDOW.to_seconds() == 5
    assert mapping.get("Enabled", True) is True


def test_outputs_name_the_queues_and_dlqs(ingest_stack, consumers) -> None:
    outputs = ingest_stack["Outputs"]
    for prefix, service in (("Ingest", "ingest"), ("Refresh", "refresh")):
        consumer = consumers[service]
        assert outputs[f"{prefix}QueueUrl"]["Value"] == {"Ref": consumer["queue_id"]}
        assert outputs[f"{prefix}DeadLetterQueueName"]["Value"] == {
            "Fn::GetAtt": [consumer["dlq_id"], "QueueName"]
        }


# --- functions (house factory) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "timeout", "memory"),
    [
        ("ingest", INGEST_TIMEOUT.to_seconds(), 1024),
        ("refresh", REFRESH_TIMEOUT.to_seconds(), 1024),
    ],
)
def test_functions_are_arm64_with_the_layer_and_a_retained_log_group(
    synthesized, ingest_stack, consumers, stage_config, service: str, timeout: int, memory: int
) -> None:
    props = consumers[service]["function"]
    assert props["Architectures"] == ["arm64"]
    assert props["Runtime"] == RUNTIME.name
    assert props["Handler"] == "handler.handler"
    assert props["Timeout"] == timeout
    assert props["MemorySize"] == memory
    assert props["TracingConfig"] == {"Mode": "Active"}
    # reserved concurrency from the stage config (cdk.json concurrency.reserved.<name>)
    assert props["ReservedConcurrentExecutions"] == stage_config.concurrency.reserved_for(service)
    layer_id, _ = _one(ingest_stack, "AWS::Lambda::LayerVersion")
    assert props["Layers"] == [{"Ref": layer_id}]
    logging = props["LoggingConfig"]
    assert logging["LogFormat"] == "JSON"
    log_group = ingest_stack["Resources"][logging["LogGroup"]["Ref"]]
    assert log_group["Properties"]["RetentionInDays"] == stage_config.log_retention_days
    assert log_group["DeletionPolicy"] == "Retain"
    # the code asset is lambdas/<service>/ (staged, unbundled), nothing else
    asset = synthesized.outdir / Path(consumers[service]["metadata"]["aws:asset:path"]).name
    assert (asset / "handler.py").is_file()
    shipped = sorted(p.relative_to(asset).as_posix() for p in asset.rglob("*") if p.is_file())
    source = LAMBDAS_DIR / service
    expected = sorted(
        p.relative_to(source).as_posix()
        for p in source.rglob("*")
        if p.is_file()
        and not any(p.match(g) for g in HANDLER_EXCLUDES)
        and "__pycache__" not in p.parts
    )
    assert shipped == expected


def test_function_environments_use_the_names_of_the_modules(
    synthesized, consumers, table_id, bus_id
) -> None:
    powertools = {
        "POWERTOOLS_SERVICE_NAME",
        "POWERTOOLS_METRICS_NAMESPACE",
        "POWERTOOLS_LOG_LEVEL",
        "PYDANTIC_DISABLE_PLUGINS",
    }
    ingest = consumers["ingest"]["function"]["Environment"]["Variables"]
    refresh = consumers["refresh"]["function"]["Environment"]["Variables"]
    assert set(ingest) == {TABLE_NAME_ENV, BUS_NAME_ENV} | powertools
    assert set(refresh) == {TABLE_NAME_ENV} | powertools
    for env in (ingest, refresh):
        assert _exported(synthesized, env[TABLE_NAME_ENV]) == (DATA, {"Ref": table_id})
    assert _exported(synthesized, ingest[BUS_NAME_ENV]) == (DATA, {"Ref": bus_id})


# --- least privilege ----------------------------------------------------------------------


def _check_table_grants(synthesized, statements: list[dict], table_id: str) -> None:
    table_arn = {"Fn::GetAtt": [table_id, "Arn"]}
    (table_statement,) = [s for s in statements if "dynamodb:PutItem" in _listed(s["Action"])]
    assert set(_listed(table_statement["Action"])) == TABLE_ACTIONS
    assert _exported(synthesized, table_statement["Resource"]) == (DATA, table_arn)
    # the schema's one index (gsi1), by name, for queries only (all an index serves)
    assert [index.name for index in TABLE.indexes] == ["gsi1"]
    (index_statement,) = [s for s in statements if _listed(s["Action"]) == ["dynamodb:Query"]]
    separator, (table_part, suffix) = index_statement["Resource"]["Fn::Join"]
    assert separator == "" and suffix == "/index/gsi1"
    assert _exported(synthesized, table_part) == (DATA, table_arn)


def _check_house_grants(consumer: dict, by_action: dict[str, list[Any]]) -> None:
    log_group_arn = {
        "Fn::GetAtt": [consumer["function"]["LoggingConfig"]["LogGroup"]["Ref"], "Arn"]
    }
    for action in LOG_ACTIONS:
        assert by_action[action] == [log_group_arn]
    for action in CONSUME_ACTIONS:
        assert by_action[action] == [_arn_of(consumer["queue_id"])]
    assert by_action["sqs:SendMessage"] == [consumer["function"]["DeadLetterConfig"]["TargetArn"]]


def test_ingest_role_has_exactly_the_needed_actions(
    synthesized, ingest_stack, consumers, table_id, bus_id
) -> None:
    # Given the ingest function's own role
    ingest = consumers["ingest"]
    role = ingest_stack["Resources"][ingest["role_id"]]["Properties"]
    assert "ManagedPolicyArns" not in role and "Policies" not in role
    statements = _statements(ingest_stack, ingest["role_id"])
    by_action = _by_action(statements)
    # Then it may do exactly this, no wildcard action
    assert set(by_action) == (
        TABLE_ACTIONS
        | METRICS_ACTIONS
        | {"sagemaker:DescribeTrainingJob", "events:PutEvents"}
        | set(JOB_LOG_ACTIONS)
        | set(BATCH_JOB_ACTIONS)
        | CONSUME_ACTIONS
        | ASYNC_DLQ_ACTIONS
        | LOG_ACTIONS
        | XRAY_ACTIONS
    )
    assert not any("*" in action for action in by_action)
    # Resource "*" only for the CloudWatch reads (no resource-level permissions) and X-Ray
    on_star = {a for s in statements if "*" in _listed(s["Resource"]) for a in _listed(s["Action"])}
    assert on_star == METRICS_ACTIONS | XRAY_ACTIONS | set(BATCH_JOB_ACTIONS)
    for statement in statements:
        assert (
            statement["Resource"] == "*"
            or statement["Resource"] == TRAINING_JOB_ARN
            or statement["Resource"] == JOB_LOG_GROUP_ARNS
            or ("*" not in json.dumps(statement["Resource"]))
        )
    # The job's own logs: exactly the SageMaker and Batch log groups (their streams)
    for action in JOB_LOG_ACTIONS:
        assert by_action[action] == JOB_LOG_GROUP_ARNS
    # DescribeTrainingJob: this account's and region's training jobs
    assert by_action["sagemaker:DescribeTrainingJob"] == [TRAINING_JOB_ARN]
    # PutEvents: the trncost bus only
    (bus_arn,) = by_action["events:PutEvents"]
    assert _exported(synthesized, bus_arn) == (DATA, {"Fn::GetAtt": [bus_id, "Arn"]})
    _check_table_grants(synthesized, statements, table_id)
    _check_house_grants(ingest, by_action)


def test_refresh_role_reads_and_writes_the_table_and_nothing_more(
    synthesized, ingest_stack, consumers, table_id
) -> None:
    refresh = consumers["refresh"]
    role = ingest_stack["Resources"][refresh["role_id"]]["Properties"]
    assert "ManagedPolicyArns" not in role and "Policies" not in role
    statements = _statements(ingest_stack, refresh["role_id"])
    by_action = _by_action(statements)
    assert set(by_action) == (
        TABLE_ACTIONS | CONSUME_ACTIONS | ASYNC_DLQ_ACTIONS | LOG_ACTIONS | XRAY_ACTIONS
    )
    assert not [a for a in by_action if a.split(":")[0] in {"events", "cloudwatch", "sagemaker"}]
    on_star = {a for s in statements if "*" in _listed(s["Resource"]) for a in _listed(s["Action"])}
    assert on_star == XRAY_ACTIONS
    _check_table_grants(synthesized, statements, table_id)
    _check_house_grants(refresh, by_action)


# --- nag: the ingest acknowledgements are used, where they say -------------------------------


def test_ingest_acknowledgements_each_suppress_a_finding_in_the_ingest_stack(synthesized) -> None:
    ours = [(p, rule, reason) for p, rule, reason in CONSTRUCT_ACKNOWLEDGEMENTS if "Ingest" in p]
    assert len(ours) == 8
    suppressed = [
        (v["acknowledgedId"], v["reason"], c["constructPath"])
        for plugin in synthesized.validation_report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
        for c in v["violatingConstructs"]
    ]
    for path, rule_id, reason in ours:
        hits = [p for r, why, p in suppressed if r == rule_id and why == reason]
        assert hits, f"{rule_id} at {path} suppresses nothing"
        assert all(p.startswith(f"{INGEST}/") for p in hits), hits


def test_event_pattern_refuses_keys_it_cannot_render() -> None:
    with pytest.raises(ValueError, match="detail_type"):
        event_pattern({"source": ["x"], "detail_type": ["y"]})


# --- long jobs: the training log groups subscribed to the ingest -------------------------------
def test_each_configured_log_group_delivers_every_event_to_the_ingest_function(
    ingest_stack, consumers, stage_config
) -> None:
    # Given the dev stage's job_log_subscription (the SageMaker and Batch groups)
    assert set(stage_config.job_log_subscription) == set(LOG_GROUPS)
    ingest_id = consumers["ingest"]["function_id"]
    filters = _resources(ingest_stack, "AWS::Logs::SubscriptionFilter")
    # Then each group has one filter: every event, to the ingest function itself
    by_group = {f["Properties"]["LogGroupName"]: f["Properties"] for f in filters.values()}
    assert set(by_group) == set(LOG_GROUPS)
    for props in by_group.values():
        assert props["FilterPattern"] == ""
        assert props["DestinationArn"] == {"Fn::GetAtt": [ingest_id, "Arn"]}
    # And CloudWatch Logs may invoke it only from those groups, in this account
    permissions = [
        p["Properties"]
        for p in _resources(ingest_stack, "AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "logs.amazonaws.com"
    ]
    assert len(permissions) == len(LOG_GROUPS)
    for p in permissions:
        assert p["Action"] == "lambda:InvokeFunction"
        assert p["FunctionName"] == {"Fn::GetAtt": [ingest_id, "Arn"]}
        assert any(group in json.dumps(p["SourceArn"]) for group in LOG_GROUPS)
    # And a delivery that keeps failing lands in the function's own async DLQ (alarmed)
    assert "DeadLetterConfig" in consumers["ingest"]["function"]


def test_the_log_parts_expire_with_the_tables_ttl(data, table_id) -> None:
    ttl = data["Resources"][table_id]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}


def test_outbox_function_is_scheduled_every_minute_with_only_what_it_needs(ingest_stack) -> None:
    # Given the outbox function (issue 23: events written with their records)
    functions = _resources(ingest_stack, "AWS::Lambda::Function")
    [(function_id, function)] = [
        (i, f)
        for i, f in functions.items()
        if f["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == "outbox"
    ]
    # Then EventBridge Scheduler invokes it every minute, with a DLQ
    schedules = _resources(ingest_stack, "AWS::Scheduler::Schedule")
    [schedule] = [
        s["Properties"]
        for s in schedules.values()
        if "outbox" in s["Properties"].get("Description", "")
    ]
    assert schedule["ScheduleExpression"] == OUTBOX_SCHEDULE == "rate(1 minute)"
    assert "DeadLetterConfig" in schedule["Target"]
    # and its role queries, deletes and updates the table, publishes on the bus, nothing else
    role_id = _id_of_arn(function["Properties"]["Role"])
    actions = {
        a
        for p in _resources(ingest_stack, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for st in p["Properties"]["PolicyDocument"]["Statement"]
        for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])
    }
    assert {a for a in actions if a.startswith("dynamodb:")} == set(OUTBOX_TABLE_ACTIONS)
    assert "events:PutEvents" in actions
    assert not {a for a in actions if a.startswith(("sagemaker:", "cloudwatch:", "batch:"))}
