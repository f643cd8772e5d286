"""One estimate as one self-contained HTML page.

The page carries its own CSS and inline SVG charts: no CDN, no web fonts, no scripts, no
images to fetch, so it can be saved, mailed or printed as is. Every text that comes from data
is escaped. Money is rounded to cents here, for display only; a PENDING price is shown as
PENDING (never as $0) and an incomplete total as the engine's formula in the unknown price.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from decimal import Decimal
from html import escape

from trncost.model import Component, Estimate, InputRow, LineItem, Provenance, ProvenanceKind
from trncost.report.style import COMPONENT_COLOURS, CSS, PENDING_STRIPE, TIME_COLOURS

COMPONENT_LABELS: dict[Component, str] = {
    Component.instances: "instances",
    Component.storage: "storage",
    Component.data_transfer: "data transfer",
    Component.logs: "logs & metrics",
    Component.data_preparation: "data preparation",
    Component.adaptation_reruns: "adaptation & reruns",
}

KIND_HELP: dict[ProvenanceKind, str] = {
    ProvenanceKind.official_price: "AWS Price List snapshot (SKU, rate code, effective date)",
    ProvenanceKind.trial_measurement: "measured in trial runs (trial ids, metric)",
    ProvenanceKind.user_assumption: "stated by the user (name, note)",
    ProvenanceKind.derived: "computed by a formula over other rows",
    ProvenanceKind.pending: "no basis yet: never 0, never guessed",
}

_PENDING_ROW = ' class="pending-row"'

STATUS_TEXT = {"complete": "COMPLETE", "incomplete": "INCOMPLETE", "infeasible": "INFEASIBLE"}


# -- formatting --------------------------------------------------------------------------------
def _e(value: object) -> str:
    return escape(str(value), quote=True)


def usd(amount: Decimal | None) -> str:
    """Dollars to the cent with thousands separators; None (a pending price) is PENDING."""
    if amount is None:
        return "PENDING"
    text = f"{amount:,.2f}"
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def rate_text(rate: Decimal) -> str:
    return f"${rate:,f}"


def num(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    if value is None:
        return "—"
    return str(value)


def hours(h: float) -> str:
    text = f"{h:,.2f} h"
    return text + (f" (≈ {h / 24:,.1f} days)" if h >= 48 else "")


def _anchor(row_id: str) -> str:
    return "input-" + "_".join(row_id.split())


def _kind_badge(kind: str) -> str:
    return f'<span class="kind kind-{_e(kind)}">{_e(kind)}</span>'


def _links(ids: Iterable[str], known: set[str]) -> str:
    parts = []
    for row_id in ids:
        if row_id in known:
            parts.append(f'<a href="#{_e(_anchor(row_id))}"><code>{_e(row_id)}</code></a>')
        else:
            parts.append(f"<code>{_e(row_id)}</code>")
    return ", ".join(parts)


def provenance_html(p: Provenance, known: set[str]) -> str:
    """Where a number comes from, as HTML (every data text escaped)."""
    match p.kind:
        case "official_price":
            out = (
                f"snapshot <code>{_e(p.snapshot_id)}</code> ({_e(p.source)}) · "
                f"SKU <code>{_e(p.sku)}</code> · rate code <code>{_e(p.rate_code)}</code>"
            )
            if p.effective_date:
                out += f" · effective {_e(p.effective_date)}"
            return out
        case "trial_measurement":
            trials = ", ".join(f"<code>{_e(t)}</code>" for t in p.trial_ids)
            out = f"{_e(p.metric)} ← trials {trials}"
            if p.code_versions:
                out += " · code " + ", ".join(f"<code>{_e(v)}</code>" for v in p.code_versions)
            if p.dataset_ids:
                out += " · dataset " + ", ".join(f"<code>{_e(d)}</code>" for d in p.dataset_ids)
            return out
        case "user_assumption":
            return f"<strong>{_e(p.name)}</strong>" + (f" — {_e(p.note)}" if p.note else "")
        case "derived":
            out = f"<code>{_e(p.formula)}</code>"
            if p.inputs:
                out += f'<span class="inputs-of small">from {_links(p.inputs, known)}</span>'
            return out
        case _:
            out = f'<span class="pending-text">PENDING</span>: {_e(p.reason)}'
            if p.price_key:
                out += f" · <code>P[{_e(p.price_key)}]</code>"
            return out


# -- sections ----------------------------------------------------------------------------------
def _header(
    est: Estimate,
    *,
    estimate_id: str | None,
    version: int | None,
    created_at: str | None,
    workload_name: str | None,
) -> str:
    c = est.candidate
    workload = workload_name or est.workload_id
    workload_dd = _e(workload) + (
        f' <span class="muted">(<code>{_e(est.workload_id)}</code>)</span>'
        if workload_name and workload_name != est.workload_id
        else ""
    )
    par = c.parallelism
    parallelism = f"TP {par.tensor} · PP {par.pipeline} · DP {par.data or 'auto'} · EP {par.expert}"
    if par.sequence:
        parallelism += " · SP"
    software = " ".join(x for x in (c.framework, c.framework_version) if x) or "—"
    if c.neuron_sdk_version:
        software += f" · Neuron SDK {c.neuron_sdk_version}"
    if estimate_id:
        ident = f"<code>{_e(estimate_id)}</code>"
        ident += f" · version {_e(version)}" if version is not None else ""
    else:
        ident = '<span class="muted">not stored</span>'
    meta = [
        ("Workload", workload_dd),
        ("Estimate", ident),
        ("Created", _e(created_at) if created_at else '<span class="muted">—</span>'),
        ("Engine version", f"<code>{_e(est.engine_version)}</code>"),
        ("Price snapshot", f"<code>{_e(est.snapshot_id)}</code>"),
        ("Platform / purchase", f"{_e(c.platform)} · {_e(c.purchase_option)} · {_e(c.region)}"),
        ("Parallelism", _e(parallelism)),
        ("Software", _e(software)),
    ]
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in meta)
    n_warn = len(est.warnings)
    warn_chip = (
        f' <a class="small" href="#warnings">{n_warn} warning{"s" if n_warn != 1 else ""}</a>'
        if n_warn
        else ""
    )
    return (
        '<header class="report-header"><div class="card">'
        f'<p class="muted small">trncost · cost to reach one completed training target</p>'
        f"<h1>{_e(workload)}</h1>"
        f'<p class="candidate"><strong>{_e(c.label)}</strong> '
        f'<span class="status status-{_e(est.status)}" id="status" data-status="{_e(est.status)}">'
        f"{STATUS_TEXT.get(est.status, _e(est.status.upper()))}</span>{warn_chip}</p>"
        f'<dl class="meta">{dl}</dl>'
        "</div></header>"
    )


def _figure(label: str, value: str, sub: str = "", cls: str = "", fig_id: str = "") -> str:
    ident = f' id="{fig_id}"' if fig_id else ""
    sub_html = f'<div class="small muted">{sub}</div>' if sub else ""
    return (
        f'<div class="figure"{ident}><div class="label">{label}</div>'
        f'<div class="{" ".join(("value", cls)).strip()}">{value}</div>{sub_html}</div>'
    )


def _target_text(est: Estimate) -> str:
    text = f"{num(est.target_amount)} {_e(est.target_unit)}"
    if est.target_tokens and est.target_unit != "tokens":
        text += f" ({num(est.target_tokens)} tokens)"
    return text


def _headline(est: Estimate) -> str:
    figures = []
    if est.status == "complete":
        per_target = (
            est.cost_per_target_usd if est.cost_per_target_usd is not None else est.total_usd
        )
        figures.append(
            _figure(
                "Cost per completed target",
                usd(per_target),
                _target_text(est),
                "",
                "cost-per-target",
            )
        )
        if est.cost_per_million_tokens_usd is not None:
            figures.append(
                _figure(
                    "Cost per 1M tokens",
                    usd(est.cost_per_million_tokens_usd),
                    "",
                    "",
                    "cost-per-million-tokens",
                )
            )
        else:
            figures.append(
                _figure(
                    "Cost per 1M tokens",
                    "—",
                    "tokens of the target unknown",
                    "none",
                    "cost-per-million-tokens",
                )
            )
    elif est.status == "incomplete":
        n = len(est.pending_terms)
        figures.append(
            _figure(
                "Cost per completed target",
                "PENDING",
                f"waits on {n} price{'s' if n != 1 else ''} with no official basis; "
                f"known part {usd(est.total_known_usd)}",
                "pending",
                "cost-per-target",
            )
        )
        figures.append(
            _figure(
                "Cost per 1M tokens",
                "PENDING",
                "waits on the same price(s)",
                "pending",
                "cost-per-million-tokens",
            )
        )
    else:
        figures.append(
            _figure(
                "Cost per completed target",
                "no total",
                "the plan cannot finish",
                "none",
                "cost-per-target",
            )
        )
        figures.append(_figure("Cost per 1M tokens", "—", "", "none", "cost-per-million-tokens"))

    t = est.time
    if t is not None:
        figures.append(
            _figure(
                "Time to target",
                _e(hours(t.total_h)),
                f"instances held {hours(t.held_h)}",
                "",
                "time-to-target",
            )
        )
    else:
        figures.append(_figure("Time to target", "never", "", "none", "time-to-target"))
    if est.effective_throughput is not None:
        steady = (
            f"steady {num(est.steady_throughput)} {_e(est.target_unit)}/s"
            if est.steady_throughput is not None
            else ""
        )
        figures.append(
            _figure(
                "Effective throughput",
                f"{num(est.effective_throughput)} <span class='small'>"
                f"{_e(est.target_unit)}/s</span>",
                steady,
            )
        )

    body = f'<div class="figures">{"".join(figures)}</div>'
    if est.status == "incomplete":
        terms = "".join(
            f"<li><code>P[{_e(term.price_key)}]</code> × {term.quantity:,.2f} {_e(term.unit)}"
            f" — <span class='pending-text'>PENDING</span>: {_e(term.reason)}"
            f"<span class='inputs-of small muted'>lines: {_e('; '.join(term.lines))}</span></li>"
            for term in est.pending_terms
        )
        body += (
            "<h3>Total, as a formula in the pending price</h3>"
            f'<code class="formula" id="total-formula">{_e(est.total_formula)}</code>'
            f'<ul class="pending-terms">{terms}</ul>'
        )
    elif est.status == "infeasible":
        body += (
            '<h3>Infeasible</h3><p class="infeasible-reason" id="infeasible-reason">'
            f"{_e(est.infeasible_reason or est.total_formula)}</p>"
        )
    else:
        body += f'<p class="small muted" id="total-formula">Total: {_e(est.total_formula)}</p>'
    if est.status != "complete":
        body += f'<p class="small">Target: {_target_text(est)}</p>'
    return f'<section id="headline"><h2>Headline</h2>{body}</section>'


def _warnings(est: Estimate) -> str:
    if not est.warnings:
        return (
            '<section id="warnings" class="no-warnings"><h2>Warnings</h2>'
            '<p class="muted">No warnings.</p></section>'
        )
    items = "".join(
        f'<li data-code="{_e(w.code)}"><span class="code">{_e(w.code)}</span>: {_e(w.message)}</li>'
        for w in est.warnings
    )
    return (
        f'<section id="warnings" class="warnings"><h2>⚠ Warnings ({len(est.warnings)})</h2>'
        f"<ul>{items}</ul></section>"
    )


def _pending_components(est: Estimate) -> set[Component]:
    return {li.component for li in est.line_items if li.amount_usd is None}


def cost_chart(est: Estimate) -> str:
    """Horizontal bars, one per component: the known amount, plus a hatched PENDING segment
    where the component waits on a price (a pending component is never drawn as $0)."""
    pending = _pending_components(est)
    amounts = [est.components.get(c, Decimal(0)) for c in Component]
    top_amount = max(amounts, default=Decimal(0))
    width, label_w, bar_max, row_h, hatch_w, pad = 860, 180, 400, 32, 56, 8
    height = pad * 2 + row_h * len(amounts)
    total = est.total_usd if est.complete else None
    rows = []
    for i, (comp, known) in enumerate(zip(Component, amounts, strict=True)):
        y = pad + i * row_h
        w = float(known / top_amount) * bar_max if top_amount > 0 else 0.0
        if known > 0:
            w = max(w, 2.0)  # a positive amount stays visible
        is_pending = comp in pending
        state = ("partial" if known > 0 else "pending") if is_pending else "known"
        colour = COMPONENT_COLOURS[i % len(COMPONENT_COLOURS)]
        if is_pending:
            label = f"{usd(known)} + PENDING" if known > 0 else "PENDING (unknown amount)"
        else:
            label = usd(known)
            if total:
                label += f" · {float(known / total) * 100:.1f}%"
        name = COMPONENT_LABELS[comp]
        parts = [
            f'<g class="bar-row" data-component="{comp.value}" data-state="{state}">',
            f"<title>{_e(name)}: {_e(label)}</title>",
            f'<text x="{label_w - 10}" y="{y + 21}" text-anchor="end">{_e(name)}</text>',
        ]
        if not (is_pending and known == 0):
            parts.append(
                f'<rect class="bar-known" x="{label_w}" y="{y + 6}" width="{w:.1f}" '
                f'height="20" rx="2" fill="{colour}" />'
            )
        end = label_w + w
        if is_pending:
            # Unknown, not small: the hatching runs at least to the end of the scale.
            stop = max(end + hatch_w, label_w + bar_max)
            parts.append(
                f'<rect class="bar-pending" x="{end:.1f}" y="{y + 6}" width="{stop - end:.1f}" '
                f'height="20" fill="url(#pending-hatch)" stroke="{PENDING_STRIPE}" '
                'stroke-dasharray="3 2" />'
            )
            end = stop
        cls = ' class="pending-label"' if is_pending else ""
        parts.append(f'<text x="{end + 8:.1f}" y="{y + 21}"{cls}>{_e(label)}</text>')
        parts.append("</g>")
        rows.append("".join(parts))
    return (
        f'<svg class="chart" id="cost-chart" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" '
        'aria-label="known cost per component; hatched bars wait on a pending price">'
        "<defs>"
        '<pattern id="pending-hatch" width="8" height="8" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        '<rect width="8" height="8" fill="#fef3c7" />'
        f'<rect width="3" height="8" fill="{PENDING_STRIPE}" />'
        "</pattern></defs>"
        f'<line x1="{label_w}" y1="{pad}" x2="{label_w}" y2="{height - pad}" '
        'stroke="#94a3b8" />' + "".join(rows) + "</svg>"
    )


def _breakdown(est: Estimate) -> str:
    if est.status == "infeasible":
        return (
            '<section id="breakdown"><h2>Cost breakdown</h2>'
            '<p class="muted">No cost breakdown: the plan cannot finish.</p></section>'
        )
    legend = "".join(
        f'<li><span class="swatch" style="background:{COMPONENT_COLOURS[i]}"></span>'
        f"{_e(COMPONENT_LABELS[c])}</li>"
        for i, c in enumerate(Component)
    )
    note = ""
    if _pending_components(est):
        legend += '<li><span class="swatch swatch-pending"></span>PENDING price (unknown)</li>'
        note = (
            '<p class="small muted">Bars show known amounts. A hatched segment marks a '
            "component that also waits on a price with no official basis: its size is "
            "unknown, not zero, and is drawn to the end of the scale (see the formula "
            "above).</p>"
        )
    return (
        '<section id="breakdown"><h2>Cost breakdown by component</h2>'
        f"{cost_chart(est)}<ul class='legend'>{legend}</ul>{note}</section>"
    )


def _time(est: Estimate) -> str:
    t = est.time
    if t is None:
        reason = est.infeasible_reason or "no time to target"
        return (
            '<section id="time"><h2>Time to target</h2>'
            f'<p class="muted">No time to target: {_e(reason)}</p></section>'
        )
    idle = max(t.held_h - t.total_h, 0.0)
    parts = [
        ("steady", t.steady_h),
        ("compile", t.compile_h),
        ("warm-up", t.warmup_h),
        ("checkpoints", t.checkpoint_h),
        ("evaluation", t.evaluation_h),
        ("failures (expected)", t.failure_overhead_h),
        ("held idle / queue", idle),
    ]
    width, height, bar_h = 860, 34, 22
    span = t.held_h if t.held_h > 0 else 1.0
    x = 0.0
    rects = []
    for i, (name, h) in enumerate(parts):
        w = h / span * width
        if w > 0:
            rects.append(
                f'<rect class="time-seg" data-part="{_e(name)}" x="{x:.2f}" y="6" '
                f'width="{w:.2f}" height="{bar_h}" fill="{TIME_COLOURS[i]}">'
                f"<title>{_e(name)}: {_e(hours(h))}</title></rect>"
            )
            x += w
    svg = (
        f'<svg class="chart" id="time-chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="time to target split">'
        + "".join(rects)
        + "</svg>"
    )
    rows = "".join(
        f'<tr><td><span class="swatch" style="background:{TIME_COLOURS[i]}"></span>'
        f'{_e(name)}</td><td class="num">{_e(hours(h))}</td>'
        f'<td class="num">{h / span * 100:.1f}%</td></tr>'
        for i, (name, h) in enumerate(parts)
    )
    return (
        '<section id="time"><h2>Time to target</h2>'
        f"{svg}"
        '<div class="table-wrap"><table id="time-table"><thead><tr><th>part</th>'
        '<th class="num">hours</th><th class="num">share of held</th></tr></thead>'
        f"<tbody>{rows}</tbody><tfoot>"
        f'<tr><td>time to target (failures included)</td><td class="num">'
        f"{_e(hours(t.total_h))}</td><td></td></tr>"
        f'<tr><td>instances held</td><td class="num">{_e(hours(t.held_h))}</td><td></td></tr>'
        "</tfoot></table></div></section>"
    )


def _rate_cell(li: LineItem) -> str:
    if li.amount_usd is None:
        return '<span class="pending-text">PENDING</span>'
    if li.rate_usd is None:
        return '<span class="muted">tiered</span>'
    unit = f" / {_e(li.rate_unit)}" if li.rate_unit else ""
    return f"{_e(rate_text(li.rate_usd))}{unit}"


def _line_items(est: Estimate, known: set[str]) -> str:
    if not est.line_items:
        return (
            '<section id="line-items"><h2>Line items</h2>'
            '<p class="muted">No line items.</p></section>'
        )
    rows = []
    for li in est.line_items:
        pending = li.amount_usd is None
        amount = (
            '<span class="pending-text">PENDING</span>'
            + (f'<div class="small mono">× P[{_e(li.price_key)}]</div>' if li.price_key else "")
            if pending
            else _e(usd(li.amount_usd))
        )
        rows.append(
            f'<tr{_PENDING_ROW if pending else ""} data-component="{li.component.value}">'
            f"<td>{_e(COMPONENT_LABELS[li.component])}</td><td>{_e(li.name)}</td>"
            f'<td class="num">{_e(num(li.quantity))}</td><td>{_e(li.unit)}</td>'
            f'<td class="num">{_rate_cell(li)}</td><td class="num">{amount}</td>'
            f"<td>{_kind_badge(li.provenance.kind)}</td>"
            f'<td class="source small">{provenance_html(li.provenance, known)}</td></tr>'
        )
    total = (
        _e(usd(est.total_usd))
        if est.complete
        else f'<span class="pending-text">{_e(est.total_formula)}</span>'
    )
    return (
        '<section id="line-items"><h2>Line items</h2><div class="table-wrap"><table>'
        "<thead><tr><th>component</th><th>item</th><th class='num'>quantity</th><th>unit</th>"
        "<th class='num'>rate</th><th class='num'>amount</th><th>provenance</th>"
        "<th>basis</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody>"
        f'<tfoot><tr><td colspan="5">total</td><td class="num" colspan="3">{total}</td></tr>'
        "</tfoot></table></div></section>"
    )


def _value_cell(row: InputRow) -> str:
    if row.value is None:
        if row.provenance.kind == "pending":
            return '<span class="pending-text">PENDING</span>'
        return '<span class="muted">—</span>'
    return _e(num(row.value))


def _inputs(est: Estimate, known: set[str]) -> str:
    counts = Counter(row.provenance.kind for row in est.inputs)
    legend = "".join(
        f"<li>{_kind_badge(kind.value)} <span class='small'>{counts.get(kind.value, 0)} · "
        f"{_e(KIND_HELP[kind])}</span></li>"
        for kind in ProvenanceKind
    )
    rows = "".join(
        f'<tr id="{_e(_anchor(row.id))}" data-kind="{_e(row.provenance.kind)}"'
        f"{_PENDING_ROW if row.provenance.kind == 'pending' else ''}>"
        f'<td class="id"><code>{_e(row.id)}</code></td><td>{_e(row.label)}</td>'
        f'<td class="num">{_value_cell(row)}</td><td>{_e(row.unit or "")}</td>'
        f"<td>{_kind_badge(row.provenance.kind)}</td>"
        f'<td class="source small">{provenance_html(row.provenance, known)}</td></tr>'
        for row in est.inputs
    )
    return (
        f'<section id="inputs"><h2>Input table ({len(est.inputs)} rows)</h2>'
        f'<ul class="kind-counts">{legend}</ul>'
        '<div class="table-wrap"><table><thead><tr><th>id</th><th>label</th>'
        "<th class='num'>value</th><th>unit</th><th>provenance</th><th>source</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></div></section>"
    )


# -- the page ----------------------------------------------------------------------------------
def render_report(
    estimate: Estimate,
    *,
    estimate_id: str | None = None,
    version: int | None = None,
    created_at: str | None = None,
    workload_name: str | None = None,
) -> str:
    """The estimate as one self-contained HTML5 page (inline CSS and SVG, no scripts)."""
    est = estimate
    known = {row.id for row in est.inputs}
    workload = workload_name or est.workload_id
    title = f"trncost — {workload} — {est.candidate.label} — {STATUS_TEXT.get(est.status, '')}"
    body = "".join(
        (
            _header(
                est,
                estimate_id=estimate_id,
                version=version,
                created_at=created_at,
                workload_name=workload_name,
            ),
            "<main>",
            _headline(est),
            _warnings(est),
            _breakdown(est),
            _time(est),
            _line_items(est, known),
            _inputs(est, known),
            "</main>",
            "<footer><p>Generated by the trncost engine "
            f"<code>{_e(est.engine_version)}</code> from price snapshot "
            f"<code>{_e(est.snapshot_id)}</code>. Amounts are rounded to cents for display "
            "only; the engine keeps exact Decimal amounts. A PENDING price has no official "
            "basis yet: it is never counted as 0. This page is self-contained: no scripts, no "
            "external resources.</p></footer>",
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
        f'<body data-status="{_e(est.status)}">{body}</body></html>\n'
    )
