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


# -- the trial agent (trncost.agent, inside training jobs; not read by the Lambdas) -----------
# The launchers (trncost.launch) or the job's own environment set these; the agent's flags win.
AGENT_TRIAL_ID_ENV = "TRNCOST_TRIAL_ID"
AGENT_TAGS_ENV = "TRNCOST_TAGS"  # "k=v,k=v": the job's trncost:* tags
AGENT_INSTANCE_TYPE_ENV = "TRNCOST_INSTANCE_TYPE"
AGENT_INSTANCE_COUNT_ENV = "TRNCOST_INSTANCE_COUNT"
AGENT_SEND_EVENT_ENV = "TRNCOST_SEND_EVENT"  # 0/false/no: no "Trial Run Completed" event
# The agent's EventBridge bus is BUS_NAME_ENV (TRNCOST_BUS). What the platforms set:
SAGEMAKER_INSTANCE_TYPE_ENV = "SM_CURRENT_INSTANCE_TYPE"
NODE_RANK_ENVS = ("NODE_RANK", "AWS_BATCH_JOB_NODE_INDEX")  # the first one set wins
REGION_ENVS = ("AWS_REGION", "AWS_DEFAULT_REGION")


def parse_tags(text: str | None) -> dict[str, str]:
    """ "k=v,k=v" → {k: v} (TRNCOST_TAGS, and the agent's --tag flags)."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            if k.strip():
                out[k.strip()] = v.strip()
    return out


class AgentSettings(BaseModel):
    """What the trial agent reads from its environment (an unset or empty variable is None).
    trncost.agent.AgentConfig combines it with the agent's flags and the job's tags."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trial_id: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    instance_type: str | None = None  # TRNCOST_INSTANCE_TYPE, else SageMaker's
    instance_count: str | None = None  # as set: parsed only when no --instance-count overrides it
    node_rank: int = 0  # 0 (the leader) unless a rank variable holds a number
    region: str | None = None
    send_event: bool = True
    bus_name: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AgentSettings:
        env = os.environ if env is None else env
        rank = next((env[k] for k in NODE_RANK_ENVS if env.get(k)), "0")
        return cls(
            trial_id=env.get(AGENT_TRIAL_ID_ENV) or None,
            tags=parse_tags(env.get(AGENT_TAGS_ENV)),
            instance_type=env.get(AGENT_INSTANCE_TYPE_ENV)
            or env.get(SAGEMAKER_INSTANCE_TYPE_ENV)
            or None,
            instance_count=env.get(AGENT_INSTANCE_COUNT_ENV) or None,
            node_rank=int(rank) if rank.isdigit() else 0,
            region=next((env[k] for k in REGION_ENVS if env.get(k)), None),
            send_event=env.get(AGENT_SEND_EVENT_ENV, "1").lower() not in ("0", "false", "no"),
            bus_name=env.get(BUS_NAME_ENV) or None,
        )
