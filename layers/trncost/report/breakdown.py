"""The estimate page's charts: the cost breakdown by component (a PENDING component hatched,
never drawn as $0) and the split of the time to target."""

from __future__ import annotations

from decimal import Decimal

from trncost.model import Component, Estimate
from trncost.report.format import esc, hours, usd
from trncost.report.shell import COMPONENT_LABELS
from trncost.report.style import COMPONENT_COLOURS, PENDING_STRIPE, TIME_COLOURS

# The cost chart's geometry.
WIDTH, LABEL_W, BAR_MAX, ROW_H, HATCH_W, PAD = 860, 180, 400, 32, 56, 8


def pending_components(est: Estimate) -> set[Component]:
    return {li.component for li in est.line_items if li.amount_usd is None}


def _bar_label(known: Decimal, is_pending: bool, total: Decimal | None) -> str:
    if is_pending:
        return f"{usd(known)} + PENDING" if known > 0 else "PENDING (unknown amount)"
    label = usd(known)
    if total:
        label += f" · {float(known / total) * 100:.1f}%"
    return label


def _bar_row(
    i: int,
    comp: Component,
    known: Decimal,
    top_amount: Decimal,
    *,
    is_pending: bool,
    total: Decimal | None,
) -> str:
    y = PAD + i * ROW_H
    w = float(known / top_amount) * BAR_MAX if top_amount > 0 else 0.0
    if known > 0:
        w = max(w, 2.0)  # a positive amount stays visible
    state = ("partial" if known > 0 else "pending") if is_pending else "known"
    colour = COMPONENT_COLOURS[i % len(COMPONENT_COLOURS)]
    label = _bar_label(known, is_pending, total)
    name = COMPONENT_LABELS[comp]
    parts = [
        f'<g class="bar-row" data-component="{comp.value}" data-state="{state}">',
        f"<title>{esc(name)}: {esc(label)}</title>",
        f'<text x="{LABEL_W - 10}" y="{y + 21}" text-anchor="end">{esc(name)}</text>',
    ]
    if not (is_pending and known == 0):
        parts.append(
            f'<rect class="bar-known" x="{LABEL_W}" y="{y + 6}" width="{w:.1f}" '
            f'height="20" rx="2" fill="{colour}" />'
        )
    end = LABEL_W + w
    if is_pending:
        # Unknown, not small: the hatching runs at least to the end of the scale.
        stop = max(end + HATCH_W, LABEL_W + BAR_MAX)
        parts.append(
            f'<rect class="bar-pending" x="{end:.1f}" y="{y + 6}" width="{stop - end:.1f}" '
            f'height="20" fill="url(#pending-hatch)" stroke="{PENDING_STRIPE}" '
            'stroke-dasharray="3 2" />'
        )
        end = stop
    cls = ' class="pending-label"' if is_pending else ""
    parts.append(f'<text x="{end + 8:.1f}" y="{y + 21}"{cls}>{esc(label)}</text>')
    parts.append("</g>")
    return "".join(parts)


def cost_chart(est: Estimate) -> str:
    """Horizontal bars, one per component: the known amount, plus a hatched PENDING segment
    where the component waits on a price (a pending component is never drawn as $0)."""
    pending = pending_components(est)
    known = est.known_by_component()  # a PENDING component's known part; its subtotal is null
    amounts = [known[c] for c in Component]
    top_amount = max(amounts, default=Decimal(0))
    height = PAD * 2 + ROW_H * len(amounts)
    total = est.total_usd if est.complete else None
    rows = [
        _bar_row(i, comp, known, top_amount, is_pending=comp in pending, total=total)
        for i, (comp, known) in enumerate(zip(Component, amounts, strict=True))
    ]
    return (
        f'<svg class="chart" id="cost-chart" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" '
        'aria-label="known cost per component; hatched bars wait on a pending price">'
        "<defs>"
        '<pattern id="pending-hatch" width="8" height="8" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        '<rect width="8" height="8" fill="#fef3c7" />'
        f'<rect width="3" height="8" fill="{PENDING_STRIPE}" />'
        "</pattern></defs>"
        f'<line x1="{LABEL_W}" y1="{PAD}" x2="{LABEL_W}" y2="{height - PAD}" '
        'stroke="#94a3b8" />' + "".join(rows) + "</svg>"
    )


def breakdown(est: Estimate) -> str:
    if est.status == "infeasible":
        return (
            '<section id="breakdown"><h2>Cost breakdown</h2>'
            '<p class="muted">No cost breakdown: the plan cannot finish.</p></section>'
        )
    legend = "".join(
        f'<li><span class="swatch" style="background:{COMPONENT_COLOURS[i]}"></span>'
        f"{esc(COMPONENT_LABELS[c])}</li>"
        for i, c in enumerate(Component)
    )
    note = ""
    if pending_components(est):
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


def time_split(est: Estimate) -> str:
    """The time to target split into its parts, as a bar and a table."""
    t = est.time
    if t is None:
        reason = est.infeasible_reason or "no time to target"
        return (
            '<section id="time"><h2>Time to target</h2>'
            f'<p class="muted">No time to target: {esc(reason)}</p></section>'
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
                f'<rect class="time-seg" data-part="{esc(name)}" x="{x:.2f}" y="6" '
                f'width="{w:.2f}" height="{bar_h}" fill="{TIME_COLOURS[i]}">'
                f"<title>{esc(name)}: {esc(hours(h))}</title></rect>"
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
        f'{esc(name)}</td><td class="num">{esc(hours(h))}</td>'
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
        f"{esc(hours(t.total_h))}</td><td></td></tr>"
        f'<tr><td>instances held</td><td class="num">{esc(hours(t.held_h))}</td><td></td></tr>'
        "</tfoot></table></div></section>"
    )
