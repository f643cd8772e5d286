"""Actuals stack: the actuals Lambda asks Cost Explorer for the spend tagged
`trncost:estimate-id`, daily, and keeps it as each estimate's actuals.

Scheduler ──► actuals Lambda ──ce:GetCostAndUsage──► table (each month's actuals replaced)
                             └──"Actuals Imported"──► bus

Exports (FOCUS 1.2, CUR 2.0) come in through the API (POST /actuals) and the CLI; SageMaker's
same-day figures through the ingest. Cost Explorer must see the tag as an active cost
allocation tag (docs/deploy.md, "Cost allocation tags"): until then each pull answers
`not_ready`, counted by the ActualsNotReady metric.
"""

from __future__ import annotations

from typing import Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from constructs import Construct

from stacks.base import StackOptions, TrncostStack
from stacks.config import StageConfig
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction
from stacks.permissions import grant, grant_put_events, grant_table
from trncost.settings import BUS_NAME_ENV, TABLE_NAME_ENV

# What the actuals store does with the table (store/actuals.py, via the service): the
# estimate's definition and versions read, a delivery's groups written, its CURRENT item
# switched (a conditional put), the replaced delivery's groups deleted.
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
]
# Cost Explorer has no resource-level permissions (Service Authorization Reference): "*".
COST_EXPLORER_ACTIONS = ["ce:GetCostAndUsage"]


class CostExplorerActuals(Construct):
    """The actuals function with exactly the permissions a pull needs, run on a schedule."""

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
        self.actuals = TrncostFunction(
            self,
            "Actuals",
            name="actuals",
            config=config,
            description="Ask Cost Explorer for the spend tagged trncost:estimate-id (actuals)",
            memory_size=512,
            timeout=cdk.Duration.minutes(5),
            environment={TABLE_NAME_ENV: table.table_name, BUS_NAME_ENV: bus.event_bus_name},
        )
        grant(self.actuals.role, COST_EXPLORER_ACTIONS, ["*"])
        grant_table(self.actuals.role, table, TABLE_ACTIONS)
        grant_put_events(self.actuals.role, bus)
        self.schedule = ScheduledInvocation(
            self,
            "Schedule",
            function=self.actuals.function,
            expression=config.actuals_schedule,
            description=f"trncost actuals from Cost Explorer, {config.actuals_schedule}",
        )


class TrncostActuals(TrncostStack):
    """Billed actuals from Cost Explorer: the actuals Lambda and its schedule."""

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
            description="trncost actuals: daily Cost Explorer spend by estimate tag",
            **options,
        )
        self.config = config
        self.cost_explorer = CostExplorerActuals(
            self, "CostExplorerActuals", config=config, table=table, bus=bus
        )
        cdk.CfnOutput(
            self,
            "ActualsFunctionName",
            value=self.cost_explorer.actuals.function.function_name,
            description='invoke with {} (or {"start": "YYYY-MM-01"}) to pull Cost Explorer now',
        )
