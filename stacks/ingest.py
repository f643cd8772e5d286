"""Ingest stack: finished trial jobs become trial records; new evidence refreshes estimates.

default bus: aws.sagemaker, aws.batch job state changes ─┐
project bus: trncost.agent "Trial Run Completed" ────────┴─rules─► ingest queue ─► ingest Lambda
    ingest Lambda ──DescribeTrainingJob, GetMetricData (GetLogEvents without the agent)──►
        trial record (table) ─► "Trial Recorded"
training log groups (the stage's job_log_subscription) ─subscription filter─► ingest Lambda
    (asynchronous: its retries, then its own DLQ) ─► the job's log parts (table, TTL) — read
    whole by the ingest when the job ends, instead of GetLogEvents

The subscription reuses the ingest function: the same code reads the parts it wrote, the role
already writes and queries the table, and the deliveries (one invocation per batch of log
events) are small; the function's async DLQ (every TrncostFunction has one, alarmed by the
monitoring stack) takes a delivery that keeps failing.
project bus: "Trial Recorded" | "Price Snapshot Taken" ─rules─► refresh queue ─► refresh Lambda
    refresh Lambda ──► new estimate versions (table)

Every write that announces itself ("Trial Recorded", "Price Snapshot Taken": the ingest, the
API, the prices Lambda) writes its event into the table's outbox in the same transaction and
publishes it at once; the outbox Lambda (every minute) publishes what EventBridge refused:

    Scheduler (rate 1 minute) ─► outbox Lambda ─► outbox items (table) ─► project bus

Every hop ends in success or a dead-letter queue. A rule retries its delivery to the queue,
then parks the event in the queue's DLQ; a message the function keeps failing (partial batch
responses: only the failed records) lands in the same DLQ after MAX_RECEIVE_COUNT receives.
Both carry the original EventBridge event as the message body, so one
`aws sqs start-message-move-task --source-arn <dlq> --destination-arn <queue>` replays both.

Event patterns come from the layer (trncost.metrics.events, trncost.events): the same
constants the handlers and tests use, never retyped here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_logs_destinations as log_destinations
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from stacks.base import StackOptions, TrncostStack
from stacks.config import StageConfig
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction, dead_letter_queue
from stacks.permissions import grant, grant_put_events, grant_table, regional_arn
from trncost.events import DetailType, pattern
from trncost.metrics.events import AGENT_PATTERN, BATCH_PATTERN, SAGEMAKER_PATTERN
from trncost.metrics.joblogs import LOG_GROUPS
from trncost.services.ingest import LEASE_S
from trncost.settings import BUS_NAME_ENV, TABLE_NAME_ENV

INGEST_TIMEOUT = cdk.Duration.seconds(120)
INGEST_MEMORY_MB = 1024
REFRESH_TIMEOUT = cdk.Duration.seconds(300)
OUTBOX_TIMEOUT = cdk.Duration.seconds(60)
OUTBOX_SCHEDULE = "rate(1 minute)"
# The outbox sweeper (store/outbox.py): the waiting events by index, each deleted once
# EventBridge took it, or its failed attempts counted.
OUTBOX_TABLE_ACTIONS = ["dynamodb:Query", "dynamodb:DeleteItem", "dynamodb:UpdateItem"]
REFRESH_MEMORY_MB = 1024  # the estimate engine (Monte Carlo, numpy) is CPU-bound: CPU ∝ memory

BATCH_SIZE = 10
MAX_BATCHING_WINDOW = cdk.Duration.seconds(5)
# Lambda's SQS guidance: visibility ≥ 6 × the function timeout (room for throttled retries),
# plus the batching window; maxReceiveCount ≥ 5 so throttling alone never dead-letters.
VISIBILITY_TIMEOUT_FACTOR = 6
MAX_RECEIVE_COUNT = 5
# EventBridge → SQS delivery: the service maxima (24 h, 185 attempts), stated, not defaulted.
# An event still undelivered then goes to the queue's DLQ.
EVENT_RETRY_ATTEMPTS = 185
EVENT_MAX_AGE = cdk.Duration.hours(24)

# What the ingest and refresh services do with the table (store/ingest.py, store/records.py,
# store/prices.py): claims by conditional put, complete by update, release by conditional
# delete, reads and queries.
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
]
# CloudWatch reads (metrics/cloudwatch.py: GetMetricData batches, ListMetrics to count the
# agent's metrics of a trial): neither supports resource-level permissions, so Resource "*".
METRICS_ACTIONS = ["cloudwatch:GetMetricData", "cloudwatch:ListMetrics"]
TRAINING_JOB_ACTIONS = ["sagemaker:DescribeTrainingJob"]
# A job that ran without the agent: its own logs (metrics/joblogs.py), in exactly the two log
# groups SageMaker and Batch write to. DescribeJobs (the stream's name when the event lacks it)
# supports no resource-level permissions: Resource "*".
JOB_LOG_ACTIONS = ["logs:DescribeLogStreams", "logs:GetLogEvents"]
BATCH_JOB_ACTIONS = ["batch:DescribeJobs"]

# Rules: (construct id, pattern, on the project bus?). SageMaker and Batch send their state
# changes to the account's default bus only; trncost's own events go to the project bus.
INGEST_RULES: tuple[tuple[str, Mapping[str, Any], bool], ...] = (
    ("SageMakerTrainingJobs", SAGEMAKER_PATTERN, False),
    ("BatchJobs", BATCH_PATTERN, False),
    ("AgentTrialRuns", AGENT_PATTERN, True),
)
REFRESH_RULES: tuple[tuple[str, Mapping[str, Any], bool], ...] = (
    ("TrialRecorded", pattern(DetailType.trial_recorded), True),
    ("PriceSnapshotTaken", pattern(DetailType.price_snapshot_taken), True),
)

# EventBridge pattern keys → aws_events.EventPattern fields.
_PATTERN_FIELDS = {
    "source": "source",
    "detail-type": "detail_type",
    "detail": "detail",
    "account": "account",
    "region": "region",
    "resources": "resources",
    "id": "id",
    "time": "time",
    "version": "version",
}


def event_pattern(raw: Mapping[str, Any]) -> events.EventPattern:
    """An EventBridge pattern (the JSON form, as the layer defines it) as a CDK EventPattern.
    tests/infra checks that the rendered rule is the very same JSON."""
    unknown = sorted(set(raw) - set(_PATTERN_FIELDS))
    if unknown:
        raise ValueError(f"event pattern keys {unknown} have no EventPattern field")
    return events.EventPattern(
        **{_PATTERN_FIELDS[key]: copy.deepcopy(value) for key, value in raw.items()}
    )


def visibility_timeout(
    function_timeout: cdk.Duration,
    batching_window: cdk.Duration = MAX_BATCHING_WINDOW,
    at_least: cdk.Duration | None = None,
) -> cdk.Duration:
    """The queue visibility for a consumer: 6 × its timeout + the batching window, or
    `at_least` if that is longer."""
    seconds = VISIBILITY_TIMEOUT_FACTOR * function_timeout.to_seconds() + (
        batching_window.to_seconds()
    )
    if at_least is not None:
        seconds = max(seconds, at_least.to_seconds())
    return cdk.Duration.seconds(seconds)


class WorkQueue(Construct):
    """An SQS queue fed by EventBridge rules, with its dead-letter queue.

    The queue: SQS-managed SSE, TLS only, redrive to the DLQ after MAX_RECEIVE_COUNT receives.
    The DLQ (the house one: SSE, TLS only, 14 days) also takes events the rules could not
    deliver. The stock SqsQueue target lets `events.amazonaws.com` send only with
    `aws:SourceArn` = that rule, on the queue and on the DLQ alike.
    """

    def __init__(self, scope: Construct, construct_id: str, *, visibility: cdk.Duration) -> None:
        super().__init__(scope, construct_id)
        self.dead_letter_queue = dead_letter_queue(self)
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=visibility,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=MAX_RECEIVE_COUNT
            ),
        )
        self.rules: list[events.Rule] = []

    def route(
        self,
        rule_id: str,
        raw_pattern: Mapping[str, Any],
        *,
        bus: events.IEventBus | None,
        description: str,
    ) -> events.Rule:
        """A rule on `bus` (None: the account's default bus) that sends matching events here."""
        rule = events.Rule(
            self,
            rule_id,
            description=description,
            event_bus=bus,
            event_pattern=event_pattern(raw_pattern),
            targets=[
                targets.SqsQueue(
                    self.queue,
                    dead_letter_queue=self.dead_letter_queue,
                    retry_attempts=EVENT_RETRY_ATTEMPTS,
                    max_event_age=EVENT_MAX_AGE,
                )
            ],
        )
        self.rules.append(rule)
        return rule


def log_group_arn(scope: Construct, group: str) -> str:
    """arn:<partition>:logs:<region>:<account>:log-group:<group>:* (its streams' events too)."""
    return cdk.Stack.of(scope).format_arn(
        service="logs",
        resource="log-group",
        resource_name=f"{group}:*",
        region=cdk.Aws.REGION,
        account=cdk.Aws.ACCOUNT_ID,
        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
    )


def _consume(function: TrncostFunction, queue: sqs.IQueue, max_concurrency: int) -> None:
    """`function` takes batches from `queue`, reporting failures per record, with at most
    `max_concurrency` invocations at once (the stage's concurrency.sqs_maximum)."""
    function.function.add_event_source(
        event_sources.SqsEventSource(
            queue,
            batch_size=BATCH_SIZE,
            max_batching_window=MAX_BATCHING_WINDOW,
            report_batch_item_failures=True,
            max_concurrency=max_concurrency,
        )
    )


def _route_all(
    work: WorkQueue,
    rules: Sequence[tuple[str, Mapping[str, Any], bool]],
    bus: events.IEventBus,
    what: str,
) -> None:
    for rule_id, raw, on_project_bus in rules:
        names = ", ".join(raw.get("detail-type", []))
        work.route(
            rule_id,
            raw,
            bus=bus if on_project_bus else None,
            description=f"trncost {what}: {names}",
        )


def _subscribe(
    scope: Construct, index: int, group: str, function: TrncostFunction
) -> logs.SubscriptionFilter:
    """Every event of `group` delivered to `function` (CloudWatch Logs invokes it: the
    destination adds that permission, scoped to the group)."""
    log_group = logs.LogGroup.from_log_group_name(scope, f"JobLogGroup{index}", group)
    return logs.SubscriptionFilter(
        scope,
        f"JobLogSubscription{index}",
        log_group=log_group,
        destination=log_destinations.LambdaDestination(function.function),
        filter_pattern=logs.FilterPattern.all_events(),
        filter_name=f"trncost-{function.service_name}-job-logs",
    )


class TrialIngest(Construct):
    """Job state changes → ingest queue → ingest Lambda → trial records + "Trial Recorded"."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
    ) -> None:
        super().__init__(scope, construct_id)
        # Past the claim lease too: a delivery that died holding the claim is retried only
        # once its lease (taken at most one function timeout after receipt) has run out.
        self.work = WorkQueue(
            self,
            "Queue",
            visibility=visibility_timeout(
                INGEST_TIMEOUT,
                at_least=cdk.Duration.seconds(LEASE_S + INGEST_TIMEOUT.to_seconds()),
            ),
        )
        _route_all(self.work, INGEST_RULES, bus, "trial ingest")
        self.ingest = TrncostFunction(
            self,
            "Ingest",
            name="ingest",
            config=config,
            description="Finished trial jobs (SageMaker, Batch, trncost agent) to trial records",
            memory_size=INGEST_MEMORY_MB,
            timeout=INGEST_TIMEOUT,
            environment={
                TABLE_NAME_ENV: table.table_name,
                BUS_NAME_ENV: bus.event_bus_name,
            },
        )
        role = self.ingest.role
        grant_table(role, table, TABLE_ACTIONS)
        grant(role, METRICS_ACTIONS, ["*"])
        grant(role, TRAINING_JOB_ACTIONS, [regional_arn(self, "sagemaker", "training-job")])
        grant(role, JOB_LOG_ACTIONS, [log_group_arn(self, group) for group in LOG_GROUPS])
        grant(role, BATCH_JOB_ACTIONS, ["*"])
        grant_put_events(role, bus)
        _consume(self.ingest, self.work.queue, config.concurrency.sqs_maximum.ingest)
        self.subscriptions = [
            _subscribe(self, i, group, self.ingest)
            for i, group in enumerate(config.job_log_subscription)
        ]


class EstimateRefresh(Construct):
    """ "Trial Recorded" | "Price Snapshot Taken" → refresh queue → refresh Lambda → new
    estimate versions."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
    ) -> None:
        super().__init__(scope, construct_id)
        self.work = WorkQueue(self, "Queue", visibility=visibility_timeout(REFRESH_TIMEOUT))
        _route_all(self.work, REFRESH_RULES, bus, "estimate refresh")
        self.refresh = TrncostFunction(
            self,
            "Refresh",
            name="refresh",
            config=config,
            description="New trial records and price snapshots to new estimate versions",
            memory_size=REFRESH_MEMORY_MB,
            timeout=REFRESH_TIMEOUT,
            environment={TABLE_NAME_ENV: table.table_name},
        )
        grant_table(self.refresh.role, table, TABLE_ACTIONS)
        _consume(self.refresh, self.work.queue, config.concurrency.sqs_maximum.refresh)


