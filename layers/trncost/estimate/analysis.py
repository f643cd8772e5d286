"""One call for the API: estimates, scaling fits, ranges, tornados, MFU checks, the comparison,
the decisions and the credits runway of several candidates. Deterministic for a seed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trncost.errors import DomainError
from trncost.estimate.checkpoint import checkpoint_advice
from trncost.estimate.compare import candidate_ids, rank
from trncost.estimate.credits import credits_runway
from trncost.estimate.decide import decide, migration_decision, own_trials
from trncost.estimate.engine import estimate
from trncost.estimate.evidence import MIN_FIT_COUNTS, Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.mfu import mfu_check
from trncost.estimate.next_trial import next_trial
from trncost.estimate.overrides import FIELD, check_overrides, override_problems, used_prices
from trncost.estimate.paired import paired_ranking
from trncost.estimate.sensitivity import tornado
from trncost.estimate.uncertainty import Simulation, prepare, range_of, simulate
from trncost.model.analysis import Analysis, CandidateAnalysis, Comparison, Credits
from trncost.model.estimate import Estimate, EstimateInput


def analyse(
    inputs: Sequence[EstimateInput],
    *,
    seed: int = 0,
    samples: int = 100_000,
    credits: Credits | None = None,
    as_of: str | None = None,
    limited_features: Mapping[str, Sequence[str]] | None = None,
    override_fields: Sequence[str] | None = None,
) -> Analysis:
    """Analyse every candidate: its estimate, scaling fit (≥ 3 measured counts), P10/P50/P90
    range, tornado, MFU checks, credits runway, decision, next trial worth running and
    checkpoint interval advice (estimate/checkpoint.py); then the ranking of the comparable
    candidates and the migration decision.

    A candidate that cannot be estimated (no usable trial, a contradiction) is reported with
    its reason and left out of the ranking; it never stops the others.

    Parameters
    ----------
    inputs : Sequence[EstimateInput]
        One per candidate (at least one).
    seed : int
        The Monte Carlo's seed [unitless]: same seed, same answer.
    samples : int
        Monte Carlo draws per candidate [draws].
    credits : Credits or None
        A credit grant to compute each candidate's runway against.
    as_of : str or None
        Today, as an ISO date (YYYY-MM-DD); required with `credits` (the engine has no clock).
    limited_features : Mapping[str, Sequence[str]] or None
        Instance type → the key features the team found limited on it.
    override_fields : Sequence[str] or None
        The request's field of input i's price overrides, named by the error when a shared
        override names a key no candidate uses, or the wrong unit (InvalidInput).

    Returns
    -------
    Analysis
        Every candidate's analysis (or its error), the comparison and the migration decision.
    """
    if not inputs:
        raise DomainError("nothing to analyse: give at least one candidate")
    if credits is not None and as_of is None:
        raise DomainError("a credits runway needs as_of (ISO date): the engine has no clock")
    each = estimate_each(inputs, override_fields=override_fields)
    limited = limited_features or {}
    results: dict[str, CandidateAnalysis] = {}
    simulations: dict[str, Simulation] = {}
    estimated = [(c.candidate_id, c.input, c.estimate) for c in each.estimated]
    for failed in each.failed:
        results[failed.candidate_id] = CandidateAnalysis(
            candidate_id=failed.candidate_id, error=str(failed.error)
        )
    for cid, inp, est in estimated:
        notes: list[str] = []
        scaling = None
        ev = Evidence.of(inp, Ledger(inp.prices))
        counts = ev.measured_counts()
        if ev.projected:
            notes.append(
                "no scaling fit of its own: no throughput trial of it (projected from another "
                "chip's trials)"
            )
        elif len(counts) >= MIN_FIT_COUNTS:
            scaling = ev.scaling_fit()
        else:
            notes.append(
                f"no scaling fit: throughput measured at {len(counts)} instance count(s) "
                f"({', '.join(map(str, counts))}), a fit needs ≥ {MIN_FIT_COUNTS}"
            )
        mfu = [
            f
            for t in own_trials(inp)
            if t.usable_for_throughput and (f := mfu_check(inp.workload, t)) is not None
        ]
        runway = (
            credits_runway(est, credits, as_of=as_of, candidate_id=cid)
            if credits is not None and as_of is not None
            else None
        )
        prepared, sim = simulate(inp, samples=samples, seed=seed, prepared=prepare(inp, est))
        simulations[cid] = sim
        results[cid] = CandidateAnalysis(
            candidate_id=cid,
            estimate=est,
            scaling=scaling,
            range=range_of(prepared, sim, seed=seed),
            tornado=tornado(inp, prepared=prepared),
            mfu=mfu,
            runway=runway,
            checkpoint=checkpoint_advice(prepared, seed=seed),
            notes=notes,
        )

    ids = each.ids
    comparison, standings = paired_ranking(each.comparison, simulations)
    pairs = [(i, e) for _, i, e in estimated]
    decisions = []
    for cid, inp in zip(ids, inputs, strict=True):
        current = results[cid]
        decision = decide(
            inp,
            current.estimate,
            alternatives=pairs,
            limited_features=list(limited.get(inp.candidate.instance_type, ())),
            error=current.error,
            candidate_id=cid,
            standing=standings.get(cid),
        )
        decisions.append(decision)
        update: dict[str, object] = {"decision": decision}
        if current.estimate is not None and current.range is not None:
            update["next_trial"] = next_trial(
                inp, current.estimate, current.range, decision, seed=seed
            )
        results[cid] = current.model_copy(update=update)
    comparison, results = _separate_close_calls(comparison, results)
    decisions = [r.decision for r in (results[cid] for cid in ids) if r.decision is not None]
    neuron = {
        cid for cid, inp in zip(ids, inputs, strict=True) if inp.candidate.accelerator == "neuron"
    }
    return Analysis(
        seed=seed,
        samples=samples,
        candidates=[results[cid] for cid in ids],
        comparison=comparison,
        decision=migration_decision(decisions, neuron),
    )


def _separate_close_calls(
    comparison: Comparison, results: dict[str, CandidateAnalysis]
) -> tuple[Comparison, dict[str, CandidateAnalysis]]:
    """Each close call names the trial that would separate its two candidates: the next trial
    worth running of the one whose range is the wider (its uncertainty moves the difference
    most), with its cost; the two decisions' too_close_to_call reasons say it too."""
    calls = []
    for call in comparison.close_calls:
        pair = [results[c] for c in (call.leader, call.runner_up) if c in results]
        wider = max(pair, key=_width, default=None)
        trial = _trial_text(wider) if wider is not None else None
        call = call.model_copy(update={"separating_trial": trial})
        calls.append(call)
        for cid in (call.leader, call.runner_up):
            found = results.get(cid)
            if found is None or found.decision is None or trial is None:
                continue
            reasons = [
                r.model_copy(update={"message": f"{r.message}; {trial}"})
                if r.code == "too_close_to_call"
                else r
                for r in found.decision.reasons
            ]
            decision = found.decision.model_copy(update={"reasons": reasons})
            results[cid] = found.model_copy(update={"decision": decision})
    return comparison.model_copy(update={"close_calls": calls}), results


