"""Monitoring stack: alarms as code, the alarm topic and the stage's CloudWatch dashboard.

every function ─ Errors, Throttles ──────────┐
every dead-letter queue ─ messages visible ──┤
API stage ─ 5XXError, Latency p99 ───────────┼─► alarm ─► SNS topic (KMS, TLS only) ─► e-mail
trncost/PriceSnapshotTaken ─ none in 2 days ─┤                                  (alarm_email)
trncost/TrialPlansFailed ────────────────────┘
dashboard trncost-<stage>: API, functions, queues and DLQs, trncost metrics, table

Nothing here is listed by hand: `monitored_resources(stage.stacks)` finds every Lambda function and
every SQS queue of the stage's stacks and sorts the queues into work queues and dead-letter
queues (a queue's redrive target, a function's async-invoke DLQ, a schedule's DLQ), so a
function or queue added to any stack gets its alarms, dashboard lines and outputs on the next
synth. Metric names come from trncost.observability, the definitions the handlers emit with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from stacks.config import StageConfig
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction
from trncost.observability import NAMESPACE, MetricName

FIVE_MINUTES = cdk.Duration.minutes(5)
ONE_DAY = cdk.Duration.days(1)
# Powertools EMF puts every metric under one dimension, `service`, whose value is the
# function's POWERTOOLS_SERVICE_NAME (TrncostFunction.service_name; the factory sets it to the
# lambdas/<name> folder). An alarm must name exactly that dimension set to see the metric.
SERVICE_DIMENSION = "service"
# The trial workflow (issue 7) does not exist yet. Its trial_steps function (DESIGN.md's
# lambdas/<name> list) is to emit MetricName.trial_plans_failed with Powertools, Count 1 per
# plan that ends failed; the alarm below is already watching for it under this service.
TRIAL_PLANS_SERVICE = "trial_steps"
# The stale-snapshot alarm: no PriceSnapshotTaken in 2 consecutive UTC days. It assumes a
# price_schedule at least every 2 days (the default is daily).
STALE_SNAPSHOT_DAYS = 2
LATENCY_ALARM_PERIODS = 3  # p99 at or above the threshold for 3 × 5 minutes

# The trncost metrics on the dashboard, by widget (they come from observability.py).
DASHBOARD_METRICS: tuple[tuple[str, tuple[MetricName, ...]], ...] = (
    (
        "Trial ingest",
        (MetricName.trials_ingested, MetricName.ingest_duplicates, MetricName.ingests_rejected),
    ),
    (
        "Estimates",
        (
            MetricName.estimates_computed,
            MetricName.estimates_refreshed,
            MetricName.estimates_unchanged,
        ),
    ),
    (
        "Price quotes",
        (
            MetricName.price_quotes,
            MetricName.price_quotes_pending,
            MetricName.price_quotes_rejected,
        ),
    ),
)


# --- what the stage has ------------------------------------------------------------------------


@dataclass(frozen=True)
class MonitoredFunction:
    """A Lambda function of the stage; `label` names its alarms and dashboard lines."""

    label: str
    function: lambda_.IFunction


@dataclass(frozen=True)
class MonitoredQueue:
    """An SQS queue of the stage. For a dead-letter queue, `feeds_from` says what fails into it."""

    label: str
    queue: sqs.IQueue
    feeds_from: str = ""


@dataclass(frozen=True)
class MonitoredResources:
    functions: tuple[MonitoredFunction, ...]
    queues: tuple[MonitoredQueue, ...]  # work queues
    dead_letter_queues: tuple[MonitoredQueue, ...]


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def _camel(label: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", label) if part)


# Construct ids that say what a construct is, not which one: left out of path-based labels.
_GENERIC_IDS = frozenset({"Queue", "DeadLetterQueue", "Function", "Resource", "Default"})


def _path_label(construct: IConstruct) -> str:
    """A label from the construct path below the stack: .../TrialIngest/Queue/Queue ->
    trial-ingest."""
    scopes = construct.node.scopes
    stack_at = next(i for i, s in enumerate(scopes) if isinstance(s, cdk.Stack))
    parts = [s.node.id for s in scopes[stack_at + 1 :] if s.node.id not in _GENERIC_IDS]
    return "-".join(_kebab(p) for p in parts) or _kebab(scopes[stack_at].node.id)


def monitored_resources(stacks: Iterable[cdk.Stack]) -> MonitoredResources:
    """Every Lambda function and SQS queue in `stacks`, the queues split into work queues and
    dead-letter queues. A dead-letter queue is: the redrive target of a queue, the async-invoke
    DLQ of a function, or the DLQ of a ScheduledInvocation (EventBridge rule targets in this
    project park events in their queue's redrive target, already covered)."""
    constructs = [c for stack in stacks for c in stack.node.find_all()]
    house = {c.function.node.path: c for c in constructs if isinstance(c, TrncostFunction)}

    functions: list[MonitoredFunction] = []
    dead: dict[str, MonitoredQueue] = {}
    for construct in constructs:
        if isinstance(construct, lambda_.Function):
            wrapper = house.get(construct.node.path)
            label = wrapper.service_name if wrapper is not None else _path_label(construct)
            functions.append(MonitoredFunction(label, construct))
    labels = {f.function.node.path: f.label for f in functions}
    for construct in constructs:
        if isinstance(construct, lambda_.Function) and construct.dead_letter_queue is not None:
            label = labels[construct.node.path]
            queue = construct.dead_letter_queue
            dead.setdefault(
                queue.node.path,
                MonitoredQueue(f"{label}-async", queue, f"failed async invokes of {label}"),
            )
        elif isinstance(construct, ScheduledInvocation):
            label = labels.get(construct.function.node.path, _path_label(construct))
            dead.setdefault(
                construct.dead_letter_queue.node.path,
                MonitoredQueue(
                    f"{label}-schedule",
                    construct.dead_letter_queue,
                    f"scheduled invokes of {label} that failed",
                ),
            )
        elif isinstance(construct, sqs.Queue) and construct.dead_letter_queue is not None:
            queue = construct.dead_letter_queue.queue
            label = _path_label(construct)
            dead.setdefault(
                queue.node.path,
                MonitoredQueue(
                    label, queue, f"messages of the {label} queue its consumer keeps failing"
                ),
            )
    queues = [
        MonitoredQueue(_path_label(c), c)
        for c in constructs
        if isinstance(c, sqs.Queue) and c.node.path not in dead
    ]
    for kind, items in (("function", functions), ("queue", queues), ("DLQ", dead.values())):
        seen = [item.label for item in items]
        clashes = sorted({label for label in seen if seen.count(label) > 1})
        if clashes:
            raise ValueError(f"two of the stage's {kind}s would share the label(s) {clashes}")
    return MonitoredResources(tuple(functions), tuple(queues), tuple(dead.values()))


def add_dead_letter_queue_outputs(dead_letter_queues: Iterable[MonitoredQueue]) -> None:
    """A `<Label>DeadLetterQueueName` output, in the queue's own stack (an output of an imported
    value is refused by cfn-lint, W6001), for each DLQ its stack does not output yet."""
    for monitored in dead_letter_queues:
        queue = monitored.queue
        stack = cdk.Stack.of(queue)
        name = stack.resolve(queue.queue_name)
        if any(
            isinstance(c, cdk.CfnOutput) and stack.resolve(c.value) == name
            for c in stack.node.find_all()
        ):
            continue
        cdk.CfnOutput(
            stack,
            f"{_camel(monitored.label)}DeadLetterQueueName",
            value=queue.queue_name,
            description=f"dead-letter queue: {monitored.feeds_from}",
        )


# --- the stack ---------------------------------------------------------------------------------


class AlarmTopic(Construct):
    """The SNS topic every alarm notifies: KMS-encrypted with its own key (CloudWatch may not
    use the AWS managed aws/sns key), TLS only, publishable by this account's trncost alarms."""

    def __init__(
        self, scope: Construct, construct_id: str, *, stage_name: str, alarm_email: str | None
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.key = kms.Key(
            self,
            "Key",
            description=f"trncost-{stage_name}: encrypts the alarm topic",
            enable_key_rotation=True,
            # It protects notifications in flight only: nothing outlives the topic.
            removal_policy=cdk.RemovalPolicy.DESTROY,
            pending_window=cdk.Duration.days(7),
        )
        # CloudWatch publishes to an encrypted topic only with these on the key (SNS docs,
        # "compatibility with AWS services"). Who may publish at all is the topic policy's
        # call: this account's trncost-<stage>-* alarms.
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToUseTheKey",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy: this key
            )
        )
        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=f"trncost-{stage_name}-alarms",
            display_name=f"trncost {stage_name} alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        self.alarm_arn_pattern = stack.format_arn(
            service="cloudwatch",
            resource="alarm",
            resource_name=f"{alarm_name_prefix(stage_name)}*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowThisStagesAlarmsToPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "ArnLike": {"aws:SourceArn": self.alarm_arn_pattern},
                    "StringEquals": {"aws:SourceAccount": stack.account},
                },
            )
        )
        self.email: sns.Subscription | None = None
        if alarm_email:  # SNS mails a confirmation link first: nothing arrives until clicked
            self.email = self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))


