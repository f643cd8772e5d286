"""Issue #8 items 3-4 infrastructure: alarms as code on every function, every dead-letter queue,
the API, a stale price snapshot and failed trial plans, all notifying one encrypted, TLS-only
SNS topic; the stage's dashboard; the outputs to operate a deployed stage. The facts are read
from the synthesized templates (the session synth, tests/support/fixtures.py), not from the code
that made them: which queues are dead-letter queues is worked out from the redrive policies and
dead-letter configs of every stack. The last tests synthesize throwaway variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import (
    AmazonCloudWatchEMFProvider,
)

import stacks.stage as stage_module
from app import cdk_json_context
from stacks.api import TrncostApi
from stacks.config import StageConfigError, load_stage_configs
from stacks.lambda_factory import TrncostFunction
from stacks.monitoring.alarms import (
    LATENCY_ALARM_PERIODS,
    OUTBOX_AGE_ALARM_S,
    QUEUE_AGE_ALARM_S,
    STALE_SNAPSHOT_DAYS,
)
from stacks.monitoring.dashboard import DASHBOARD_METRICS
from stacks.monitoring.metrics import SERVICE_DIMENSION, TRIAL_PLANS_SERVICE
from stacks.monitoring.resources import monitored_resources
from tests.support.cdk import STAGE
from tests.support.template_kit import one as _one
from tests.support.template_kit import resources as _resources
from trncost.observability import NAMESPACE, MetricName

pytestmark = pytest.mark.infra

MONITORING = f"{STAGE}/TrncostMonitoring"
FIVE_MINUTES = 300
ONE_DAY = 86_400
# The trncost metrics issue #8 asks the dashboard to show (and the EMF metrics it names).
DASHBOARD_METRIC_NAMES = {
    MetricName.trials_ingested,
    MetricName.ingests_rejected,
    MetricName.ingest_duplicates,
    MetricName.estimates_refreshed,
    MetricName.price_snapshot_taken,
    MetricName.price_quotes_pending,
    MetricName.price_quotes_rejected,
    MetricName.estimates_computed,
    MetricName.price_snapshot_age,
}

Target = tuple[str, str]  # (stack path, logical id)


# --- helpers over synthesized templates -------------------------------------------------------


def _stage_templates(templates: dict[str, dict], stage: str = STAGE) -> dict[str, dict]:
    return {path: t for path, t in templates.items() if path.startswith(f"{stage}/")}


def _exported(templates: dict[str, dict], name: str) -> tuple[str, Any]:
    for stack, template in templates.items():
        for output in template.get("Outputs", {}).values():
            if output.get("Export", {}).get("Name") == name:
                return stack, output["Value"]
    raise AssertionError(f"no stack exports {name}")


def _target(templates: dict[str, dict], stack: str, value: Any) -> Target:
    """The resource a Ref / Fn::GetAtt (possibly behind an Fn::ImportValue) points at."""
    if isinstance(value, dict) and "Fn::ImportValue" in value:
        stack, value = _exported(templates, value["Fn::ImportValue"])
    if isinstance(value, dict) and "Ref" in value:
        return stack, value["Ref"]
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return stack, value["Fn::GetAtt"][0]
    raise AssertionError(f"not a reference to a resource: {value!r}")


def _references(templates: dict[str, dict], stack: str, value: Any) -> set[Target]:
    """Every resource an expression refers to, imports followed to their stack."""
    found: set[Target] = set()
    if isinstance(value, dict):
        if {"Ref", "Fn::GetAtt", "Fn::ImportValue"} & set(value):
            try:
                found.add(_target(templates, stack, value))
            except AssertionError:
                pass
        for item in value.values():
            found |= _references(templates, stack, item)
    elif isinstance(value, list):
        for item in value:
            found |= _references(templates, stack, item)
    return found


def _metric(props: dict) -> dict[str, Any]:
    """namespace, name, dimensions, period and statistic of a single-metric alarm, in either
    CloudFormation shape (plain properties, or a one-element Metrics array)."""
    if "Metrics" in props:
        (query,) = props["Metrics"]
        stat = query["MetricStat"]
        return {
            "namespace": stat["Metric"]["Namespace"],
            "name": stat["Metric"]["MetricName"],
            "dimensions": stat["Metric"].get("Dimensions", []),
            "period": stat["Period"],
            "statistic": stat["Stat"],
        }
    return {
        "namespace": props["Namespace"],
        "name": props["MetricName"],
        "dimensions": props.get("Dimensions", []),
        "period": props["Period"],
        "statistic": props.get("Statistic") or props.get("ExtendedStatistic"),
    }


def _dimension(metric: dict[str, Any], name: str) -> Any:
    (value,) = [d["Value"] for d in metric["dimensions"] if d["Name"] == name]
    return value


def _alarms_on(alarms: dict[str, dict], namespace: str, name: str) -> dict[str, dict]:
    return {
        alarm_id: props
        for alarm_id, props in alarms.items()
        if _metric(props)["namespace"] == namespace and _metric(props)["name"] == name
    }


def _dead_letter_queues(templates: dict[str, dict]) -> set[Target]:
    """Every queue that something parks failures in, from the templates alone: redrive
    targets, Lambda and Scheduler dead-letter configs, rule-target DLQs, and any queue whose
    logical id says it is one."""
    found: set[Target] = set()
    for stack, template in templates.items():
        queues = _resources(template, "AWS::SQS::Queue")
        for queue_id, queue in queues.items():
            if "DeadLetterQueue" in queue_id:
                found.add((stack, queue_id))
            redrive = queue.get("Properties", {}).get("RedrivePolicy")
            if redrive:
                found.add(_target(templates, stack, redrive["deadLetterTargetArn"]))
        for function in _resources(template, "AWS::Lambda::Function").values():
            config = function["Properties"].get("DeadLetterConfig")
            if config:
                found.add(_target(templates, stack, config["TargetArn"]))
        for schedule in _resources(template, "AWS::Scheduler::Schedule").values():
            config = schedule["Properties"]["Target"].get("DeadLetterConfig")
            if config:
                found.add(_target(templates, stack, config["Arn"]))
        for rule in _resources(template, "AWS::Events::Rule").values():
            for target in rule["Properties"].get("Targets", []):
                if "DeadLetterConfig" in target:
                    found.add(_target(templates, stack, target["DeadLetterConfig"]["Arn"]))
    return found


def _all_of_type(templates: dict[str, dict], resource_type: str) -> set[Target]:
    return {
        (stack, resource_id)
        for stack, template in templates.items()
        for resource_id in _resources(template, resource_type)
    }


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def templates(synthesized) -> dict[str, dict]:
    synthesized.require()
    return _stage_templates(synthesized.templates)


@pytest.fixture(scope="module")
def monitoring(templates) -> dict:
    return templates[MONITORING]


@pytest.fixture(scope="module")
def alarms(monitoring) -> dict[str, dict]:
    found = _resources(monitoring, "AWS::CloudWatch::Alarm")
    assert found, "the monitoring stack has no alarms"
    return {alarm_id: alarm["Properties"] for alarm_id, alarm in found.items()}


@pytest.fixture(scope="module")
def topic_id(monitoring) -> str:
    return _one(monitoring, "AWS::SNS::Topic")[0]


@pytest.fixture(scope="module")
def dashboard_body(monitoring) -> Any:
    _, dashboard = _one(monitoring, "AWS::CloudWatch::Dashboard")
    assert dashboard["Properties"]["DashboardName"] == f"trncost-{STAGE}"
    return dashboard["Properties"]["DashboardBody"]


# --- every function ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric_name", ["Errors", "Throttles"])
def test_every_function_of_the_stage_has_an_errors_and_a_throttles_alarm(
    templates, alarms, metric_name: str
) -> None:
    # Given every Lambda function in every stack of the stage
    functions = _all_of_type(templates, "AWS::Lambda::Function")
    assert len(functions) >= 4  # prices, ingest, refresh, api
    # When the alarms on AWS/Lambda <metric> are traced to the function they watch
    watched: dict[Target, list[str]] = {}
    for alarm_id, props in _alarms_on(alarms, "AWS/Lambda", metric_name).items():
        metric = _metric(props)
        target = _target(templates, MONITORING, _dimension(metric, "FunctionName"))
        watched.setdefault(target, []).append(alarm_id)
        # Then each fires on the first one in 5 minutes
        assert metric["statistic"] == "Sum" and metric["period"] == FIVE_MINUTES
        assert props["Threshold"] == 1
        assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        assert props["TreatMissingData"] == "notBreaching"  # no invocations: nothing wrong
    # And every function has exactly one
    assert set(watched) == functions
    assert all(len(ids) == 1 for ids in watched.values()), watched


# --- every dead-letter queue ------------------------------------------------------------------


def test_every_dead_letter_queue_and_only_those_have_a_depth_alarm(templates, alarms) -> None:
    # Given the dead-letter queues, worked out from the templates: the ingest and refresh
    # queues' DLQs, each function's async-invoke DLQ, the price schedule's DLQ
    dead_letter_queues = _dead_letter_queues(templates)
    functions = _all_of_type(templates, "AWS::Lambda::Function")
    assert len(dead_letter_queues) >= 2 + len(functions) + 1
    # When the alarms on the depth of SQS queues are traced to their queue
    watched: dict[Target, list[str]] = {}
    for alarm_id, props in _alarms_on(
        alarms, "AWS/SQS", "ApproximateNumberOfMessagesVisible"
    ).items():
        metric = _metric(props)
        target = _target(templates, MONITORING, _dimension(metric, "QueueName"))
        watched.setdefault(target, []).append(alarm_id)
        # Then each fires as soon as one message waits
        assert metric["statistic"] == "Maximum" and metric["period"] == FIVE_MINUTES
        assert props["Threshold"] == 1
        assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        assert props["EvaluationPeriods"] == 1
    # And exactly the DLQs have one each (a work queue with messages is working, not failing)
    assert set(watched) == dead_letter_queues
    assert all(len(ids) == 1 for ids in watched.values()), watched
    work_queues = _all_of_type(templates, "AWS::SQS::Queue") - dead_letter_queues
    assert len(work_queues) == 2  # ingest, refresh


def test_every_dead_letter_queue_name_is_an_output_of_its_own_stack(templates) -> None:
    for stack, queue_id in _dead_letter_queues(templates):
        outputs = templates[stack].get("Outputs", {})
        named = [
            output_id
            for output_id, output in outputs.items()
            if output["Value"] == {"Fn::GetAtt": [queue_id, "QueueName"]}
            and output_id.endswith("DeadLetterQueueName")
        ]
        assert len(named) == 1, f"{stack}/{queue_id}: {named}"


# --- the API ----------------------------------------------------------------------------------


def _api_dimensions(templates, metric: dict[str, Any]) -> tuple[str, Target]:
    return _dimension(metric, "ApiName"), _target(
        templates, MONITORING, _dimension(metric, "Stage")
    )


def test_api_5xx_alarm_fires_on_one_server_error_in_5_minutes(templates, alarms) -> None:
    api = templates[f"{STAGE}/TrncostApi"]
    rest_api_id, rest_api = _one(api, "AWS::ApiGateway::RestApi")
    stage_id, _ = _one(api, "AWS::ApiGateway::Stage")
    (props,) = _alarms_on(alarms, "AWS/ApiGateway", "5XXError").values()
    metric = _metric(props)
    assert _api_dimensions(templates, metric) == (
        rest_api["Properties"]["Name"],
        (f"{STAGE}/TrncostApi", stage_id),
    )
    assert metric["statistic"] == "Sum" and metric["period"] == FIVE_MINUTES
    assert props["Threshold"] == 1
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_api_latency_alarm_is_on_p99_at_the_configured_threshold(
    templates, alarms, stage_config
) -> None:
    api = templates[f"{STAGE}/TrncostApi"]
    stage_id, _ = _one(api, "AWS::ApiGateway::Stage")
    (props,) = _alarms_on(alarms, "AWS/ApiGateway", "Latency").values()
    metric = _metric(props)
    assert _api_dimensions(templates, metric)[1] == (f"{STAGE}/TrncostApi", stage_id)
    assert metric["statistic"] == "p99" and "ExtendedStatistic" in props
    assert props["Threshold"] == stage_config.api.latency_alarm_p99_ms == 10_000
    assert props["EvaluationPeriods"] == props["DatapointsToAlarm"] == LATENCY_ALARM_PERIODS
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_latency_threshold_must_be_below_the_integration_timeout(cdk_context) -> None:
    cdk_context["stages"]["dev"]["api"]["latency_alarm_p99_ms"] = 29_000
    with pytest.raises(StageConfigError, match=r"field 'api.latency_alarm_p99_ms'"):
        load_stage_configs(cdk_context)
    del cdk_context["stages"]["dev"]["api"]["latency_alarm_p99_ms"]
    assert load_stage_configs(cdk_context)["dev"].api.latency_alarm_p99_ms == 10_000


# --- trncost's own metrics --------------------------------------------------------------------


def _prices_service(templates) -> str:
    pricing = templates[f"{STAGE}/TrncostPricing"]
    function_ref = pricing["Outputs"]["PricesFunctionName"]["Value"]
    function = pricing["Resources"][function_ref["Ref"]]["Properties"]
    return function["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]


def test_stale_snapshot_alarm_watches_the_metric_the_prices_function_emits(
    templates, alarms
) -> None:
    # Given the alarm on trncost/PriceSnapshotTaken (the name from trncost.observability)
    (props,) = _alarms_on(alarms, NAMESPACE, MetricName.price_snapshot_taken.value).values()
    metric = _metric(props)
    # Then it looks at the prices function's metric: Powertools' one `service` dimension,
    # valued with that function's POWERTOOLS_SERVICE_NAME
    assert metric["dimensions"] == [{"Name": "service", "Value": _prices_service(templates)}]
    # And it fires when a day's sum stays under 1 for 2 consecutive days, no data included
    assert metric["statistic"] == "Sum" and metric["period"] == ONE_DAY
    assert props["Threshold"] == 1
    assert props["ComparisonOperator"] == "LessThanThreshold"
    assert props["EvaluationPeriods"] == props["DatapointsToAlarm"] == STALE_SNAPSHOT_DAYS == 2
    assert props["TreatMissingData"] == "breaching"


def test_powertools_emf_dimensions_are_the_service_alone(monkeypatch) -> None:
    # The handlers build Metrics(namespace=NAMESPACE); the factory sets POWERTOOLS_SERVICE_NAME.
    # What Powertools writes is what the alarms must name, dimension set and all.
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "prices")
    emf = AmazonCloudWatchEMFProvider(namespace=NAMESPACE)  # its own state, not the shared one
    emf.add_metric(name=MetricName.price_snapshot_taken, unit=MetricUnit.Count, value=1)
    blob = emf.serialize_metric_set()
    (directive,) = blob["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == NAMESPACE
    assert directive["Dimensions"] == [[SERVICE_DIMENSION]]
    assert blob[SERVICE_DIMENSION] == "prices"
    assert [m["Name"] for m in directive["Metrics"]] == ["PriceSnapshotTaken"]


def test_failed_trial_plans_alarm_waits_for_the_workflow_metric(alarms) -> None:
    (props,) = _alarms_on(alarms, NAMESPACE, MetricName.trial_plans_failed.value).values()
    metric = _metric(props)
    assert metric["dimensions"] == [{"Name": "service", "Value": TRIAL_PLANS_SERVICE}]
    assert metric["statistic"] == "Sum" and metric["period"] == FIVE_MINUTES
    assert props["Threshold"] == 1
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert props["TreatMissingData"] == "notBreaching"  # no plan run: nothing failed


# --- the topic --------------------------------------------------------------------------------


def test_every_alarm_notifies_the_topic_on_alarm_and_on_ok(templates, alarms, topic_id) -> None:
    functions = _all_of_type(templates, "AWS::Lambda::Function")
    work_queues = 2  # ingest, refresh: their oldest message's age
    expected = 2 + 2 * len(functions) + len(_dead_letter_queues(templates)) + 2 + 3
    expected += work_queues + 1
    # API ×2, functions ×2, DLQs, stale snapshot, trial plans, executions failed / timed out /
    # aborted, queue ages, the outbox's oldest event
    assert len(alarms) == expected
    names = [props["AlarmName"] for props in alarms.values()]
    assert len(set(names)) == len(names)
    for alarm_id, props in alarms.items():
        assert props["AlarmActions"] == [{"Ref": topic_id}], alarm_id
        assert props["OKActions"] == [{"Ref": topic_id}], alarm_id
        assert props.get("ActionsEnabled", True) is True
        assert props["AlarmName"].startswith(f"trncost-{STAGE}-")
        assert props["AlarmDescription"]


def test_topic_is_kms_encrypted_with_a_rotated_key_cloudwatch_may_use(monitoring, topic_id):
    topic = monitoring["Resources"][topic_id]["Properties"]
    key_id = topic["KmsMasterKeyId"]["Fn::GetAtt"][0]
    key = monitoring["Resources"][key_id]
    assert key["Type"] == "AWS::KMS::Key"
    assert key["Properties"]["EnableKeyRotation"] is True
    # CloudWatch cannot publish to a topic under the AWS managed aws/sns key
    grants = [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}
    ]
    assert len(grants) == 1 and grants[0]["Effect"] == "Allow"
    assert sorted(grants[0]["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey*"]
    assert topic["TopicName"] == f"trncost-{STAGE}-alarms"


def test_topic_is_tls_only_and_publishable_by_this_stages_alarms_only(monitoring, topic_id):
    (policy,) = [
        p["Properties"]
        for p in _resources(monitoring, "AWS::SNS::TopicPolicy").values()
        if {"Ref": topic_id} in p["Properties"]["Topics"]
    ]
    statements = policy["PolicyDocument"]["Statement"]
    deny = [s for s in statements if s["Effect"] == "Deny"]
    assert deny == [
        {
            "Action": "sns:Publish",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            "Effect": "Deny",
            "Principal": "*",
            "Resource": {"Ref": topic_id},
            "Sid": deny[0]["Sid"],
        }
    ]
    (allow,) = [s for s in statements if s["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert allow["Action"] == "sns:Publish"
    assert allow["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    source_arn = json.dumps(allow["Condition"]["ArnLike"]["aws:SourceArn"])
    assert f":alarm:trncost-{STAGE}-*" in source_arn


def test_no_email_subscription_without_alarm_email(templates, stage_config) -> None:
    assert stage_config.alarm_email is None
    assert _all_of_type(templates, "AWS::SNS::Subscription") == set()


# --- the dashboard ----------------------------------------------------------------------------


def test_dashboard_shows_every_function_queue_and_dlq(templates, dashboard_body) -> None:
    shown = _references(templates, MONITORING, dashboard_body)
    assert _all_of_type(templates, "AWS::Lambda::Function") <= shown
    assert _all_of_type(templates, "AWS::SQS::Queue") <= shown
    api = templates[f"{STAGE}/TrncostApi"]
    assert (f"{STAGE}/TrncostApi", _one(api, "AWS::ApiGateway::Stage")[0]) in shown
    data = templates[f"{STAGE}/TrncostData"]
    assert (f"{STAGE}/TrncostData", _one(data, "AWS::DynamoDB::Table")[0]) in shown


def test_dashboard_shows_the_api_lambda_and_trncost_metrics(dashboard_body, alarms) -> None:
    text = json.dumps(dashboard_body)
    for metric in ("Count", "4XXError", "5XXError", "Latency"):
        assert f'\\"AWS/ApiGateway\\",\\"{metric}\\"' in text, metric
    for metric in ("Invocations", "Errors", "Throttles", "Duration"):
        assert f'\\"AWS/Lambda\\",\\"{metric}\\"' in text, metric
    for metric in ("ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"):
        assert f'\\"AWS/SQS\\",\\"{metric}\\"' in text, metric
    on_dashboard = {name for _, names in DASHBOARD_METRICS for name in names}
    apart = {MetricName.price_snapshot_taken, MetricName.price_snapshot_age}  # own widget
    assert DASHBOARD_METRIC_NAMES - apart <= on_dashboard
    for name in DASHBOARD_METRIC_NAMES:
        assert name.value in text, name
    # and the state of every alarm
    alarm_ids = {target[1] for target in _references({}, MONITORING, dashboard_body)}
    assert set(alarms) <= alarm_ids


# --- outputs ----------------------------------------------------------------------------------


def test_stage_outputs_what_an_operator_needs(templates, monitoring, topic_id) -> None:
    outputs = {
        (stack.split("/")[1], output_id)
        for stack, template in templates.items()
        for output_id in template.get("Outputs", {})
        if not output_id.startswith("ExportsOutput")
    }
    assert {
        ("TrncostApi", "ApiUrl"),
        ("TrncostData", "TableName"),
        ("TrncostData", "BusName"),
        ("TrncostData", "BusArn"),
        ("TrncostData", "BusArchiveName"),
        ("TrncostData", "BusArchiveArn"),
        ("TrncostIngest", "IngestQueueName"),
        ("TrncostIngest", "RefreshQueueName"),
        ("TrncostIngest", "IngestDeadLetterQueueName"),
        ("TrncostIngest", "RefreshDeadLetterQueueName"),
        ("TrncostPricing", "PricesFunctionName"),
        ("TrncostPricing", "PricesScheduleDeadLetterQueueName"),
        ("TrncostMonitoring", "AlarmTopicArn"),
        ("TrncostMonitoring", "DashboardName"),
    } <= outputs
    assert monitoring["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": topic_id}
    data = templates[f"{STAGE}/TrncostData"]
    archive_id, archive = _one(data, "AWS::Events::Archive")
    assert data["Outputs"]["BusArchiveArn"]["Value"] == {"Fn::GetAtt": [archive_id, "Arn"]}
    assert data["Outputs"]["BusArchiveName"]["Value"] == {"Ref": archive_id}
    bus_id, _ = _one(data, "AWS::Events::EventBus")
    assert archive["Properties"]["SourceArn"] == {"Fn::GetAtt": [bus_id, "Arn"]}


# --- throwaway variants -----------------------------------------------------------------------


class _ApiWithMore(TrncostApi):
    """The API stack plus a function and a queue pair no module knows about."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        lambda_.Function(
            self,
            "Extra",
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler="index.handler",
            code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
            dead_letter_queue_enabled=True,
        )
        sqs.Queue(
            self,
            "ExtraWork",
            dead_letter_queue=sqs.DeadLetterQueue(
                max_receive_count=3, queue=sqs.Queue(self, "ExtraParking")
            ),
        )


