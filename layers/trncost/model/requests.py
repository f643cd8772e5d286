"""What a caller asks for, in the domain's words: one vocabulary for every driver (the HTTP API,
the CLI's request files, the local runtime). The API validates its bodies against these, and
the CLI loads a request file into `RequestFile` and hands its parts to the same services.

    EstimateRequest     one candidate, its assumptions, optionally a pinned price snapshot
    CandidatePlan       one candidate of a comparison (or a request file), with its own
                        assumptions (merged key by key over the shared ones) and the key
                        features the team found limited on it
    ComparisonRequest   several candidates on one workload: ranked, ranged, decided
    RequestFile         a request file: the workload, its trials, a price snapshot, shared
                        assumptions and the candidates, all in one (docs/request-files.md)
    LogFile, TrialLogImport   a trial's own training logs, and what they cannot say
    SnapshotRequest     take a price snapshot now: live, or from an uploaded saved file
    RetractRequest      retract a trial or a workload: why (and what replaces a workload)

Every request builds its validator on first use (`defer_build`), so importing this module on a
cold start is cheap.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trncost.model.analysis import Credits
from trncost.model.assumptions import Assumptions, PartialAssumptions
from trncost.model.candidate import Candidate, Parallelism, Precision
from trncost.model.common import (
    MAX_TEXT_ITEMS,
    Identifier,
    InstanceType,
    Label,
    Name,
    Note,
    PositiveFloat,
    Region,
)
from trncost.model.price import PriceSnapshot
from trncost.model.trial import Phase, TimingScope, TrialRun, TrialStatus
from trncost.model.workload import Workload

MAX_COMPARISON_CANDIDATES = 12


class Request(BaseModel):
    """The base of every request: unknown fields refused, the validator built on first use."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class EstimateRequest(Request):
    """What to estimate: a candidate, stated assumptions (user price overrides go in
    `assumptions.price_overrides`), and optionally a pinned price snapshot."""

    candidate: Candidate
    assumptions: Assumptions = Field(default_factory=Assumptions)
    snapshot_id: Identifier | None = Field(
        default=None, description="pin a price snapshot; omitted: follow the latest"
    )


class CandidatePlan(Request):
    candidate: Candidate
    assumptions: PartialAssumptions | None = Field(
        default=None,
        description="this candidate's own assumptions: each key it names replaces the shared "
        "one, the others stay shared (pair checks see the merged set); omitted: the shared ones",
    )
    limited_features: list[Label] = Field(
        default_factory=list,
        max_length=MAX_TEXT_ITEMS,
        description="key features the team found limited on it",
    )


class ComparisonRequest(Request):
    """Several candidates on the same workload: ranked, ranged, explained and decided."""

    candidates: list[CandidatePlan] = Field(min_length=1, max_length=MAX_COMPARISON_CANDIDATES)
    assumptions: PartialAssumptions = Field(
        default_factory=PartialAssumptions,
        description="shared by every candidate; a candidate's own keys replace them one by one",
    )
    snapshot_id: Identifier | None = Field(default=None, description="omitted: the latest snapshot")
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    samples: int = Field(default=20_000, ge=1_000, le=100_000)
    credits: Credits | None = None


class RequestFile(Request):
    """A request file (docs/request-files.md): the evidence and the prices a server would hold,
    with the candidates to estimate or compare. The CLI loads it into an in-memory repository
    and runs the same services as the API on it."""

    workload: Workload
    trials: list[TrialRun]
    prices: PriceSnapshot
    assumptions: PartialAssumptions = Field(
        default_factory=PartialAssumptions,
        description="shared by every candidate; a candidate's own keys replace them one by one",
    )
    candidates: list[CandidatePlan] = Field(min_length=1)


class LogFile(Request):
    name: Label = Field(default="log", description="file name")
    text: str = Field(description="the log's text (training stdout, trainer_state.json, ...)")


class QualityMetricMapping(Request):
    """The log's evaluation name read as the quality gate's metric (stated, never guessed)."""

    log_metric: Name = Field(description="the name the log prints, e.g. val_loss")
    gate_metric: Name = Field(description="the workload's quality gate metric, e.g. eval_loss")


class TrialLogImport(Request):
    """A trial's own training logs, and what they cannot say about it."""

    files: list[LogFile] = Field(min_length=1, max_length=10)
    phase: Phase
    instance_type: InstanceType
    instance_count: int = Field(ge=1, le=100_000)
    region: Region = Field(default="us-east-1", description="where the trial ran")
    format: Label = Field(default="auto", description="auto, or one log format's name")
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
    code_version: Name | None = None
    dataset_id: Name | None = None
    timing_scope: TimingScope | None = None
    precision: Precision | None = Field(
        default=None, description="the matrix-math precision the trial ran at (the MFU check's)"
    )
    parallelism: Parallelism | None = Field(
        default=None, description="tensor, pipeline, data (and expert) parallel degrees"
    )
    neuron_sdk_version: Name | None = Field(default=None, description="e.g. 2.20.0")
    quality_metric: QualityMetricMapping | None = Field(
        default=None,
        description="read the log's evaluation result of this name as the quality gate's "
        "metric (e.g. val_loss as eval_loss); omitted: only a result named as the gate's metric",
    )
    dry_run: bool = Field(default=False, description="build the record, do not write it")
    explain: bool = Field(
        default=False,
        description="also answer, for each figure, the lines it came from and the rule that "
        "read them, and the lines skipped and why",
    )


class SnapshotRequest(Request):
    """Take a snapshot now: from an uploaded saved Price List file (basis saved_file, who
    supplied it is the caller), or live (basis official; needs AWS credentials with
    pricing:GetProducts)."""

    saved_price_list: Any | None = Field(
        default=None,
        description="a GetProducts response, a list of items or a bulk offer file; "
        "omitted: query the Price List API live",
    )
    note: Note | None = Field(default=None, max_length=500)
    publish: bool = Field(
        default=False,
        description="make the uploaded file the latest prices (estimates that follow latest "
        "are recomputed with it). Only where the stage allows it (prices.accept_uploads); "
        "otherwise 409 publish_refused and nothing is stored. Without it, the upload is stored "
        "and used only by estimates that name its snapshot_id",
    )


class RetractRequest(Request):
    """Why a record no longer counts (kept with who and when; the record itself stays)."""

    reason: str = Field(min_length=1, max_length=1000, description="why it is retracted")
    superseded_by: Identifier | None = Field(
        default=None,
        description="a workload: the workload that replaces it (a trial is corrected by "
        "recording the corrected trial with `supersedes`)",
    )
