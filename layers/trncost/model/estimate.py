"""The estimate: what reaching the target costs, line by line, with its input table."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Literal

from pydantic import Field

from trncost.model.assumptions import Assumptions
from trncost.model.basis import PriceBasis, SavedFileOrigin
from trncost.model.candidate import Candidate
from trncost.model.common import DomainModel, Money
from trncost.model.price import PriceSnapshot
from trncost.model.provenance import OfficialPrice, Provenance, UserAssumption
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
    assumption_sources: dict[str, Literal["shared", "candidate"]] = Field(
        default_factory=dict,
        description="in a comparison: where each stated assumption key came from",
    )


class InputRow(DomainModel):
    """One row of the input table: a value and where it comes from."""

    id: str
    label: str
    value: str | float | int | bool | None = Field(
        description="Decimal money is carried as a string; None when pending"
    )
    unit: str | None = None
    provenance: Provenance
    price_basis: PriceBasis | None = Field(
        default=None,
        description="a price row: official | saved_file | example | assumed; None: not a "
        "price, or PENDING",
    )


Cost = Literal["cloud", "labour"]


class LineItem(DomainModel):
    component: Component
    name: str
    quantity: float
    unit: str
    rate_usd: Money | None = Field(description="None while the price is PENDING")
    rate_unit: str | None = None
    amount_usd: Money | None = Field(description="None while the price is PENDING")
    price_key: str | None = None
    price_basis: PriceBasis | None = Field(
        default=None,
        description="the basis of its price: official | saved_file | example | assumed; None: "
        "PENDING, or not an AWS price (assumed labour)",
    )
    cost: Cost = Field(
        default="cloud",
        description="cloud: what AWS bills; labour: user-assumed engineering time",
    )
    inputs: list[str] = Field(default_factory=list, description="ids of the input rows used")
    provenance: Provenance

    @property
    def priced(self) -> bool:
        """A line with an AWS price key and an amount (what `price_basis` is taken over)."""
        return self.price_key is not None and self.amount_usd is not None


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


class AdmissionReason(DomainModel):
    """Why a trial was left out of an estimate's figures (or pooled by the request's flag)."""

    code: str = Field(
        description="other_dataset | other_code_version | other_timing_scope | "
        "unconvertible_unit | impossible_throughput | inconsistent_samples | no_work | "
        "not_completed | non_finite_loss | retracted"
    )
    message: str


class TrialAdmission(DomainModel):
    """One trial of the candidate's instance type and platform: pooled into the figures, or
    excluded with its reasons. An excluded trial still counts as cost (adaptation & reruns)."""

    trial_id: str
    phase: str
    status: str
    instance_count: int
    admission: Literal["pooled", "excluded"]
    reasons: list[AdmissionReason] = Field(
        default_factory=list,
        description="why it is excluded; for a pooled trial, the mismatches the request's "
        "pool_mismatched_trials flag let in",
    )


class TimeToTarget(DomainModel):
    setup_h: float = Field(
        default=0.0, description="per-run setup outside the training clock (wall.other_s)"
    )
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
    status: Literal["complete", "incomplete", "projected", "infeasible"] = Field(
        description="complete (every line priced) | incomplete (a price is PENDING: the total "
        "is its formula) | projected (no throughput trial of its own: projected from another "
        "chip's trials and published ratios, a planning figure, never a budget; priced or "
        "PENDING as `pending_terms` say) | infeasible (the plan cannot finish)"
    )
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
    components: dict[Component, Money | None] = Field(
        default_factory=dict,
        description="subtotal per component; null when one of its lines is PENDING (or the "
        "plan is infeasible): never a number for an unknown",
    )
    total_known_usd: Money | None = Field(
        default=Decimal(0),
        description="the priced lines' sum (the known part of an incomplete total); null when "
        "infeasible",
    )
    pending_terms: list[PendingTerm] = Field(default_factory=list)
    total_usd: Money | None = Field(
        default=None, description="cloud_usd + labour_usd; only when no price is pending"
    )
    cloud_usd: Money | None = Field(
        default=None,
        description="what AWS bills: instances, storage, transfer, logs, data preparation, "
        "trial compute; null while one of those lines is PENDING",
    )
    labour_usd: Money | None = Field(
        default=None, description="user-assumed engineering time (hours × hourly cost)"
    )
    price_basis: PriceBasis | None = Field(
        default=None,
        description="the weakest basis among the priced lines (official > saved_file > "
        "example > assumed); null when no line is priced",
    )
    total_formula: str
    cost_per_target_usd: Money | None = None
    cost_per_million_tokens_usd: Money | None = None
    warnings: list[EstimateWarning] = Field(default_factory=list)
    inputs: list[InputRow] = Field(default_factory=list)
    admission: list[TrialAdmission] = Field(
        default_factory=list,
        description="every trial of the candidate's instance type and platform: pooled or "
        "excluded, with the reasons",
    )

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def projected(self) -> bool:
        """Projected from another chip's trials (no throughput trial of its own)."""
        return self.status == "projected"

    @property
    def incomplete(self) -> bool:
        """A price is PENDING (incomplete, or projected with a PENDING term): the total is its
        formula, known part + Σ quantity × P."""
        return self.status == "incomplete" or (self.projected and bool(self.pending_terms))

    def known_by_component(self) -> dict[Component, Decimal]:
        """The priced lines' sum per component (the known part, PENDING lines left out)."""
        out = {k: Decimal(0) for k in Component}
        for line in self.line_items:
            if line.amount_usd is not None:
                out[line.component] += line.amount_usd
        return out

    def price_rows(self) -> list[InputRow]:
        """The input rows holding the prices the priced lines used."""
        used = {f"price:{li.price_key}" for li in self.line_items if li.priced}
        return [r for r in self.inputs if r.id in used]

    def weaker_prices(self) -> list[InputRow]:
        """The price rows used whose basis is not `official`, weakest first."""
        rows = [
            r
            for r in self.price_rows()
            if r.price_basis is not None and r.price_basis != PriceBasis.official
        ]
        return sorted(rows, key=lambda r: (r.price_basis.strength if r.price_basis else 0, r.id))

    def basis_notes(self) -> list[str]:
        """One line per price weaker than official, naming it (`assumed price: trn3.48xlarge
        (us-east-2) $45/h, your override`), weakest first. Of a basis with more than three
        such prices, the instance-hours are named one by one and the rest in one line."""
        return [text for _, text in self.basis_lines()]

    def basis_lines(self) -> list[tuple[PriceBasis, str]]:
        """`basis_notes`, each with the basis it is about."""
        rows = self.weaker_prices()
        lines: list[tuple[PriceBasis, str]] = []
        for basis in sorted({r.price_basis for r in rows if r.price_basis}, key=_strength):
            group = [r for r in rows if r.price_basis == basis]
            if len(group) <= 3:
                lines += [(basis, basis_note(r)) for r in group]
                continue
            hourly = [r for r in group if (r.unit or "").endswith("/Hrs")]
            rest = [r for r in group if r not in hourly]
            lines += [(basis, basis_note(r)) for r in hourly]
            if rest:
                items = ", ".join(_item(r) for r in rest)
                text = f"{basis.label}s: {len(rest)} more ({items}), {_whose(rest[0])}"
                lines.append((basis, text))
        return lines


