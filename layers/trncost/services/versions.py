"""What a stored version holds beside its estimate, computed once when it is stored: the same
model's Monte Carlo range, its checkpoint advice, its own decision, the headline a list page
reads, and the fingerprint of what it was computed from (a refresh with the same fingerprint
recomputes nothing).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from trncost.errors import DomainError
from trncost.model import Decision, Estimate, EstimateInput, Range
from trncost.model.analysis import CheckpointAdvice
from trncost.model.changes import FigureChange
from trncost.model.records import EstimateDefinition, EstimateVersion, VersionSummary

log = logging.getLogger(__name__)


def estimate(inp: EstimateInput, *, check_price_overrides: bool = True) -> Estimate:
    """The engine (trncost.estimate), imported on first use: the routes that only read
    estimates (and a cold start) never load it."""
    from trncost.estimate import estimate as compute

    return compute(inp, check_price_overrides=check_price_overrides)


RANGE_SAMPLES, RANGE_SEED = 20_000, 0  # each version's Monte Carlo range: same seed, same range


@dataclass(frozen=True)
class Extras:
    """What a version keeps beside its estimate: its range, its checkpoint advice and its own
    decision (each None when it cannot be made)."""

    range: Range | None
    checkpoint: CheckpointAdvice | None
    decision: Decision | None


def estimate_extras(inp: EstimateInput, result: Estimate) -> Extras:
    """The version's range — the same model's Monte Carlo (RANGE_SAMPLES draws, RANGE_SEED), so
    the report can show P50 and P10–P90 beside the point — its checkpoint interval advice (the
    same model, trncost.estimate.checkpoint) and its own decision (trncost.estimate.decide,
    without a comparison's alternatives); each None when it cannot be made."""
    from trncost.estimate.checkpoint import checkpoint_advice
    from trncost.estimate.uncertainty import prepare, range_of, simulate

    found: Range | None = None
    advice: CheckpointAdvice | None = None
    try:
        prepared, sim = simulate(
            inp, samples=RANGE_SAMPLES, seed=RANGE_SEED, prepared=prepare(inp, result)
        )
        found = range_of(prepared, sim, seed=RANGE_SEED)
        advice = checkpoint_advice(prepared, seed=RANGE_SEED)
    except DomainError as exc:
        log.info("no range for this estimate: %s", exc)
    return Extras(found, advice, estimate_decision(inp, result))


def estimate_decision(inp: EstimateInput, result: Estimate) -> Decision | None:
    """The candidate's decision on its own evidence: the engine's `decide` with no alternative
    (weighing candidates against each other is a comparison's); None when it cannot be made."""
    from trncost.estimate.decide import decide

    try:
        return decide(inp, result)
    except DomainError as exc:
        log.info("no decision for this estimate: %s", exc)
        return None


def summary_of(version: EstimateVersion, scope: str | None) -> VersionSummary:
    """The headline a list page and the workload's standings read (`scope`: the clock its
    pooled trials share, trncost.estimate.compare.clock_key)."""
    est = version.estimate
    band = None
    if version.range is not None:
        band = version.range.total_usd or version.range.known_usd
    return VersionSummary(
        version=version.version,
        created_at=version.created_at,
        reason=version.reason,
        label=est.candidate.label,
        status=est.status,
        snapshot_id=est.snapshot_id,
        total_usd=est.total_usd,
        total_known_usd=est.total_known_usd,
        cloud_usd=est.cloud_usd,
        labour_usd=est.labour_usd,
        price_basis=est.price_basis,
        cost_per_target_usd=est.cost_per_target_usd,
        cost_per_million_tokens_usd=est.cost_per_million_tokens_usd,
        time_to_target_h=est.time.total_h if est.time else None,
        pending_terms=[t.model_copy(update={"lines": []}) for t in est.pending_terms],
        warnings=len(est.warnings),
        scope=scope,
        decision=version.decision.action if version.decision else None,
        range_usd=band,
    )


def scope_of(inp: EstimateInput) -> str | None:
    from trncost.estimate.compare import clock_key

    return clock_key(inp)


def changes_between(before: Estimate, after: Estimate) -> list[FigureChange]:
    """The figures that moved (trncost.estimate.changes, loaded with the engine)."""
    from trncost.estimate.changes import changes

    return changes(before, after)


def fingerprint(inp: EstimateInput, definition: EstimateDefinition) -> str:
    """What the estimate depends on: the definition, the snapshot and every trial record."""
    digest = hashlib.sha256()
    digest.update(definition.model_dump_json(exclude={"created_at"}).encode())
    digest.update(inp.prices.snapshot_id.encode())
    digest.update(inp.workload.model_dump_json().encode())
    for trial in sorted(inp.trials, key=lambda t: t.trial_id):
        digest.update(trial.model_dump_json().encode())
    return digest.hexdigest()
