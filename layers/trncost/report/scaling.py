"""One candidate's scaling on the analysis page: the fitted curve (USL or Amdahl) over the
measured throughput per instance count, ideal linear scaling, the planned count and the zone
past 2× the largest measured count where the curve is an extrapolation; the fit's parameters,
the models compared and the residual of every measured point."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trncost.model.analysis import CandidateAnalysis, ScalingFit, ScalingParameters
from trncost.report.anchors import PageAnchors
from trncost.report.format import coord, esc, num, pct, signed_pct
from trncost.report.shell import notes_list
from trncost.report.style import (
    AXIS_COLOUR,
    EXTRAPOLATED_FILL,
    FIT_COLOUR,
    GRID_COLOUR,
    IDEAL_COLOUR,
    MEASURED_COLOUR,
    PLANNED_COLOUR,
)

# The chart's geometry: the plot inside margins (left, right, top, bottom).
WIDTH, HEIGHT = 940, 380
ML, MR, MT, MB = 90, 24, 20, 52
PW, PH = WIDTH - ML - MR, HEIGHT - MT - MB


def nice_ticks(hi: float, n: int = 5, integer: bool = False) -> list[float]:
    """About `n` round ticks from 0 to `hi` (steps of 1, 2, 2.5 or 5 × a power of ten)."""
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


@dataclass(frozen=True)
class _Frame:
    """The plot's scales: instance counts 0..xmax across, throughput 0..ymax up."""

    xmax: float
    ymax: float

    def sx(self, n: float) -> float:
        return ML + n / self.xmax * PW

    def sy(self, v: float) -> float:
        return MT + PH - v / self.ymax * PH


def _extrapolation_zone(fr: _Frame, limit: int, m: int) -> list[str]:
    if limit >= fr.xmax:
        return []
    return [
        f'<rect class="extrapolated" x="{coord(fr.sx(limit))}" y="{MT}" '
        f'width="{coord(ML + PW - fr.sx(limit))}" height="{PH}" fill="{EXTRAPOLATED_FILL}" />'
        f'<text class="axis-label" x="{coord(fr.sx(limit) + 6)}" y="{MT + 14}">extrapolated: '
        f"past 2× the largest measured count ({m})</text>"
    ]


def _grid_and_axes(fr: _Frame, unit: str) -> list[str]:
    parts = []
    for t in nice_ticks(fr.ymax, 5):
        parts.append(
            f'<line x1="{ML}" y1="{coord(fr.sy(t))}" x2="{ML + PW}" y2="{coord(fr.sy(t))}" '
            f'stroke="{GRID_COLOUR}" />'
            f'<text class="axis-label" x="{ML - 6}" y="{coord(fr.sy(t) + 4)}" text-anchor="end">'
            f"{esc(num(float(t)))}</text>"
        )
    for t in nice_ticks(fr.xmax, 8, integer=True):
        parts.append(
            f'<line x1="{coord(fr.sx(t))}" y1="{MT + PH}" x2="{coord(fr.sx(t))}" '
            f'y2="{MT + PH + 5}" stroke="{AXIS_COLOUR}" />'
            f'<text class="axis-label" x="{coord(fr.sx(t))}" y="{MT + PH + 18}" '
            f'text-anchor="middle">{int(t)}</text>'
        )
    parts.append(
        f'<line x1="{ML}" y1="{MT + PH}" x2="{ML + PW}" y2="{MT + PH}" stroke="{AXIS_COLOUR}" />'
        f'<line x1="{ML}" y1="{MT}" x2="{ML}" y2="{MT + PH}" stroke="{AXIS_COLOUR}" />'
        f'<text class="axis-label" x="{ML + PW / 2:.1f}" y="{HEIGHT - 8}" '
        'text-anchor="middle">instances</text>'
        f'<text class="axis-label" x="14" y="{MT + PH / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {MT + PH / 2:.1f})">throughput ({esc(unit)}/s)</text>'
    )
    return parts


def _ideal_line(fr: _Frame, lam: float) -> str:
    """Ideal linear scaling λn, clipped at the top of the plot."""
    n_top = min(fr.xmax, fr.ymax / lam) if lam > 0 else fr.xmax
    return (
        f'<line class="ideal" x1="{coord(fr.sx(0))}" y1="{coord(fr.sy(0))}" '
        f'x2="{coord(fr.sx(n_top))}" y2="{coord(fr.sy(lam * n_top))}" stroke="{IDEAL_COLOUR}" '
        'stroke-width="1.5" stroke-dasharray="2 4" />'
    )


