"""Pricing stack: the prices Lambda snapshots official prices into the table, on a schedule.

Scheduler ──► prices Lambda ──Price List API, EC2 Capacity Blocks──► table
                            └──"Price Snapshot Taken"──► bus
"""

from __future__ import annotations

import json
from typing import Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from constructs import Construct

from stacks.base import StackOptions, TrncostStack
from stacks.config import StageConfig
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction
from stacks.permissions import grant_price_reads, grant_put_events, grant_table
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
