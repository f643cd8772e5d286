"""An analysis (several candidates on one workload) as one self-contained HTML page.

Decision first, then the like-for-like comparison, then per candidate: the Monte Carlo range,
the tornado, the scaling curve, the MFU check, the credits runway and the input table. Charts
are inline SVG, the CSS is the estimate report's (plus a few rules), there are no scripts and
nothing is fetched. Every text that comes from data is escaped. Money is rounded to cents
here, for display only; a PENDING price is shown as PENDING (never as $0), with the known part
and the quantity that will multiply the unknown price.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from trncost.model import Estimate
from trncost.model.analysis import (
    Action,
    Analysis,
    CandidateAnalysis,
    Comparison,
    Decision,
    MfuFinding,
    RankedCandidate,
    Runway,
    ScalingFit,
    Swing,
    SwingEnd,
)
from trncost.report.format import esc as _e
from trncost.report.format import hours, num, usd
from trncost.report.inputs import value_cell as _value_cell
from trncost.report.provenance import kind_badge as _kind_badge
from trncost.report.provenance import provenance_html
from trncost.report.provenance import row_anchor as _anchor
from trncost.report.shell import COMPONENT_LABELS, STATUS_TEXT
from trncost.report.shell import PENDING_ROW as _PENDING_ROW
from trncost.report.style import CSS, PENDING_STRIPE

ACTION_TEXT: dict[Action, str] = {
    Action.continue_trials: "CONTINUE TRIALS",
    Action.compare_alternatives: "COMPARE ALTERNATIVES",
    Action.pause_migration: "PAUSE MIGRATION",
    Action.ready_to_budget: "READY TO BUDGET",
}
ACTION_HELP: dict[Action, str] = {
    Action.continue_trials: "run more trials: the evidence does not support a budget yet",
    Action.compare_alternatives: "a comparable alternative does as well or better",
    Action.pause_migration: "blocked: adapt the workload or wait for what it depends on",
    Action.ready_to_budget: "verified evidence, fully priced, not beaten on the same work",
}

# Chart colours (SVG attributes, so a chart copied out of the page keeps them).
LOW_COLOUR = "#2563eb"  # tornado: the input at the low end of its range
HIGH_COLOUR = "#ea580c"  # tornado: the input at the high end of its range
BAND_COLOUR = "#93c5fd"
MEDIAN_COLOUR = "#1e3a8a"
POINT_COLOUR = "#0f172a"
FIT_COLOUR = "#2563eb"
IDEAL_COLOUR = "#94a3b8"
MEASURED_COLOUR = "#0d9488"
PLANNED_COLOUR = "#7c3aed"
AXIS_COLOUR = "#94a3b8"
GRID_COLOUR = "#e2e8f0"
EXTRAPOLATED_FILL = "#fef3c7"

ERROR_TEXT = "NOT ESTIMATED"


# -- formatting ----------------------------------------------------------------------------
def unit_price(amount: Decimal | None) -> str:
    """A price per unit (a break-even price), to 1/100 of a cent: display only."""
    if amount is None:
        return "—"
    return f"${amount:,.4f}"


def pct(value: float, digits: int = 1) -> str:
    return f"{value * 100:.{digits}f} %"


def signed_pct(value: float) -> str:
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    size = abs(value) * 100
    return f"{sign}<0.1 %" if 0 < size < 0.05 else f"{sign}{size:.1f} %"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _f(x: float) -> str:
    """A coordinate for an SVG attribute."""
    return f"{x:.1f}"


def action_badge(action: Action | str, *, ident: str = "", small: bool = False) -> str:
    a = Action(action)
    id_attr = f' id="{_e(ident)}"' if ident else ""
    cls = "action action-small" if small else "action"
    return (
        f'<span class="{cls} action-{a.value}"{id_attr} data-action="{a.value}" '
        f'title="{_e(ACTION_HELP[a])}">{ACTION_TEXT[a]}</span>'
    )


def status_badge(status: str | None) -> str:
    if status is None:
        return f'<span class="status status-error" data-status="error">{ERROR_TEXT}</span>'
    return (
        f'<span class="status status-{_e(status)}" data-status="{_e(status)}">'
        f"{STATUS_TEXT.get(status, _e(status.upper()))}</span>"
    )


class _Page:
    """Anchors of the page: one section per candidate, its input rows inside it."""

    def __init__(self, analysis: Analysis) -> None:
        self.slug = {c.candidate_id: f"cand-{i}" for i, c in enumerate(analysis.candidates, 1)}
        self.rows = {
            c.candidate_id: {r.id for r in c.estimate.inputs} if c.estimate else set()
            for c in analysis.candidates
        }

    def candidate_link(self, candidate_id: str | None) -> str:
        if candidate_id is None:
            return '<span class="muted">—</span>'
        slug = self.slug.get(candidate_id)
        if slug is None:
            return _e(candidate_id)
        return f'<a href="#{slug}">{_e(candidate_id)}</a>'

    def input_anchor(self, candidate_id: str, row_id: str) -> str:
        return f"{self.slug[candidate_id]}-{_anchor(row_id)}"

    def input_link(self, candidate_id: str, row_id: str, text: str | None = None) -> str:
        label = f"<code>{_e(text or row_id)}</code>"
        if row_id in self.rows.get(candidate_id, set()):
            return f'<a href="#{_e(self.input_anchor(candidate_id, row_id))}">{label}</a>'
        return label


# -- header --------------------------------------------------------------------------------
def _header(analysis: Analysis, workload: str, workload_id: str | None) -> str:
    estimates = [c.estimate for c in analysis.candidates if c.estimate is not None]
    snapshots = sorted({e.snapshot_id for e in estimates})
    engines = sorted({e.engine_version for e in estimates})
    n_err = sum(c.error is not None for c in analysis.candidates)
    counts = f"{len(analysis.candidates)} ({len(estimates)} estimated"
    counts += f", {n_err} could not be)" if n_err else ")"
    ident = (
        f' <span class="muted">(<code>{_e(workload_id)}</code>)</span>'
        if workload_id and workload_id != workload
        else ""
    )
    codes = lambda xs: ", ".join(f"<code>{_e(x)}</code>" for x in xs) or "—"  # noqa: E731
    meta = [
        ("Workload", _e(workload) + ident),
        ("Candidates", _e(counts)),
        ("Monte Carlo", f"{analysis.samples:,} samples · seed {analysis.seed}"),
        ("Engine version", codes(engines)),
        ("Price snapshot", codes(snapshots)),
    ]
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in meta)
    d = analysis.decision
    verdict = (
        f"Migration decision: {action_badge(d.action, ident='migration-action')}"
        if d is not None
        else '<span class="muted">No migration decision: nothing could be decided.</span>'
    )
    return (
        '<header class="report-header"><div class="card">'
        '<p class="muted small">trncost · analysis: decision, comparison, range, sensitivity, '
        "scaling</p>"
        f"<h1>{_e(workload)}</h1>"
        f'<p class="candidate">{verdict}</p>'
        f'<dl class="meta">{dl}</dl></div></header>'
    )


# -- decision ------------------------------------------------------------------------------
def _evidence(items: Sequence[str]) -> str:
    if not items:
        return '<span class="muted">—</span>'
    return ", ".join(f"<code>{_e(x)}</code>" for x in items)


def _reasons_table(decision: Decision, table_id: str) -> str:
    if not decision.reasons:
        return f'<p class="small muted" id="{_e(table_id)}">No reason held it back.</p>'
    rows = "".join(
        f'<tr data-code="{_e(r.code)}"><td><code class="reason-code">{_e(r.code)}</code></td>'
        f"<td>{action_badge(r.action, small=True)}</td><td>{_e(r.message)}</td>"
        f'<td class="small">{_evidence(r.evidence)}</td></tr>'
        for r in decision.reasons
    )
    return (
        f'<div class="table-wrap"><table class="reasons" id="{_e(table_id)}"><thead><tr>'
        "<th>reason</th><th>points to</th><th>message</th><th>evidence</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _reason_list(decision: Decision) -> str:
    if not decision.reasons:
        return ""
    items = "".join(
        f'<li data-code="{_e(r.code)}"><code class="reason-code">{_e(r.code)}</code>: '
        f"{_e(r.message)}"
        + (f" <span class='small muted'>({_evidence(r.evidence)})</span>" if r.evidence else "")
        + "</li>"
        for r in decision.reasons
    )
    return f'<ul class="reason-list">{items}</ul>'


def _decision(analysis: Analysis, page: _Page) -> str:
    d = analysis.decision
    if d is None:
        top = '<p class="muted">No decision: no candidate could be decided on.</p>'
    else:
        top = (
            f'<div class="verdict verdict-{d.action.value}" id="migration-decision">'
            f"<p>{action_badge(d.action)} for the migration, from "
            f"{page.candidate_link(d.candidate_id)}</p>"
            f'<p class="small">{_e(d.summary)}</p></div>'
            f"<h3>Every reason ({len(d.reasons)})</h3>" + _reasons_table(d, "migration-reasons")
        )
    rows = []
    for c in analysis.candidates:
        dec = c.decision
        if dec is None:
            cell, reasons = '<span class="muted">—</span>', ""
        else:
            cell = action_badge(dec.action, small=True)
            reasons = (
                _reason_list(dec)
                if dec.reasons
                else f'<span class="small">{_e(dec.summary)}</span>'
            )
        action = dec.action.value if dec is not None else ""
        rows.append(
            f'<tr data-candidate="{_e(c.candidate_id)}" data-action="{action}">'
            f"<td>{page.candidate_link(c.candidate_id)}</td><td>{cell}</td><td>{reasons}</td></tr>"
        )
    per_candidate = (
        "<h3>Each candidate's decision</h3>"
        '<div class="table-wrap"><table id="candidate-decisions"><thead><tr><th>candidate</th>'
        "<th>decision</th><th>reasons</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    notes = _notes(analysis.notes)
    return f'<section id="decision"><h2>Decision</h2>{top}{per_candidate}{notes}</section>'


# -- comparison ----------------------------------------------------------------------------
def _cost_cell(r: RankedCandidate) -> str:
    if r.cost_per_target_usd is not None:
        return _e(usd(r.cost_per_target_usd))
    if r.pending_formula:
        return (
            '<span class="pending-text">PENDING</span>'
            f'<div class="small mono pending-formula">{_e(r.pending_formula)}</div>'
        )
    if r.status == "infeasible":
        return '<span class="bad-text">no total</span>'
    return '<span class="muted">—</span>'


def _rank_cell(rank: int | None) -> str:
    return f"#{rank}" if rank is not None else '<span class="muted">—</span>'


def _comparison(comp: Comparison, page: _Page) -> str:
    rows = "".join(
        f'<tr data-candidate="{_e(r.candidate_id)}" data-group="{r.group}" '
        f'data-cost-rank="{r.cost_rank if r.cost_rank is not None else ""}" '
        f'data-time-rank="{r.time_rank if r.time_rank is not None else ""}"'
        f"{_PENDING_ROW if r.cost_per_target_usd is None else ''}>"
        f'<td class="num">{r.group}</td><td class="num">{_rank_cell(r.cost_rank)}</td>'
        f'<td class="num">{_rank_cell(r.time_rank)}</td>'
        f"<td>{page.candidate_link(r.candidate_id)}</td>"
        f"<td>{status_badge(r.status)}</td><td class='num'>{_cost_cell(r)}</td>"
        f"<td class='num'>"
        f"{_e(hours(r.time_to_target_h)) if r.time_to_target_h is not None else 'never'}</td>"
        f'<td class="small">{_e(r.note or "")}</td></tr>'
        for r in comp.by_cost
    )
    table = (
        '<div class="table-wrap"><table id="ranking"><thead><tr><th class="num">group</th>'
        '<th class="num">by cost</th><th class="num">by time</th><th>candidate</th>'
        '<th>status</th><th class="num">cost per completed target</th>'
        '<th class="num">time to target</th><th>note</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        '<p class="small muted">Ranks are within a group of comparable candidates (same '
        "target, dataset, quality gate and timing scope): candidates in different groups are "
        "never ranked against each other. A PENDING price is not ranked by cost: see its "
        "break-even price.</p>"
    )
    by_time = "".join(
        f'<li data-candidate="{_e(r.candidate_id)}">group {r.group} · '
        f"{_rank_cell(r.time_rank)} {page.candidate_link(r.candidate_id)} — "
        f"{_e(hours(r.time_to_target_h)) if r.time_to_target_h is not None else 'never'}</li>"
        for r in comp.by_time
    )
    parts = [
        '<section id="comparison"><h2>Comparison on the same work</h2>',
        "<h3>Ranked by cost per completed target</h3>",
        table,
        f'<h3>Ranked by time to target</h3><ul class="by-time" id="by-time">{by_time}</ul>',
    ]
    if comp.not_comparable:
        items = "".join(
            f'<li data-a="{_e(n.a)}" data-b="{_e(n.b)}">{page.candidate_link(n.a)} vs '
            f"{page.candidate_link(n.b)}: <strong>not comparable</strong> — "
            f"{_e('; '.join(n.reasons))}</li>"
            for n in comp.not_comparable
        )
        parts.append(
            f"<h3>Not comparable ({len(comp.not_comparable)} pairs)</h3>"
            f'<ul id="not-comparable">{items}</ul>'
        )
    else:
        parts.append(
            '<h3>Not comparable</h3><p class="small muted" id="not-comparable">None: every '
            "estimated candidate shares the target, dataset, quality gate and timing scope."
            "</p>"
        )
    if comp.break_evens:
        rows_be = "".join(
            f'<tr data-candidate="{_e(b.candidate_id)}" data-price-key="{_e(b.price_key)}">'
            f"<td>{page.candidate_link(b.candidate_id)}</td>"
            f"<td><code>P[{_e(b.price_key)}]</code></td>"
            f"<td>{page.candidate_link(b.against)}</td>"
            f'<td class="num">{_e(unit_price(b.price_usd))}'
            f'<span class="small muted"> / {_e(b.unit)}</span></td>'
            f'<td class="small">{_e(b.note)}</td></tr>'
            for b in comp.break_evens
        )
        parts.append(
            "<h3>Break-even prices of PENDING candidates</h3>"
            '<div class="table-wrap"><table id="break-evens"><thead><tr><th>candidate</th>'
            "<th>pending price</th><th>against (cheapest comparable, fully priced)</th>"
            '<th class="num">break-even price</th><th>meaning</th></tr></thead>'
            f"<tbody>{rows_be}</tbody></table></div>"
        )
    if comp.excluded:
        items = "".join(
            f'<li data-candidate="{_e(cid)}">{page.candidate_link(cid)}: {_e(reason)}</li>'
            for cid, reason in comp.excluded.items()
        )
        parts.append(
            f'<h3>Could not be estimated ({len(comp.excluded)})</h3><ul id="excluded">{items}</ul>'
        )
    parts.append("</section>")
    return "".join(parts)


# -- range ---------------------------------------------------------------------------------
@dataclass
class _Band:
    key: str
    label: str  # full label (table)
    short: str  # chart label
    p10: float | None
    p50: float | None
    p90: float | None
    point: float | None
    fmt: Callable[[float], str]  # the number, display-rounded
    suffix: str = ""  # its unit

    def text(self, v: float | None) -> str:
        return "cannot finish" if v is None else self.fmt(v) + self.suffix


def _money_fmt(x: float) -> str:
    return usd(Decimal(str(round(x, 6))))


def _qty_fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def _hours_fmt(x: float) -> str:
    return f"{x:,.2f}"


def _dec(x: Decimal | None) -> float | None:
    return None if x is None else float(x)


def _data_num(v: float | None) -> str:
    """A number for a data attribute: cents for money and hours, 6 digits below 1."""
    if v is None:
        return ""
    return f"{v:.2f}" if abs(v) >= 1 else f"{v:.6g}"


def _price_item(price_key: str) -> str:
    """The item of a price key (service/region/item/purchase), for a short label."""
    parts = price_key.split("/")
    return parts[2] if len(parts) >= 3 else price_key


def _bands(c: CandidateAnalysis) -> list[_Band]:
    r, est = c.range, c.estimate
    assert r is not None and est is not None
    out: list[_Band] = []
    if r.total_usd is not None:
        t = r.total_usd
        out.append(
            _Band(
                "total",
                "total cost",
                "total cost",
                _dec(t.p10),
                _dec(t.p50),
                _dec(t.p90),
                _dec(est.total_usd),
                _money_fmt,
            )
        )
    else:
        if r.known_usd is not None:
            k = r.known_usd
            out.append(
                _Band(
                    "known",
                    "known part of the cost",
                    "known part of the cost",
                    _dec(k.p10),
                    _dec(k.p50),
                    _dec(k.p90),
                    float(est.total_known_usd),
                    _money_fmt,
                )
            )
        points = {term.price_key: term.quantity for term in est.pending_terms}
        for p in r.pending:
            q = p.quantity
            out.append(
                _Band(
                    f"pending:{p.price_key}",
                    f"{p.unit} × P[{p.price_key}] (PENDING price)",
                    f"{p.unit} × P[{_price_item(p.price_key)}]",
                    q.p10,
                    q.p50,
                    q.p90,
                    points.get(p.price_key),
                    _qty_fmt,
                    f" {p.unit}",
                )
            )
    for key, label, pc, point in (
        ("time", "time to target", r.time_to_target_h, est.time.total_h if est.time else None),
        ("held", "instances held", r.held_h, est.time.held_h if est.time else None),
    ):
        if pc is not None:
            out.append(_Band(key, label, label, pc.p10, pc.p50, pc.p90, point, _hours_fmt, " h"))
    return out


def _range_chart(prefix: str, bands: list[_Band]) -> str:
    width, label_w, plot_w, row_h = 940, 250, 400, 50
    x0 = label_w + 10
    text_x = x0 + plot_w + 14
    height = row_h * len(bands) + 10
    rows = []
    for i, b in enumerate(bands):
        y = 6 + i * row_h
        finite = [v for v in (b.p10, b.p50, b.p90, b.point) if v is not None]
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        span = hi - lo or (abs(hi) * 0.1 or 1.0)
        d_lo, d_hi = lo - 0.12 * span, hi + (0.12 if b.p90 is not None else 0.6) * span
        sx = lambda v, d_lo=d_lo, d_hi=d_hi: x0 + (v - d_lo) / (d_hi - d_lo) * plot_w  # noqa: E731
        num_text = lambda v, b=b: b.fmt(v) if v is not None else "cannot finish"  # noqa: E731
        summary = f"P10 {b.text(b.p10)} · P50 {b.text(b.p50)} · P90 {b.text(b.p90)}"
        attrs = "".join(
            f' data-{name}="{_data_num(v)}"'
            for name, v in (("p10", b.p10), ("p50", b.p50), ("p90", b.p90))
        )
        parts = [
            f'<g class="range-row" data-quantity="{_e(b.key)}"{attrs}>',
            f"<title>{_e(b.label)}: {_e(summary)}</title>",
            f'<text x="{label_w}" y="{y + 22}" text-anchor="end">{_e(_short(b.short, 36))}</text>',
            f'<line x1="{x0}" y1="{y + 18}" x2="{x0 + plot_w}" y2="{y + 18}" '
            f'stroke="{GRID_COLOUR}" />',
        ]
        spans: list[tuple[float, float, str]]
        if b.p10 is not None:
            left = sx(b.p10)
            if b.p90 is not None:
                spans = [(left, sx(b.p90), BAND_COLOUR)]
            else:  # the upper draws cannot finish: unbounded, hatched to the end of the scale
                mid = sx(b.p50) if b.p50 is not None else left
                spans = [(left, mid, BAND_COLOUR), (mid, x0 + plot_w, "url(#hatch-infeasible)")]
        else:  # no draw finishes
            spans = [(x0, x0 + plot_w, "url(#hatch-infeasible)")]
        for a, z, fill in spans:
            if z - a > 0 or len(spans) == 1:
                parts.append(
                    f'<rect class="band" x="{_f(a)}" y="{y + 8}" width="{_f(max(z - a, 2))}"'
                    f' height="20" rx="3" fill="{fill}" />'
                )
        if b.p50 is not None:
            xm = sx(b.p50)
            parts.append(
                f'<line class="median" x1="{_f(xm)}" y1="{y + 4}" x2="{_f(xm)}" y2="{y + 32}" '
                f'stroke="{MEDIAN_COLOUR}" stroke-width="3" />'
            )
        if b.point is not None:
            xp, yp = sx(b.point), y + 18
            parts.append(
                f'<path class="point" d="M{_f(xp)} {yp - 6} l6 6 l-6 6 l-6 -6 z" '
                f'fill="{POINT_COLOUR}" fill-opacity="0.75" />'
            )
        for name, v in (("P10", b.p10), ("P90", b.p90)):
            if v is not None:
                parts.append(
                    f'<text class="axis-label" x="{_f(sx(v))}" y="{y + 44}" '
                    f'text-anchor="middle">{name}</text>'
                )
        parts.append(f'<text x="{text_x}" y="{y + 16}">P50 {_e(b.text(b.p50))}</text>')
        between = (
            f"{num_text(b.p10)} – {num_text(b.p90)}{b.suffix}"
            if b.p10 is not None and b.p90 is not None
            else f"{b.text(b.p10)} – {b.text(b.p90)}"
        )
        parts.append(
            f'<text class="axis-label" x="{text_x}" y="{y + 33}">P10–P90 {_e(between)}</text>'
        )
        parts.append("</g>")
        rows.append("".join(parts))
    return (
        f'<svg class="chart range-chart" id="{prefix}-range-chart" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" role="img" aria-label="P10 to P90 band, '
        'P50 tick and point estimate for each quantity">' + "".join(rows) + "</svg>"
    )


def _range(c: CandidateAnalysis, prefix: str, page: _Page) -> str:
    r = c.range
    if r is None or c.estimate is None:
        return ""
    bands = _bands(c)
    head = (
        f'<h3>Range <span class="small muted">({r.samples:,} samples · seed {r.seed}'
        + (f" · spread ×{num(r.spread)}" if r.spread != 1 else "")
        + ")</span></h3>"
    )
    if not bands:
        return (
            f'<div class="block" id="{prefix}-range">{head}<p class="muted">No range: no draw '
            "gives a time to target.</p></div>"
        )
    rows = "".join(
        f'<tr data-quantity="{_e(b.key)}"><td>{_e(b.label)}</td>'
        + "".join(f'<td class="num">{_e(b.text(v))}</td>' for v in (b.p10, b.p50, b.p90))
        + f'<td class="num">{_e(b.text(b.point)) if b.point is not None else "—"}</td></tr>'
        for b in bands
    )
    table = (
        f'<div class="table-wrap"><table class="range-table" id="{prefix}-range-table"><thead>'
        '<tr><th>quantity</th><th class="num">P10</th><th class="num">P50</th>'
        '<th class="num">P90</th><th class="num">point estimate</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )
    facts = [
        f"infeasible draws: {pct(r.infeasible_share, 2)}"
        + (" (they count as infinitely expensive)" if r.infeasible_share > 0 else ""),
    ]
    if r.widened_for_extrapolation > 1:
        facts.append(
            f"throughput spread widened ×{num(r.widened_for_extrapolation)} for extrapolation "
            "past the measured counts"
        )
    pending_note = ""
    if r.total_usd is None and r.pending:
        pending_note = (
            '<p class="small pending-note">A price is <span class="pending-text">PENDING</span>'
            ": no total range. The known part and each pending quantity (what will multiply the "
            "unknown price) have their own percentiles.</p>"
        )
    varied = "".join(
        f"<tr><td>{page.input_link(c.candidate_id, v.row_id)}</td><td>{_e(v.label)}</td>"
        f'<td class="num">{_e(num(v.point))}</td><td class="small">{_e(v.distribution)}</td>'
        "</tr>"
        for v in r.varied
    )
    varied_html = (
        f'<details class="varied"><summary>What is drawn ({len(r.varied)} inputs)</summary>'
        '<div class="table-wrap"><table><thead><tr><th>input</th><th>label</th>'
        '<th class="num">value</th><th>distribution</th></tr></thead>'
        f"<tbody>{varied}</tbody></table></div></details>"
        if r.varied
        else ""
    )
    legend = (
        '<ul class="legend">'
        f'<li><span class="swatch" style="background:{BAND_COLOUR}"></span>P10–P90</li>'
        f'<li><span class="swatch" style="background:{MEDIAN_COLOUR}"></span>P50</li>'
        f'<li><span class="swatch" style="background:{POINT_COLOUR}"></span>point estimate '
        "(every input at its value)</li>"
        "<li>each row on its own scale</li></ul>"
    )
    return (
        f'<div class="block" id="{prefix}-range">{head}{_range_chart(prefix, bands)}{legend}'
        f"{pending_note}{table}"
        f'<p class="small">{_e("; ".join(facts))}</p>{_notes(r.notes)}{varied_html}</div>'
    )


# -- tornado -------------------------------------------------------------------------------
@dataclass
class _Bar:
    swing: Swing
    low: float | None  # change from the point at the low end (None: cannot finish)
    high: float | None
    low_text: str
    high_text: str


def _end_priced(end: SwingEnd, base: float) -> tuple[float | None, str]:
    if end.infeasible or end.total_usd is None:
        return None, "cannot finish"
    return float(end.total_usd) - base, usd(end.total_usd)


def _bars(swings: list[Swing], est: Estimate) -> tuple[list[_Bar], bool]:
    """Each swing as changes from the point: USD when priced; else relative changes of the
    measure (the known part or a pending quantity) that moves most."""
    priced = all(s.effect_unit == "usd" for s in swings) and est.total_usd is not None
    bars = []
    if priced:
        base = float(est.total_usd)
        for s in swings:
            lo, lo_t = _end_priced(s.low, base)
            hi, hi_t = _end_priced(s.high, base)
            bars.append(_Bar(s, lo, hi, lo_t, hi_t))
        return bars, True
    units = {t.price_key: t.unit for t in est.pending_terms}
    measures: list[tuple[str, float]] = [("known", float(est.total_known_usd))]
    measures += [(t.price_key, t.quantity) for t in est.pending_terms]

    def value(end: SwingEnd, key: str) -> float | None:
        if end.infeasible:
            return None
        if key == "known":
            return _dec(end.known_usd)
        return end.pending_quantities.get(key)

    def text(key: str, v: float | None, base: float) -> str:
        if v is None:
            return "cannot finish"
        change = f" ({signed_pct((v - base) / abs(base))})" if base else ""
        if key == "known":
            return f"known {_money_fmt(v)}{change}"
        return f"{_qty_fmt(v)} {units.get(key, '')} × P{change}"

    for s in swings:
        best, best_rel = measures[0], -1.0
        for key, base in measures:
            lo, hi = value(s.low, key), value(s.high, key)
            if base == 0 or lo is None or hi is None:
                continue
            rel = abs(hi - lo) / abs(base)
            if rel > best_rel:
                best, best_rel = (key, base), rel
        key, base = best
        lo, hi = value(s.low, key), value(s.high, key)
        rel_lo = None if lo is None or base == 0 else (lo - base) / abs(base)
        rel_hi = None if hi is None or base == 0 else (hi - base) / abs(base)
        bars.append(_Bar(s, rel_lo, rel_hi, text(key, lo, base), text(key, hi, base)))
    return bars, False


def _tornado_chart(
    prefix: str, bars: list[_Bar], priced: bool, c: CandidateAnalysis, page: _Page
) -> str:
    width, label_w, row_h, half = 1100, 330, 28, 140
    centre = label_w + 20 + 210 + half
    top = 26
    height = top + row_h * len(bars) + 24
    finite = [abs(v) for b in bars for v in (b.low, b.high) if v is not None]
    scale = max(finite, default=0.0) or 1.0
    sx = lambda d: centre + d / scale * half  # noqa: E731
    rows = []
    for i, b in enumerate(bars):
        s = b.swing
        y = top + i * row_h
        label = f"{s.rank}. {_short(s.label, 36)}"
        link = f"#{page.input_anchor(c.candidate_id, s.input_id)}"
        known_row = s.input_id in page.rows.get(c.candidate_id, set())
        label_svg = f'<text x="{label_w}" y="{y + 18}" text-anchor="end">{_e(label)}</text>'
        if known_row:
            label_svg = f'<a href="{_e(link)}">{label_svg}</a>'
        parts = [
            f'<g class="swing" data-rank="{s.rank}" data-input="{_e(s.input_id)}">',
            f"<title>{_e(s.label)} ({_e(s.input_id)}) — {_e(s.basis)}: low "
            f"{_e(num(s.low.value))} → {_e(b.low_text)}; high {_e(num(s.high.value))} → "
            f"{_e(b.high_text)}</title>",
            label_svg,
        ]
        ends: list[tuple[str, float, float, str]] = []  # (which, delta, x, text)
        for which, delta, text, colour in (
            ("low", b.low, b.low_text, LOW_COLOUR),
            ("high", b.high, b.high_text, HIGH_COLOUR),
        ):
            if delta is None:  # cannot finish: unbounded cost, drawn past the scale
                x_end, fill, delta = centre + half + 40, "url(#hatch-infeasible)", math.inf
            else:
                x_end, fill = sx(delta), colour
            x, w = min(centre, x_end), abs(x_end - centre)
            parts.append(
                f'<rect class="bar bar-{which}" x="{_f(x)}" y="{y + 5}" width="{_f(w)}" '
                f'height="18" fill="{fill}" fill-opacity="0.85" />'
            )
            ends.append((which, delta, x_end, text))
        # A label at the outer end of each side (by the sign of the change); an end that does
        # not move goes opposite the other; two ends on one side share one label.
        (lo_end, hi_end) = ends
        sides: dict[str, list[tuple[str, float, float, str]]] = {"left": [], "right": []}
        for end, other in ((lo_end, hi_end), (hi_end, lo_end)):
            if end[1] < 0 or (end[1] == 0 and other[1] > 0):
                sides["left"].append(end)
            else:
                sides["right"].append(end)
        for side, group in sides.items():
            if not group:
                continue
            if len(group) == 2 and group[0][1] == group[1][1] == 0:
                text = f"no change ({group[0][3]})"
            elif len(group) == 2:
                text = " · ".join(f"{e[0]} {e[3]}" for e in group)
            else:
                text = group[0][3]
            xs = [e[2] for e in group]
            outer = min(xs) if side == "left" else max(xs)
            anchor, dx = ("end", -6) if side == "left" else ("start", 6)
            parts.append(
                f'<text class="end-label end-{side}" x="{_f(outer + dx)}" y="{y + 18}" '
                f'text-anchor="{anchor}">{_e(text)}</text>'
            )
        parts.append("</g>")
        rows.append("".join(parts))
    point_text = (
        f"point total {usd(c.estimate.total_usd)}"
        if priced and c.estimate is not None
        else "point (0 %): the known part and pending quantities at every input's value"
    )
    axis = (
        f'<line x1="{_f(centre)}" y1="{top - 4}" x2="{_f(centre)}" y2="{height - 18}" '
        f'stroke="{POINT_COLOUR}" stroke-width="1.5" />'
        f'<text class="axis-label" x="{_f(centre)}" y="{top - 10}" text-anchor="middle">'
        f"{_e(point_text)}</text>"
    )
    caption = (
        "swing of the total cost (USD) around the point total"
        if priced
        else "relative swing of the known part or of the pending quantity, whichever moves most"
    )
    return (
        f'<svg class="chart tornado" id="{prefix}-tornado" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{_e(caption)}">'
        + axis
        + "".join(rows)
        + f'<text class="axis-label" x="{_f(centre)}" y="{height - 4}" text-anchor="middle">'
        f"{_e(caption)}</text></svg>"
    )


def _effect_text(s: Swing) -> str:
    if s.effect is None:
        return "cannot finish at one end"
    if s.effect_unit == "usd":
        return usd(Decimal(str(round(s.effect, 6))))
    return pct(s.effect)


def _tornado(c: CandidateAnalysis, prefix: str, page: _Page) -> str:
    est = c.estimate
    if est is None:
        return ""
    head = "<h3>Sensitivity (tornado)</h3>"
    if not c.tornado:
        why = est.infeasible_reason or "no uncertain input to swing"
        return (
            f'<div class="block" id="{prefix}-sensitivity">{head}'
            f'<p class="muted">No tornado: {_e(why)}</p></div>'
        )
    swings = sorted(c.tornado, key=lambda s: s.rank)
    bars, priced = _bars(swings, est)
    rows = "".join(
        f'<tr data-rank="{b.swing.rank}"><td class="num">{b.swing.rank}</td>'
        f"<td>{_e(b.swing.label)}<div class='small'>"
        f"{page.input_link(c.candidate_id, b.swing.input_id)}</div></td>"
        f'<td class="small">{_e(b.swing.basis)}</td>'
        f'<td class="num">{_e(num(b.swing.low.value))}'
        f'<div class="small muted">{_e(b.low_text)}</div></td>'
        f'<td class="num">{_e(num(b.swing.high.value))}'
        f'<div class="small muted">{_e(b.high_text)}</div></td>'
        f'<td class="num">{_e(_effect_text(b.swing))}</td></tr>'
        for b in bars
    )
    legend = (
        '<ul class="legend">'
        f'<li><span class="swatch" style="background:{LOW_COLOUR}"></span>input at the low end '
        "of its range</li>"
        f'<li><span class="swatch" style="background:{HIGH_COLOUR}"></span>input at the high '
        "end</li>"
        '<li><span class="swatch swatch-infeasible"></span>the plan cannot finish</li>'
        "<li>ranked by effect; labels link to the input table</li></ul>"
    )
    pending = (
        '<p class="small pending-note">A price is <span class="pending-text">PENDING</span>: no '
        "total to swing. Bars show the relative change of the known part or of the quantity "
        "that will multiply the unknown price, whichever moves most.</p>"
        if not priced
        else ""
    )
    table = (
        f'<details class="tornado-table"><summary>Swings as a table ({len(bars)})</summary>'
        f'<div class="table-wrap"><table id="{prefix}-tornado-table"><thead><tr>'
        '<th class="num">rank</th><th>input</th><th>range basis</th><th class="num">low → '
        'result</th><th class="num">high → result</th><th class="num">effect</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></details>"
    )
    return (
        f'<div class="block" id="{prefix}-sensitivity">{head}'
        f"{_tornado_chart(prefix, bars, priced, c, page)}{legend}{pending}{table}</div>"
    )


# -- scaling -------------------------------------------------------------------------------
def _nice_ticks(hi: float, n: int = 5, integer: bool = False) -> list[float]:
    if hi <= 0:
        return [0.0]
    raw = hi / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    if integer:
        step = max(1.0, round(step))
    ticks, t = [], 0.0
    while t <= hi * 1.0001:
        ticks.append(t)
        t += step
    return ticks


def _scaling_chart(prefix: str, fit: ScalingFit, planned: int | None, unit: str) -> str:
    width, height = 940, 380
    ml, mr, mt, mb = 90, 24, 20, 52
    pw, ph = width - ml - mr, height - mt - mb
    m = fit.max_measured_count
    limit = 2 * m
    xmax = max(limit * 1.3, (planned or 0) * 1.1, m + 1)
    samples = [1 + (xmax - 1) * k / 120 for k in range(121)]
    fitted = [fit.predict(n) for n in samples]
    measured = [p.throughput for p in fit.points]
    ymax = max([*measured, *fitted, fit.predict(planned) if planned else 0.0]) * 1.15 or 1.0
    sx = lambda n: ml + n / xmax * pw  # noqa: E731
    sy = lambda v: mt + ph - v / ymax * ph  # noqa: E731
    parts = []
    # extrapolation zone
    if limit < xmax:
        parts.append(
            f'<rect class="extrapolated" x="{_f(sx(limit))}" y="{mt}" '
            f'width="{_f(ml + pw - sx(limit))}" height="{ph}" fill="{EXTRAPOLATED_FILL}" />'
            f'<text class="axis-label" x="{_f(sx(limit) + 6)}" y="{mt + 14}">extrapolated: past '
            f"2× the largest measured count ({m})</text>"
        )
    # grid and axes
    for t in _nice_ticks(ymax, 5):
        parts.append(
            f'<line x1="{ml}" y1="{_f(sy(t))}" x2="{ml + pw}" y2="{_f(sy(t))}" '
            f'stroke="{GRID_COLOUR}" />'
            f'<text class="axis-label" x="{ml - 6}" y="{_f(sy(t) + 4)}" text-anchor="end">'
            f"{_e(num(float(t)))}</text>"
        )
    for t in _nice_ticks(xmax, 8, integer=True):
        parts.append(
            f'<line x1="{_f(sx(t))}" y1="{mt + ph}" x2="{_f(sx(t))}" y2="{mt + ph + 5}" '
            f'stroke="{AXIS_COLOUR}" />'
            f'<text class="axis-label" x="{_f(sx(t))}" y="{mt + ph + 18}" text-anchor="middle">'
            f"{int(t)}</text>"
        )
    parts.append(
        f'<line x1="{ml}" y1="{mt + ph}" x2="{ml + pw}" y2="{mt + ph}" stroke="{AXIS_COLOUR}" />'
        f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{mt + ph}" stroke="{AXIS_COLOUR}" />'
        f'<text class="axis-label" x="{ml + pw / 2:.1f}" y="{height - 8}" '
        'text-anchor="middle">instances</text>'
        f'<text class="axis-label" x="14" y="{mt + ph / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {mt + ph / 2:.1f})">throughput ({_e(unit)}/s)</text>'
    )
    # ideal linear scaling λn, clipped at the top of the plot
    lam = fit.parameters.lam
    n_top = min(xmax, ymax / lam) if lam > 0 else xmax
    parts.append(
        f'<line class="ideal" x1="{_f(sx(0))}" y1="{_f(sy(0))}" x2="{_f(sx(n_top))}" '
        f'y2="{_f(sy(lam * n_top))}" stroke="{IDEAL_COLOUR}" stroke-width="1.5" '
        'stroke-dasharray="2 4" />'
    )
    # the fitted curve: solid inside the evidence, dashed past 2× the largest count
    inside = [(n, v) for n, v in zip(samples, fitted, strict=True) if n <= limit]
    outside = [(n, v) for n, v in zip(samples, fitted, strict=True) if n >= limit]
    if inside and outside and inside[-1][0] < limit:
        inside.append((limit, fit.predict(limit)))
        outside.insert(0, (limit, fit.predict(limit)))
    for cls, pts, dash in (("fit", inside, ""), ("fit fit-extrapolated", outside, "6 4")):
        if len(pts) < 2:
            continue
        d = "M" + " L".join(f"{_f(sx(n))} {_f(sy(v))}" for n, v in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<path class="{cls}" d="{d}" fill="none" stroke="{FIT_COLOUR}" '
            f'stroke-width="2.5"{dash_attr} />'
        )
    # the planned count
    if planned:
        xp, yp = sx(planned), sy(fit.predict(planned))
        parts.append(
            f'<g class="planned" data-count="{planned}">'
            f"<title>planned: {planned} instances, fitted {_e(num(fit.predict(planned)))} "
            f"{_e(unit)}/s</title>"
            f'<line x1="{_f(xp)}" y1="{mt}" x2="{_f(xp)}" y2="{mt + ph}" '
            f'stroke="{PLANNED_COLOUR}" stroke-dasharray="4 3" />'
            f'<rect x="{_f(xp - 6)}" y="{_f(yp - 6)}" width="12" height="12" '
            f'fill="{PLANNED_COLOUR}" transform="rotate(45 {_f(xp)} {_f(yp)})" />'
            f'<text x="{_f(xp - 6)}" y="{mt + 30}" text-anchor="end" fill="{PLANNED_COLOUR}">'
            f"planned {planned}</text></g>"
        )
    # measured points
    for p in fit.points:
        parts.append(
            f'<circle class="measured" data-count="{p.count}" cx="{_f(sx(p.count))}" '
            f'cy="{_f(sy(p.throughput))}" r="6" fill="{MEASURED_COLOUR}" stroke="#fff" '
            f'stroke-width="1.5"><title>{p.count} instances: measured '
            f"{_e(num(p.throughput))} {_e(unit)}/s, fitted {_e(num(p.fitted))} "
            f"({_e(signed_pct(p.relative_residual))})</title></circle>"
        )
    return (
        f'<svg class="chart scaling" id="{prefix}-scaling-chart" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="measured throughput per '
        'instance count, the fitted scaling curve and ideal linear scaling">'
        + "".join(parts)
        + "</svg>"
    )


def _params_row(name: str, p, chosen: bool) -> str:
    mark = ' class="chosen"' if chosen else ""
    return (
        f"<tr{mark}><td>{_e(name)}{' (chosen)' if chosen else ''}</td>"
        f'<td class="num">{_e(num(p.lam))}</td><td class="num">{_e(f"{p.sigma:.4g}")}</td>'
        f'<td class="num">{_e(f"{p.kappa:.4g}")}</td>'
        f'<td class="num">{_e(f"{p.weighted_rss:.3g}")}</td><td class="num">{p.dof}</td></tr>'
    )


def _scaling(c: CandidateAnalysis, prefix: str, page: _Page) -> str:
    est = c.estimate
    if est is None:
        return ""
    head = "<h3>Scaling</h3>"
    fit = c.scaling
    if fit is None:
        why = [n for n in c.notes if "scaling" in n] or ["no scaling fit for this candidate"]
        return (
            f'<div class="block" id="{prefix}-scaling">{head}'
            f'<p class="muted small">{_e("; ".join(why))}</p></div>'
        )
    unit = est.target_unit
    planned = est.candidate.instance_count
    p = fit.parameters
    extrapolated = planned > 2 * fit.max_measured_count
    flag = (
        f'<p class="flag">⚠ The planned {planned} instances are past 2× the largest measured '
        f"count ({fit.max_measured_count}): the throughput there is an extrapolation of the fit."
        "</p>"
        if extrapolated
        else ""
    )
    summary = (
        f"<p><strong>{_e(fit.model.upper())}</strong> <code>{_e(fit.formula)}</code></p>"
        f'<dl class="meta params" id="{prefix}-scaling-params">'
        f"<div><dt>λ (one instance)</dt><dd>{_e(num(p.lam))} {_e(unit)}/s</dd></div>"
        f"<div><dt>σ (contention)</dt><dd>{_e(f'{p.sigma:.4g}')}</dd></div>"
        f"<div><dt>κ (coherency)</dt><dd>{_e(f'{p.kappa:.4g}')}</dd></div>"
        f"<div><dt>measured counts</dt><dd>"
        f"{_e(', '.join(str(pt.count) for pt in fit.points))}</dd></div></dl>"
        f'<p class="small"><strong>Why {_e(fit.model)}:</strong> {_e(fit.choice)}</p>'
        f'<p class="small muted">Method: {_e(fit.method)}</p>'
    )
    models = ""
    if fit.usl is not None or fit.amdahl is not None:
        rows = ""
        if fit.usl is not None:
            rows += _params_row("USL", fit.usl, fit.model == "usl")
        if fit.amdahl is not None:
            rows += _params_row("Amdahl", fit.amdahl, fit.model == "amdahl")
        models = (
            '<div class="table-wrap"><table class="scaling-models"><thead><tr><th>model</th>'
            '<th class="num greek">λ</th><th class="num greek">σ</th><th class="num greek">κ</th>'
            '<th class="num">weighted RSS</th><th class="num">dof</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"
        )
    points = "".join(
        f'<tr data-count="{pt.count}"><td class="num">{pt.count}</td>'
        f'<td class="num">{_e(num(pt.throughput))}</td><td class="num">{_e(num(pt.fitted))}</td>'
        f'<td class="num">{_e(signed_pct(pt.relative_residual))}</td>'
        f'<td class="num">{_e(pct(pt.efficiency))}</td>'
        f'<td class="num">{_e(pct(pt.fitted_efficiency))}</td>'
        f"<td>{page.input_link(c.candidate_id, pt.row_id)}</td></tr>"
        for pt in fit.points
    )
    points_table = (
        f'<div class="table-wrap"><table id="{prefix}-scaling-points"><thead><tr>'
        f'<th class="num">instances</th><th class="num">measured {_e(unit)}/s</th>'
        f'<th class="num">fitted</th><th class="num">residual</th>'
        '<th class="num">efficiency</th><th class="num">fitted efficiency</th>'
        "<th>input row</th></tr></thead>"
        f"<tbody>{points}</tbody></table></div>"
    )
    legend = (
        '<ul class="legend">'
        f'<li><span class="swatch" style="background:{MEASURED_COLOUR}"></span>measured</li>'
        f'<li><span class="swatch" style="background:{FIT_COLOUR}"></span>fitted '
        f"{_e(fit.model)} (dashed past 2× the largest count)</li>"
        f'<li><span class="swatch" style="background:{IDEAL_COLOUR}"></span>ideal linear λn</li>'
        f'<li><span class="swatch" style="background:{PLANNED_COLOUR}"></span>planned count</li>'
        f'<li><span class="swatch" style="background:{EXTRAPOLATED_FILL}"></span>extrapolation '
        "zone</li></ul>"
    )
    return (
        f'<div class="block" id="{prefix}-scaling">{head}{flag}'
        f"{_scaling_chart(prefix, fit, planned, unit)}{legend}{summary}{models}{points_table}"
        f"{_notes(fit.notes)}</div>"
    )


# -- MFU, runway, warnings, inputs ---------------------------------------------------------
def _mfu_row(f: MfuFinding) -> str:
    verdict = (
        '<span class="flag-badge">⚠ implausible</span>'
        if f.implausible
        else ('<span class="muted">—</span>' if f.mfu is None else "plausible")
    )
    precision = _e(f.precision or "—") + (
        ' <span class="small muted">(assumed)</span>' if f.precision_assumed else ""
    )
    cls = ' class="flag-row"' if f.implausible else ""
    return (
        f'<tr{cls} data-trial="{_e(f.trial_id)}" '
        f'data-implausible="{"true" if f.implausible else "false"}">'
        f'<td class="id"><code>{_e(f.trial_id)}</code></td>'
        f'<td class="num">{_e(num(f.chips))}</td><td>{precision}</td>'
        f'<td class="num">{_e(num(f.tokens_per_s))}</td>'
        f'<td class="num">{_e(pct(f.mfu)) if f.mfu is not None else "—"}</td>'
        f'<td class="num">{_e(pct(f.plausible_max, 0))}</td><td>{verdict}</td>'
        f'<td class="small">{_e(f.note)}</td></tr>'
    )


def _mfu(c: CandidateAnalysis, prefix: str) -> str:
    if c.estimate is None:
        return ""
    head = "<h3>MFU check</h3>"
    if not c.mfu:
        return (
            f'<div class="block" id="{prefix}-mfu">{head}<p class="muted small">No MFU check: '
            "no usable trial with a known chip peak and model size.</p></div>"
        )
    n_bad = sum(f.implausible for f in c.mfu)
    flag = (
        f'<p class="flag">⚠ {n_bad} trial{"s" if n_bad != 1 else ""} above a plausible MFU: '
        "likely a measurement error (tokens counted twice, a wrong instance count, or a "
        "short burst taken as the average).</p>"
        if n_bad
        else ""
    )
    sources = sorted({f.source for f in c.mfu if f.source})
    src = (
        '<p class="small muted">Peaks: ' + "; ".join(_e(s) for s in sources) + "</p>"
        if sources
        else ""
    )
    return (
        f'<div class="block" id="{prefix}-mfu">{head}{flag}<div class="table-wrap">'
        f'<table id="{prefix}-mfu-table"><thead><tr><th>trial</th><th class="num">chips</th>'
        '<th>precision</th><th class="num">tokens/s</th><th class="num">MFU</th>'
        '<th class="num">plausible max</th><th>verdict</th><th>how</th></tr></thead>'
        f"<tbody>{''.join(_mfu_row(f) for f in c.mfu)}</tbody></table></div>{src}</div>"
    )


def _runway(run: Runway | None, prefix: str) -> str:
    if run is None:
        return ""
    count = lambda v: num(v) if v is not None else "unknown"  # noqa: E731
    limited = {"credits": "the credit amount", "expiry": "the expiry date"}.get(
        run.limited_by or "", "unknown (a price is PENDING)"
    )
    meta = [
        ("Completed targets on credits", _e(count(run.targets_on_credits))),
        ("Targets the credits pay for", _e(count(run.targets_fit))),
        ("Targets before expiry", _e(count(run.targets_before_expiry))),
        ("Limited by", _e(limited)),
        ("Credits run out on", _e(run.runs_out_on or "—")),
        ("Expires on", _e(run.expires_on)),
        ("Pace", _e(run.pace)),
        ("Covered per target", _e(usd(run.covered_per_target_usd))),
        ("Covered once (trials)", _e(usd(run.one_time_covered_usd))),
        ("Not covered per target", _e(usd(run.uncovered_per_target_usd))),
    ]
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in meta)
    formula = (
        f'<p class="small">Runway in the pending price:</p><code class="formula">'
        f"{_e(run.formula)}</code>"
        if run.formula
        else ""
    )
    rows = "".join(
        f"<tr{_PENDING_ROW if li.amount_usd is None else ''}><td>{_e(li.name)}</td>"
        f"<td>{_e(COMPONENT_LABELS.get(li.component, li.component))}</td>"
        f'<td class="num">{_e(usd(li.amount_usd))}</td>'
        f"<td>{'once' if li.one_time else 'per target'}</td></tr>"
        for li in run.uncovered
    )
    uncovered = (
        f"<h4>Lines the credits do not cover ({len(run.uncovered)})</h4>"
        '<div class="table-wrap"><table class="uncovered"><thead><tr><th>line</th>'
        '<th>component</th><th class="num">amount</th><th>spent</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        if run.uncovered
        else '<p class="small">Every line is covered by the credits.</p>'
    )
    return (
        f'<div class="block" id="{prefix}-runway"><h3>Credits runway '
        f'<span class="small muted">(as of {_e(run.as_of)})</span></h3>'
        f'<dl class="meta">{dl}</dl>{formula}{uncovered}{_notes(run.notes)}</div>'
    )


def _warnings(est: Estimate, prefix: str) -> str:
    if not est.warnings:
        return ""
    items = "".join(
        f'<li data-code="{_e(w.code)}"><span class="code">{_e(w.code)}</span>: {_e(w.message)}</li>'
        for w in est.warnings
    )
    return (
        f'<div class="block warnings" id="{prefix}-warnings"><h3>⚠ Warnings '
        f"({len(est.warnings)})</h3><ul>{items}</ul></div>"
    )


def _inputs(c: CandidateAnalysis, prefix: str, page: _Page) -> str:
    est = c.estimate
    if est is None or not est.inputs:
        return ""
    # No links inside the provenance: the rows' anchors are per candidate on this page.
    rows = "".join(
        f'<tr id="{_e(page.input_anchor(c.candidate_id, row.id))}" '
        f'data-kind="{_e(row.provenance.kind)}"'
        f"{_PENDING_ROW if row.provenance.kind == 'pending' else ''}>"
        f'<td class="id"><code>{_e(row.id)}</code></td><td>{_e(row.label)}</td>'
        f'<td class="num">{_value_cell(row)}</td><td>{_e(row.unit or "")}</td>'
        f"<td>{_kind_badge(row.provenance.kind)}</td>"
        f'<td class="source small">{provenance_html(row.provenance, set())}</td></tr>'
        for row in est.inputs
    )
    return (
        f'<details class="inputs" id="{prefix}-inputs"><summary>Input table '
        f"({len(est.inputs)} rows, with provenance)</summary>"
        '<div class="table-wrap"><table><thead><tr><th>id</th><th>label</th>'
        "<th class='num'>value</th><th>unit</th><th>provenance</th><th>source</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></div></details>"
    )


def _notes(notes: Sequence[str]) -> str:
    if not notes:
        return ""
    return '<ul class="notes small">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>"


# -- one candidate -------------------------------------------------------------------------
def _headline(est: Estimate) -> str:
    if est.status == "complete":
        cost = _e(usd(est.cost_per_target_usd if est.cost_per_target_usd else est.total_usd))
    elif est.status == "incomplete":
        cost = (
            '<span class="pending-text">PENDING</span> '
            f'<code class="small">{_e(est.total_formula)}</code>'
        )
    else:
        cost = f'<span class="bad-text">no total</span>: {_e(est.infeasible_reason or "")}'
    time = _e(hours(est.time.total_h)) if est.time else "never"
    return (
        f'<p class="cand-headline">Cost per completed target: <strong>{cost}</strong> · '
        f"time to target: <strong>{time}</strong></p>"
    )


def _candidate(c: CandidateAnalysis, page: _Page) -> str:
    prefix = page.slug[c.candidate_id]
    est = c.estimate
    decision = f" {action_badge(c.decision.action, small=True)}" if c.decision is not None else ""
    title = f"<h2>{_e(c.candidate_id)} {status_badge(est.status if est else None)}{decision}</h2>"
    parts = [
        f'<section id="{prefix}" class="candidate-analysis" data-candidate="{_e(c.candidate_id)}"'
        f' data-status="{_e(est.status) if est else "error"}">',
        title,
    ]
    if est is None:
        parts.append(
            f'<p class="infeasible-reason error" id="{prefix}-error"><strong>Could not be '
            f"estimated:</strong> {_e(c.error or 'no reason given')}</p>"
            '<p class="small muted">Left out of the ranking; no range, tornado or scaling '
            "curve.</p>"
        )
        if c.decision is not None:
            parts.append(
                f'<p class="small">{_e(c.decision.summary)}</p>' + _reason_list(c.decision)
            )
        parts.append(_notes(c.notes))
        parts.append("</section>")
        return "".join(parts)
    parts += [
        _headline(est),
        _warnings(est, prefix),
        _range(c, prefix, page),
        _tornado(c, prefix, page),
        _scaling(c, prefix, page),
        _mfu(c, prefix),
        _runway(c.runway, prefix),
        _notes([n for n in c.notes if c.scaling is not None or "scaling" not in n]),
        _inputs(c, prefix, page),
        "</section>",
    ]
    return "".join(parts)


_DEFS = (
    '<svg class="defs" width="0" height="0" aria-hidden="true" focusable="false"><defs>'
    '<pattern id="hatch-infeasible" width="8" height="8" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="8" height="8" fill="#fee2e2" />'
    '<rect width="3" height="8" fill="#dc2626" /></pattern>'
    '<pattern id="hatch-pending" width="8" height="8" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="8" height="8" fill="#fef3c7" />'
    f'<rect width="3" height="8" fill="{PENDING_STRIPE}" /></pattern>'
    "</defs></svg>"
)


# -- the page ------------------------------------------------------------------------------
def render_analysis_report(
    analysis: Analysis, *, workload_name: str | None = None, workload_id: str | None = None
) -> str:
    """The analysis as one self-contained HTML5 page (inline CSS and SVG, no scripts)."""
    page = _Page(analysis)
    if workload_id is None:
        workload_id = next(
            (c.estimate.workload_id for c in analysis.candidates if c.estimate), None
        )
    workload = workload_name or workload_id or "workload"
    d = analysis.decision
    verdict = ACTION_TEXT[d.action] if d is not None else "NO DECISION"
    title = f"trncost — {workload} — analysis — {verdict}"
    body = "".join(
        (
            _DEFS,
            _header(analysis, workload, workload_id),
            "<main>",
            _decision(analysis, page),
            _comparison(analysis.comparison, page),
            *(_candidate(c, page) for c in analysis.candidates),
            "</main>",
            "<footer><p>Generated by trncost. Ranges come from a seeded Monte Carlo "
            f"({analysis.samples:,} samples, seed {analysis.seed}): the same seed gives the same "
            "page. Amounts are rounded to cents for display only; the engine keeps exact "
            "Decimal amounts. A PENDING price has no official basis yet: it is never counted "
            "as 0. This page is self-contained: no scripts, no external resources.</p></footer>",
        )
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        '<meta name="generator" content="trncost">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>"
        f'<body class="analysis" data-action="{d.action.value if d else ""}">{body}</body>'
        "</html>\n"
    )


__all__ = ["render_analysis_report", "unit_price"]
