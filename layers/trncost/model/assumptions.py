"""What the user states rather than measures. Every field here is a user_assumption."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field, field_validator, model_validator

from trncost.model.bounds import (
    MAX_ACCELERATOR_HOURS,
    MAX_COUNT,
    MAX_PRIOR_SHAPE,
    Count,
    FailureRate,
    Gigabytes,
    HourlyUsd,
    Hours,
    Months,
    PositiveSeconds,
    Seconds,
)
from trncost.model.common import (
    MAX_TEXT_ITEMS,
    DomainModel,
    Fraction,
    InstanceType,
    Name,
    Note,
    Region,
)
from trncost.model.price import PriceOverride

T = TypeVar("T")


class Assumed(DomainModel, Generic[T]):
    """A stated value with an optional note. A bare value is accepted as shorthand."""

    value: T
    note: Note | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return data
        return {"value": data}

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        """`Assumed[Fraction]` is AssumedFraction (its schema's title in the OpenAPI document),
        not the repr of the bounded type."""
        return "Assumed" + "".join(_type_name(p) for p in params)


def _type_name(tp: Any) -> str:
    """The name a field type is known by in trncost.model.bounds or .common (Fraction, Hours),
    else its own (bool)."""
    from trncost.model import bounds, common

    for module in (bounds, common):
        for name, value in vars(module).items():
            if value is tp and name[:1].isupper() and not name.isupper():
                return name
    return str(getattr(tp, "__name__", "Value")).capitalize()


class DataPreparation(DomainModel):
    instance_type: InstanceType
    instance_hours: Hours
    region: Region | None = Field(default=None, description="defaults to the candidate's region")
    note: Note | None = None


class FleetFailurePrior(DomainModel):
    """Your own fleet's interruption record: it replaces the published failure prior."""

    interruptions: float = Field(
        ge=0, le=MAX_COUNT, allow_inf_nan=False, description="job interruptions (failures) counted"
    )
    accelerator_hours: float = Field(
        gt=0,
        le=MAX_ACCELERATOR_HOURS,
        allow_inf_nan=False,
        description="accelerator-hours they were counted over",
    )
    source: Name = Field(description="where the figures come from")
    shape: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PRIOR_SHAPE,
        allow_inf_nan=False,
        description="prior strength (Gamma shape, about that many failures of evidence); "
        "default: the published prior's",
    )
    note: Note | None = None


class Assumptions(DomainModel):
    idle_fraction: Assumed[Fraction] | None = Field(
        default=None, description="share of held time the instances sit idle or queued (< 1)"
    )
    failure_rate_per_instance_hour: Assumed[FailureRate] | None = None
    failure_prior: FleetFailurePrior | None = Field(
        default=None,
        description="your fleet's interruptions per accelerator-hour, in place of the "
        "published reference prior (the trials' failures still update it)",
    )
    restart_s: Assumed[Seconds] | None = None
    checkpoint_interval_s: Assumed[PositiveSeconds] | None = None
    expect_compile_cache_hit: Assumed[bool] | None = None
    ebs_gb_per_instance: Assumed[Gigabytes] | None = None
    checkpoints_retained: Assumed[Count] | None = None
    storage_months_after_run: Assumed[Months] | None = None
    log_retention_months_after_run: Assumed[Months] | None = None
    transfer_out_gb: Assumed[Gigabytes] | None = None
    transfer_inter_region_gb: Assumed[Gigabytes] | None = None
    log_ingest_gb: Assumed[Gigabytes] | None = None
    custom_metrics: Assumed[Count] | None = None
    data_preparation: DataPreparation | None = None
    engineering_hours: Assumed[Hours] | None = None
    engineering_hourly_usd: Assumed[HourlyUsd] | None = None
    price_overrides: list[PriceOverride] = Field(default_factory=list, max_length=MAX_TEXT_ITEMS)
    pool_mismatched_trials: bool = Field(
        default=False,
        description="pool trials of another dataset, code version or timing scope than the "
        "workload's (excluded by default); the estimate then says so in its warnings",
    )

    @field_validator("idle_fraction")
    @classmethod
    def _idle_below_one(cls, v: Assumed[float] | None) -> Assumed[float] | None:
        if v is not None and v.value >= 1:
            raise ValueError("idle_fraction must be below 1 (instances must do some work)")
        return v

    @field_validator("checkpoints_retained", "custom_metrics")
    @classmethod
    def _non_negative_count(cls, v: Assumed[int] | None) -> Assumed[int] | None:
        if v is not None and v.value < 0:
            raise ValueError("must be 0 or more")
        return v

    @model_validator(mode="after")
    def _engineering_pair(self) -> Assumptions:
        if (self.engineering_hours is None) != (self.engineering_hourly_usd is None):
            raise ValueError("engineering_hours and engineering_hourly_usd go together")
        return self

    def engineering_cost_inputs(self) -> tuple[Assumed[float], Assumed[Decimal]] | None:
        """(hours, hourly cost) when both are stated (they go together), else None."""
        if self.engineering_hours is None or self.engineering_hourly_usd is None:
            return None
        return self.engineering_hours, self.engineering_hourly_usd


AssumptionSource = Literal["shared", "candidate"]


class PartialAssumptions(Assumptions):
    """Assumptions checked as a set only once merged: a comparison's shared assumptions and
    each candidate's own (each key it names replaces the shared one, the others stay shared:
    `merge_assumptions`). Pair checks (engineering_hours with engineering_hourly_usd) run on
    the merged set, so either side may name only one of them."""

    @model_validator(mode="after")
    def _engineering_pair(self) -> PartialAssumptions:
        return self  # checked on the merged set


def merge_assumptions(
    shared: Assumptions, own: Assumptions | None
) -> tuple[Assumptions, dict[str, AssumptionSource]]:
    """`shared` with the keys `own` names replaced (key by key), validated as one set, and
    where each stated key came from."""
    shared_keys = shared.model_fields_set
    own_keys = own.model_fields_set if own is not None else set()
    merged: dict[str, Any] = {k: getattr(shared, k) for k in shared_keys}
    if own is not None:
        merged.update({k: getattr(own, k) for k in own_keys})
    data = {k: v.model_dump() if isinstance(v, DomainModel) else v for k, v in merged.items()}
    data = {
        k: [x.model_dump() if isinstance(x, DomainModel) else x for x in v]
        if isinstance(v, list)
        else v
        for k, v in data.items()
    }
    sources: dict[str, AssumptionSource] = {k: "shared" for k in shared_keys}
    sources.update({k: "candidate" for k in own_keys})
    return Assumptions.model_validate(data), dict(sorted(sources.items()))