_PER = {"Hrs": "h", "GB-Mo": "GB-month", "GB": "GB", "Metrics": "metric-month"}


def _strength(basis: PriceBasis) -> int:
    return basis.strength


def _item(row: InputRow) -> str:
    key = row.id.removeprefix("price:").split("/")
    item = key[2] if len(key) > 2 else row.id
    return f"{item} ({key[1]})" if len(key) > 2 else item


def basis_note(row: InputRow) -> str:
    """`<basis label>: <item> (<region>) <rate>, <whose>` for a price row."""
    unit = (row.unit or "").removeprefix("USD/")
    try:
        rate = f"${Decimal(str(row.value)).normalize():f}/{_PER.get(unit, unit)}"
    except ArithmeticError:
        rate = "tiered"
    basis = row.price_basis or PriceBasis.assumed
    return f"{basis.label}: {_item(row)} {rate}, {_whose(row)}"


def _whose(row: InputRow) -> str:
    basis = row.price_basis or PriceBasis.assumed
    p = row.provenance
    if basis == PriceBasis.assumed:
        whose = "your override" + (
            f" ({p.note})" if isinstance(p, UserAssumption) and p.note else ""
        )
    elif basis == PriceBasis.saved_file:
        origin = p.origin if isinstance(p, OfficialPrice) else None
        who = origin.supplied_by if isinstance(origin, SavedFileOrigin) else "someone"
        whose = f"a saved Price List file supplied by {who}, not fetched by trncost"
    else:
        whose = "the example file bundled with trncost, not a current AWS price"
    return whose
