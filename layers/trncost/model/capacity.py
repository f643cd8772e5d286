"""Capacity you can book: EC2 Capacity Blocks and SageMaker Training Plans quoted for a run's
P50 and P90 held time, each offering an official priced input with its expiry, the chance the
run finishes inside it and the cost of extending or finishing on demand, beside on-demand."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trncost.model.analysis import Percentiles
from trncost.model.basis import PriceBasis, PriceOrigin
from trncost.model.candidate import Candidate
from trncost.model.common import DomainModel, Money

CapacitySource = Literal["ec2_capacity_block", "sagemaker_training_plan"]


class CapacityOffering(DomainModel):
    """One offering as AWS answered it (DescribeCapacityBlockOfferings or
    SearchTrainingPlanOfferings), read into what an estimate needs."""

    source: CapacitySource
    offering_id: str
    instance_type: str
    instance_count: int = Field(ge=1)
    availability_zone: str | None = None
    start: str | None = Field(default=None, description="when the capacity starts (UTC)")
    end: str | None = None
    duration_hours: float = Field(gt=0, description="hours + minutes / 60 of the whole offering")
    upfront_fee_usd: Money = Field(description="the whole block: every instance, every hour")
    per_instance_hour_usd: Money = Field(description="fee / (instances × duration hours)")
    parts: int = Field(default=1, ge=1, description="reserved capacities or segments it joins")
    ultraserver_type: str | None = None
    basis: PriceBasis = Field(description="official when trncost asked AWS itself")
    origin: PriceOrigin | None = None
    queried_at: str
    expires_at: str | None = Field(
        default=None,
        description="the last moment it can be bought: its start (AWS re-prices blocks as "
        "supply and demand move, so an offering is good for itself only)",
    )


class CapacityRejection(DomainModel):
    """An offering AWS answered that cannot be used as a price, and why."""

    source: CapacitySource
    offering_id: str | None
    reason: str


class BlockQuote(DomainModel):
    """One offering weighed against the run's held-time draws."""

    offering: CapacityOffering
    applies: bool = Field(
        description="it runs on the candidate's platform (EC2 Capacity Blocks for EC2, "
        "Training Plans for SageMaker): the other is shown for comparison"
    )
    usable_hours: float = Field(
        description="its duration less the last 30 minutes (EC2 ends instances then)"
    )
    p_finish_inside: float = Field(description="share of the draws whose held time fits")
    expected_overrun_h: float = Field(description="mean hours past the block, over every draw")
    expected_extension_usd: Money = Field(
        description="mean cost of extending in whole days at this block's instance-hour rate "
        "(no extension can be quoted before a block is bought)"
    )
    expected_on_demand_finish_usd: Money | None = Field(
        description="mean cost of finishing the overrun on demand; None while that price is PENDING"
    )
    expected_instances_usd: Money = Field(
        description="the fee plus the mean of the cheaper way to finish (extension or on demand)"
    )
    saving_vs_on_demand_usd: Money | None = Field(
        description="expected on-demand instance cost − expected_instances_usd (> 0: the block "
        "is cheaper); None while the on-demand price is PENDING"
    )


class DurationQuotes(DomainModel):
    """The offerings for one of the run's held-time percentiles."""

    percentile: Literal["P50", "P90"]
    held_h: float = Field(description="the run's held hours at that percentile")
    block_hours: int | None = Field(
        description="the request: held hours rounded up to whole days (to 14 days), then whole "
        "weeks (to 182 days); None when past 182 days"
    )
    quotes: list[BlockQuote] = Field(default_factory=list)
    none_offered: list[str] = Field(
        default_factory=list, description="per source, why it offered nothing usable"
    )


class OnDemandBeside(DomainModel):
    """The on-demand price the blocks are weighed against."""

    price_key: str
    rate_usd: Money | None = Field(description="USD per instance-hour; None while PENDING")
    basis: PriceBasis | None = None
    expected_instances_usd: Money | None = Field(
        description="mean held hours × instances × rate over the draws; None while PENDING"
    )


class CapacityPlan(DomainModel):
    """Capacity Blocks and Training Plans for one estimate version's P50 and P90 held time."""

    estimate_id: str | None = None
    version: int | None = None
    candidate: Candidate
    instances: int
    held_h: Percentiles
    on_demand: OnDemandBeside
    durations: list[DurationQuotes]
    rejected: list[CapacityRejection] = Field(default_factory=list)
    queried_at: str
    draws: int = Field(description="held-time draws the chances and expectations are over")
    method: str
    notes: list[str] = Field(default_factory=list)
