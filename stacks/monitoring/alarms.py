"""The stage's alarms, one construct per family. Each alarm is named trncost-<stage>-<name> and
notifies the alarm topic when it goes to ALARM and back to OK.

Families are `Group`s (stacks.base): an alarm keeps the logical id it had directly in the
monitoring stack. An alarm is upserted by name, so a logical-id change would create the "new"
one over the old and then delete it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from stacks.base import Group
from stacks.monitoring.metrics import (
    FIVE_MINUTES,
    ONE_DAY,
    TRIAL_PLANS_SERVICE,
    own_metric,
)
from stacks.monitoring.resources import MonitoredFunction, MonitoredQueue, camel
from trncost.observability import MetricName

LATENCY_ALARM_PERIODS = 3  # p99 at or above the threshold for 3 × 5 minutes
# The stale-snapshot alarm: no PriceSnapshotTaken in 2 consecutive UTC days. It assumes a
# price_schedule at least every 2 days (the default is daily).
STALE_SNAPSHOT_DAYS = 2

AT_OR_ABOVE = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
# A work queue's oldest message older than this: its consumer is not taking messages (a message
# it keeps failing leaves for the DLQ sooner: MAX_RECEIVE_COUNT × the visibility timeout is
# about 85 minutes for the ingest queue and 150 for the refresh queue, stacks/ingest.py).
QUEUE_AGE_ALARM_S = 3 * 3600
# The outbox sweeper runs every minute: an event waiting 15 minutes means EventBridge keeps
# refusing it (or the sweeper fails; its errors alarm too). No data for 3 periods: it is not
# running at all, which is an alarm too.
OUTBOX_AGE_ALARM_S = 15 * 60
OUTBOX_AGE_PERIODS = 3


@dataclass(frozen=True)
class AlarmRoute:
    """How a stage's alarms are named (`prefix` + name) and whom they notify (`action`)."""

    prefix: str
    action: cloudwatch.IAlarmAction


class AlarmFamily(Group):
    """Alarms of one kind; `alarms` in the order they were made."""

    def __init__(self, scope: Construct, construct_id: str, *, route: AlarmRoute) -> None:
        super().__init__(scope, construct_id)
        self._route = route
        self.alarms: list[cloudwatch.Alarm] = []

    def alarm(
        self,
        construct_id: str,
        *,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        comparison: cloudwatch.ComparisonOperator = AT_OR_ABOVE,
        evaluation_periods: int = 1,
        missing: cloudwatch.TreatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING,
    ) -> cloudwatch.Alarm:
        """An alarm named trncost-<stage>-<name> that notifies the topic on ALARM and on OK."""
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=f"{self._route.prefix}{name}",
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            treat_missing_data=missing,
        )
        alarm.add_alarm_action(self._route.action)
        alarm.add_ok_action(self._route.action)
        self.alarms.append(alarm)
        return alarm


