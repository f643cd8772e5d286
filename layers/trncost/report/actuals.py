"""Estimate vs actual in the reports: the section of an estimate's page, and the scorecard page.

The section shows what AWS billed the runs tagged with the estimate against the run's forecast
and its P10–P90, the gap split into hours, rate and items never estimated (they sum to the
gap), each line's part, and where each billing period's figure comes from. The scorecard page
says how often actuals fell inside P10–P90 across a workload or the stage.
"""

from __future__ import annotations

from decimal import Decimal

from trncost.model.actuals import ActualsComparison, Gap, Scorecard
from trncost.report.format import esc, signed_pct, usd
from trncost.report.shell import html_page

GAP_LABELS = (
    ("hours", "hours (more or fewer billed units, at the estimate's rate)"),
    ("rate", "rate (billed at another rate than the snapshot's)"),
    ("not_estimated", "not estimated (billed items the estimate never had)"),
)


def _error(value: float | None) -> str:
    return "—" if value is None else signed_pct(value)


def _inside(value: bool | None) -> str:
    if value is None:
        return '<span class="muted">no range</span>'
    return "inside P10–P90" if value else "<strong>outside P10–P90</strong>"


def _gap_rows(gap: Gap) -> str:
    return "".join(
        f'<tr data-gap="{key}"><td>{esc(label)}</td>'
        f'<td class="num">{esc(usd(getattr(gap, key)))}</td></tr>'
        for key, label in GAP_LABELS
    )


def actuals_section(cmp: ActualsComparison | None) -> str:
    """The estimate page's "Estimate vs actual" section ("" without actuals)."""
    if cmp is None:
        return ""
    band = (
        f"{esc(usd(cmp.p10_usd))} – {esc(usd(cmp.p90_usd))}"
        if cmp.p10_usd is not None
        else "no range"
    )
    head = (
        '<div class="figures">'
        f'<div class="figure"><span>billed (AWS)</span><strong data-fig="actual">'
        f"{esc(usd(cmp.actual_usd))}</strong></div>"
        f'<div class="figure"><span>forecast (version {cmp.estimate_version})</span>'
        f'<strong data-fig="forecast">{esc(usd(cmp.estimate_usd))}</strong></div>'
        f'<div class="figure"><span>P10–P90</span><strong>{band}</strong>'
        f"<small>{_inside(cmp.inside_range)}</small></div>"
        f'<div class="figure"><span>relative error</span><strong data-fig="error">'
        f"{_error(cmp.relative_error)}</strong></div></div>"
    )
    gap = ""
    if cmp.gap is not None and cmp.estimate_usd is not None:
        total = cmp.actual_usd - cmp.estimate_usd
        gap = (
            '<table class="fit" data-table="gap"><thead><tr><th>gap</th><th>USD</th></tr></thead>'
            f"<tbody>{_gap_rows(cmp.gap)}</tbody>"
            f'<tfoot><tr><td>actual − forecast</td><td class="num">{esc(usd(total))}</td></tr>'
            "</tfoot></table>"
        )
    lines = "".join(
        f'<tr data-kind="{esc(x.kind)}"><td>{esc(x.name)}</td><td>{esc(x.kind)}</td>'
        f'<td class="num">{esc(usd(x.estimate_usd)) if x.estimate_usd is not None else "—"}</td>'
        f'<td class="num">{esc(usd(x.actual_usd))}</td>'
        f'<td class="num">{esc(usd(x.hours_usd))}</td><td class="num">{esc(usd(x.rate_usd))}</td>'
        f'<td class="num">{esc(usd(x.not_estimated_usd))}</td></tr>'
        for x in cmp.lines
    )
    periods = "".join(
        f"<li>{esc(p.period)}: {esc(usd(p.actual_usd))} from {esc(p.source)}"
        + (" (estimated, not final)" if p.estimated else "")
        + (f"; superseded: {esc(', '.join(p.superseded))}" if p.superseded else "")
        + "</li>"
        for p in cmp.periods
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in cmp.notes)
    excluded = (
        f'<p class="muted">Kept apart (tax, credits, corrections): {esc(usd(cmp.excluded_usd))}</p>'
        if cmp.excluded_usd != Decimal(0)
        else ""
    )
    return (
        '<section id="actuals"><h2>Estimate vs actual</h2>'
        '<p class="muted">What AWS billed the runs tagged <code>trncost:estimate-id</code> = '
        f"<code>{esc(cmp.estimate_id)}</code>, against the run's forecast (cloud lines, less "
        "the trials already run and labour).</p>"
        f"{head}{gap}"
        '<div class="table-wrap"><table class="fit" data-table="actual-lines"><thead><tr>'
        "<th>line</th><th>kind</th><th>forecast</th><th>billed</th><th>hours</th><th>rate</th>"
        f"<th>not estimated</th></tr></thead><tbody>{lines}</tbody></table></div>"
        f"<h3>Billing periods</h3><ul>{periods}</ul>{excluded}"
        + (f"<ul class='notes'>{notes}</ul>" if notes else "")
        + "</section>"
    )


