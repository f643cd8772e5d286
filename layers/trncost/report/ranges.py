"""One candidate's Monte Carlo range on the analysis page: P10/P50/P90 of the total cost (or,
when a price is PENDING, of the known part and of each quantity that will multiply the
unknown price), of the time to target and of the instance hours held, as a chart and a table,
with the share of draws that cannot finish and what was drawn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from trncost.model.analysis import CandidateAnalysis, Range
from trncost.report.anchors import PageAnchors
from trncost.report.format import as_float, coord, esc, num, pct, quantity, short, usd_float
from trncost.report.shell import notes_list
from trncost.report.style import BAND_COLOUR, GRID_COLOUR, MEDIAN_COLOUR, POINT_COLOUR

# The chart's geometry: a row per quantity, each on its own scale.
WIDTH, LABEL_W, PLOT_W, ROW_H = 940, 250, 400, 50
X0 = LABEL_W + 10
TEXT_X = X0 + PLOT_W + 14


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
    p_infeasible: float = 0.0  # share of draws that never finish (not in the percentiles)

    def text(self, v: float | None) -> str:
        return "cannot finish" if v is None else self.fmt(v) + self.suffix


def _hours_fmt(x: float) -> str:
    return f"{x:,.2f}"


def _data_num(v: float | None) -> str:
    """A number for a data attribute: cents for money and hours, 6 digits below 1."""
    if v is None:
        return ""
    return f"{v:.2f}" if abs(v) >= 1 else f"{v:.6g}"


def _price_item(price_key: str) -> str:
    """The item of a price key (service/region/item/purchase), for a short label."""
    parts = price_key.split("/")
    return parts[2] if len(parts) >= 3 else price_key


def _cost_bands(c: CandidateAnalysis, r: Range) -> list[_Band]:
    """The total cost; or, with a PENDING price, the known part and each pending quantity."""
    est = c.estimate
    assert est is not None
    if r.total_usd is not None:
        t = r.total_usd
        total = as_float(est.total_usd)
        p10, p50, p90 = as_float(t.p10), as_float(t.p50), as_float(t.p90)
        return [_Band("total", "total cost", "total cost", p10, p50, p90, total, usd_float)]
    out: list[_Band] = []
    if r.known_usd is not None:
        k = r.known_usd
        label = "known part of the cost"
        known = float(est.total_known_usd or 0)
        p10, p50, p90 = as_float(k.p10), as_float(k.p50), as_float(k.p90)
        out.append(_Band("known", label, label, p10, p50, p90, known, usd_float))
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
                quantity,
                f" {p.unit}",
            )
        )
    return out


def _bands(c: CandidateAnalysis) -> list[_Band]:
    r, est = c.range, c.estimate
    assert r is not None and est is not None
    return [replace(b, p_infeasible=r.p_infeasible) for b in _plain_bands(c, r)]


def _plain_bands(c: CandidateAnalysis, r: Range) -> list[_Band]:
    est = c.estimate
    assert est is not None
    out = _cost_bands(c, r)
    for key, label, pc, point in (
        ("time", "time to target", r.time_to_target_h, est.time.total_h if est.time else None),
        ("held", "instances held", r.held_h, est.time.held_h if est.time else None),
    ):
        if pc is not None:
            out.append(_Band(key, label, label, pc.p10, pc.p50, pc.p90, point, _hours_fmt, " h"))
    return out


def _spans(b: _Band, sx: Callable[[float], float]) -> list[tuple[float, float, str]]:
    """The band's extent: P10–P90 of the draws that finish; when some never finish, a hatched
    tail from P90 to the end of the scale stands for them (their share is in the text)."""
    if b.p10 is None:  # no draw finishes
        return [(X0, X0 + PLOT_W, "url(#hatch-infeasible)")]
    left = sx(b.p10)
    if b.p90 is not None:
        band = [(left, sx(b.p90), BAND_COLOUR)]
        if b.p_infeasible > 0:
            band.append((sx(b.p90), X0 + PLOT_W, "url(#hatch-infeasible)"))
        return band
    # the upper draws cannot finish: unbounded, hatched to the end of the scale
    mid = sx(b.p50) if b.p50 is not None else left
    return [(left, mid, BAND_COLOUR), (mid, X0 + PLOT_W, "url(#hatch-infeasible)")]


def _range_row(i: int, b: _Band) -> str:
    y = 6 + i * ROW_H
    finite = [v for v in (b.p10, b.p50, b.p90, b.point) if v is not None]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    span = hi - lo or (abs(hi) * 0.1 or 1.0)
    tail = 0.12 if b.p90 is not None and not b.p_infeasible else 0.6  # room for the hatch
    d_lo, d_hi = lo - 0.12 * span, hi + tail * span

    def sx(v: float) -> float:
        return X0 + (v - d_lo) / (d_hi - d_lo) * PLOT_W

    summary = f"P10 {b.text(b.p10)} · P50 {b.text(b.p50)} · P90 {b.text(b.p90)}"
    attrs = "".join(
        f' data-{name}="{_data_num(v)}"'
        for name, v in (("p10", b.p10), ("p50", b.p50), ("p90", b.p90))
    )
    parts = [
        f'<g class="range-row" data-quantity="{esc(b.key)}"{attrs}>',
        f"<title>{esc(b.label)}: {esc(summary)}</title>",
        f'<text x="{LABEL_W}" y="{y + 22}" text-anchor="end">{esc(short(b.short, 36))}</text>',
        f'<line x1="{X0}" y1="{y + 18}" x2="{X0 + PLOT_W}" y2="{y + 18}" stroke="{GRID_COLOUR}" />',
    ]
    spans = _spans(b, sx)
    for a, z, fill in spans:
        if z - a > 0 or len(spans) == 1:
            parts.append(
                f'<rect class="band" x="{coord(a)}" y="{y + 8}" width="{coord(max(z - a, 2))}"'
                f' height="20" rx="3" fill="{fill}" />'
            )
    if b.p50 is not None:
        xm = sx(b.p50)
        parts.append(
            f'<line class="median" x1="{coord(xm)}" y1="{y + 4}" x2="{coord(xm)}" '
            f'y2="{y + 32}" stroke="{MEDIAN_COLOUR}" stroke-width="3" />'
        )
    if b.point is not None:
        xp, yp = sx(b.point), y + 18
        parts.append(
            f'<path class="point" d="M{coord(xp)} {yp - 6} l6 6 l-6 6 l-6 -6 z" '
            f'fill="{POINT_COLOUR}" fill-opacity="0.75" />'
        )
    for name, v in (("P10", b.p10), ("P90", b.p90)):
        if v is not None:
            parts.append(
                f'<text class="axis-label" x="{coord(sx(v))}" y="{y + 44}" '
                f'text-anchor="middle">{name}</text>'
            )
    parts.append(f'<text x="{TEXT_X}" y="{y + 16}">P50 {esc(b.text(b.p50))}</text>')
    if b.p_infeasible > 0:
        parts.append(
            f'<text class="axis-label infeasible" x="{X0 + PLOT_W}" y="{y + 4}" '
            f'text-anchor="end">{esc(pct(b.p_infeasible, 2))} cannot finish</text>'
        )
    between = (
        f"{b.fmt(b.p10)} – {b.fmt(b.p90)}{b.suffix}"
        if b.p10 is not None and b.p90 is not None
        else f"{b.text(b.p10)} – {b.text(b.p90)}"
    )
    parts.append(
        f'<text class="axis-label" x="{TEXT_X}" y="{y + 33}">P10–P90 {esc(between)}</text>'
    )
    parts.append("</g>")
    return "".join(parts)


def _range_chart(prefix: str, bands: list[_Band]) -> str:
    height = ROW_H * len(bands) + 10
    rows = [_range_row(i, b) for i, b in enumerate(bands)]
    return (
        f'<svg class="chart range-chart" id="{prefix}-range-chart" viewBox="0 0 {WIDTH} '
        f'{height}" width="{WIDTH}" height="{height}" role="img" aria-label="P10 to P90 band, '
        'P50 tick and point estimate for each quantity">' + "".join(rows) + "</svg>"
    )


def _range_table(prefix: str, bands: list[_Band]) -> str:
    rows = "".join(
        f'<tr data-quantity="{esc(b.key)}"><td>{esc(b.label)}</td>'
        + "".join(f'<td class="num">{esc(b.text(v))}</td>' for v in (b.p10, b.p50, b.p90))
        + f'<td class="num">{esc(b.text(b.point)) if b.point is not None else "—"}</td></tr>'
        for b in bands
    )
    return (
        f'<div class="table-wrap"><table class="range-table" id="{prefix}-range-table"><thead>'
        '<tr><th>quantity</th><th class="num">P10</th><th class="num">P50</th>'
        '<th class="num">P90</th><th class="num">point estimate</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _facts(r: Range) -> str:
    facts = [
        f"p_infeasible: {pct(r.p_infeasible, 2)} of draws cannot finish"
        + (" (the percentiles are over the draws that finish)" if r.p_infeasible > 0 else ""),
    ]
    if r.extrapolation_doublings > 0:
        facts.append(
            f"the planned count is {num(r.extrapolation_doublings)} doublings outside the "
            "measured counts: the throughput range widens with that distance"
        )
    if r.basis:
        facts.append("throughput rests on " + "; ".join(r.basis))
    return f'<p class="small">{esc("; ".join(facts))}</p>'


def _varied(c: CandidateAnalysis, r: Range, page: PageAnchors) -> str:
    if not r.varied:
        return ""
    rows = "".join(
        f"<tr><td>{page.input_link(c.candidate_id, v.row_id)}</td><td>{esc(v.label)}</td>"
        f'<td class="num">{esc(num(v.point))}</td><td class="small">{esc(v.distribution)}</td>'
        "</tr>"
        for v in r.varied
    )
    return (
        f'<details class="varied"><summary>What is drawn ({len(r.varied)} inputs)</summary>'
        '<div class="table-wrap"><table><thead><tr><th>input</th><th>label</th>'
        '<th class="num">value</th><th>distribution</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></details>"
    )


_LEGEND = (
    '<ul class="legend">'
    f'<li><span class="swatch" style="background:{BAND_COLOUR}"></span>P10–P90</li>'
    f'<li><span class="swatch" style="background:{MEDIAN_COLOUR}"></span>P50</li>'
    f'<li><span class="swatch" style="background:{POINT_COLOUR}"></span>point estimate '
    "(every input at its value)</li>"
    "<li>each row on its own scale</li></ul>"
)

_PENDING_NOTE = (
    '<p class="small pending-note">A price is <span class="pending-text">PENDING</span>'
    ": no total range. The known part and each pending quantity (what will multiply the "
    "unknown price) have their own percentiles.</p>"
)


def range_block(c: CandidateAnalysis, prefix: str, page: PageAnchors) -> str:
    """The candidate's range; nothing when it has no range or no estimate."""
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
    pending_note = _PENDING_NOTE if r.total_usd is None and r.pending else ""
    return (
        f'<div class="block" id="{prefix}-range">{head}{_range_chart(prefix, bands)}{_LEGEND}'
        f"{pending_note}{_range_table(prefix, bands)}"
        f"{_facts(r)}{notes_list(r.notes)}{_varied(c, r, page)}</div>"
    )
