"""Same work, same clock: whether two candidates' estimates may be compared at all."""

from __future__ import annotations

from trncost.model.estimate import Estimate, EstimateInput
from trncost.model.trial import TimingScope


def _scopes(inp: EstimateInput) -> set[TimingScope]:
    c = inp.candidate
    return {
        t.timing_scope
        for t in inp.trials
        if t.candidate.instance_type == c.instance_type
        and t.candidate.platform == c.platform
        and t.usable_for_throughput
    }


def comparability(a: EstimateInput, b: EstimateInput) -> list[str]:
    """Why `a` and `b` are not comparable; empty when they share target, dataset, quality gate
    and timing scope (what the trials' clocks include)."""
    reasons = []
    wa, wb = a.workload, b.workload
    if wa.target != wb.target:
        reasons.append(
            f"different targets ({wa.target.amount:g} {wa.target.unit} vs "
            f"{wb.target.amount:g} {wb.target.unit})"
        )
    if wa.dataset_id != wb.dataset_id:
        reasons.append(f"different datasets ({wa.dataset_id} vs {wb.dataset_id})")
    if wa.quality_gate != wb.quality_gate:
        reasons.append("different quality gates")
    sa, sb = _scopes(a), _scopes(b)
    if len(sa) != 1 or sa != sb:
        diffs = sorted({d for x in sa for y in sb for d in x.differences(y)})
        reasons.append(
            "different timing scopes"
            + (f" (the clocks differ in: {', '.join(diffs)})" if diffs else "")
        )
    return reasons


def best_comparable(
    pending: tuple[EstimateInput, Estimate],
    others: list[tuple[EstimateInput, Estimate]],
) -> tuple[EstimateInput, Estimate] | None:
    """The cheapest complete estimate comparable with `pending`, if any."""
    inp = pending[0]
    complete = [
        (i, e)
        for i, e in others
        if e.status == "complete" and e.total_usd is not None and not comparability(inp, i)
    ]
    return min(complete, key=lambda p: p[1].total_usd, default=None)
