"""The decision's cost rules: is a comparable alternative cheaper, is the call too close, does a
PENDING price leave it open — and only inside the evidence.

- costlier_than_alternative (compare_alternatives): a comparable, fully priced alternative is
  cheaper per target at a MEASURED or FITTED scale on both sides — with a range, cheaper in at
  least CLOSE_CALL of the paired draws (estimate/paired.py); without one, by the point totals.
- costlier_at_unmeasured_scale (continue_trials): the same, but this candidate's or the
  alternative's throughput at its planned count is extrapolated past the measured counts or
  rests on the published scaling prior alone: an extrapolated loss is a reason to measure at
  scale, not to move (the seed checklist's 轉用其他實例比較 is for a measured cost that loses).
- too_close_to_call (continue_trials): the leader and the runner-up are not separated by the
  paired draws (the leader cheaper in fewer than CLOSE_CALL of them); the analysis names the
  trial that would separate them.
- known_part_exceeds_alternative (compare_alternatives) and price_pending: a PENDING estimate
  against the cheapest comparable alternative (its break-even price).
- A projected estimate (estimate/projection.py) is never moved on: each of its
  compare_alternatives reasons becomes continue_trials (run its fit trial first).

References
----------
DESIGN.md, principles 6, 7 and 10; seeds/000 (繼續試跑 / 轉用其他實例比較).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from trncost.estimate.compare import comparability
from trncost.estimate.engine import break_even_price, known_part_exceeds
from trncost.model.analysis import Action, CloseCall, Reason
from trncost.model.estimate import Estimate, EstimateInput

CLOSE_CALL = 0.7  # below this share of paired draws the leader is not clearly ahead

# an alternative candidate, its estimate and its (known) total per target
Alternative = tuple[EstimateInput, Estimate, Decimal]


@dataclass(frozen=True)
class Standing:
    """One candidate's place in the paired ranking (estimate/paired.py), for its decision: the
    alternatives of its group with a lower expected cost [USD], each with the share of paired
    draws in which it is cheaper than this candidate, and the close call it is part of."""

    candidate_id: str
    expected_usd: Decimal | None
    cheaper: tuple[tuple[str, Decimal, float], ...]  # (alternative, its expected, P(alt < me))
    close_call: CloseCall | None


def _reason(code: str, action: Action, message: str, evidence: Sequence[str] = ()) -> Reason:
    return Reason(code=code, action=action, message=message, evidence=list(evidence))


def unmeasured_scale(est: Estimate) -> str | None:
    """Why `est`'s throughput at its planned count is not measured or fitted (None when it is):
    extrapolated past the largest measured count, or from the published scaling prior alone.

    Returns
    -------
    str or None
        The reason in words.
    """
    warnings = {w.code for w in est.warnings}
    prior = any(
        r.id == "scaling:exponent" and r.provenance.kind == "published_reference"
        for r in est.inputs
    )
    n = est.candidate.instance_count
    if "extrapolated_scale" in warnings:
        return f"{n} instances is beyond the largest measured count (extrapolated)"
    if prior and "unmeasured_instance_count" in warnings:
        return f"the throughput at {n} instances rests on the published scaling prior alone"
    return None


def comparable_alternatives(
    inp: EstimateInput, alternatives: Sequence[tuple[EstimateInput, Estimate]]
) -> list[Alternative]:
    """The other candidates that are comparable with `inp` and fully priced.

    Parameters
    ----------
    inp : EstimateInput
        The candidate the decision is for.
    alternatives : Sequence[tuple[EstimateInput, Estimate]]
        Every other candidate of the comparison, with its estimate.

    Returns
    -------
    list[Alternative]
        (input, estimate, total per target [USD]) of each.
    """
    return [
        (i, e, total)
        for i, e in alternatives
        if i.candidate != inp.candidate
        and not comparability(inp, i)
        and e.status == "complete"
        and (total := e.total_usd) is not None
    ]


def cost_reasons(
    inp: EstimateInput,
    est: Estimate | None,
    alternatives: Sequence[tuple[EstimateInput, Estimate]],
    standing: Standing | None,
    *,
    reproducible: bool,
    gaps: bool,
) -> list[Reason]:
    """Every cost reason of `inp`'s decision (the module docstring gives the rules).

    Parameters
    ----------
    inp : EstimateInput
        The candidate the decision is for.
    est : Estimate or None
        Its estimate (None: it could not be made).
    alternatives : Sequence[tuple[EstimateInput, Estimate]]
        The other candidates with their estimates (only comparable, fully priced ones count).
    standing : Standing or None
        Its place in the paired ranking (None without ranges: the point totals decide).
    reproducible : bool
        Whether there are ≥ 2 reproducible trial runs (a PENDING price is then weighed).
    gaps : bool
        Whether other reasons already call for trials (a PENDING price then keeps to them).

    Returns
    -------
    list[Reason]
        The triggered cost reasons.
    """
    comparable = comparable_alternatives(inp, alternatives)
    reasons = _costlier(est, comparable, standing)
    if standing is not None and standing.close_call is not None:
        reasons.append(_too_close(standing.close_call))
    exceeded = _known_exceeds(est, comparable)
    reasons += exceeded
    if est is not None and est.incomplete and reproducible and not exceeded:
        reasons.append(_price_pending(est, comparable, gaps))
    if est is not None and est.projected:
        reasons = [_on_projection(r) for r in reasons]
    return reasons


def _on_projection(reason: Reason) -> Reason:
    """A cost reason of a projected estimate: never a move on a projection (principle 6), a
    reason to measure."""
    if reason.action != Action.compare_alternatives:
        return reason
    return reason.model_copy(
        update={
            "action": Action.continue_trials,
            "message": f"{reason.message} — on a PROJECTED throughput: run its fit trial before "
            "deciding",
        }
    )


def _costlier(
    est: Estimate | None, comparable: Sequence[Alternative], standing: Standing | None
) -> list[Reason]:
    """Comparable alternatives that are cheaper per target: clearly (paired draws) when the
    comparison has ranges, by the point totals otherwise; inside the evidence only."""
    if est is None or est.status not in ("complete", "projected") or est.total_usd is None:
        return []
    own = est.total_usd
    by_label = {i.candidate.label: (i, e, total) for i, e, total in comparable}
    if standing is not None:
        cheaper = [
            (expected, label, p)
            for label, expected, p in standing.cheaper
            if p >= CLOSE_CALL and label in by_label
        ]
        mine = standing.expected_usd if standing.expected_usd is not None else own
        how = "expected {own} per target; {label} {alt}, cheaper in {p:.0%} of the paired draws"
    else:
        cheaper = [(total, i.candidate.label, 1.0) for i, _, total in comparable if total < own]
        mine = own
        how = "{own} per target is not better than {label} ({alt})"
    if not cheaper:
        return []
    cheaper.sort()
    alt_usd, label, p = cheaper[0]
    text = how.format(own=f"${mine:,.2f}", label=label, alt=f"${alt_usd:,.2f}", p=p)
    unmeasured = [
        f"{who}: {why}"
        for who, e in (("this candidate", est), (label, by_label[label][1]))
        if (why := unmeasured_scale(e)) is not None
    ]
    if unmeasured:
        return [
            _reason(
                "costlier_at_unmeasured_scale",
                Action.continue_trials,
                f"{text} on the same work and clock — but not at a measured scale ("
                + "; ".join(unmeasured)
                + "): measure at scale before moving",
                [lbl for _, lbl, _ in cheaper],
            )
        ]
    return [
        _reason(
            "costlier_than_alternative",
            Action.compare_alternatives,
            f"{text} on the same work and clock",
            [lbl for _, lbl, _ in cheaper],
        )
    ]


def _too_close(call: CloseCall) -> Reason:
    """The leader and the runner-up are not separated by the paired draws."""
    tail = f"; {call.separating_trial}" if call.separating_trial else ""
    return _reason(
        "too_close_to_call",
        Action.continue_trials,
        f"too close to call: {call.leader} (expected ${call.leader_expected_usd:,.2f}) is "
        f"cheaper than {call.runner_up} (${call.runner_up_expected_usd:,.2f}) in only "
        f"{call.p_leader_cheaper:.0%} of the paired draws (under {CLOSE_CALL:.0%})" + tail,
        [call.leader, call.runner_up],
    )


def _known_exceeds(est: Estimate | None, comparable: Sequence[Alternative]) -> list[Reason]:
    """A PENDING estimate whose known part alone already reaches the cheapest comparable
    alternative's total: no price makes it cheaper, and more trials can only add cost."""
    if est is None or not est.incomplete or est.total_known_usd is None:
        return []
    best = min(comparable, key=lambda a: a[2], default=None)
    if best is None or not known_part_exceeds(est, best[2]):
        return []
    return [
        _reason(
            "known_part_exceeds_alternative",
            Action.compare_alternatives,
            f"the known part alone (${est.total_known_usd:,.2f}) already exceeds "
            f"{best[0].candidate.label} (${best[2]:,.2f}) on the same work and clock: no price "
            "makes it cheaper",
            [best[0].candidate.label, *(t.price_key for t in est.pending_terms)],
        )
    ]


def _price_pending(est: Estimate, comparable: Sequence[Alternative], gaps: bool) -> Reason:
    """A PENDING price with reproducible data: the break-even price against the cheapest
    comparable alternative says where it would be better."""
    best = min(comparable, key=lambda a: a[2], default=None)
    be = break_even_price(est, best[2]) if best is not None else None
    tail = (
        f"; it breaks even with {best[0].candidate.label} at ${be:,.4f} per "
        f"{est.pending_terms[0].unit}"
        if be is not None and best is not None
        else ""
    )
    return _reason(
        "price_pending",
        # with evidence gaps the next step is still trials; verified, it is a comparison
        Action.continue_trials if gaps else Action.compare_alternatives,
        "a price is PENDING: the cost per target cannot be shown better than the "
        f"alternatives{tail}",
        [t.price_key for t in est.pending_terms],
    )
