"""The estimate: what reaching the target costs, line by line, with its input table."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Literal

from pydantic import Field

from trncost.model.assumptions import Assumptions
from trncost.model.candidate import Candidate
from trncost.model.common import DomainModel, Money
from trncost.model.price import PriceSnapshot
from trncost.model.provenance import Provenance
from trncost.model.trial import TrialRun
from trncost.model.workload import Workload


class Component(StrEnum):
    instances = "instances"
    storage = "storage"
    data_transfer = "data_transfer"
    logs = "logs"
    data_preparation = "data_preparation"
    adaptation_reruns = "adaptation_reruns"


class EstimateInput(DomainModel):
    """Everything the engine needs. Pure data: the engine does no I/O."""

    workload: Workload
    candidate: Candidate
    trials: list[TrialRun]
    prices: PriceSnapshot
    assumptions: Assumptions = Field(default_factory=Assumptions)


class InputRow(DomainModel):
    """One row of the input table: a value and where it comes from."""

    id: str
    label: str
    value: str | float | int | bool | None = Field(
        description="Decimal money is carried as a string; None when pending"
    )
    unit: str | None = None
    provenance: Provenance


class LineItem(DomainModel):
    component: Component
    name: str
    quantity: float
    unit: str
    rate_usd: Money | None = Field(description="None while the price is PENDING")
    rate_unit: str | None = None
    amount_usd: Money | None = Field(description="None while the price is PENDING")
    price_key: str | None = None
    inputs: list[str] = Field(default_factory=list, description="ids of the input rows used")
    provenance: Provenance


class PendingTerm(DomainModel):
    """quantity × an unknown price: the part of the total that waits for a price."""

    price_key: str
    quantity: float
    unit: str
    reason: str
    lines: list[str]


class EstimateWarning(DomainModel):
    code: str
    message: str


class TimeToTarget(DomainModel):
    steady_h: float
    compile_h: float
    warmup_h: float
    checkpoint_h: float
    evaluation_h: float
    base_h: float = Field(description="before expected failures")
    failure_overhead_h: float
    total_h: float = Field(description="expected time to target, failures included")
    held_h: float = Field(description="instance-held time: total plus idle/queue share")


class Estimate(DomainModel):
    engine_version: str
    workload_id: str
    candidate: Candidate
    snapshot_id: str
    status: Literal["complete", "incomplete", "infeasible"]
    infeasible_reason: str | None = None
    time: TimeToTarget | None = None
    steady_throughput: float | None = Field(
        default=None, description="target units/s at the candidate's instance count"
    )
    effective_throughput: float | None = Field(
        default=None, description="target work / expected time to target, units/s"
    )
    target_unit: str
    target_amount: float
    target_tokens: float | None = None
    line_items: list[LineItem] = Field(default_factory=list)
    components: dict[Component, Money] = Field(
        default_factory=dict, description="known subtotal per component"
    )
    total_known_usd: Money = Decimal(0)
    pending_terms: list[PendingTerm] = Field(default_factory=list)
    total_usd: Money | None = Field(default=None, description="only when no price is pending")
    total_formula: str
    cost_per_target_usd: Money | None = None
    cost_per_million_tokens_usd: Money | None = None
    warnings: list[EstimateWarning] = Field(default_factory=list)
    inputs: list[InputRow] = Field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.status == "complete"