class ApiAlarms(AlarmFamily):
    """The API stage: any 5xx (a bug), and p99 latency at or above the stage's threshold."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        route: AlarmRoute,
        api_stage: apigw.Stage,
        latency_ms: int,
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        self.server_errors = self.alarm(
            "Api5xx",
            name="api-5xx",
            metric=api_stage.metric_server_error(period=FIVE_MINUTES, statistic="Sum"),
            threshold=1,
            description="The API answered 5xx (a 5xx is a bug: look at the api function's logs"
            " and the stage's execution logs).",
        )
        self.latency = self.alarm(
            "ApiLatencyP99",
            name="api-latency-p99",
            metric=api_stage.metric_latency(period=FIVE_MINUTES, statistic="p99"),
            threshold=latency_ms,
            evaluation_periods=LATENCY_ALARM_PERIODS,
            description=f"API p99 latency at or above {latency_ms} ms for"
            f" {LATENCY_ALARM_PERIODS * 5} minutes (the integration times out at 29 s).",
        )


class FunctionAlarms(AlarmFamily):
    """Every function: Errors ≥ 1 and Throttles ≥ 1 in 5 minutes."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        route: AlarmRoute,
        functions: Sequence[MonitoredFunction],
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        self.by_label: dict[str, tuple[cloudwatch.Alarm, cloudwatch.Alarm]] = {}
        for monitored in functions:
            function, label = monitored.function, monitored.label
            errors = self.alarm(
                f"{camel(label)}Errors",
                name=f"{label}-errors",
                metric=function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"The {label} function raised (Errors ≥ 1 in 5 minutes): see its"
                " log group.",
            )
            throttles = self.alarm(
                f"{camel(label)}Throttles",
                name=f"{label}-throttles",
                metric=function.metric_throttles(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"The {label} function was throttled (account or reserved"
                " concurrency).",
            )
            self.by_label[label] = (errors, throttles)


class DeadLetterAlarms(AlarmFamily):
    """Every dead-letter queue: any message visible."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        route: AlarmRoute,
        dead_letter_queues: Sequence[MonitoredQueue],
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        self.by_label: dict[str, cloudwatch.Alarm] = {}
        for monitored in dead_letter_queues:
            queue, label = monitored.queue, monitored.label
            self.by_label[label] = self.alarm(
                f"{camel(label)}DeadLetters",
                name=f"dlq-{label}",
                metric=queue.metric_approximate_number_of_messages_visible(
                    period=FIVE_MINUTES, statistic="Maximum"
                ),
                threshold=1,
                description=f"Messages wait in a dead-letter queue ({monitored.feeds_from}):"
                " read them, fix the cause, then redrive them (README, 'Deploy to your"
                " account').",
            )


class PriceSnapshotAlarms(AlarmFamily):
    """No price snapshot taken (by the prices function, `service`) for STALE_SNAPSHOT_DAYS."""

    def __init__(
        self, scope: Construct, construct_id: str, *, route: AlarmRoute, service: str
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        self.metric = own_metric(
            MetricName.price_snapshot_taken,
            service=service,
            period=ONE_DAY,
            label="price snapshots taken (prices function)",
        )
        self.stale = self.alarm(
            "PriceSnapshotStale",
            name="price-snapshot-stale",
            metric=self.metric,
            threshold=1,
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluation_periods=STALE_SNAPSHOT_DAYS,
            # No data at all (the function never ran, or failed before publishing) is stale too.
            missing=cloudwatch.TreatMissingData.BREACHING,
            description=f"No price snapshot for {STALE_SNAPSHOT_DAYS} days: estimates use old"
            " prices. Check the prices function's errors, its schedule DLQ and its logs; invoke"
            " it by hand (output PricesFunctionName).",
        )


class TrialPlanAlarms(AlarmFamily):
    """A trial plan ended failed: lambdas/trial_steps emits TrialPlansFailed (Count 1) when a
    plan ends failed, gate_failed, budget_cap or timeout (metrics.TRIAL_PLANS_SERVICE;
    tests/integration/test_plan_metrics.py runs a failing plan and reads it)."""

    def __init__(self, scope: Construct, construct_id: str, *, route: AlarmRoute) -> None:
        super().__init__(scope, construct_id, route=route)
        self.metric = own_metric(
            MetricName.trial_plans_failed,
            service=TRIAL_PLANS_SERVICE,
            period=FIVE_MINUTES,
            label="trial plans failed",
        )
        self.failed = self.alarm(
            "TrialPlansFailed",
            name="trial-plans-failed",
            metric=self.metric,
            threshold=1,
            description="A trial plan ended failed (an error, a failed gate, its budget cap or"
            " a lost run): GET /trial-plans/{plan_id} says why; its Step Functions execution"
            " has the details.",
        )


class QueueAgeAlarms(AlarmFamily):
    """Every work queue: its oldest message older than QUEUE_AGE_ALARM_S (its consumer stopped
    taking messages: disabled, throttled, or failing before it reports)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        route: AlarmRoute,
        queues: Sequence[MonitoredQueue],
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        self.by_label: dict[str, cloudwatch.Alarm] = {}
        hours = QUEUE_AGE_ALARM_S // 3600
        for monitored in queues:
            queue, label = monitored.queue, monitored.label
            self.by_label[label] = self.alarm(
                f"{camel(label)}OldestMessage",
                name=f"queue-age-{label}",
                metric=queue.metric_approximate_age_of_oldest_message(
                    period=FIVE_MINUTES, statistic="Maximum"
                ),
                threshold=QUEUE_AGE_ALARM_S,
                description=f"A message has waited {hours} hours in a work queue ({label}): "
                "its consumer is not taking messages (event source mapping disabled, "
                "throttled, or failing before it reports). Look at the function's errors, "
                "throttles and logs.",
            )


class StateMachineAlarms(AlarmFamily):
    """The trial plan state machine: any execution failed, timed out or aborted (Step
    Functions' own metrics: they do not depend on the failure-recording step succeeding).
    Paid capacity may be running under a plan that ended this way."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        route: AlarmRoute,
        state_machine: sfn.IStateMachine,
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        ended = (
            ("Failed", "failed", state_machine.metric_failed),
            ("TimedOut", "timed-out", state_machine.metric_timed_out),
            ("Aborted", "aborted", state_machine.metric_aborted),
        )
        self.by_outcome: dict[str, cloudwatch.Alarm] = {}
        for camel_name, kebab, metric in ended:
            self.by_outcome[kebab] = self.alarm(
                f"TrialPlanExecutions{camel_name}",
                name=f"trial-plan-executions-{kebab}",
                metric=metric(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"A trial plan execution {kebab.replace('-', ' ')}: its runs may "
                "still hold paid capacity. Read the execution's history, GET "
                "/trial-plans/{plan_id}, and stop any job tagged trncost:plan that is still "
                "running.",
            )


class OutboxAlarms(AlarmFamily):
    """Events written with their records wait for EventBridge: the oldest is older than
    OUTBOX_AGE_ALARM_S, or the sweeper reports nothing (it is not running)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, route: AlarmRoute, service: str
    ) -> None:
        super().__init__(scope, construct_id, route=route)
        self.metric = own_metric(
            MetricName.outbox_oldest_age,
            service=service,
            period=FIVE_MINUTES,
            label="oldest outbox event (s)",
        ).with_(statistic="Maximum")
        self.waiting = self.alarm(
            "OutboxEventsWaiting",
            name="outbox-events-waiting",
            metric=self.metric,
            threshold=OUTBOX_AGE_ALARM_S,
            evaluation_periods=OUTBOX_AGE_PERIODS,
            missing=cloudwatch.TreatMissingData.BREACHING,
            description=f"An event written with its record has waited {OUTBOX_AGE_ALARM_S // 60}"
            " minutes for EventBridge (or the outbox function has not run for 15 minutes): "
            "estimates are not refreshed meanwhile. Check the outbox function's errors and "
            "logs, and EventBridge PutEvents on the project bus.",
        )