class EventOutbox(Construct):
    """Scheduler (every minute) → outbox Lambda → the events EventBridge has not yet taken."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
    ) -> None:
        super().__init__(scope, construct_id)
        self.outbox = TrncostFunction(
            self,
            "Outbox",
            name="outbox",
            config=config,
            description="Publish the events written with their records that EventBridge refused",
            memory_size=256,
            timeout=OUTBOX_TIMEOUT,
            environment={
                TABLE_NAME_ENV: table.table_name,
                BUS_NAME_ENV: bus.event_bus_name,
            },
        )
        grant_table(self.outbox.role, table, OUTBOX_TABLE_ACTIONS)
        grant_put_events(self.outbox.role, bus)
        self.schedule = ScheduledInvocation(
            self,
            "Schedule",
            function=self.outbox.function,
            expression=OUTBOX_SCHEDULE,
            description=f"trncost outbox sweep, {OUTBOX_SCHEDULE}",
        )


class TrncostIngest(TrncostStack):
    """Trial ingest and estimate refresh, on the data stack's table and bus."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
        **options: Unpack[StackOptions],
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost ingest: finished trial jobs to trial records, estimate refresh",
            **options,
        )
        self.config = config
        self.trial_ingest = TrialIngest(self, "TrialIngest", config=config, table=table, bus=bus)
        self.estimate_refresh = EstimateRefresh(
            self, "EstimateRefresh", config=config, table=table, bus=bus
        )
        self.event_outbox = EventOutbox(self, "EventOutbox", config=config, table=table, bus=bus)
        for prefix, work in (
            ("Ingest", self.trial_ingest.work),
            ("Refresh", self.estimate_refresh.work),
        ):
            cdk.CfnOutput(self, f"{prefix}QueueUrl", value=work.queue.queue_url)
            cdk.CfnOutput(self, f"{prefix}QueueName", value=work.queue.queue_name)
            cdk.CfnOutput(
                self,
                f"{prefix}DeadLetterQueueName",
                value=work.dead_letter_queue.queue_name,
            )
