"""Billed actuals, and how an estimate scored against them (DESIGN.md principle 12).

What AWS billed comes in three ways — a FOCUS 1.2 or CUR 2.0 export (`POST /actuals`, the
CLI's `trncost actuals import`), Cost Explorer grouped by the `trncost:estimate-id` tag (the
daily actuals Lambda) and SageMaker's billable time at job end — and always in one shape: a
`ParsedBill` whose `BillGroup`s hold one estimate's `BilledLine`s of one billing period from
one source. A source replaces its own billing period whole on every delivery (no line id is
stable across AWS's deliveries), so a repeated file changes nothing.

The comparison of an estimate with its actuals (`ActualsComparison`) splits the gap into
instance-hours (more or fewer billed units than estimated, at the estimate's rate), rate (a
billed rate other than the snapshot's) and items the estimate never had; the `Scorecard` says
how often actuals fell inside P10–P90 across a workload or the stage.
"""

from __future__ import annotations

import hashlib
from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from trncost.model.common import DomainModel, Identifier, Money

BillFormat = Literal["focus_1_2", "cur_2_0", "cost_explorer", "sagemaker"]
# The kind of a source, strongest first: per billing period an estimate's actual comes from
# the strongest kind that has one (an export, then Cost Explorer, then SageMaker's same-day
# figure); the others are kept and shown as superseded, never added on top.
SOURCE_RANK: dict[str, int] = {"focus_1_2": 4, "cur_2_0": 3, "cost_explorer": 2, "sagemaker": 1}
ChargeCategory = Literal["Usage", "Purchase", "Tax", "Credit", "Adjustment"]
# What an estimate is compared with: usage and purchases (a Capacity Block's fee). Tax,
# credits, adjustments and corrections of earlier periods are kept apart (`excluded_usd`).
COUNTED_CATEGORIES = frozenset({"Usage", "Purchase"})

