"""One deployable copy of trncost (dev, prod, ...): every stack of the service, wired together."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from stacks.api import TrncostApi
from stacks.config import StageConfig
from stacks.data import TrncostData
from stacks.ingest import TrncostIngest
from stacks.pricing import TrncostPricing


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

    @property
    def stacks(self) -> list[cdk.Stack]:
        return [child for child in self.node.children if isinstance(child, cdk.Stack)]