def alarm_name_prefix(stage_name: str) -> str:
    return f"trncost-{stage_name}-"


class TrncostMonitoring(cdk.Stack):
    """Alarms (all notifying one SNS topic) and the dashboard of one trncost stage."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        functions: Sequence[MonitoredFunction],
        queues: Sequence[MonitoredQueue],
        dead_letter_queues: Sequence[MonitoredQueue],
        api: apigw.RestApi,
        bus: events.IEventBus,
        archive: events.Archive,
        table: dynamodb.ITable,
        price_snapshots: TrncostFunction,
        **kwargs: object,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost monitoring: alarms to an SNS topic, and the dashboard",
            **kwargs,
        )
        self.config = config
        stage = cdk.Stage.of(self)
        self.stage_name = stage.stage_name if stage is not None and stage.stage_name else "default"
        self.prefix = alarm_name_prefix(self.stage_name)
        self.alarm_topic = AlarmTopic(
            self, "AlarmTopic", stage_name=self.stage_name, alarm_email=config.alarm_email
        )
        self.topic = self.alarm_topic.topic
        self._action = cloudwatch_actions.SnsAction(self.topic)
        self.alarms: list[cloudwatch.Alarm] = []

        # --- API ---
        api_stage = api.deployment_stage
        self.api_5xx = self._alarm(
            "Api5xx",
            name="api-5xx",
            metric=api_stage.metric_server_error(period=FIVE_MINUTES, statistic="Sum"),
            threshold=1,
            description="The API answered 5xx (a 5xx is a bug: look at the api function's logs"
            " and the stage's execution logs).",
        )
        latency_ms = config.api.latency_alarm_p99_ms
        self.api_latency = self._alarm(
            "ApiLatencyP99",
            name="api-latency-p99",
            metric=api_stage.metric_latency(period=FIVE_MINUTES, statistic="p99"),
            threshold=latency_ms,
            evaluation_periods=LATENCY_ALARM_PERIODS,
            description=f"API p99 latency at or above {latency_ms} ms for"
            f" {LATENCY_ALARM_PERIODS * 5} minutes (the integration times out at 29 s).",
        )

        # --- every function ---
        self.function_alarms: dict[str, tuple[cloudwatch.Alarm, cloudwatch.Alarm]] = {}
        for monitored in functions:
            function, label = monitored.function, monitored.label
            errors = self._alarm(
                f"{_camel(label)}Errors",
                name=f"{label}-errors",
                metric=function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"The {label} function raised (Errors ≥ 1 in 5 minutes): see its"
                " log group.",
            )
            throttles = self._alarm(
                f"{_camel(label)}Throttles",
                name=f"{label}-throttles",
                metric=function.metric_throttles(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"The {label} function was throttled (account or reserved"
                " concurrency).",
            )
            self.function_alarms[label] = (errors, throttles)

        # --- every dead-letter queue ---
        self.dead_letter_alarms: dict[str, cloudwatch.Alarm] = {}
        for monitored in dead_letter_queues:
            queue, label = monitored.queue, monitored.label
            self.dead_letter_alarms[label] = self._alarm(
                f"{_camel(label)}DeadLetters",
                name=f"dlq-{label}",
                metric=queue.metric_approximate_number_of_messages_visible(
                    period=FIVE_MINUTES, statistic="Maximum"
                ),
                threshold=1,
                description=f"Messages wait in a dead-letter queue ({monitored.feeds_from}):"
                " read them, fix the cause, then redrive them (README, 'Deploy to your"
                " account').",
            )

        # --- trncost's own metrics (EMF, trncost.observability) ---
        self.snapshot_metric = cloudwatch.Metric(
            namespace=NAMESPACE,
            metric_name=MetricName.price_snapshot_taken.value,
            dimensions_map={SERVICE_DIMENSION: price_snapshots.service_name},
            statistic="Sum",
            period=ONE_DAY,
            label="price snapshots taken (prices function)",
        )
        self.stale_snapshot = self._alarm(
            "PriceSnapshotStale",
            name="price-snapshot-stale",
            metric=self.snapshot_metric,
            threshold=1,
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluation_periods=STALE_SNAPSHOT_DAYS,
            # No data at all (the function never ran, or failed before publishing) is stale too.
            missing=cloudwatch.TreatMissingData.BREACHING,
            description=f"No price snapshot for {STALE_SNAPSHOT_DAYS} days: estimates use old"
            " prices. Check the prices function's errors, its schedule DLQ and its logs; invoke"
            " it by hand (output PricesFunctionName).",
        )
        self.trial_plans_metric = cloudwatch.Metric(
            namespace=NAMESPACE,
            metric_name=MetricName.trial_plans_failed.value,
            dimensions_map={SERVICE_DIMENSION: TRIAL_PLANS_SERVICE},
            statistic="Sum",
            period=FIVE_MINUTES,
            label="trial plans failed",
        )
        # Watches a metric the trial workflow (issue 7) is to emit: see TRIAL_PLANS_SERVICE.
        self.trial_plans_failed = self._alarm(
            "TrialPlansFailed",
            name="trial-plans-failed",
            metric=self.trial_plans_metric,
            threshold=1,
            description="A trial plan ended failed: look at its Step Functions execution.",
        )

        self.dashboard = self._dashboard(
            functions=functions,
            queues=queues,
            dead_letter_queues=dead_letter_queues,
            api=api,
            bus=bus,
            archive=archive,
            table=table,
        )

        cdk.CfnOutput(
            self,
            "AlarmTopicArn",
            value=self.topic.topic_arn,
            description="every trncost alarm notifies this topic: subscribe to it",
        )
        cdk.CfnOutput(self, "DashboardName", value=self.dashboard.dashboard_name)

    # --- helpers --------------------------------------------------------------------------------

    def _alarm(
        self,
        construct_id: str,
        *,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        comparison: cloudwatch.ComparisonOperator = (
            cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        ),
        evaluation_periods: int = 1,
        missing: cloudwatch.TreatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING,
    ) -> cloudwatch.Alarm:
        """An alarm named trncost-<stage>-<name> that notifies the topic on ALARM and on OK."""
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=f"{self.prefix}{name}",
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            treat_missing_data=missing,
        )
        alarm.add_alarm_action(self._action)
        alarm.add_ok_action(self._action)
        self.alarms.append(alarm)
        return alarm

    def _dashboard(
        self,
        *,
        functions: Sequence[MonitoredFunction],
        queues: Sequence[MonitoredQueue],
        dead_letter_queues: Sequence[MonitoredQueue],
        api: apigw.RestApi,
        bus: events.IEventBus,
        archive: events.Archive,
        table: dynamodb.ITable,
    ) -> cloudwatch.Dashboard:
        dashboard = cloudwatch.Dashboard(
            self,
            "Dashboard",
            dashboard_name=f"trncost-{self.stage_name}",
            default_interval=cdk.Duration.days(1),
        )
        api_stage = api.deployment_stage

        def graph(title: str, metrics: list[cloudwatch.IMetric], width: int, **kw: object):
            return cloudwatch.GraphWidget(title=title, left=metrics, width=width, height=6, **kw)

        def per_function(title: str, metric_name: str, statistic: str) -> cloudwatch.GraphWidget:
            return graph(
                title,
                [
                    f.function.metric(
                        metric_name, statistic=statistic, period=FIVE_MINUTES, label=f.label
                    )
                    for f in functions
                ],
                width=6,
            )

        def per_queue(title: str, items: Sequence[MonitoredQueue], age: bool = False):
            metrics = [
                (
                    q.queue.metric_approximate_age_of_oldest_message
                    if age
                    else q.queue.metric_approximate_number_of_messages_visible
                )(statistic="Maximum", period=FIVE_MINUTES, label=q.label)
                for q in items
            ]
            return graph(title, metrics, width=8)

        def emitted(
            name: MetricName, period: cdk.Duration = FIVE_MINUTES, statistic: str = "Sum"
        ) -> cloudwatch.IMetric:
            # Every service that emits it (Powertools: one `service` dimension), one line each.
            seconds = int(period.to_seconds())
            return cloudwatch.MathExpression(
                expression=(
                    f"SEARCH('{{{NAMESPACE},{SERVICE_DIMENSION}}} MetricName=\"{name.value}\"',"
                    f" '{statistic}', {seconds})"
                ),
                label=f"{name.value} ${{PROP('Dim.{SERVICE_DIMENSION}')}}",
                period=period,
            )

        where = (
            f"## trncost {self.stage_name}\n"
            f"Alarms notify SNS topic `{self.topic.topic_name}`.\n\n"
            f"Table `{table.table_name}`, bus `{bus.event_bus_name}`,"
            f" archive `{archive.archive_name}` (replay: README, 'Deploy to your account')."
        )
        dashboard.add_widgets(
            cloudwatch.TextWidget(markdown=where, width=8, height=6),
            cloudwatch.AlarmStatusWidget(
                title="Alarms", alarms=list(self.alarms), width=16, height=6
            ),
        )
        latency_line = cloudwatch.HorizontalAnnotation(
            value=self.config.api.latency_alarm_p99_ms, label="p99 alarm"
        )
        dashboard.add_widgets(
            graph(
                "API requests",
                [api_stage.metric_count(statistic="Sum", period=FIVE_MINUTES, label="requests")],
                width=8,
            ),
            graph(
                "API 4xx and 5xx",
                [
                    api_stage.metric_client_error(
                        statistic="Sum", period=FIVE_MINUTES, label="4xx"
                    ),
                    api_stage.metric_server_error(
                        statistic="Sum", period=FIVE_MINUTES, label="5xx"
                    ),
                ],
                width=8,
            ),
            graph(
                "API latency (ms)",
                [
                    api_stage.metric_latency(statistic=s, period=FIVE_MINUTES, label=f"{s}")
                    for s in ("p50", "p90", "p99")
                ]
                + [
                    api_stage.metric_integration_latency(
                        statistic="p99", period=FIVE_MINUTES, label="integration p99"
                    )
                ],
                width=8,
                left_annotations=[latency_line],
            ),
        )
        dashboard.add_widgets(
            per_function("Lambda invocations", "Invocations", "Sum"),
            per_function("Lambda errors", "Errors", "Sum"),
            per_function("Lambda throttles", "Throttles", "Sum"),
            per_function("Lambda duration p99 (ms)", "Duration", "p99"),
        )
        dashboard.add_widgets(
            per_queue("Queue depth (messages visible)", queues),
            per_queue("Oldest message (s)", queues, age=True),
            per_queue("Dead-letter queue depth", dead_letter_queues),
        )
        dashboard.add_widgets(
            *(
                graph(title, [emitted(name) for name in names], width=6)
                for title, names in DASHBOARD_METRICS
            ),
            graph(
                "Price snapshots per day; age of the one replaced (s)",
                [self.snapshot_metric],
                width=6,
                right=[emitted(MetricName.price_snapshot_age, ONE_DAY, "Maximum")],
                left_annotations=[
                    cloudwatch.HorizontalAnnotation(value=1, label="stale below, 2 days running")
                ],
            ),
        )
        dashboard.add_widgets(
            graph(
                "Table capacity and throttling",
                [
                    table.metric_consumed_read_capacity_units(
                        statistic="Sum", period=FIVE_MINUTES, label="read units"
                    ),
                    table.metric_consumed_write_capacity_units(
                        statistic="Sum", period=FIVE_MINUTES, label="write units"
                    ),
                ]
                + [
                    table.metric(name, statistic="Sum", period=FIVE_MINUTES, label=label)
                    for name, label in (
                        ("ReadThrottleEvents", "read throttles"),
                        ("WriteThrottleEvents", "write throttles"),
                    )
                ],
                width=12,
            ),
            graph("Trial plans failed", [self.trial_plans_metric], width=12),
        )
        return dashboard
