"""Data stack: the trncost DynamoDB table and the trncost EventBridge bus.

The table is built from `trncost.store.schema.TABLE`, the single definition the local runtime
and the tests create with boto3; its events ("Price Snapshot Taken", ...) go to the bus.
"""

from __future__ import annotations

from typing import Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from constructs import Construct

from stacks.base import StackOptions, TrncostStack
from stacks.config import StageConfig
from stacks.keys import LogKey
from trncost.events import AGENT_SOURCE, SOURCE
from trncost.store.schema import TABLE, KeyAttr, TableSchema

EVENT_ARCHIVE_RETENTION = cdk.Duration.days(30)

_ATTRIBUTE_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}


def _attribute(key: KeyAttr) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=key.name, type=_ATTRIBUTE_TYPES[key.type])


def index_arns(table: dynamodb.ITable, schema: TableSchema = TABLE) -> list[str]:
    """The ARN of each index of `schema` on `table`: grants name them, no `index/*` wildcard."""
    return [f"{table.table_arn}/index/{index.name}" for index in schema.indexes]


class TrncostTable(Construct):
    """The single trncost table, exactly as `schema` describes it.

    Encryption: the AWS managed key (aws/dynamodb). It is KMS, so every use of the key is in
    CloudTrail, yet it needs no key policy, rotation or grants to maintain, and readers need no
    kms: permissions. A customer-managed key buys cross-account control and crypto-shredding,
    which trial metrics and public prices do not need, at the price of a key policy every
    function must be granted. Point-in-time recovery, deletion protection and RETAIN guard the
    data against a bad write and a bad deploy. Items with the schema's TTL attribute (a job's
    log parts) expire on their own.
    """

    def __init__(self, scope: Construct, construct_id: str, *, schema: TableSchema = TABLE):
        super().__init__(scope, construct_id)
        if schema.billing_mode != "PAY_PER_REQUEST":
            raise ValueError(f"only on-demand tables are supported, not {schema.billing_mode}")
        self.schema = schema
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_attribute(schema.partition_key),
            sort_key=_attribute(schema.sort_key),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            deletion_protection=True,
            time_to_live_attribute=schema.ttl_attribute,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        for index in schema.indexes:
            self.table.add_global_secondary_index(
                index_name=index.name,
                partition_key=_attribute(index.partition_key),
                sort_key=_attribute(index.sort_key),
                projection_type=dynamodb.ProjectionType.ALL,
            )


class TrncostBus(Construct):
    """The custom bus `trncost-<stage>`, with an archive of trncost's own events for replay."""

    def __init__(self, scope: Construct, construct_id: str, *, stage_name: str) -> None:
        super().__init__(scope, construct_id)
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"trncost-{stage_name}")
        self.archive = self.bus.archive(
            "Archive",
            description=f"trncost-{stage_name}: trncost and trncost.agent events, for replay",
            event_pattern=events.EventPattern(source=[SOURCE, AGENT_SOURCE]),
            retention=EVENT_ARCHIVE_RETENTION,
        )


class TrncostData(TrncostStack):
    """Holds trncost's state (the table) and carries its events (the bus)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        **options: Unpack[StackOptions],
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost data: trial records, price snapshots and estimates",
            **options,
        )
        self.config = config
        # First: every stack's log groups are encrypted with it (stacks/keys.py).
        self.log_key = LogKey(self).key

        self.data_table = TrncostTable(self, "Data")
        self.table = self.data_table.table
        self.events = TrncostBus(self, "Events", stage_name=self.stage_name)
        self.bus = self.events.bus

        cdk.CfnOutput(
            self,
            "LogKeyArn",
            value=self.log_key.key_arn,
            description="encrypts"
            " every trncost log group: readers of the logs need kms:Decrypt on it",
        )
        cdk.CfnOutput(self, "TableName", value=self.table.table_name)
        cdk.CfnOutput(self, "BusName", value=self.bus.event_bus_name)
        cdk.CfnOutput(self, "BusArn", value=self.bus.event_bus_arn)
        # `aws events start-replay --event-source-arn <BusArchiveArn> --destination Arn=<BusArn>`
        cdk.CfnOutput(self, "BusArchiveName", value=self.events.archive.archive_name)
        cdk.CfnOutput(
            self,
            "BusArchiveArn",
            value=self.events.archive.archive_arn,
            description="replay source: trncost and trncost.agent events of the last 30 days",
        )
