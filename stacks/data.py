"""Data stack: DynamoDB tables for trials, price snapshots and estimates (added by later work)."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from stacks.config import StageConfig


class TrncostData(cdk.Stack):
    """Holds trncost's state. Empty for now except for its description."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        **kwargs: object,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost data: trial records, price snapshots and estimates",
            **kwargs,
        )
        self.config = config