@pytest.fixture(scope="module")
def variant(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The dev stage with alarm_email set and the extra function and queues above, no nag."""
    context = {
        **cdk_json_context(),
        "aws:cdk:bundling-stacks": [],
    }
    context["stages"]["dev"]["alarm_email"] = "platform-team@example.com"
    config = load_stage_configs(context)["dev"]
    outdir = tmp_path_factory.mktemp("variant.out")
    app = cdk.App(context=context, outdir=str(outdir))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stage_module, "TrncostApi", _ApiWithMore)
        stage_module.TrncostStage(app, STAGE, config=config)
        assembly = app.synth()
    return {s.hierarchical_id: s.template for s in assembly.stacks_recursively}


def test_alarm_email_adds_one_email_subscription_to_the_topic(variant) -> None:
    monitoring = variant[MONITORING]
    topic_id, _ = _one(monitoring, "AWS::SNS::Topic")
    _, subscription = _one(monitoring, "AWS::SNS::Subscription")
    assert subscription["Properties"] == {
        "Endpoint": "platform-team@example.com",
        "Protocol": "email",
        "TopicArn": {"Ref": topic_id},
    }
    assert len(_all_of_type(variant, "AWS::SNS::Subscription")) == 1


def test_a_new_function_and_dlq_get_alarms_without_being_listed(variant) -> None:
    api = variant[f"{STAGE}/TrncostApi"]
    alarms = {
        k: v["Properties"]
        for k, v in _resources(variant[MONITORING], "AWS::CloudWatch::Alarm").items()
    }
    functions = _all_of_type(variant, "AWS::Lambda::Function")
    extra = {t for t in functions if t[0].endswith("TrncostApi") and t[1].startswith("Extra")}
    assert len(extra) == 1
    for metric_name in ("Errors", "Throttles"):
        watched = {
            _target(variant, MONITORING, _dimension(_metric(p), "FunctionName"))
            for p in _alarms_on(alarms, "AWS/Lambda", metric_name).values()
        }
        assert watched == functions
    watched_queues = {
        _target(variant, MONITORING, _dimension(_metric(p), "QueueName"))
        for p in _alarms_on(alarms, "AWS/SQS", "ApproximateNumberOfMessagesVisible").values()
    }
    dead = _dead_letter_queues(variant)
    assert watched_queues == dead
    parking = [q for q in _resources(api, "AWS::SQS::Queue") if q.startswith("ExtraParking")]
    assert (f"{STAGE}/TrncostApi", parking[0]) in dead


def test_two_functions_with_one_label_are_refused(tmp_path: Path, cdk_context) -> None:
    config = load_stage_configs(cdk_context)["dev"]
    app = cdk.App(context={"aws:cdk:bundling-stacks": []}, outdir=str(tmp_path))
    stack = cdk.Stack(app, "Twice")
    for construct_id in ("One", "Two"):
        TrncostFunction(stack, construct_id, name="api", config=config, description="x")
    with pytest.raises(ValueError, match=r"share the label\(s\) \['api'\]"):
        monitored_resources([stack])


def test_paid_capacity_and_waiting_work_are_watched(alarms) -> None:
    """Issue 23: Step Functions executions that failed, timed out or were aborted; each work
    queue's oldest message; the outbox's oldest event (CloudWatch does not evaluate alarms in
    moto: the synthesized definitions are the test)."""
    by_name = {
        props["AlarmName"].removeprefix(f"trncost-{STAGE}-"): props for props in alarms.values()
    }
    for outcome, metric in (
        ("failed", "ExecutionsFailed"),
        ("timed-out", "ExecutionsTimedOut"),
        ("aborted", "ExecutionsAborted"),
    ):
        props = by_name[f"trial-plan-executions-{outcome}"]
        assert (props["Namespace"], props["MetricName"]) == ("AWS/States", metric)
        assert props["Threshold"] == 1 and props["Statistic"] == "Sum"
        assert props["Dimensions"][0]["Name"] == "StateMachineArn"
    for queue in ("trial-ingest", "estimate-refresh"):
        props = by_name[f"queue-age-{queue}"]
        assert props["MetricName"] == "ApproximateAgeOfOldestMessage"
        assert props["Statistic"] == "Maximum" and props["Threshold"] == QUEUE_AGE_ALARM_S
    outbox = by_name["outbox-events-waiting"]
    (query,) = outbox["Metrics"]  # a labelled metric: CloudFormation's Metrics form
    assert query["MetricStat"]["Metric"]["MetricName"] == "OutboxOldestEventAgeSeconds"
    assert query["MetricStat"]["Stat"] == "Maximum" and outbox["Threshold"] == OUTBOX_AGE_ALARM_S
    assert outbox["TreatMissingData"] == "breaching"  # a sweeper that does not run alarms too
