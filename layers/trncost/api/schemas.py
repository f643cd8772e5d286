"""Request and response bodies of the HTTP API (the OpenAPI schema is generated from these).

Every schema builds its validator on first use (`defer_build`), not at import: importing the
API stays cheap on a cold start; a SnapStart snapshot builds them all ahead (app.warm_up)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Generic, TypeVar

from pydantic import ConfigDict, Field

from trncost.api.bodies import ErrorBody, Health, Schema
from trncost.model import (
    Assumptions,
    Candidate,
    Estimate,
    Phase,
    SnapshotDiff,
    TimingScope,
    TrialRun,
    TrialStatus,
    Workload,
)
from trncost.model.analysis import Analysis, Credits
from trncost.model.assumptions import PartialAssumptions
from trncost.model.basis import PriceBasis, PriceOrigin
from trncost.model.changes import FigureChange
from trncost.model.common import Identifier, InstanceType, PositiveFloat, Region
from trncost.model.price import PriceSnapshot, Rejection, Unmatched

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


class EstimateRequest(Schema):
    """What to estimate: a candidate, stated assumptions (user price overrides go in
    `assumptions.price_overrides`), and optionally a pinned price snapshot."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    candidate: Candidate
    assumptions: Assumptions = Field(default_factory=Assumptions)
    snapshot_id: str | None = Field(
        default=None, description="pin a price snapshot; omitted: follow the latest"
    )


class CandidatePlan(Schema):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    candidate: Candidate
    assumptions: PartialAssumptions | None = Field(
        default=None,
        description="this candidate's own assumptions: each key it names replaces the shared "
        "one, the others stay shared (pair checks see the merged set); omitted: the shared ones",
    )
    limited_features: list[str] = Field(
        default_factory=list, description="key features the team found limited on it"
    )


class ComparisonRequest(Schema):
    """Several candidates on the same workload: ranked, ranged, explained and decided."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    candidates: list[CandidatePlan] = Field(min_length=1, max_length=12)
    assumptions: PartialAssumptions = Field(
        default_factory=PartialAssumptions,
        description="shared by every candidate; a candidate's own keys replace them one by one",
    )
    snapshot_id: str | None = Field(default=None, description="omitted: the latest snapshot")
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    samples: int = Field(default=20_000, ge=1_000, le=100_000)
    credits: Credits | None = None


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


class LogFile(Schema):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(default="log", min_length=1, max_length=256, description="file name")
    text: str = Field(description="the log's text (training stdout, trainer_state.json, ...)")


class TrialLogImport(Schema):
    """A trial's own training logs, and what they cannot say about it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    files: list[LogFile] = Field(min_length=1, max_length=10)
    phase: Phase
    instance_type: InstanceType
    instance_count: int = Field(ge=1, le=100_000)
    region: Region = Field(default="us-east-1", description="where the trial ran")
    format: str = Field(default="auto", description="auto, or one log format's name")
    trial_id: Identifier | None = Field(
        default=None, description="omitted: derived from the logs (the same logs, the same id)"
    )
    status: TrialStatus | None = Field(
        default=None, description="omitted: completed if the log shows training end, ..."
    )
    global_batch_size: PositiveFloat | None = Field(
        default=None, description="samples per optimizer step, when the log does not say"
    )
    seq_length: PositiveFloat | None = Field(
        default=None, description="tokens per sample, when the log does not say"
    )
    code_version: str | None = Field(default=None, max_length=256)
    dataset_id: str | None = Field(default=None, max_length=256)
    timing_scope: TimingScope | None = None
    dry_run: bool = Field(default=False, description="build the record, do not write it")


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


class WorkloadView(Schema):
    workload: Workload
    created_by: str | None = Field(
        default=None, description=f"who created it: {CALLER}; answered on the create"
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


class SnapshotRequest(Schema):
    """Take a snapshot now: from an uploaded saved Price List file (basis saved_file, who
    supplied it is the caller), or live (basis official; needs AWS credentials with
    pricing:GetProducts)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    saved_price_list: Any | None = Field(
        default=None,
        description="a GetProducts response, a list of items or a bulk offer file; "
        "omitted: query the Price List API live",
    )
    note: str | None = Field(default=None, max_length=500)
    publish: bool = Field(
        default=False,
        description="make the uploaded file the latest prices (estimates that follow latest "
        "are recomputed with it). Only where the stage allows it (prices.accept_uploads); "
        "otherwise 409 publish_refused and nothing is stored. Without it, the upload is stored "
        "and used only by estimates that name its snapshot_id",
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
    "ComparisonRequest",
    "ComparisonView",
    "EstimateSummary",
    "ErrorBody",
    "EstimateRequest",
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
    "SnapshotRequest",
    "SnapshotSummaryView",
    "SnapshotTaken",
    "LogFile",
    "LogFileView",
    "TrialLogImport",
    "TrialLogImportView",
    "TrialView",
    "Versions",
    "WorkloadView",
]
