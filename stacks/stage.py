"""One deployable copy of trncost (dev, prod, ...): every stack of the service, wired together."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from stacks.actuals import TrncostActuals
from stacks.api import TrncostApi
from stacks.config import StageConfig
from stacks.data import TrncostData
from stacks.ingest import TrncostIngest
from stacks.monitoring.resources import add_dead_letter_queue_outputs, monitored_resources
from stacks.monitoring.stack import TrncostMonitoring
from stacks.pricing import TrncostPricing
from stacks.workflow import TrncostWorkflow


class TrncostStage(cdk.Stage):
    """All trncost stacks for one stage, in the stage's account (or env-agnostic) and region."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StageConfig) -> None:
        super().__init__(
            scope,
            construct_id,
            env=cdk.Environment(account=config.account, region=config.region),
        )
        self.config = config
        self.data = TrncostData(self, "TrncostData", config=config)
        self.pricing = TrncostPricing(
            self, "TrncostPricing", config=config, table=self.data.table, bus=self.data.bus
        )
        self.ingest = TrncostIngest(
            self, "TrncostIngest", config=config, table=self.data.table, bus=self.data.bus
        )
        self.api = TrncostApi(
            self, "TrncostApi", config=config, table=self.data.table, bus=self.data.bus
        )
        self.workflow = TrncostWorkflow(
            self, "TrncostWorkflow", config=config, table=self.data.table, bus=self.data.bus
        )
        self.workflow.grant_start(self.api.api.handler)  # POST /workloads/{id}/trial-plans
        self.actuals = TrncostActuals(
            self, "TrncostActuals", config=config, table=self.data.table, bus=self.data.bus
        )
        # Last: it watches every function and queue the stacks above have (found, not listed).
        watched = monitored_resources(self.stacks)
        add_dead_letter_queue_outputs(watched.dead_letter_queues)  # each in its own stack
        self.monitoring = TrncostMonitoring(
            self,
            "TrncostMonitoring",
            config=config,
            functions=watched.functions,
            queues=watched.queues,
            dead_letter_queues=watched.dead_letter_queues,
            api=self.api.api.rest_api,
            bus=self.data.bus,
            archive=self.data.events.archive,
            table=self.data.table,
            price_snapshots=self.pricing.snapshotter.prices,
            outbox=self.ingest.event_outbox.outbox,
            state_machine=self.workflow.state_machine,
        )

    @property
    def stacks(self) -> list[cdk.Stack]:
        return [child for child in self.node.children if isinstance(child, cdk.Stack)]
