"""Compare candidates on one workload: ranked by cost per completed target and by time
(comparable ones only), with P10/P50/P90 ranges, the tornado, scaling fits, break-even prices,
MFU checks, the decision and the credits runway. Not stored: the same request and seed give
the same answer. The analysis (numpy) is imported on first use, not at cold start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from typing import Protocol

from trncost.model import Assumptions, Candidate, EstimateInput, Workload
from trncost.model.analysis import Analysis, Credits
from trncost.services.estimates import EstimateService
from trncost.services.trials import TrialService


class CandidateAsk(Protocol):
    """One candidate of a comparison request (the API's CandidatePlan)."""

    @property
    def candidate(self) -> Candidate: ...

    @property
    def assumptions(self) -> Assumptions | None: ...

    @property
    def limited_features(self) -> list[str]: ...


class ComparisonAsk(Protocol):
    """What a comparison needs (the API's ComparisonRequest)."""

    @property
    def candidates(self) -> Sequence[CandidateAsk]: ...

    @property
    def assumptions(self) -> Assumptions: ...

    @property
    def snapshot_id(self) -> str | None: ...

    @property
    def seed(self) -> int: ...

    @property
    def samples(self) -> int: ...

    @property
    def credits(self) -> Credits | None: ...


def _today() -> date:
    return datetime.now(UTC).date()


class ComparisonService:
    def __init__(
        self,
        trials: TrialService,
        estimates: EstimateService,
        today: Callable[[], date] = _today,
    ) -> None:
        self.trials = trials
        self.estimates = estimates
        self.today = today

    def analyse(self, workload_id: str, ask: ComparisonAsk) -> tuple[Workload, Analysis]:
        """The workload and the analysis of its candidates, on its trials and the pinned (or
        latest) price snapshot."""
        from trncost.estimate import analyse

        workload = self.trials.workload(workload_id)
        trials = self.trials.all_trials(workload_id)
        prices = self.estimates.snapshot(ask.snapshot_id)
        inputs = [
            EstimateInput(
                workload=workload,
                candidate=plan.candidate,
                trials=trials,
                prices=prices,
                assumptions=plan.assumptions or ask.assumptions,
            )
            for plan in ask.candidates
        ]
        limited = {
            p.candidate.instance_type: p.limited_features
            for p in ask.candidates
            if p.limited_features
        }
        as_of = self.today().isoformat() if ask.credits else None
        fields = [
            f"candidates.{i}.assumptions.price_overrides"
            if plan.assumptions is not None
            else "assumptions.price_overrides"
            for i, plan in enumerate(ask.candidates)
        ]
        return workload, analyse(
            inputs,
            seed=ask.seed,
            samples=ask.samples,
            credits=ask.credits,
            as_of=as_of,
            limited_features=limited,
            override_fields=fields,
        )

    def compare(self, workload_id: str, ask: ComparisonAsk) -> Analysis:
        return self.analyse(workload_id, ask)[1]

    def report(self, workload_id: str, ask: ComparisonAsk) -> str:
        """The same analysis as a self-contained HTML page."""
        from trncost.report import render_analysis_report

        workload, analysis = self.analyse(workload_id, ask)
        return render_analysis_report(
            analysis, workload_name=workload.name, workload_id=workload.workload_id
        )
