"""The comparison's side-by-side chart: every candidate's cost per completed target and time to
target on one inline SVG (two panels sharing the rows), each with its P10–P90 whisker where
the Monte Carlo range knows one.

A candidate waiting on a PENDING price shows PENDING in the cost panel (its known part drawn
hatched, never as a cost), one that cannot finish shows "never", one that could not be
estimated says so. No scripts, no fonts, no external references: the page's CSP holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from trncost.model.analysis import Analysis, CandidateAnalysis
from trncost.report.format import coord, esc, hours, short, usd, usd_float
from trncost.report.style import AXIS_COLOUR, GRID_COLOUR, MEDIAN_COLOUR, PENDING_STRIPE

WIDTH, LABEL_W, GAP, ROW_H, TOP, BOTTOM = 1000, 220, 40, 40, 34, 30
PANEL_W = (WIDTH - LABEL_W - GAP - 20) // 2
COST_X = LABEL_W + 10
TIME_X = COST_X + PANEL_W + GAP
BAR_H = 14
COST_COLOUR = "#2563eb"
TIME_COLOUR = "#0d9488"


@dataclass(frozen=True)
class _Value:
    """One candidate's figure in one panel: the point, its P10–P90 whisker, or a word."""

    point: float | None
    p10: float | None = None
    p90: float | None = None
    word: str | None = None  # PENDING, never, not estimated
    known: float | None = None  # a PENDING cost's known part (drawn hatched)
    text: str = ""


def _cost(c: CandidateAnalysis) -> _Value:
    est = c.estimate
    if est is None:
        return _Value(None, word="NOT ESTIMATED", text="not estimated")
    if est.status == "infeasible":
        return _Value(None, word="no total", text="the plan cannot finish")
    if not est.complete:
        known = float(est.total_known_usd or Decimal(0))
        return _Value(
            None, word="PENDING", known=known, text=f"PENDING: known part {usd_float(known)}"
        )
    total = est.cost_per_target_usd if est.cost_per_target_usd is not None else est.total_usd
    point = float(total) if total is not None else None
    r = c.range.total_usd if c.range else None
    p10 = float(r.p10) if r and r.p10 is not None else None
    p90 = float(r.p90) if r and r.p90 is not None else None
    text = usd(total)
    if p10 is not None and p90 is not None:
        text += f" (P10–P90 {usd_float(p10)}–{usd_float(p90)})"
    return _Value(point, p10, p90, text=text)


def _time(c: CandidateAnalysis) -> _Value:
    est = c.estimate
    if est is None:
        return _Value(None, word="NOT ESTIMATED", text="not estimated")
    if est.time is None:
        return _Value(None, word="never", text="never: the plan cannot finish")
    r = c.range.time_to_target_h if c.range else None
    p10 = r.p10 if r else None
    p90 = r.p90 if r else None
    text = hours(est.time.total_h)
    if p10 is not None and p90 is not None:
        text += f" (P10–P90 {p10:,.1f}–{p90:,.1f} h)"
    return _Value(est.time.total_h, p10, p90, text=text)


TICKS = 4


def _top(values: list[_Value]) -> float:
    """The axis end: a round number (1 to 10 × 10^k per tick) above every value."""
    top = max((x for v in values for x in (v.point, v.p90, v.known) if x is not None), default=0.0)
    if top <= 0:
        return 1.0
    raw = top / TICKS
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * power >= raw)
    return step * TICKS


def _tick_text(value: float, fmt: str) -> str:
    """An axis tick, short enough that neighbours never touch at 1024 px ($32k, $1.5M)."""
    if fmt == "usd":
        for size, suffix in ((1e6, "M"), (1e3, "k")):
            if value >= size:
                return f"${value / size:,.{0 if (value / size).is_integer() else 1}f}{suffix}"
        return f"${value:,.0f}" if value >= 100 or value == 0 else usd_float(value)
    return f"{value:,.0f} h" if value >= 10 or value == 0 else f"{value:,.1f} h"


def _panel_axis(x0: float, top: float, height: float, label: str, fmt: str) -> str:
    ticks = []
    for i in range(TICKS + 1):
        x = x0 + PANEL_W * i / TICKS
        anchor = "start" if i == 0 else "end" if i == TICKS else "middle"
        ticks.append(
            f'<line x1="{coord(x)}" y1="{TOP - 4}" x2="{coord(x)}" y2="{coord(height - BOTTOM)}" '
            f'stroke="{GRID_COLOUR}" stroke-width="1" />'
            f'<text x="{coord(x)}" y="{coord(height - BOTTOM + 16)}" text-anchor="{anchor}" '
            f'class="axis-label">{esc(_tick_text(top * i / TICKS, fmt))}</text>'
        )
    return (
        f'<text x="{coord(x0)}" y="18" class="panel-title">{esc(label)}</text>'
        + "".join(ticks)
        + f'<line x1="{coord(x0)}" y1="{TOP - 4}" x2="{coord(x0)}" '
        f'y2="{coord(height - BOTTOM)}" stroke="{AXIS_COLOUR}" stroke-width="1" />'
    )