def _fit_curve(
    fr: _Frame, fit: ScalingFit, samples: list[float], fitted: list[float], limit: int
) -> list[str]:
    """The fitted curve: solid inside the evidence, dashed past 2× the largest count."""
    inside = [(n, v) for n, v in zip(samples, fitted, strict=True) if n <= limit]
    outside = [(n, v) for n, v in zip(samples, fitted, strict=True) if n >= limit]
    if inside and outside and inside[-1][0] < limit:
        inside.append((limit, fit.predict(limit)))
        outside.insert(0, (limit, fit.predict(limit)))
    parts = []
    for cls, pts, dash in (("fit", inside, ""), ("fit fit-extrapolated", outside, "6 4")):
        if len(pts) < 2:
            continue
        d = "M" + " L".join(f"{coord(fr.sx(n))} {coord(fr.sy(v))}" for n, v in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<path class="{cls}" d="{d}" fill="none" stroke="{FIT_COLOUR}" '
            f'stroke-width="2.5"{dash_attr} />'
        )
    return parts


def _planned_marker(fr: _Frame, fit: ScalingFit, planned: int, unit: str) -> str:
    xp, yp = fr.sx(planned), fr.sy(fit.predict(planned))
    return (
        f'<g class="planned" data-count="{planned}">'
        f"<title>planned: {planned} instances, fitted {esc(num(fit.predict(planned)))} "
        f"{esc(unit)}/s</title>"
        f'<line x1="{coord(xp)}" y1="{MT}" x2="{coord(xp)}" y2="{MT + PH}" '
        f'stroke="{PLANNED_COLOUR}" stroke-dasharray="4 3" />'
        f'<rect x="{coord(xp - 6)}" y="{coord(yp - 6)}" width="12" height="12" '
        f'fill="{PLANNED_COLOUR}" transform="rotate(45 {coord(xp)} {coord(yp)})" />'
        f'<text x="{coord(xp - 6)}" y="{MT + 30}" text-anchor="end" fill="{PLANNED_COLOUR}">'
        f"planned {planned}</text></g>"
    )


def _measured_points(fr: _Frame, fit: ScalingFit, unit: str) -> list[str]:
    return [
        f'<circle class="measured" data-count="{p.count}" cx="{coord(fr.sx(p.count))}" '
        f'cy="{coord(fr.sy(p.throughput))}" r="6" fill="{MEASURED_COLOUR}" stroke="#fff" '
        f'stroke-width="1.5"><title>{p.count} instances: measured '
        f"{esc(num(p.throughput))} {esc(unit)}/s, fitted {esc(num(p.fitted))} "
        f"({esc(signed_pct(p.relative_residual))})</title></circle>"
        for p in fit.points
    ]


def scaling_chart(prefix: str, fit: ScalingFit, planned: int | None, unit: str) -> str:
    m = fit.max_measured_count
    limit = 2 * m
    xmax = max(limit * 1.3, (planned or 0) * 1.1, m + 1)
    samples = [1 + (xmax - 1) * k / 120 for k in range(121)]
    fitted = [fit.predict(n) for n in samples]
    measured = [p.throughput for p in fit.points]
    ymax = max([*measured, *fitted, fit.predict(planned) if planned else 0.0]) * 1.15 or 1.0
    fr = _Frame(xmax, ymax)
    parts = [
        *_extrapolation_zone(fr, limit, m),
        *_grid_and_axes(fr, unit),
        _ideal_line(fr, fit.parameters.lam),
        *_fit_curve(fr, fit, samples, fitted, limit),
    ]
    if planned:
        parts.append(_planned_marker(fr, fit, planned, unit))
    parts += _measured_points(fr, fit, unit)
    return (
        f'<svg class="chart scaling" id="{prefix}-scaling-chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="measured throughput per '
        'instance count, the fitted scaling curve and ideal linear scaling">'
        + "".join(parts)
        + "</svg>"
    )


# -- the block ---------------------------------------------------------------------------------
def _params_row(name: str, p: ScalingParameters, chosen: bool) -> str:
    mark = ' class="chosen"' if chosen else ""
    return (
        f"<tr{mark}><td>{esc(name)}{' (chosen)' if chosen else ''}</td>"
        f'<td class="num">{esc(num(p.lam))}</td><td class="num">{esc(f"{p.sigma:.4g}")}</td>'
        f'<td class="num">{esc(f"{p.kappa:.4g}")}</td>'
        f'<td class="num">{esc(f"{p.weighted_rss:.3g}")}</td><td class="num">{p.dof}</td></tr>'
    )


