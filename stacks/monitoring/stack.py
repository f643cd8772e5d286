"""The monitoring stack: the alarm topic, the alarm families and the dashboard of one stage
(the package docstring, stacks/monitoring/__init__.py, draws what watches what)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from stacks.base import StackOptions, TrncostStack
from stacks.config import StageConfig
from stacks.lambda_factory import TrncostFunction
from stacks.monitoring.alarms import (
    AlarmRoute,
    ApiAlarms,
    DeadLetterAlarms,
    FunctionAlarms,
    OutboxAlarms,
    PriceSnapshotAlarms,
    QueueAgeAlarms,
    StateMachineAlarms,
    TrialPlanAlarms,
)
from stacks.monitoring.dashboard import TrncostDashboard, Watched
from stacks.monitoring.resources import MonitoredFunction, MonitoredQueue
from stacks.monitoring.topic import AlarmTopic, alarm_name_prefix


class TrncostMonitoring(TrncostStack):
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
        outbox: TrncostFunction,
        state_machine: sfn.IStateMachine,
        **options: Unpack[StackOptions],
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost monitoring: alarms to an SNS topic, and the dashboard",
            **options,
        )
        self.config = config
        self.prefix = alarm_name_prefix(self.stage_name)
        self.alarm_topic = AlarmTopic(
            self, "AlarmTopic", stage_name=self.stage_name, alarm_email=config.alarm_email
        )
        self.topic = self.alarm_topic.topic
        route = AlarmRoute(self.prefix, cloudwatch_actions.SnsAction(self.topic))

        self.api_alarms = ApiAlarms(
            self,
            "ApiAlarms",
            route=route,
            api_stage=api.deployment_stage,
            latency_ms=config.api.latency_alarm_p99_ms,
        )
        self.function_alarms = FunctionAlarms(
            self, "FunctionAlarms", route=route, functions=functions
        )
        self.dead_letter_alarms = DeadLetterAlarms(
            self, "DeadLetterAlarms", route=route, dead_letter_queues=dead_letter_queues
        )
        self.price_snapshot_alarms = PriceSnapshotAlarms(
            self, "PriceSnapshotAlarms", route=route, service=price_snapshots.service_name
        )
        self.trial_plan_alarms = TrialPlanAlarms(self, "TrialPlanAlarms", route=route)
        self.state_machine_alarms = StateMachineAlarms(
            self, "StateMachineAlarms", route=route, state_machine=state_machine
        )
        self.queue_age_alarms = QueueAgeAlarms(self, "QueueAgeAlarms", route=route, queues=queues)
        self.outbox_alarms = OutboxAlarms(
            self, "OutboxAlarms", route=route, service=outbox.service_name
        )
        families = (
            self.api_alarms,
            self.function_alarms,
            self.dead_letter_alarms,
            self.price_snapshot_alarms,
            self.trial_plan_alarms,
            self.state_machine_alarms,
            self.queue_age_alarms,
            self.outbox_alarms,
        )
        self.alarms: list[cloudwatch.Alarm] = [a for family in families for a in family.alarms]

        self.overview = TrncostDashboard(
            self,
            "Overview",
            stage_name=self.stage_name,
            watched=Watched(
                functions=functions,
                queues=queues,
                dead_letter_queues=dead_letter_queues,
                api=api,
                bus=bus,
                archive=archive,
                table=table,
                topic=self.topic,
                alarms=self.alarms,
                latency_alarm_ms=config.api.latency_alarm_p99_ms,
                snapshots_taken=self.price_snapshot_alarms.metric,
                trial_plans_failed=self.trial_plan_alarms.metric,
            ),
        )
        self.dashboard = self.overview.dashboard

        cdk.CfnOutput(
            self,
            "AlarmTopicArn",
            value=self.topic.topic_arn,
            description="every trncost alarm notifies this topic: subscribe to it",
        )
        cdk.CfnOutput(self, "DashboardName", value=self.dashboard.dashboard_name)
