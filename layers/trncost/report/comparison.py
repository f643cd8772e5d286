"""The analysis page's comparison on the same work: candidates ranked by cost per completed
target and by time within groups of comparable candidates, the pairs that are not comparable
and why, the break-even prices of PENDING candidates, and those that could not be estimated."""

from __future__ import annotations

from trncost.model.analysis import BreakEven, Comparison, RankedCandidate
from trncost.report.anchors import PageAnchors
from trncost.report.format import esc, hours, unit_price, usd
from trncost.report.provenance import basis_badge
from trncost.report.shell import PENDING_ROW, status_badge


def _cost_cell(r: RankedCandidate) -> str:
    if r.cost_per_target_usd is not None and r.expected_usd is not None:
        # the ranking's figure first (expected over paired draws), then the P50 and the point
        return (
            f'<span class="expected" data-expected="{r.expected_usd:.2f}">'
            f"{esc(usd(r.expected_usd))}</span>"
            f'<div class="small muted">P50 {esc(usd(r.p50_usd))} · point '
            f"{esc(usd(r.cost_per_target_usd))}</div>"
            f'<div class="small">{_p_cheapest_cell(r)}</div>'
        )
    if r.cost_per_target_usd is not None:
        return esc(usd(r.cost_per_target_usd))
    if r.pending_formula:
        return (
            '<span class="pending-text">PENDING</span>'
            f'<div class="small mono pending-formula">{esc(r.pending_formula)}</div>'
        )
    if r.status == "infeasible":
        return '<span class="bad-text">no total</span>'
    return '<span class="muted">—</span>'


def _split_cell(r: RankedCandidate) -> str:
    """What AWS bills and the assumed labour, apart."""
    if r.status == "infeasible":
        return '<span class="muted">—</span>'
    return (
        f'<span class="cloud">{esc(usd(r.cloud_usd))}</span>'
        f' <span class="small muted">+ labour {esc(usd(r.labour_usd))}</span>'
    )


def _p_cheapest_cell(r: RankedCandidate) -> str:
    if r.p_cheapest is None:
        return '<span class="muted">—</span>'
    return f'<span data-p-cheapest="{r.p_cheapest:.4f}">cheapest in {r.p_cheapest:.0%}</span>'


def _rank_cell(rank: int | None) -> str:
    return f"#{rank}" if rank is not None else '<span class="muted">—</span>'


def _time_text(r: RankedCandidate) -> str:
    return esc(hours(r.time_to_target_h)) if r.time_to_target_h is not None else "never"


