"""One candidate's sensitivity on the analysis page: a tornado of one-at-a-time swings, ranked
by effect, each input at the low and at the high end of its range. With every price known the
bars are USD changes of the total; with a PENDING price they are relative changes of the known
part or of the pending quantity, whichever moves most."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trncost.model import Estimate
from trncost.model.analysis import CandidateAnalysis, Swing, SwingEnd
from trncost.report.anchors import PageAnchors
from trncost.report.format import (
    as_float,
    coord,
    esc,
    num,
    pct,
    quantity,
    short,
    signed_pct,
    usd,
    usd_float,
)
from trncost.report.style import HIGH_COLOUR, LOW_COLOUR, POINT_COLOUR

# The chart's geometry: changes drawn from the centre line, `HALF` wide at the largest.
WIDTH, LABEL_W, ROW_H, HALF = 1100, 330, 28, 140
CENTRE = LABEL_W + 20 + 210 + HALF
TOP = 26


@dataclass
class _Bar:
    swing: Swing
    low: float | None  # change from the point at the low end (None: cannot finish)
    high: float | None
    low_text: str
    high_text: str


# -- the swings as changes ---------------------------------------------------------------------
def _end_priced(end: SwingEnd, base: float) -> tuple[float | None, str]:
    if end.infeasible or end.total_usd is None:
        return None, "cannot finish"
    return float(end.total_usd) - base, usd(end.total_usd)


def _priced_bars(swings: list[Swing], base: float) -> list[_Bar]:
    bars = []
    for s in swings:
        lo, lo_t = _end_priced(s.low, base)
        hi, hi_t = _end_priced(s.high, base)
        bars.append(_Bar(s, lo, hi, lo_t, hi_t))
    return bars


class _Measures:
    """What a swing moves when there is no total: the known part and each pending quantity."""

    def __init__(self, est: Estimate) -> None:
        self.units = {t.price_key: t.unit for t in est.pending_terms}
        self.measures: list[tuple[str, float]] = [("known", float(est.total_known_usd or 0))]
        self.measures += [(t.price_key, t.quantity) for t in est.pending_terms]

    @staticmethod
    def value(end: SwingEnd, key: str) -> float | None:
        if end.infeasible:
            return None
        if key == "known":
            return as_float(end.known_usd)
        return end.pending_quantities.get(key)

    def text(self, key: str, v: float | None, base: float) -> str:
        if v is None:
            return "cannot finish"
        change = f" ({signed_pct((v - base) / abs(base))})" if base else ""
        if key == "known":
            return f"known {usd_float(v)}{change}"
        return f"{quantity(v)} {self.units.get(key, '')} × P{change}"

    def most_moved(self, s: Swing) -> tuple[str, float]:
        """The measure the swing moves most, relative to its value (the known part if none)."""
        best, best_rel = self.measures[0], -1.0
        for key, base in self.measures:
            lo, hi = self.value(s.low, key), self.value(s.high, key)
            if base == 0 or lo is None or hi is None:
                continue
            rel = abs(hi - lo) / abs(base)
            if rel > best_rel:
                best, best_rel = (key, base), rel
        return best

    def bar(self, s: Swing) -> _Bar:
        key, base = self.most_moved(s)
        lo, hi = self.value(s.low, key), self.value(s.high, key)
        rel_lo = None if lo is None or base == 0 else (lo - base) / abs(base)
        rel_hi = None if hi is None or base == 0 else (hi - base) / abs(base)
        return _Bar(s, rel_lo, rel_hi, self.text(key, lo, base), self.text(key, hi, base))


def _bars(swings: list[Swing], est: Estimate) -> tuple[list[_Bar], bool]:
    """Each swing as changes from the point: USD when priced; else relative changes of the
    measure (the known part or a pending quantity) that moves most."""
    if all(s.effect_unit == "usd" for s in swings) and est.total_usd is not None:
        return _priced_bars(swings, float(est.total_usd)), True
    measures = _Measures(est)
    return [measures.bar(s) for s in swings], False


# -- the chart ---------------------------------------------------------------------------------
_End = tuple[str, float, float, str]  # (which, change, x, text)


def _end_labels(ends: tuple[_End, _End], y: int) -> list[str]:
    """A label at the outer end of each side (by the sign of the change); an end that does
    not move goes opposite the other; two ends on one side share one label."""
    lo_end, hi_end = ends
    sides: dict[str, list[_End]] = {"left": [], "right": []}
    for end, other in ((lo_end, hi_end), (hi_end, lo_end)):
        if end[1] < 0 or (end[1] == 0 and other[1] > 0):
            sides["left"].append(end)
        else:
            sides["right"].append(end)
    labels = []
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
        labels.append(
            f'<text class="end-label end-{side}" x="{coord(outer + dx)}" y="{y + 18}" '
            f'text-anchor="{anchor}">{esc(text)}</text>'
        )
    return labels


def _swing_row(i: int, b: _Bar, scale: float, c: CandidateAnalysis, page: PageAnchors) -> str:
    s = b.swing
    y = TOP + i * ROW_H
    label = f"{s.rank}. {short(s.label, 36)}"
    link = f"#{page.input_anchor(c.candidate_id, s.input_id)}"
    known_row = s.input_id in page.rows.get(c.candidate_id, set())
    label_svg = f'<text x="{LABEL_W}" y="{y + 18}" text-anchor="end">{esc(label)}</text>'
    if known_row:
        label_svg = f'<a href="{esc(link)}">{label_svg}</a>'
    parts = [
        f'<g class="swing" data-rank="{s.rank}" data-input="{esc(s.input_id)}">',
        f"<title>{esc(s.label)} ({esc(s.input_id)}) — {esc(s.basis)}: low "
        f"{esc(num(s.low.value))} → {esc(b.low_text)}; high {esc(num(s.high.value))} → "
        f"{esc(b.high_text)}</title>",
        label_svg,
    ]
    ends: list[_End] = []
    x_end: float
    for which, delta, text, colour in (
        ("low", b.low, b.low_text, LOW_COLOUR),
        ("high", b.high, b.high_text, HIGH_COLOUR),
    ):
        if delta is None:  # cannot finish: unbounded cost, drawn past the scale
            x_end, fill, delta = CENTRE + HALF + 40, "url(#hatch-infeasible)", math.inf
        else:
            x_end, fill = CENTRE + delta / scale * HALF, colour
        x, w = min(CENTRE, x_end), abs(x_end - CENTRE)
        parts.append(
            f'<rect class="bar bar-{which}" x="{coord(x)}" y="{y + 5}" width="{coord(w)}" '
            f'height="18" fill="{fill}" fill-opacity="0.85" />'
        )
        ends.append((which, delta, x_end, text))
    parts += _end_labels((ends[0], ends[1]), y)
    parts.append("</g>")
    return "".join(parts)


def _tornado_chart(
    prefix: str, bars: list[_Bar], priced: bool, c: CandidateAnalysis, page: PageAnchors
) -> str:
    height = TOP + ROW_H * len(bars) + 24
    finite = [abs(v) for b in bars for v in (b.low, b.high) if v is not None]
    scale = max(finite, default=0.0) or 1.0
    rows = [_swing_row(i, b, scale, c, page) for i, b in enumerate(bars)]
    point_text = (
        f"point total {usd(c.estimate.total_usd)}"
        if priced and c.estimate is not None
        else "point (0 %): the known part and pending quantities at every input's value"
    )
    axis = (
        f'<line x1="{coord(CENTRE)}" y1="{TOP - 4}" x2="{coord(CENTRE)}" y2="{height - 18}" '
        f'stroke="{POINT_COLOUR}" stroke-width="1.5" />'
        f'<text class="axis-label" x="{coord(CENTRE)}" y="{TOP - 10}" text-anchor="middle">'
        f"{esc(point_text)}</text>"
    )
    caption = (
        "swing of the total cost (USD) around the point total"
        if priced
        else "relative swing of the known part or of the pending quantity, whichever moves most"
    )
    return (
        f'<svg class="chart tornado" id="{prefix}-tornado" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{esc(caption)}">'
        + axis
        + "".join(rows)
        + f'<text class="axis-label" x="{coord(CENTRE)}" y="{height - 4}" text-anchor="middle">'
        f"{esc(caption)}</text></svg>"
    )


# -- the block ---------------------------------------------------------------------------------
def _effect_text(s: Swing) -> str:
    if s.effect is None:
        return "cannot finish at one end"
    if s.effect_unit == "usd":
        return usd_float(s.effect)
    return pct(s.effect)


def _swing_table(prefix: str, bars: list[_Bar], c: CandidateAnalysis, page: PageAnchors) -> str:
    rows = "".join(
        f'<tr data-rank="{b.swing.rank}"><td class="num">{b.swing.rank}</td>'
        f"<td>{esc(b.swing.label)}<div class='small'>"
        f"{page.input_link(c.candidate_id, b.swing.input_id)}</div></td>"
        f'<td class="small">{esc(b.swing.basis)}</td>'
        f'<td class="num">{esc(num(b.swing.low.value))}'
        f'<div class="small muted">{esc(b.low_text)}</div></td>'
        f'<td class="num">{esc(num(b.swing.high.value))}'
        f'<div class="small muted">{esc(b.high_text)}</div></td>'
        f'<td class="num">{esc(_effect_text(b.swing))}</td></tr>'
        for b in bars
    )
    return (
        f'<details class="tornado-table"><summary>Swings as a table ({len(bars)})</summary>'
        f'<div class="table-wrap"><table id="{prefix}-tornado-table"><thead><tr>'
        '<th class="num">rank</th><th>input</th><th>range basis</th><th class="num">low → '
        'result</th><th class="num">high → result</th><th class="num">effect</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></details>"
    )


_LEGEND = (
    '<ul class="legend">'
    f'<li><span class="swatch" style="background:{LOW_COLOUR}"></span>input at the low end '
    "of its range</li>"
    f'<li><span class="swatch" style="background:{HIGH_COLOUR}"></span>input at the high '
    "end</li>"
    '<li><span class="swatch swatch-infeasible"></span>the plan cannot finish</li>'
    "<li>ranked by effect; labels link to the input table</li></ul>"
)

_PENDING_NOTE = (
    '<p class="small pending-note">A price is <span class="pending-text">PENDING</span>: no '
    "total to swing. Bars show the relative change of the known part or of the quantity "
    "that will multiply the unknown price, whichever moves most.</p>"
)


def tornado_block(c: CandidateAnalysis, prefix: str, page: PageAnchors) -> str:
    """The candidate's tornado and its table; nothing without an estimate."""
    est = c.estimate
    if est is None:
        return ""
    head = "<h3>Sensitivity (tornado)</h3>"
    if not c.tornado:
        why = est.infeasible_reason or "no uncertain input to swing"
        return (
            f'<div class="block" id="{prefix}-sensitivity">{head}'
            f'<p class="muted">No tornado: {esc(why)}</p></div>'
        )
    swings = sorted(c.tornado, key=lambda s: s.rank)
    bars, priced = _bars(swings, est)
    pending = "" if priced else _PENDING_NOTE
    return (
        f'<div class="block" id="{prefix}-sensitivity">{head}'
        f"{_tornado_chart(prefix, bars, priced, c, page)}{_LEGEND}{pending}"
        f"{_swing_table(prefix, bars, c, page)}</div>"
    )
