"""Pricing stack: the prices Lambda snapshots official prices into the table, on a schedule.

Scheduler ──► prices Lambda ──Price List API, EC2 Capacity Blocks──► table
                            └──"Price Snapshot Taken"──► bus
"""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from constructs import Construct

from stacks.config import StageConfig
from stacks.data import index_arns
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction
from trncost.events import BUS_NAME_ENV
from trncost.settings import CATALOG_ENV, PRICE_LIST_REGION_ENV
from trncost.store.schema import TABLE_NAME_ENV

# Read-only Price List Query API and Capacity Block offerings: neither supports resource-level
# permissions (Service Authorization Reference), so these take Resource "*".
PRICE_LIST_ACTIONS = [
    "pricing:GetProducts",
    "pricing:DescribeServices",
    "pricing:GetAttributeValues",
]
CAPACITY_BLOCK_ACTIONS = ["ec2:DescribeCapacityBlockOfferings"]
# What the snapshot repository does with the table (store/prices.py): conditional puts, batch
# writes of quotes, the latest pointer, reads and queries.
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
    "dynamodb:ConditionCheckItem",
]
INDEX_ACTIONS = ["dynamodb:Query"]
BUS_ACTIONS = ["events:PutEvents"]


def catalog_json(config: StageConfig) -> str:
    """The stage's catalog as the prices Lambda reads it (trncost.settings.Catalog)."""
    return json.dumps(config.catalog.model_dump(mode="json"), separators=(",", ":"))


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
            },
        )
        for actions, resources in (
            (PRICE_LIST_ACTIONS + CAPACITY_BLOCK_ACTIONS, ["*"]),
            (TABLE_ACTIONS, [table.table_arn]),
            (INDEX_ACTIONS, index_arns(table)),
            (BUS_ACTIONS, [bus.event_bus_arn]),
        ):
            self.prices.add_to_role_policy(
                iam.PolicyStatement(actions=actions, resources=resources)
            )
        self.schedule = ScheduledInvocation(
            self,
            "Schedule",
            function=self.prices.function,
            expression=config.price_schedule,
            description=f"trncost price snapshot, {config.price_schedule}",
        )


class TrncostPricing(cdk.Stack):
    """Price snapshots: the prices Lambda and its schedule, writing to the data stack."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
        **kwargs: object,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost pricing: scheduled snapshots of official AWS prices",
            **kwargs,
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
