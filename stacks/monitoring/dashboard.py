"""The stage's CloudWatch dashboard, trncost-<stage>, one row per concern: where things are and
the alarms; the API; the functions; the queues and DLQs; trncost's own metrics; the table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_sns as sns
from constructs import Construct

from stacks.base import Group
from stacks.monitoring.metrics import FIVE_MINUTES, ONE_DAY, emitted
from stacks.monitoring.resources import MonitoredFunction, MonitoredQueue
from trncost.observability import MetricName

HEIGHT = 6
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


def graph(
    title: str,
    metrics: Sequence[cloudwatch.IMetric],
    *,
    width: int,
    right: Sequence[cloudwatch.IMetric] | None = None,
    left_annotations: Sequence[cloudwatch.HorizontalAnnotation] | None = None,
) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(
        title=title,
        left=list(metrics),
        width=width,
        height=HEIGHT,
        right=None if right is None else list(right),
        left_annotations=None if left_annotations is None else list(left_annotations),
    )


def per_function(
    title: str, functions: Sequence[MonitoredFunction], metric_name: str, statistic: str
) -> cloudwatch.GraphWidget:
    """One line per function."""
    return graph(
        title,
        [
            f.function.metric(metric_name, statistic=statistic, period=FIVE_MINUTES, label=f.label)
            for f in functions
        ],
        width=6,
    )


def per_queue(
    title: str, queues: Sequence[MonitoredQueue], *, age: bool = False
) -> cloudwatch.GraphWidget:
    """One line per queue: messages visible, or (`age`) the age of the oldest."""
    metrics = [
        (
            q.queue.metric_approximate_age_of_oldest_message
            if age
            else q.queue.metric_approximate_number_of_messages_visible
        )(statistic="Maximum", period=FIVE_MINUTES, label=q.label)
        for q in queues
    ]
    return graph(title, metrics, width=8)


@dataclass(frozen=True)
class Watched:
    """What the dashboard shows: the stage's resources, its alarms, trncost's own metrics."""

    functions: Sequence[MonitoredFunction]
    queues: Sequence[MonitoredQueue]
    dead_letter_queues: Sequence[MonitoredQueue]
    api: apigw.RestApi
    bus: events.IEventBus
    archive: events.Archive
    table: dynamodb.ITable
    topic: sns.ITopic
    alarms: Sequence[cloudwatch.IAlarm]
    latency_alarm_ms: int
    snapshots_taken: cloudwatch.IMetric
    trial_plans_failed: cloudwatch.IMetric


class TrncostDashboard(Group):
    """The dashboard trncost-<stage> (a Group: it keeps the logical id it had in the stack)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, stage_name: str, watched: Watched
    ) -> None:
        super().__init__(scope, construct_id)
        self.dashboard = cloudwatch.Dashboard(
            self,
            "Dashboard",
            dashboard_name=f"trncost-{stage_name}",
            default_interval=cdk.Duration.days(1),
        )
        for row in (
            _overview(stage_name, watched),
            _api(watched.api.deployment_stage, watched.latency_alarm_ms),
            _functions(watched.functions),
            _queues(watched),
            _trncost(watched.snapshots_taken),
            _table(watched.table, watched.trial_plans_failed),
        ):
            self.dashboard.add_widgets(*row)


def _overview(stage_name: str, watched: Watched) -> list[cloudwatch.IWidget]:
    where = (
        f"## trncost {stage_name}\n"
        f"Alarms notify SNS topic `{watched.topic.topic_name}`.\n\n"
        f"Table `{watched.table.table_name}`, bus `{watched.bus.event_bus_name}`,"
        f" archive `{watched.archive.archive_name}` (replay: README, 'Deploy to your account')."
    )
    return [
        cloudwatch.TextWidget(markdown=where, width=8, height=HEIGHT),
        cloudwatch.AlarmStatusWidget(
            title="Alarms", alarms=list(watched.alarms), width=16, height=HEIGHT
        ),
    ]


def _api(api_stage: apigw.Stage, latency_alarm_ms: int) -> list[cloudwatch.IWidget]:
    latency_line = cloudwatch.HorizontalAnnotation(value=latency_alarm_ms, label="p99 alarm")
    return [
        graph(
            "API requests",
            [api_stage.metric_count(statistic="Sum", period=FIVE_MINUTES, label="requests")],
            width=8,
        ),
        graph(
            "API 4xx and 5xx",
            [
                api_stage.metric_client_error(statistic="Sum", period=FIVE_MINUTES, label="4xx"),
                api_stage.metric_server_error(statistic="Sum", period=FIVE_MINUTES, label="5xx"),
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
    ]


def _functions(functions: Sequence[MonitoredFunction]) -> list[cloudwatch.IWidget]:
    return [
        per_function("Lambda invocations", functions, "Invocations", "Sum"),
        per_function("Lambda errors", functions, "Errors", "Sum"),
        per_function("Lambda throttles", functions, "Throttles", "Sum"),
        per_function("Lambda duration p99 (ms)", functions, "Duration", "p99"),
    ]


def _queues(watched: Watched) -> list[cloudwatch.IWidget]:
    return [
        per_queue("Queue depth (messages visible)", watched.queues),
        per_queue("Oldest message (s)", watched.queues, age=True),
        per_queue("Dead-letter queue depth", watched.dead_letter_queues),
    ]


def _trncost(snapshots_taken: cloudwatch.IMetric) -> list[cloudwatch.IWidget]:
    return [
        *(
            graph(title, [emitted(name) for name in names], width=6)
            for title, names in DASHBOARD_METRICS
        ),
        graph(
            "Price snapshots per day; age of the one replaced (s)",
            [snapshots_taken],
            width=6,
            right=[emitted(MetricName.price_snapshot_age, ONE_DAY, "Maximum")],
            left_annotations=[
                cloudwatch.HorizontalAnnotation(value=1, label="stale below, 2 days running")
            ],
        ),
    ]


def _table(
    table: dynamodb.ITable, trial_plans_failed: cloudwatch.IMetric
) -> list[cloudwatch.IWidget]:
    capacity: list[cloudwatch.IMetric] = [
        table.metric_consumed_read_capacity_units(
            statistic="Sum", period=FIVE_MINUTES, label="read units"
        ),
        table.metric_consumed_write_capacity_units(
            statistic="Sum", period=FIVE_MINUTES, label="write units"
        ),
    ]
    throttles = [
        table.metric(name, statistic="Sum", period=FIVE_MINUTES, label=label)
        for name, label in (
            ("ReadThrottleEvents", "read throttles"),
            ("WriteThrottleEvents", "write throttles"),
        )
    ]
    return [
        graph("Table capacity and throttling", [*capacity, *throttles], width=12),
        graph("Trial plans failed", [trial_plans_failed], width=12),
    ]
