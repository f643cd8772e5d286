"""The analysis page's first screen: one row per candidate with what a budget owner decides on
— the point cost per completed target, the P50 and P10–P90 of its range, its chance of being
the cheapest (when the ranking has paired draws), the weakest price basis and its decision
with the first reason — every candidate, those that could not be estimated too (with why)."""

from __future__ import annotations

from trncost.model.analysis import Action, Analysis, CandidateAnalysis, RankedCandidate
from trncost.model.basis import PriceBasis
from trncost.report.anchors import PageAnchors
from trncost.report.format import esc, usd
from trncost.report.provenance import basis_badge
from trncost.report.shell import action_badge, status_badge


def _point(c: CandidateAnalysis) -> str:
    est = c.estimate
    if est is None:
        return '<span class="muted">—</span>'
    if est.status == "infeasible":
        return '<span class="bad-text">cannot finish</span>'
    if est.total_usd is None:
        return (
            '<span class="pending-text">PENDING</span>'
            f'<div class="small muted">known part {esc(usd(est.total_known_usd))}</div>'
        )
    return esc(usd(est.total_usd))


def _band(c: CandidateAnalysis) -> tuple[str, str]:
    """(P50, P10–P90) of the total, or of the known part while a price is PENDING."""
    rng = c.range
    band = None if rng is None else (rng.total_usd or rng.known_usd)
    if rng is None or band is None or band.p50 is None:
        none = '<span class="muted">—</span>'
        return none, none
    known = "" if rng.total_usd is not None else '<div class="small muted">known part</div>'
    return (
        esc(usd(band.p50)) + known,
        f"{esc(usd(band.p10))} – {esc(usd(band.p90))}" + known,
    )


def _p_cheapest(row: RankedCandidate | None) -> str:
    if row is None or row.p_cheapest is None:
        return '<span class="muted">—</span>'
    return f'<span data-p-cheapest="{row.p_cheapest:.4f}">{row.p_cheapest:.0%}</span>'


def _decision(c: CandidateAnalysis) -> str:
    d = c.decision
    if d is None:
        return '<span class="muted">—</span>'
    first = (
        f'<div class="small"><span class="code">{esc(d.reasons[0].code)}</span></div>'
        if d.reasons
        else ""
    )
    return action_badge(d.action, small=True) + first


def ready_ids(analysis: Analysis) -> frozenset[str]:
    """The candidates ready to budget: decision ready_to_budget, every price official."""
    return frozenset(
        c.candidate_id
        for c in analysis.candidates
        if c.decision is not None
        and c.decision.action == Action.ready_to_budget
        and c.estimate is not None
        and c.estimate.price_basis == PriceBasis.official
    )


def summary(analysis: Analysis, page: PageAnchors) -> str:
    """The table; every candidate of the analysis, in the ranking's order (the others after)."""
    ready = ready_ids(analysis)
    ranked = {r.candidate_id: r for r in analysis.comparison.by_cost}
    order = [r.candidate_id for r in analysis.comparison.by_cost]
    cands = sorted(
        analysis.candidates,
        key=lambda c: order.index(c.candidate_id) if c.candidate_id in order else len(order),
    )
    rows = []
    for c in cands:
        row = ranked.get(c.candidate_id)
        p50, p1090 = _band(c)
        status = status_badge(c.estimate.status if c.estimate else None, c.candidate_id in ready)
        why = f'<div class="small muted">{esc(c.error)}</div>' if c.error else ""
        basis = basis_badge(c.estimate.price_basis) if c.estimate is not None else "—"
        rows.append(
            f'<tr data-candidate="{esc(c.candidate_id)}">'
            f'<td data-col="candidate">{page.candidate_link(c.candidate_id)}'
            f"<div>{status}</div>{why}</td>"
            f'<td class="num" data-col="point">{_point(c)}</td>'
            f'<td class="num" data-col="p50">{p50}</td>'
            f'<td class="num" data-col="p10-p90">{p1090}</td>'
            f'<td class="num" data-col="p-cheapest">{_p_cheapest(row)}</td>'
            f'<td data-col="basis">{basis}</td>'
            f'<td data-col="decision">{_decision(c)}</td></tr>'
        )
    return (
        '<section id="summary"><h2>Cost per completed target, at a glance</h2>'
        '<div class="table-wrap"><table id="summary-table"><thead><tr>'
        "<th>candidate</th><th class='num'>point</th><th class='num'>P50</th>"
        "<th class='num'>P10–P90</th><th class='num'>p cheapest</th><th>price basis</th>"
        "<th>decision</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>"
        '<p class="small muted">The point is the estimate at the posterior mean of every drawn '
        "input; P50 and P10–P90 are the Monte Carlo's percentiles over the draws that finish; "
        "p cheapest is the share of paired draws in which the candidate costs least among the "
        "comparable ones (PENDING candidates are not ranked). An example price basis is the "
        "illustrative file bundled with trncost: never budget on it.</p></section>"
    )