def _ranking(comp: Comparison, page: PageAnchors, ready: frozenset[str] = frozenset()) -> str:
    rows = "".join(
        f'<tr data-candidate="{esc(r.candidate_id)}" data-group="{r.group}" '
        f'data-cost-rank="{r.cost_rank if r.cost_rank is not None else ""}" '
        f'data-time-rank="{r.time_rank if r.time_rank is not None else ""}"'
        f"{PENDING_ROW if r.cost_per_target_usd is None else ''}>"
        f'<td class="num">{r.group}</td><td class="num">{_rank_cell(r.cost_rank)}</td>'
        f"<td>{page.candidate_link(r.candidate_id)}</td>"
        f"<td>{status_badge(r.status, r.candidate_id in ready)}</td>"
        f"<td class='num'>{_cost_cell(r)}</td>"
        f"<td class='num'>{_split_cell(r)}</td><td>{basis_badge(r.price_basis)}</td>"
        f"<td class='num'>{_time_text(r)}</td>"
        f'<td class="small">{esc(r.note or "")}</td></tr>'
        for r in comp.by_cost
    )
    return (
        '<div class="table-wrap"><table id="ranking"><thead><tr><th class="num">group</th>'
        '<th class="num">rank</th><th>candidate</th>'
        '<th>status</th><th class="num">expected cost per target (P50 · point · p cheapest)'
        "</th>"
        '<th class="num">AWS bill + assumed labour</th><th>price basis</th>'
        '<th class="num">time to target</th><th>note</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        '<p class="small muted">Ranks are within a group of comparable candidates (same '
        "target, dataset, quality gate and timing scope): candidates in different groups are "
        "never ranked against each other. The ranking is on the expected total per target "
        "(the AWS bill plus the labour you assumed) over paired Monte Carlo draws: every "
        "candidate's draw i shares the draws of the assumptions they share; each candidate's "
        "1 % tails are winsorized. The chance cheapest is the share of those draws in which it "
        "costs least. The point is the figure at the posterior mean of every drawn input. A "
        "PENDING price is not ranked by cost: see its break-even price.</p>"
        + _close_calls(comp, page)
    )


def _close_calls(comp: Comparison, page: PageAnchors) -> str:
    if not comp.close_calls:
        return ""
    items = "".join(
        f'<li class="close-call" data-leader="{esc(c.leader)}" data-runner-up="'
        f'{esc(c.runner_up)}"><strong>Too close to call</strong>: '
        f"{page.candidate_link(c.leader)} (expected {esc(usd(c.leader_expected_usd))}) is "
        f"cheaper than {page.candidate_link(c.runner_up)} "
        f"({esc(usd(c.runner_up_expected_usd))}) in only {c.p_leader_cheaper:.0%} of the "
        "paired draws" + (f"; {esc(c.separating_trial)}" if c.separating_trial else "") + "</li>"
        for c in comp.close_calls
    )
    return f'<ul id="close-calls" class="close-calls">{items}</ul>'


def _by_time(comp: Comparison, page: PageAnchors) -> str:
    items = "".join(
        f'<li data-candidate="{esc(r.candidate_id)}">group {r.group} · '
        f"{_rank_cell(r.time_rank)} {page.candidate_link(r.candidate_id)} — "
        f"{_time_text(r)}</li>"
        for r in comp.by_time
    )
    return f'<h3>Ranked by time to target</h3><ul class="by-time" id="by-time">{items}</ul>'


def _not_comparable(comp: Comparison, page: PageAnchors) -> str:
    if not comp.not_comparable:
        return (
            '<h3>Not comparable</h3><p class="small muted" id="not-comparable">None: every '
            "estimated candidate shares the target, dataset, quality gate and timing scope."
            "</p>"
        )
    items = "".join(
        f'<li data-a="{esc(n.a)}" data-b="{esc(n.b)}">{page.candidate_link(n.a)} vs '
        f"{page.candidate_link(n.b)}: <strong>not comparable</strong> — "
        f"{esc('; '.join(n.reasons))}</li>"
        for n in comp.not_comparable
    )
    return (
        f"<h3>Not comparable ({len(comp.not_comparable)} pairs)</h3>"
        f'<ul id="not-comparable">{items}</ul>'
    )


def _break_even_cell(b: BreakEven) -> str:
    """The price per unit; never a negative price: the engine says when no price makes it
    cheaper (#13)."""
    if b.no_price_makes_it_cheaper or (b.price_usd is not None and b.price_usd < 0):
        return '<span class="bad-text" data-break-even="never">no price makes it cheaper</span>'
    return f"{esc(unit_price(b.price_usd))}" + (
        f'<span class="small muted"> / {esc(b.unit)}</span>' if b.price_usd is not None else ""
    )


def _break_evens(comp: Comparison, page: PageAnchors) -> str:
    if not comp.break_evens:
        return ""
    rows = "".join(
        f'<tr data-candidate="{esc(b.candidate_id)}" data-price-key="{esc(b.price_key)}">'
        f"<td>{page.candidate_link(b.candidate_id)}</td>"
        f"<td><code>P[{esc(b.price_key)}]</code></td>"
        f"<td>{page.candidate_link(b.against)}</td>"
        f'<td class="num">{_break_even_cell(b)}</td>'
        f'<td class="small">{esc(b.note)}</td></tr>'
        for b in comp.break_evens
    )
    return (
        "<h3>Break-even prices of PENDING candidates</h3>"
        '<div class="table-wrap"><table id="break-evens"><thead><tr><th>candidate</th>'
        "<th>pending price</th><th>against (cheapest comparable, fully priced)</th>"
        '<th class="num">break-even price</th><th>meaning</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _excluded(comp: Comparison, page: PageAnchors) -> str:
    if not comp.excluded:
        return ""
    items = "".join(
        f'<li data-candidate="{esc(cid)}">{page.candidate_link(cid)}: {esc(reason)}</li>'
        for cid, reason in comp.excluded.items()
    )
    return f'<h3>Could not be estimated ({len(comp.excluded)})</h3><ul id="excluded">{items}</ul>'


def comparison(
    comp: Comparison, page: PageAnchors, chart: str = "", ready: frozenset[str] = frozenset()
) -> str:
    """The section; `chart` (the side-by-side chart) goes first; `ready`: the candidates
    whose decision is ready_to_budget on official prices (their COMPLETE is green)."""
    return "".join(
        (
            '<section id="comparison"><h2>Comparison on the same work</h2>',
            chart,
            "<h3>Ranked by cost per completed target</h3>",
            _ranking(comp, page, ready),
            _by_time(comp, page),
            _not_comparable(comp, page),
            _break_evens(comp, page),
            _excluded(comp, page),
            "</section>",
        )
    )
