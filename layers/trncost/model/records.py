"""What trncost keeps: the records its stores write and read back, as domain types (the stores
in trncost.store only map them to and from DynamoDB items).

    EstimateDefinition    what to estimate again whenever its evidence or prices change
    EstimateVersion       one computed version of an estimate, with what moved since the last
    VersionSummary        the latest version's headline, kept beside the definition (lists)
    Standing              where an estimate stands among its workload's: rank, break-even
    EstimateListing       one estimate of a workload's list, with its latest version
    UnreadableDefinition  a stored definition that no longer validates, and why
    RefreshFailure        why an estimate could not be recomputed on a refresh
    StoredComparison      one analysis of several candidates, immutable, read by its id
    Page                  one page of a listing, and the cursor to the next
    SnapshotSummary       a price snapshot's headline counts; Publication: did it become latest
    RejectedIngest        an ingest event that could not become a trial record, and why
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from trncost.model.analysis import (
    Action,
    Analysis,
    BreakEven,
    CheckpointAdvice,
    Decision,
    MoneyPercentiles,
    Range,
)
from trncost.model.assumptions import Assumptions
from trncost.model.basis import PriceBasis
from trncost.model.candidate import Candidate
from trncost.model.changes import FigureChange
from trncost.model.common import DomainModel, Identifier, Money
from trncost.model.estimate import Estimate, PendingTerm
from trncost.model.requests import ComparisonRequest


class EstimateDefinition(DomainModel):
    """What to estimate again whenever its evidence or prices change."""

    estimate_id: Identifier
    workload_id: Identifier
    candidate: Candidate
    assumptions: Assumptions = Field(default_factory=Assumptions)
    snapshot_id: str | None = Field(
        default=None, description="a pinned price snapshot; None follows the latest"
    )
    created_at: str
    created_by: str | None = Field(default=None, description="who asked for it (IAM ARN)")


@dataclass(frozen=True)
class UnreadableDefinition:
    """A stored estimate definition that no longer validates (written before a bound existed):
    refreshed as a failure of its own, never a failure of its workload's other estimates."""

    estimate_id: str
    reason: str


@dataclass(frozen=True)
class RefreshFailure:
    estimate_id: str
    at: str
    trigger: str  # what asked for the refresh: "price snapshot <id>", "trial <id> recorded"
    reason: str


class EstimateVersion(DomainModel):
    estimate_id: str
    version: int
    created_at: str
    reason: str
    fingerprint: str = Field(description="hash of the inputs this version was computed from")
    estimate: Estimate
    created_by: str | None = Field(
        default=None, description="who asked for the estimate (IAM ARN); refreshes keep it"
    )
    changes: list[FigureChange] = Field(
        default_factory=list, description="the figures that moved since the version before"
    )
    range: Range | None = Field(
        default=None,
        description="its Monte Carlo range (P10/P50/P90 of the same model: the point is the "
        "figure at the posterior mean of every drawn input); None: stored before ranges were "
        "kept, or the range could not be drawn",
    )
    checkpoint: CheckpointAdvice | None = Field(
        default=None,
        description="the checkpoint interval that minimises its expected cost per target under "
        "the failure posterior (a what-if); None: stored before, or none can be advised",
    )
    decision: Decision | None = Field(
        default=None,
        description="the candidate's decision on its own evidence (the engine's decide with no "
        "alternative: a comparison weighs candidates against each other), what 'Estimate "
        "Decision Changed' compares; None: stored before decisions were kept",
    )


class VersionSummary(DomainModel):
    """The latest version's headline figures, kept on the estimate's definition item whenever a
    version is stored: a list page and the workload's standings read these, never the versions
    themselves, so neither grows with the size of an estimate or of its workload."""

    version: int
    created_at: str
    reason: str
    label: str
    status: str
    snapshot_id: str
    total_usd: Money | None = None
    total_known_usd: Money | None = None
    cloud_usd: Money | None = None
    labour_usd: Money | None = None
    price_basis: PriceBasis | None = None
    cost_per_target_usd: Money | None = None
    cost_per_million_tokens_usd: Money | None = None
    time_to_target_h: float | None = None
    pending_terms: list[PendingTerm] = Field(default_factory=list)
    warnings: int = 0
    scope: str | None = Field(
        default=None,
        description="the clock its pooled throughput trials share (comparable estimates share "
        "it); None: none usable, or mixed clocks (comparable with no other)",
    )
    decision: Action | None = None
    range_usd: MoneyPercentiles | None = Field(
        default=None, description="P10/P50/P90 of the total (of the known part while PENDING)"
    )


class Standing(DomainModel):
    """Where an estimate stands among its workload's latest versions, stored when any of them
    changes (never computed on a read): its rank by cost per target among the fully priced
    estimates on the same work and clock, and for a PENDING one its break-even price against
    the cheapest of them of another candidate."""

    estimate_id: str
    computed_at: str
    considered: int = Field(description="the other estimates of the workload looked at")
    cost_rank: int | None = Field(
        default=None, description="1 = cheapest among the comparable fully priced estimates"
    )
    ranked: int = Field(default=0, description="how many comparable fully priced estimates")
    break_even: BreakEven | None = None
    against_estimate_id: str | None = None
    against_total_usd: Money | None = None


@dataclass(frozen=True)
class EstimateListing:
    """One estimate of a workload's list: what it estimates and its latest version (None, with
    the `problem`, when its stored definition or latest version no longer validates)."""

    estimate_id: str
    candidate: Candidate | None
    pinned_snapshot_id: str | None
    latest: EstimateVersion | None
    problem: str | None = None
    summary: VersionSummary | None = None  # the latest version's headline (lists read this)
    standing: Standing | None = None


@dataclass(frozen=True)
class EstimatePage:
    items: list[EstimateListing]
    cursor: str | None


class StoredComparison(DomainModel):
    comparison_id: str
    workload_id: str
    created_at: str
    created_by: str | None = Field(default=None, description="who asked for it (IAM ARN)")
    snapshot_id: str = Field(description="the price snapshot the analysis used")
    request: ComparisonRequest = Field(
        description="the comparison request as it was sent, with snapshot_id resolved"
    )
    analysis: Analysis


@dataclass(frozen=True)
class Page:
    items: list[Any]
    cursor: str | None


@dataclass(frozen=True)
class RejectedIngest:
    at: str
    event_id: str
    reason: str
    source: str | None
    detail_type: str | None


@dataclass(frozen=True)
class SnapshotSummary:
    snapshot_id: str
    taken_at: str
    source: str
    quotes: int
    pending: int
    rejected: int
    taken_by: str | None = None  # who asked for it over the API (IAM ARN); None: the schedule
    basis: str = "official"
    unmatched: int = 0


@dataclass(frozen=True)
class Publication:
    published: bool
    previous_id: str | None
    latest_id: str