def _summary(prefix: str, fit: ScalingFit, unit: str) -> str:
    p = fit.parameters
    return (
        f"<p><strong>{esc(fit.model.upper())}</strong> <code>{esc(fit.formula)}</code></p>"
        f'<dl class="meta params" id="{prefix}-scaling-params">'
        f"<div><dt>λ (one instance)</dt><dd>{esc(num(p.lam))} {esc(unit)}/s</dd></div>"
        f"<div><dt>σ (contention)</dt><dd>{esc(f'{p.sigma:.4g}')}</dd></div>"
        f"<div><dt>κ (coherency)</dt><dd>{esc(f'{p.kappa:.4g}')}</dd></div>"
        f"<div><dt>measured counts</dt><dd>"
        f"{esc(', '.join(str(pt.count) for pt in fit.points))}</dd></div></dl>"
        f'<p class="small"><strong>Why {esc(fit.model)}:</strong> {esc(fit.choice)}</p>'
        f'<p class="small muted">Method: {esc(fit.method)}</p>'
    )


def _models(fit: ScalingFit) -> str:
    """The models compared (USL, Amdahl), the chosen one marked; nothing when none was."""
    if fit.usl is None and fit.amdahl is None:
        return ""
    rows = ""
    if fit.usl is not None:
        rows += _params_row("USL", fit.usl, fit.model == "usl")
    if fit.amdahl is not None:
        rows += _params_row("Amdahl", fit.amdahl, fit.model == "amdahl")
    return (
        '<div class="table-wrap"><table class="scaling-models"><thead><tr><th>model</th>'
        '<th class="num greek">λ</th><th class="num greek">σ</th><th class="num greek">κ</th>'
        '<th class="num">weighted RSS</th><th class="num">dof</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _points_table(
    c: CandidateAnalysis, prefix: str, fit: ScalingFit, unit: str, page: PageAnchors
) -> str:
    points = "".join(
        f'<tr data-count="{pt.count}"><td class="num">{pt.count}</td>'
        f'<td class="num">{esc(num(pt.throughput))}</td>'
        f'<td class="num">{esc(num(pt.fitted))}</td>'
        f'<td class="num">{esc(signed_pct(pt.relative_residual))}</td>'
        f'<td class="num">{esc(pct(pt.efficiency))}</td>'
        f'<td class="num">{esc(pct(pt.fitted_efficiency))}</td>'
        f"<td>{page.input_link(c.candidate_id, pt.row_id)}</td></tr>"
        for pt in fit.points
    )
    return (
        f'<div class="table-wrap"><table id="{prefix}-scaling-points"><thead><tr>'
        f'<th class="num">instances</th><th class="num">measured {esc(unit)}/s</th>'
        f'<th class="num">fitted</th><th class="num">residual</th>'
        '<th class="num">efficiency</th><th class="num">fitted efficiency</th>'
        "<th>input row</th></tr></thead>"
        f"<tbody>{points}</tbody></table></div>"
    )


def _legend(fit: ScalingFit) -> str:
    return (
        '<ul class="legend">'
        f'<li><span class="swatch" style="background:{MEASURED_COLOUR}"></span>measured</li>'
        f'<li><span class="swatch" style="background:{FIT_COLOUR}"></span>fitted '
        f"{esc(fit.model)} (dashed past 2× the largest count)</li>"
        f'<li><span class="swatch" style="background:{IDEAL_COLOUR}"></span>ideal linear λn</li>'
        f'<li><span class="swatch" style="background:{PLANNED_COLOUR}"></span>planned count</li>'
        f'<li><span class="swatch" style="background:{EXTRAPOLATED_FILL}"></span>extrapolation '
        "zone</li></ul>"
    )


def scaling_block(c: CandidateAnalysis, prefix: str, page: PageAnchors) -> str:
    """The candidate's scaling curve and fit; why there is none; nothing without an estimate."""
    est = c.estimate
    if est is None:
        return ""
    head = "<h3>Scaling</h3>"
    fit = c.scaling
    if fit is None:
        why = [n for n in c.notes if "scaling" in n] or ["no scaling fit for this candidate"]
        return (
            f'<div class="block" id="{prefix}-scaling">{head}'
            f'<p class="muted small">{esc("; ".join(why))}</p></div>'
        )
    unit = est.target_unit
    planned = est.candidate.instance_count
    flag = (
        f'<p class="flag">⚠ The planned {planned} instances are past 2× the largest measured '
        f"count ({fit.max_measured_count}): the throughput there is an extrapolation of the fit."
        "</p>"
        if planned > 2 * fit.max_measured_count
        else ""
    )
    return (
        f'<div class="block" id="{prefix}-scaling">{head}{flag}'
        f"{scaling_chart(prefix, fit, planned, unit)}{_legend(fit)}{_summary(prefix, fit, unit)}"
        f"{_models(fit)}{_points_table(c, prefix, fit, unit, page)}"
        f"{notes_list(fit.notes)}</div>"
    )