def _width(found: CandidateAnalysis) -> float:
    t = found.range.total_usd if found.range is not None else None
    if t is None or t.p10 is None or t.p90 is None:
        return -1.0
    return float(t.p90 - t.p10)


def _trial_text(found: CandidateAnalysis) -> str | None:
    """The trial that would separate a close call, in words (its phase, count, cost)."""
    best = found.next_trial.best if found.next_trial is not None else None
    if best is None:
        return None
    cost = (
        f"${best.expected_cost_usd:,.2f}"
        if best.expected_cost_usd is not None
        else f"{best.expected_instance_hours:,.1f} instance-h × P[{best.pending_price_key}]"
    )
    return (
        f"the trial that would separate them: a {best.phase} trial of {found.candidate_id} at "
        f"{best.instance_count} instances (~{best.expected_instance_hours:,.1f} instance-h, "
        f"{cost}), narrowing its range {best.narrower_by:.0%}"
    )


@dataclass(frozen=True)
class Estimated:
    """A candidate that has an estimate: its id, its input and its estimate."""

    candidate_id: str
    input: EstimateInput
    estimate: Estimate


@dataclass(frozen=True)
class NotEstimated:
    """A candidate that has no estimate: its id, its input and why (the error)."""

    candidate_id: str
    input: EstimateInput
    error: DomainError  # MissingEvidence: the trials do not hold what it needs; or another


@dataclass(frozen=True)
class EachEstimate:
    """Every candidate's deterministic estimate, or why it has none, in the inputs' order,
    and their ranking (with the break-even price of each PENDING one)."""

    ids: list[str]
    estimated: list[Estimated]
    failed: list[NotEstimated]
    comparison: Comparison


def estimate_each(
    inputs: Sequence[EstimateInput], *, override_fields: Sequence[str] | None = None
) -> EachEstimate:
    """Estimate every candidate of `inputs` (`estimate`, with the price overrides checked
    across them: a shared override must name a key one of them uses, in its billing unit;
    InvalidInput names input i's field in `override_fields`) and rank them (`rank`). A
    candidate that cannot be estimated is listed with its error and left out of the ranking;
    it never stops the others.

    Returns
    -------
    EachEstimate
        The candidate ids in input order, the estimated and the failed candidates, and the
        comparison (by total cost [USD] and time [h], with break-even prices).
    """
    ids = candidate_ids(inputs)
    estimated: list[Estimated] = []
    failed: list[NotEstimated] = []
    for cid, inp in zip(ids, inputs, strict=True):
        try:
            estimated.append(Estimated(cid, inp, estimate(inp, check_price_overrides=False)))
        except DomainError as exc:
            failed.append(NotEstimated(cid, inp, exc))
    _check_shared_overrides(inputs, [e.estimate for e in estimated], override_fields)
    comparison = rank(
        [(e.input, e.estimate) for e in estimated],
        excluded={f.candidate_id: str(f.error) for f in failed},
    )
    return EachEstimate(ids, estimated, failed, comparison)


def _check_shared_overrides(
    inputs: Sequence[EstimateInput],
    estimates: Sequence[Estimate],
    fields: Sequence[str] | None,
) -> None:
    """Each input's overrides against the keys any estimated candidate uses."""
    used: dict[str, str] = {}
    for est in estimates:
        used.update(used_prices(est.line_items))
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, inp in enumerate(inputs):
        field = fields[i] if fields is not None else FIELD
        for problem in override_problems(inp.assumptions.price_overrides, used, field):
            if problem[0] not in seen:  # shared overrides: once
                seen.add(problem[0])
                problems.append(problem)
    check_overrides(problems)
