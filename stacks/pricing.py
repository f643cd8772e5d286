"""Pricing stack: the prices Lambda snapshots official prices into the table, on a schedule,
and runs the readiness watch (trncost.services.readiness) after each snapshot it publishes.

Scheduler ──► prices Lambda ──Price List API, EC2 Capacity Blocks──► table
                            ├──"Price Snapshot Taken"──► bus
                            └──readiness watch: estimates re-run ──"Estimate Decision Changed"──►
                               bus ──rule──► SNS topic (KMS) ──► your subscriptions
"""

from __future__ import annotations

import json
from typing import Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import Construct

from stacks.base import StackOptions, TrncostStack
from stacks.config import StageConfig
from stacks.ingest import EVENT_MAX_AGE, EVENT_RETRY_ATTEMPTS, event_pattern
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction, dead_letter_queue
from stacks.permissions import grant_price_reads, grant_put_events, grant_table
from trncost.events import DetailType, pattern
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    PRICE_LIST_REGION_ENV,
    TABLE_NAME_ENV,
)

# What the snapshot repository does with the table (store/prices.py): conditional puts, batch
# writes of quotes, the latest pointer, reads and queries.
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",  # its "Price Snapshot Taken" outbox item, once published
    "dynamodb:ConditionCheckItem",
]


def catalog_json(config: StageConfig) -> str:
    """The stage's catalog as the prices Lambda reads it (trncost.settings.Catalog)."""
    return json.dumps(config.catalog.model_dump(mode="json"), separators=(",", ":"))


def accept_uploads(config: StageConfig) -> str:
    """prices.accept_uploads as trncost.settings reads it: may an upload become latest."""
    return "true" if config.prices.accept_uploads else "false"


class PriceSnapshotter(Construct):
    """The prices function with exactly the permissions a snapshot needs, run on a schedule."""

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
        self.prices = TrncostFunction(
            self,
            "Prices",
            name="prices",
            config=config,
            description="Snapshot official AWS prices into the trncost table",
            memory_size=1024,
            timeout=cdk.Duration.minutes(5),
            environment={
                TABLE_NAME_ENV: table.table_name,
                BUS_NAME_ENV: bus.event_bus_name,
                PRICE_LIST_REGION_ENV: config.price_list_endpoint_region,
                CATALOG_ENV: catalog_json(config),
                ACCEPT_UPLOADS_ENV: accept_uploads(config),
            },
        )
        grant_price_reads(self.prices.role)
        grant_table(self.prices.role, table, TABLE_ACTIONS)
        grant_put_events(self.prices.role, bus)
        self.schedule = ScheduledInvocation(
            self,
            "Schedule",
            function=self.prices.function,
            expression=config.price_schedule,
            description=f"trncost price snapshot, {config.price_schedule}",
        )


class DecisionNotices(Construct):
    """ "Estimate Decision Changed" for people: an EventBridge rule on the trncost bus sends each
    one to an SNS topic anyone allowed can subscribe to (email, SQS, Lambda, HTTPS;
    docs/trainium3.md). The topic is encrypted with its own customer-managed key (rotated
    yearly; the SNS target adds the statement that lets EventBridge use it); it takes TLS only.
    Events the rule cannot deliver go to the house dead-letter queue after its retries."""

    def __init__(self, scope: Construct, construct_id: str, *, bus: events.IEventBus) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.key = kms.Key(
            self,
            "Key",
            description=f"trncost {stack.stack_name}: encrypts the decision-notices topic",
            enable_key_rotation=True,
        )
        self.topic = sns.Topic(
            self,
            "Topic",
            display_name="trncost: Estimate Decision Changed",
            master_key=self.key,
            enforce_ssl=True,
        )
        self.dead_letter_queue = dead_letter_queue(self)
        self.rule = events.Rule(
            self,
            "DecisionChanged",
            description="trncost: every 'Estimate Decision Changed' to the decision-notices topic",
            event_bus=bus,
            event_pattern=event_pattern(pattern(DetailType.estimate_decision_changed)),
            targets=[
                targets.SnsTopic(
                    self.topic,
                    dead_letter_queue=self.dead_letter_queue,
                    retry_attempts=EVENT_RETRY_ATTEMPTS,
                    max_event_age=EVENT_MAX_AGE,
                )
            ],
        )


class TrncostPricing(TrncostStack):
    """Price snapshots: the prices Lambda and its schedule, writing to the data stack."""

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
            description="trncost pricing: scheduled snapshots of official AWS prices",
            **options,
        )
        self.config = config
        self.snapshotter = PriceSnapshotter(
            self, "PriceSnapshots", config=config, table=table, bus=bus
        )
        cdk.CfnOutput(
            self,
            "PricesFunctionName",
            value=self.snapshotter.prices.function.function_name,
            description='invoke with {} for a live snapshot or {"saved_price_list": ...}',
        )
        self.notices = DecisionNotices(self, "DecisionNotices", bus=bus)
        cdk.CfnOutput(
            self,
            "DecisionTopicArn",
            value=self.notices.topic.topic_arn,
            description="subscribe to 'Estimate Decision Changed' (docs/trainium3.md): aws sns "
            "subscribe --topic-arn <this> --protocol email --notification-endpoint you@example.com",
        )
