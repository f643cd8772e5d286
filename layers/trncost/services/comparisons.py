"""Compare candidates on one workload: ranked by cost per completed target and by time
(comparable ones only), with P10/P50/P90 ranges, the tornado, scaling fits, break-even prices,
MFU checks, the decision and the credits runway. The analysis (numpy) is imported on first
use, not at cold start.

`create` stores a comparison as an immutable record (trncost.store.comparisons) with an id, to
read again (`get`) and share (`render_of`: its HTML page or exports): the id is a hash of what
it was computed from, so the same request on the same evidence (workload, trials, price
snapshot, and the day when credits are given) is the same record, and a repeat writes nothing.
`analyse` and `render` compute without storing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from trncost.errors import InvalidInput, NotFound, first_validation_problem
from trncost.model import Assumptions, EstimateInput, PriceSnapshot, TrialRun, Workload
from trncost.model.analysis import Analysis
from trncost.model.assumptions import AssumptionSource, merge_assumptions
from trncost.model.records import StoredComparison
from trncost.model.requests import ComparisonRequest
from trncost.pricing.names import KnownNames
from trncost.store.comparisons import ComparisonStore

__all__ = ["ComparisonService", "Evidence", "Prepared", "Prices"]

if TYPE_CHECKING:  # the engine's analysis (numpy) and the report load on first use
    from trncost.estimate.analysis import EachEstimate
    from trncost.report.render import Rendered


class Evidence(Protocol):
    """Where a comparison reads its workload and trials: the stage's records (TrialService),
    or a request file held in memory (the CLI's offline commands)."""

    def workload(self, workload_id: str) -> Workload: ...

    def all_trials(self, workload_id: str) -> list[TrialRun]: ...


class Prices(Protocol):
    """Where a comparison reads its price snapshot: the stage's snapshots (EstimateService), or
    a request file's prices held in memory."""

    def snapshot(self, snapshot_id: str | None) -> PriceSnapshot: ...


def _merged(
    shared: Assumptions, own: Assumptions | None, index: int
) -> tuple[Assumptions, dict[str, AssumptionSource]]:
    """The merged set (pair checks on it): a ValidationError becomes a 422 naming the field."""
    try:
        return merge_assumptions(shared, own)
    except ValidationError as exc:
        field, message = first_validation_problem(exc, f"candidates.{index}.assumptions")
        raise InvalidInput(
            f"{field} (the shared assumptions merged with this candidate's): {message}",
            fields=[field],
        ) from None


def _today() -> date:
    return datetime.now(UTC).date()


def _now() -> datetime:
    return datetime.now(UTC)


def resolved(ask: ComparisonRequest, snapshot_id: str) -> ComparisonRequest:
    """The request as stored: the price snapshot it was computed with named."""
    return ask.model_copy(update={"snapshot_id": snapshot_id})


def request_record(ask: ComparisonRequest) -> dict[str, Any]:
    """The request as JSON, the way the comparison id has always hashed it (an id stored
    before stays the id of the same request)."""
    return {
        "candidates": [
            {
                "candidate": p.candidate.model_dump(mode="json"),
                "assumptions": None
                if p.assumptions is None
                else p.assumptions.model_dump(mode="json", exclude_none=True),
                "limited_features": list(p.limited_features),
            }
            for p in ask.candidates
        ],
        "assumptions": ask.assumptions.model_dump(mode="json", exclude_none=True),
        "snapshot_id": ask.snapshot_id,
        "seed": ask.seed,
        "samples": ask.samples,
        "credits": None if ask.credits is None else ask.credits.model_dump(mode="json"),
    }


def comparison_id(
    workload: Workload, request: dict[str, Any], trials: list[TrialRun], as_of: str | None
) -> str:
    """What the comparison was computed from, hashed: the same inputs, the same id."""
    digest = hashlib.sha256()
    digest.update(workload.model_dump_json().encode())
    digest.update(json.dumps(request, sort_keys=True, separators=(",", ":")).encode())
    for trial in sorted(trials, key=lambda t: t.trial_id):
        digest.update(trial.model_dump_json().encode())
    digest.update((as_of or "").encode())
    return f"cmp-{digest.hexdigest()[:16]}"


@dataclass(frozen=True)
class Prepared:
    """A comparison request checked and resolved: its evidence, its prices and one estimate
    input per candidate (the candidate's assumptions merged key by key over the shared ones)."""

    workload: Workload
    trials: list[TrialRun]
    prices: PriceSnapshot
    inputs: list[EstimateInput]
    limited_features: dict[str, list[str]]
    override_fields: list[str]  # where input i's price overrides are, in the request
    as_of: str | None  # today, when the request asks for a credits runway


@dataclass(frozen=True)
class _Analysed:
    prepared: Prepared
    analysis: Analysis


class ComparisonService:
    """Several candidates on one workload, whoever asks: the API (its records and snapshots),
    the CLI on a request file (the same checks, merges and engine over the file held in memory:
    `trncost_client.requestfile`), so the two answer alike by construction."""

    def __init__(
        self,
        trials: Evidence,
        estimates: Prices,
        names: KnownNames | None = None,
        today: Callable[[], date] = _today,
        store: ComparisonStore | None = None,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.trials = trials
        self.estimates = estimates
        self.names = names or KnownNames()  # botocore's names (+ the stage catalog's)
        self.today = today
        self.store = store
        self.clock = clock

    def prepare(self, workload_id: str, ask: ComparisonRequest) -> Prepared:
        """The request checked (real instance types and regions, the assumptions merged per
        candidate, naming the field at fault) over the workload's trials and the pinned (or
        latest) price snapshot."""
        workload = self.trials.workload(workload_id)
        trials = self.trials.all_trials(workload_id)
        prices = self.estimates.snapshot(ask.snapshot_id)
        names = self.names
        for i, plan in enumerate(ask.candidates):
            names.check_candidate(plan.candidate, f"candidates.{i}.candidate")
            if plan.assumptions is not None:
                names.check_assumptions(plan.assumptions, f"candidates.{i}.assumptions")
        names.check_assumptions(ask.assumptions)
        inputs = []
        for index, plan in enumerate(ask.candidates):
            # key by key: the candidate's own keys replace the shared ones, the rest stay
            merged, sources = _merged(ask.assumptions, plan.assumptions, index)
            inputs.append(
                EstimateInput(
                    workload=workload,
                    candidate=plan.candidate,
                    trials=trials,
                    prices=prices,
                    assumptions=merged,
                    assumption_sources=sources,
                )
            )
        limited = {
            p.candidate.instance_type: list(p.limited_features)
            for p in ask.candidates
            if p.limited_features
        }
        fields = [
            f"candidates.{i}.assumptions.price_overrides"
            if plan.assumptions is not None
            and "price_overrides" in plan.assumptions.model_fields_set
            else "assumptions.price_overrides"
            for i, plan in enumerate(ask.candidates)
        ]
        as_of = None
        if ask.credits is not None:  # the request's own "today", else the day it is made
            as_of = ask.credits.as_of or self.today().isoformat()
        return Prepared(workload, trials, prices, inputs, limited, fields, as_of)

    def estimate_each(self, workload_id: str, ask: ComparisonRequest) -> EachEstimate:
        """Every candidate's deterministic estimate (or why it has none) and their ranking with
        break-even prices, checked as a comparison is, without the ranges (`trncost estimate`
        on a request file)."""
        from trncost.estimate.analysis import estimate_each

        prepared = self.prepare(workload_id, ask)
        return estimate_each(prepared.inputs, override_fields=prepared.override_fields)

    def analyse(self, workload_id: str, ask: ComparisonRequest) -> tuple[Workload, Analysis]:
        """The workload and the analysis of its candidates, on its trials and the pinned (or
        latest) price snapshot."""
        done = self._analyse(workload_id, ask)
        return done.prepared.workload, done.analysis

    def _analyse(self, workload_id: str, ask: ComparisonRequest) -> _Analysed:
        from trncost.estimate import analyse

        prepared = self.prepare(workload_id, ask)
        analysis = analyse(
            prepared.inputs,
            seed=ask.seed,
            samples=ask.samples,
            credits=ask.credits,
            as_of=prepared.as_of,
            limited_features=prepared.limited_features,
            override_fields=prepared.override_fields,
        )
        return _Analysed(prepared, analysis)

    def render(self, workload_id: str, ask: ComparisonRequest, fmt: str = "html") -> Rendered:
        """The analysis as `fmt`: the HTML page, or every candidate's line items and input
        table as CSV or Markdown."""
        from trncost.report.render import check_format, render_analysis

        try:
            check_format(fmt)
        except ValueError as exc:
            raise InvalidInput(str(exc), fields=["format"]) from None
        workload, analysis = self.analyse(workload_id, ask)
        return render_analysis(
            analysis, fmt, workload_name=workload.name, workload_id=workload.workload_id
        )

    # -- stored comparisons --------------------------------------------------------------------
    def _store(self) -> ComparisonStore:
        if self.store is None:
            raise RuntimeError("no comparison store configured")
        return self.store

    def create(
        self, workload_id: str, ask: ComparisonRequest, created_by: str | None = None
    ) -> tuple[StoredComparison, bool]:
        """Compute and store the comparison; (the record, True) when this call stored it,
        (the stored one, False) when the same comparison was stored before."""
        done = self._analyse(workload_id, ask)
        p = done.prepared
        request = resolved(ask, p.prices.snapshot_id)
        cid = comparison_id(p.workload, request_record(request), p.trials, p.as_of)
        existing = self._store().get_comparison(cid)
        if existing is not None:
            return existing, False
        record = StoredComparison(
            comparison_id=cid,
            workload_id=p.workload.workload_id,
            created_at=self.clock().isoformat(),
            created_by=created_by,
            snapshot_id=p.prices.snapshot_id,
            request=request,
            analysis=done.analysis,
        )
        if self._store().put_comparison(record):
            return record, True
        stored = self._store().get_comparison(cid)  # another request stored it meanwhile
        return (stored or record), False

    def get(self, comparison_id: str) -> StoredComparison:
        found = self._store().get_comparison(comparison_id)
        if found is None:
            raise NotFound(f"comparison {comparison_id} not found")
        return found

    def render_of(self, comparison_id: str, fmt: str = "html") -> Rendered:
        """A stored comparison's report as `fmt`: the HTML comparison report, or every
        candidate's line items and input table as CSV or Markdown."""
        from trncost.report.render import check_format, render_analysis

        try:
            check_format(fmt)
        except ValueError as exc:
            raise InvalidInput(str(exc), fields=["format"]) from None
        found = self.get(comparison_id)
        try:
            name: str | None = self.trials.workload(found.workload_id).name
        except NotFound:
            name = None
        return render_analysis(
            found.analysis,
            fmt,
            workload_name=name,
            workload_id=found.workload_id,
            name=comparison_id,
        )