def scorecard_page(card: Scorecard, *, workload_name: str | None = None) -> str:
    """The scorecard as one self-contained HTML page."""
    scope = workload_name or card.workload_id or "the stage"
    share = "—" if card.inside_share is None else f"{card.inside_share:.0%}"
    median = (
        "—"
        if card.median_abs_relative_error is None
        else f"{card.median_abs_relative_error * 100:.1f} %"
    )
    rows = "".join(
        f'<tr data-estimate="{esc(e.estimate_id)}"><td><a href="../estimates/'
        f'{esc(e.estimate_id)}/report">{esc(e.estimate_id)}</a></td>'
        f"<td>{esc(e.workload_id)}</td><td>{e.estimate_version}</td>"
        f'<td class="num">{esc(usd(e.estimate_usd))}</td>'
        f'<td class="num">{esc(usd(e.p10_usd))} – {esc(usd(e.p90_usd))}</td>'
        f'<td class="num">{esc(usd(e.actual_usd))}</td><td>{_inside(e.inside_range)}</td>'
        f'<td class="num">{_error(e.relative_error)}</td><td>{esc(", ".join(e.periods))}</td></tr>'
        for e in card.estimates
    )
    components = "".join(
        f"<tr><td>{esc(k)}</td><td>{c.estimates}</td>"
        f'<td class="num">{esc(usd(c.estimate_usd))}</td>'
        f'<td class="num">{esc(usd(c.actual_usd))}</td>'
        f'<td class="num">'
        + (
            "—"
            if c.median_abs_relative_error is None
            else f"{c.median_abs_relative_error * 100:.1f} %"
        )
        + "</td></tr>"
        for k, c in card.by_component.items()
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in card.notes)
    body = (
        f"<header><h1>Forecast scorecard — {esc(scope)}</h1></header><main>"
        '<section id="score"><div class="figures">'
        f'<div class="figure"><span>estimates with actuals</span><strong data-fig="count">'
        f"{card.estimates_with_actuals}</strong></div>"
        f'<div class="figure"><span>inside P10–P90</span><strong data-fig="inside">'
        f"{card.inside_p10_p90}</strong><small>{share} of those with a range</small></div>"
        f'<div class="figure"><span>median |relative error|</span><strong data-fig="median">'
        f"{median}</strong></div></div></section>"
        '<section id="estimates"><h2>Estimates</h2><div class="table-wrap">'
        '<table class="fit" data-table="scorecard"><thead><tr><th>estimate</th><th>workload</th>'
        "<th>version</th><th>forecast</th><th>P10–P90</th><th>billed</th><th>range</th>"
        f"<th>error</th><th>periods</th></tr></thead><tbody>{rows}</tbody></table></div></section>"
        '<section id="components"><h2>By component</h2><table class="fit"><thead><tr>'
        "<th>component</th><th>estimates</th><th>forecast</th><th>billed</th>"
        f"<th>median |error|</th></tr></thead><tbody>{components}</tbody></table></section>"
        + (f"<ul class='notes'>{notes}</ul>" if notes else "")
        + "</main>"
    )
    return html_page(f"trncost — forecast scorecard — {scope}", 'data-page="scorecard"', body)
