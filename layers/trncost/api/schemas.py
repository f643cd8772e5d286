"""Response bodies of the HTTP API (the OpenAPI schema is generated from these and from the
requests, which are the domain's: trncost.model.requests).

Every schema builds its validator on first use (`defer_build`), not at import: importing the
API stays cheap on a cold start; a SnapStart snapshot builds them all ahead (app.warm_up)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Generic, TypeVar

from pydantic import Field

from trncost.api.bodies import ErrorBody, Health, Schema
from trncost.model import (
    Candidate,
    Estimate,
    Retraction,
    SnapshotDiff,
    TrialRun,
    Workload,
)
from trncost.model.analysis import (
    Action,
    Analysis,
    CheckpointAdvice,
    Decision,
    MoneyPercentiles,
    Range,
)
from trncost.model.basis import PriceBasis, PriceOrigin
from trncost.model.changes import FigureChange
from trncost.model.price import PriceSnapshot, Rejection, Unmatched
from trncost.model.requests import ComparisonRequest

T = TypeVar("T")


class Page(Schema, Generic[T]):
    items: list[T]
    next_cursor: str | None = Field(
        default=None, description="pass as ?cursor= to read the next page; null on the last"
    )

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        """`Page[Workload]` is named WorkloadPage in the OpenAPI document."""
        return "".join(getattr(p, "__name__", str(p)) for p in params) + "Page"


CALLER = "the IAM ARN the request was signed by (`local` in the local runtime)"


class EstimateSummary(Schema):
    """One estimate of a workload: what it estimates, its latest version and headline figures."""

    estimate_id: str
    candidate: Candidate | None = Field(description="null: its stored definition is unreadable")
    pinned_snapshot_id: str | None = Field(
        default=None, description="the price snapshot it is pinned to; null: follows the latest"
    )
    version: int | None = Field(description="the latest version")
    updated_at: str | None = Field(description="when the latest version was made")
    reason: str | None = Field(description="what made the latest version")
    status: str = Field(
        description="complete | incomplete (a price is PENDING) | infeasible | unreadable (see "
        "problem)"
    )
    snapshot_id: str | None = Field(description="the price snapshot the latest version used")
    total_usd: Decimal | None = Field(description="null while a price is PENDING")
    total_known_usd: Decimal | None = Field(description="the part of the total that is priced")
    cloud_usd: Decimal | None = Field(description="what AWS bills; null while a line is PENDING")
    labour_usd: Decimal | None = Field(description="user-assumed engineering time")
    price_basis: PriceBasis | None = Field(description="the weakest basis of its priced lines")
    cost_per_target_usd: Decimal | None
    cost_per_million_tokens_usd: Decimal | None
    time_to_target_h: float | None = Field(description="expected time to target, failures in")
    pending_prices: list[str] = Field(description="price keys that are PENDING")
    warnings: int = Field(description="how many warnings the latest version carries")
    range_usd: MoneyPercentiles | None = Field(
        default=None,
        description="P10/P50/P90 of the total per target (of the known part while a price is "
        "PENDING) over the latest version's Monte Carlo",
    )
    decision: Action | None = Field(
        default=None, description="the candidate's decision on its own evidence"
    )
    cost_rank: int | None = Field(
        default=None,
        description="1 = the cheapest of the workload's comparable fully priced estimates",
    )
    ranked: int | None = Field(default=None, description="how many cost_rank is out of")
    report_url: str
    problem: str | None = Field(default=None, description="why it cannot be shown, if so")


class ComparisonView(Schema):
    """A stored comparison: immutable, read and shared by its id."""

    comparison_id: str = Field(
        description="a hash of what it was computed from: the same request on the same "
        "evidence is the same comparison"
    )
    workload_id: str
    created_at: str
    created_by: str | None = Field(default=None, description=f"who asked for it: {CALLER}")
    snapshot_id: str = Field(description="the price snapshot the analysis used")
    url: str = Field(description="where to read it again (GET)")
    report_url: str = Field(description="its HTML report, to send to a budget owner")
    request: ComparisonRequest = Field(description="the request, with snapshot_id resolved")
    analysis: Analysis


class EstimateView(Schema):
    estimate_id: str
    version: int
    created_at: str
    reason: str
    changes: list[FigureChange] = Field(
        default_factory=list, description="the figures that moved since the version before"
    )
    report_url: str
    created_by: str | None = Field(default=None, description=f"who asked for it: {CALLER}")
    estimate: Estimate
    range: Range | None = Field(
        default=None,
        description="the Monte Carlo range of the same model (P10/P50/P90 beside the point, "
        "which is the figure at the posterior mean of every drawn input); null for versions "
        "stored before ranges were kept",
    )
    checkpoint: CheckpointAdvice | None = Field(
        default=None,
        description="the checkpoint interval that minimises the expected cost per target under "
        "the failure posterior, a what-if with its saving against the interval used",
    )
    decision: Decision | None = Field(
        default=None,
        description="the candidate's decision on its own evidence (continue_trials, "
        "compare_alternatives, pause_migration or ready_to_budget, with every reason); a "
        "comparison weighs candidates against each other; null for versions stored before "
        "decisions were kept",
    )


class VersionInfo(Schema):
    version: int
    created_at: str
    reason: str = Field(description="what made it: created, trial <id> recorded, price snapshot …")
    changes: list[FigureChange] = Field(
        default_factory=list,
        description="the figures that moved since the version before, from what to what "
        "(a version is added only when one does)",
    )


class RefreshFailureView(Schema):
    at: str
    trigger: str = Field(description='what asked for the refresh, e.g. "price snapshot <id>"')
    reason: str = Field(description="why this estimate could not be recomputed")


class Versions(Schema):
    estimate_id: str
    versions: list[VersionInfo]
    refresh_failures: list[RefreshFailureView] = Field(
        default_factory=list,
        description="refreshes that could not recompute this estimate, newest first (each "
        "estimate refreshes on its own: the others went on)",
    )


class TrialView(Schema):
    trial: TrialRun
    recorded_by: str | None = Field(
        default=None, description=f"who imported it: {CALLER}; answered on the import"
    )


class LogFileView(Schema):
    file: str
    format: str | None = Field(description="the training format detected (null: none)")
    confidence: float
    lines: int
    matched_lines: int
    companions: dict[str, int] = Field(description="companion formats read beside it → lines")
    other_format_lines: dict[str, int] = Field(
        description="lines of other formats in the file: counted, not read"
    )


class TrialLogImportView(Schema):
    trial: TrialRun
    recorded: bool = Field(description="false: a dry run, or these logs were already recorded")
    files: list[LogFileView]
    measured: list[str] = Field(description="figures the logs measured (see trial.provenance)")
    not_measured: list[str]
    excluded: list[str] = Field(description="why the trial cannot count (impossible numbers)")
    explain: dict[str, Any] | None = Field(
        default=None,
        description="with `explain`: `figures` (as the log states them) and `record` (the "
        "record's), each with its file, lines and rule; `skipped` lines with the reason",
    )


class WorkloadView(Schema):
    workload: Workload
    created_by: str | None = Field(
        default=None, description=f"who created it: {CALLER}; answered on the create"
    )
    retracted: Retraction | None = Field(
        default=None,
        description="set once the workload is retracted: who, when, why (it then takes no "
        "new trial or estimate)",
    )


class SnapshotSummaryView(Schema):
    snapshot_id: str
    taken_at: str
    source: str
    basis: PriceBasis
    quotes: int
    pending: int
    rejected: int
    unmatched: int
    taken_by: str | None = Field(
        default=None, description=f"who asked for it: {CALLER}; null: the daily schedule"
    )


class SnapshotTaken(Schema):
    snapshot_id: str
    taken_at: str
    source: str
    basis: PriceBasis = Field(description="official (live) | saved_file (an upload)")
    origin: PriceOrigin | None = Field(
        default=None, description="the live request, or the file's sha256, supplier and note"
    )
    quotes: int
    pending: int
    rejected: int
    unmatched: int
    published_as_latest: bool
    previous_snapshot_id: str | None
    changed_keys: list[str]
    taken_by: str | None = Field(description=f"who asked for it: {CALLER}")


class RejectedIngestView(Schema):
    at: str
    event_id: str
    reason: str
    source: str | None
    detail_type: str | None


__all__ = [
    "ComparisonView",
    "EstimateSummary",
    "ErrorBody",
    "EstimateView",
    "RefreshFailureView",
    "Health",
    "Page",
    "PriceSnapshot",
    "Rejection",
    "RejectedIngestView",
    "Schema",
    "Unmatched",
    "SnapshotDiff",
    "SnapshotSummaryView",
    "SnapshotTaken",
    "LogFileView",
    "TrialLogImportView",
    "TrialView",
    "Versions",
    "WorkloadView",
]