Period = Annotated[str, StringConstraints(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")]
SourceKey = Annotated[
    str,
    StringConstraints(
        min_length=1, max_length=200, pattern=r"^(focus_1_2|cur_2_0|cost_explorer|sagemaker)(:.*)?$"
    ),
]
Text = Annotated[str, StringConstraints(max_length=512)]
LineAmount = Annotated[Decimal, Field(allow_inf_nan=False, ge=-(10**15), le=10**15)]
MAX_LINES = 5000  # per group: an estimate's distinct charges in one billing period


def source_kind(source: str) -> str:
    """`focus_1_2:111122223333` → `focus_1_2`."""
    return source.split(":", 1)[0]


class BilledLine(DomainModel):
    """The billed rows of one estimate in one billing period that share a charge (service,
    SKU, usage type, region, category, unit), summed. Its `key` is the natural key a new
    delivery is diffed by."""

    service_name: Text | None = Field(description="FOCUS ServiceName (CUR: product_name)")
    service_code: Text | None = Field(
        default=None, description="x_ServiceCode (CUR: line_item_product_code)"
    )
    sku_id: Text | None = Field(default=None, description="SkuId (CUR: product_sku)")
    usage_type: Text | None = Field(
        default=None, description="SkuMeter (CUR: line_item_usage_type; Cost Explorer USAGE_TYPE)"
    )
    region: Text | None = Field(default=None, description="RegionId (CUR: product_region_code)")
    charge_category: ChargeCategory = "Usage"
    charge_class: Text | None = Field(default=None, description="Correction, or none")
    unit: Text | None = Field(default=None, description="PricingUnit (CUR: pricing_unit)")
    quantity: LineAmount = Field(description="Σ PricingQuantity [unit]")
    billed_usd: LineAmount = Field(description="Σ BilledCost (CUR: unblended cost) [USD]")
    list_usd: LineAmount | None = Field(
        default=None, description="Σ ListCost (CUR: public on-demand cost) [USD]"
    )
    rows: int = Field(ge=0, description="billed rows summed into this line")
    first_charge: Text | None = Field(default=None, description="earliest ChargePeriodStart")
    last_charge: Text | None = Field(default=None, description="latest ChargePeriodEnd")

    @property
    def key(self) -> str:
        """The natural key of the charge (not of a row: AWS gives none that lasts)."""
        parts = (
            self.service_name,
            self.service_code,
            self.sku_id,
            self.usage_type,
            self.region,
            self.charge_category,
            self.charge_class,
            self.unit,
        )
        text = "\x1f".join("" if p is None else p for p in parts)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def counted(self) -> bool:
        """Usage or a purchase of this period (not tax, a credit or a correction)."""
        return self.charge_category in COUNTED_CATEGORIES and self.charge_class != "Correction"


class BillGroup(DomainModel):
    """One estimate's billed lines of one billing period from one source."""

    source: SourceKey = Field(description="e.g. focus_1_2:<billing account>, cost_explorer")
    period: Period = Field(description="the billing period, YYYY-MM")
    estimate_id: Identifier
    workload_id: Identifier | None = Field(default=None, description="as the rows' tags say")
    rows: int = Field(ge=0)
    lines: list[BilledLine] = Field(max_length=MAX_LINES)
    estimated: bool = Field(
        default=False, description="not final yet (Cost Explorer's Estimated, SageMaker's)"
    )
    note: Text | None = None


class Delivery(DomainModel):
    """A (source, billing period) a file holds: the file replaces what that source said of it."""

    source: SourceKey
    period: Period


class ParsedBill(DomainModel):
    """What a billing file (or several parts of one delivery) holds for trncost: its rows
    counted, and the rows tagged with an estimate, grouped. Also the body `trncost actuals
    import` sends (application/json), having read the files itself."""

    format: BillFormat
    files: list[Text] = Field(default_factory=list, max_length=1000)
    rows_read: int = Field(ge=0)
    untagged_rows: int = Field(default=0, ge=0, description="rows with no trncost tag")
    without_estimate_rows: int = Field(
        default=0, ge=0, description="rows tagged with a workload or trial, no estimate"
    )
    other_currency_rows: int = Field(
        default=0, ge=0, description="tagged rows billed in a currency other than USD"
    )
    deliveries: list[Delivery] = Field(default_factory=list, max_length=10_000)
    groups: list[BillGroup] = Field(default_factory=list, max_length=100_000)
    tag_keys_seen: dict[str, int] = Field(
        default_factory=dict,
        description="how many rows named their estimate under each spelling of the key",
    )

    @model_validator(mode="after")
    def _deliveries_cover_groups(self) -> ParsedBill:
        covered = {(d.source, d.period) for d in self.deliveries}
        for i, g in enumerate(self.groups):
            if (g.source, g.period) not in covered:
                raise ValueError(
                    f"groups.{i}: ({g.source}, {g.period}) is not one of the deliveries"
                )
        return self

    @property
    def matched_rows(self) -> int:
        return sum(g.rows for g in self.groups)


class LineChanges(DomainModel):
    """How a new delivery differs from the one it replaces, line by line (by natural key)."""

    added: int = 0
    removed: int = 0
    changed: int = 0


class PeriodImport(DomainModel):
    source: str
    period: str
    outcome: Literal["created", "replaced", "unchanged"]
    estimate_ids: list[str]
    lines: int
    billed_usd: Money
    changes: LineChanges


class ActualsImport(DomainModel):
    """The answer to an import: rows read, matched to an estimate and not, and per billing
    period whether it was created, replaced or unchanged."""

    format: BillFormat
    files: list[str] = Field(default_factory=list)
    rows_read: int
    matched: int = Field(description="rows tagged with an estimate this stage has")
    unmatched: int = Field(description="rows_read − matched")
    unmatched_reasons: dict[str, int] = Field(
        default_factory=dict,
        description="no_trncost_tag, no_estimate_tag, unknown_estimate, not_usd",
    )
    unknown_estimate_ids: list[str] = Field(
        default_factory=list, description="estimate ids the rows name that this stage has not"
    )
    tag_keys_seen: dict[str, int] = Field(default_factory=dict)
    periods: list[PeriodImport] = Field(default_factory=list)
    estimate_ids: list[str] = Field(default_factory=list)
    changed: bool = Field(description="false: the same delivery again, nothing written")


# -- an estimate against its actuals --------------------------------------------------------------
class Gap(DomainModel):
    """actual − estimate, split in three parts that sum to it exactly [USD]."""

    hours: Money = Field(
        description="more (or fewer) billed units than estimated — instance-hours, GB-months, "
        "GB — at the estimate's rate"
    )
    rate: Money = Field(description="the billed quantity at a rate other than the estimate's")
    not_estimated: Money = Field(
        description="billed items the estimate never had (by ServiceName / SkuId / usage type)"
    )


class GapLine(DomainModel):
    """One estimate line or billed item, and its part of the gap."""

    kind: Literal["matched", "not_estimated", "not_billed"]
    name: str
    component: str | None = None
    service_name: str | None = None
    sku_id: str | None = None
    usage_type: str | None = None
    unit: str | None = None
    estimate_quantity: float | None = None
    actual_quantity: Decimal | None = None
    estimate_usd: Money | None = None
    actual_usd: Money = Decimal(0)
    hours_usd: Money = Decimal(0)
    rate_usd: Money = Decimal(0)
    not_estimated_usd: Money = Decimal(0)
    matched_by: Literal["sku", "usage_type"] | None = None


class PeriodActual(DomainModel):
    period: str
    source: str = Field(description="the kind the period's actual comes from")
    actual_usd: Money
    excluded_usd: Money = Field(description="tax, credits, adjustments, corrections")
    rows: int
    estimated: bool
    superseded: list[str] = Field(
        default_factory=list, description="weaker sources of the same period, not added"
    )


class SourceActual(DomainModel):
    source: str
    kind: str
    periods: list[str]
    imported_at: str
    billed_usd: Money
    used: bool = Field(description="false: superseded in all its periods by a stronger kind")


class ComponentActual(DomainModel):
    estimate_usd: Money | None
    actual_usd: Money


class ActualsComparison(DomainModel):
    """An estimate against what AWS billed the runs tagged with it."""

    estimate_id: str
    workload_id: str
    estimate_version: int = Field(
        description="the version compared: the latest made before the billed usage began"
    )
    forecast_before_spend: bool = Field(
        description="false: every version was made after the usage began (not a forecast)"
    )
    actual_usd: Money
    estimate_usd: Money | None = Field(
        description="the run's forecast: cloud lines, less the trials already run and billed "
        "under their own tags; null while a price is PENDING"
    )
    p10_usd: Money | None
    p50_usd: Money | None
    p90_usd: Money | None
    inside_range: bool | None = Field(description="P10 ≤ actual ≤ P90; null without a range")
    relative_error: float | None = Field(description="(actual − estimate) / estimate")
    gap: Gap | None
    periods: list[PeriodActual]
    sources: list[SourceActual]
    by_component: dict[str, ComponentActual] = Field(default_factory=dict)
    lines: list[GapLine] = Field(default_factory=list)
    excluded_usd: Money = Decimal(0)
    notes: list[str] = Field(default_factory=list)


class ComponentScore(DomainModel):
    estimates: int
    estimate_usd: Money
    actual_usd: Money
    median_abs_relative_error: float | None


class ScoredEstimate(DomainModel):
    estimate_id: str
    workload_id: str
    estimate_version: int
    actual_usd: Money
    estimate_usd: Money | None
    p10_usd: Money | None
    p90_usd: Money | None
    inside_range: bool | None
    relative_error: float | None
    periods: list[str]


class Scorecard(DomainModel):
    """How often the actuals fell inside their estimate's P10–P90, across a workload or the
    stage (estimates with a priced forecast and a range: the others are listed, not scored)."""

    scope: Literal["stage", "workload"]
    workload_id: str | None = None
    estimates_with_actuals: int
    inside_p10_p90: int
    inside_share: float | None = Field(description="inside_p10_p90 / estimates scored")
    median_abs_relative_error: float | None
    by_component: dict[str, ComponentScore] = Field(default_factory=dict)
    estimates: list[ScoredEstimate] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


# -- a budget from an estimate ------------------------------------------------------------------
EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
SNS_ARN = r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$"


class BudgetSubscriber(DomainModel):
    type: Literal["EMAIL", "SNS"]
    address: Annotated[str, StringConstraints(min_length=3, max_length=2000)]

    @model_validator(mode="after")
    def _address(self) -> BudgetSubscriber:
        import re

        pattern = EMAIL if self.type == "EMAIL" else SNS_ARN
        if not re.match(pattern, self.address):
            what = "an e-mail address" if self.type == "EMAIL" else "an SNS topic ARN"
            raise ValueError(f"address: not {what}")
        return self


class BudgetRequest(DomainModel):
    """Who the budget's alerts go to (AWS Budgets needs at least one subscriber), and its
    period (default: the first of this month, for a year)."""

    subscribers: list[BudgetSubscriber] = Field(min_length=1, max_length=11)
    start: date | None = Field(default=None, description="default: the first of this month")
    end: date | None = Field(default=None, description="default: a year after start")

    @model_validator(mode="after")
    def _checks(self) -> BudgetRequest:
        if sum(1 for s in self.subscribers if s.type == "SNS") > 1:
            raise ValueError("subscribers: at most one SNS topic (AWS Budgets' limit)")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("end: must be after start")
        return self


class BudgetAlert(DomainModel):
    percentile: Literal["P50", "P90"]
    threshold_usd: Money
    notification: Literal["ACTUAL"] = "ACTUAL"


class BudgetView(DomainModel):
    budget_name: str
    account_id: str
    estimate_id: str
    estimate_version: int
    limit_usd: Money = Field(description="the run's P90")
    alerts: list[BudgetAlert]
    start: str
    end: str
    tag_key: str
    metric: str
    outcome: Literal["created", "replaced", "unchanged"]


class StoredGroup(DomainModel):
    """A BillGroup as stored: the delivery that brought it and when."""

    group: BillGroup
    delivery_id: str
    imported_at: str
    workload_id: str = Field(default="", description="the estimate's workload, as stored")
