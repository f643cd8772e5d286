"""The price catalog: which instance types × regions a stage snapshots prices for (plus the
usage services in those regions), and the names a stage accepts beyond botocore's (an instance
type newer than the pinned botocore, e.g. trn3.48xlarge). The stage's copy comes from cdk.json
(`catalog`), read by trncost.settings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from trncost.model.common import InstanceType, Region


class Catalog(BaseModel):
    """Which instance types × regions to price (plus the usage services in those regions)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    instance_types: list[InstanceType] = Field(min_length=1)
    regions: list[Region] = Field(min_length=1)
    capacity_block_hours: int | None = Field(
        default=None,
        ge=24,
        le=182 * 24,
        description="also quote EC2 Capacity Blocks of this duration (None: do not query)",
    )
    capacity_block_lookahead_days: int = Field(default=56, ge=1, le=182)