def _mark(v: _Value, x0: float, y: float, top: float, colour: str, kind: str) -> str:
    def at(x: float) -> float:
        return x0 + PANEL_W * max(0.0, x) / top

    mid = y + ROW_H / 2
    title = f"<title>{esc(v.text)}</title>"
    if v.word is not None:
        out = ""
        end = x0 + 4
        if v.known is not None and v.known > 0:
            end = at(v.known)
            out += (
                f'<rect x="{coord(x0)}" y="{coord(mid - BAR_H / 2)}" width="{coord(end - x0)}" '
                f'height="{BAR_H}" fill="url(#hatch-pending)" stroke="{PENDING_STRIPE}" '
                f'stroke-dasharray="3 2">{title}</rect>'
            )
        cls = "pending-label" if v.word == "PENDING" else "none-label"
        anchor = "start"
        tx = end + 6
        if tx > x0 + PANEL_W - 70:
            tx, anchor = x0 + PANEL_W - 2, "end"
        return out + (
            f'<text x="{coord(tx)}" y="{coord(mid + 4)}" text-anchor="{anchor}" class="{cls}" '
            f'data-{kind}="{esc(v.word)}">{esc(v.word)}{title}</text>'
        )
    assert v.point is not None
    x = at(v.point)
    out = (
        f'<rect x="{coord(x0)}" y="{coord(mid - BAR_H / 2)}" width="{coord(x - x0)}" '
        f'height="{BAR_H}" fill="{colour}" fill-opacity="0.8" data-{kind}="{v.point:.2f}">'
        f"{title}</rect>"
    )
    if v.p10 is not None and v.p90 is not None:
        lo, hi = at(v.p10), at(v.p90)
        out += (
            f'<g class="whisker" data-p10="{v.p10:.2f}" data-p90="{v.p90:.2f}">'
            f'<line x1="{coord(lo)}" y1="{coord(mid)}" x2="{coord(hi)}" y2="{coord(mid)}" '
            f'stroke="{MEDIAN_COLOUR}" stroke-width="1.5" />'
            f'<line x1="{coord(lo)}" y1="{coord(mid - 6)}" x2="{coord(lo)}" y2="{coord(mid + 6)}" '
            f'stroke="{MEDIAN_COLOUR}" stroke-width="1.5" />'
            f'<line x1="{coord(hi)}" y1="{coord(mid - 6)}" x2="{coord(hi)}" y2="{coord(mid + 6)}" '
            f'stroke="{MEDIAN_COLOUR}" stroke-width="1.5" />{title}</g>'
        )
    return out


def _row_label(candidate_id: str, y: float) -> str:
    """The candidate's name on two lines when it has a parenthesis (`4× trn2.48xlarge` over
    `(us-east-2, on_demand)`), so it is read whole instead of cut at 1024 px."""
    head, sep, rest = candidate_id.partition(" (")
    if not sep:
        lines = [(short(candidate_id, 30), "row-label")]
    else:
        lines = [(short(head, 30), "row-label"), (short("(" + rest, 34), "row-label row-sub")]
    mid = y + ROW_H / 2
    first = mid + 4 - 7 * (len(lines) - 1)
    spans = "".join(
        f'<tspan x="{LABEL_W}" y="{coord(first + 14 * i)}" class="{cls}">{esc(text)}</tspan>'
        for i, (text, cls) in enumerate(lines)
    )
    return (
        f'<text text-anchor="end" class="row-label">{spans}<title>{esc(candidate_id)}</title>'
        "</text>"
    )


def side_by_side(analysis: Analysis) -> str:
    """The chart and its legend; nothing when there are no candidates."""
    cands = analysis.candidates
    if not cands:
        return ""
    costs = [_cost(c) for c in cands]
    times = [_time(c) for c in cands]
    top_cost, top_time = _top(costs), _top(times)
    height = TOP + ROW_H * len(cands) + BOTTOM
    rows = []
    for i, (c, cost, time) in enumerate(zip(cands, costs, times, strict=True)):
        y = TOP + ROW_H * i
        rows.append(
            f'<g class="sbs-row" data-candidate="{esc(c.candidate_id)}">'
            + _row_label(c.candidate_id, y)
            + _mark(cost, COST_X, y, top_cost, COST_COLOUR, "cost")
            + _mark(time, TIME_X, y, top_time, TIME_COLOUR, "time")
            + "</g>"
        )
    svg = (
        f'<svg class="chart side-by-side" id="side-by-side" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-labelledby="sbs-title" preserveAspectRatio="xMinYMin meet">'
        '<title id="sbs-title">Cost per completed target and time to target, side by side, '
        "with P10–P90 whiskers</title>"
        + _panel_axis(COST_X, top_cost, height, "cost per completed target", "usd")
        + _panel_axis(TIME_X, top_time, height, "time to target", "h")
        + "".join(rows)
        + "</svg>"
    )
    legend = (
        '<ul class="legend">'
        f'<li><span class="swatch" style="background:{COST_COLOUR}"></span>cost per completed '
        "target</li>"
        f'<li><span class="swatch" style="background:{TIME_COLOUR}"></span>time to target</li>'
        "<li>├─┤ P10–P90 of the Monte Carlo range (where known)</li>"
        '<li><span class="swatch swatch-pending"></span>PENDING price: the known part only, '
        "never a cost</li></ul>"
    )
    return f'<div class="side-by-side-wrap"><h3>Side by side</h3>{svg}{legend}</div>'
