"""Runtime settings of the Lambdas, read from environment variables named once here.

CDK sets these variables (stacks/), the local runtime sets them for in-process handlers, and
tests set them with monkeypatch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from trncost.events import BUS_NAME_ENV
from trncost.model.common import InstanceType, Region
from trncost.store.schema import TABLE_NAME_ENV

PRICE_LIST_REGION_ENV = "TRNCOST_PRICE_LIST_REGION"
CATALOG_ENV = "TRNCOST_CATALOG"
LIVE_PRICES_ENV = "TRNCOST_LIVE_PRICES"
PRICE_LIST_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")


class Catalog(BaseModel):
    """Which instance types × regions to price (plus the usage services in those regions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_types: list[InstanceType] = Field(min_length=1)
    regions: list[Region] = Field(min_length=1)
    capacity_block_hours: int | None = Field(
        default=None,
        ge=24,
        le=182 * 24,
        description="also quote EC2 Capacity Blocks of this duration (None: do not query)",
    )
    capacity_block_lookahead_days: int = Field(default=56, ge=1, le=182)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    table_name: str
    bus_name: str | None = None
    price_list_region: str = "us-east-1"
    catalog: Catalog | None = None
    live_prices: bool = True  # may the API query the Price List API (POST /prices/snapshots)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        catalog = env.get(CATALOG_ENV)
        return cls(
            table_name=env[TABLE_NAME_ENV],
            bus_name=env.get(BUS_NAME_ENV) or None,
            price_list_region=env.get(PRICE_LIST_REGION_ENV, "us-east-1"),
            catalog=Catalog.model_validate(json.loads(catalog)) if catalog else None,
            live_prices=env.get(LIVE_PRICES_ENV, "true").lower() not in ("false", "0", "no"),
        )
