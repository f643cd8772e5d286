"""One candidate's next trial worth running on the analysis page: the trial that would narrow
the range (P90 − P10) the most per dollar, with every option trncost re-ran the analysis for:
its phase, instance count, expected instance-hours and cost (or the PENDING price it waits
for) and how much narrower the range would get."""

from __future__ import annotations

from trncost.model.analysis import CandidateAnalysis, NextTrial, TrialOption
from trncost.report.format import esc, num, pct, usd
from trncost.report.shell import notes_list


def _width(value: float, unit: str) -> str:
    return f"${value:,.2f}" if unit == "USD" else f"{value:,.2f} {unit}"


def _cost(o: TrialOption) -> str:
    if o.expected_cost_usd is not None:
        return esc(usd(o.expected_cost_usd))
    return (
        f'<span class="pending-text">PENDING</span> <span class="small">'
        f"{esc(num(o.expected_instance_hours))} instance-h × P[{esc(o.pending_price_key or '')}]"
        "</span>"
    )


def _row(o: TrialOption, nt: NextTrial, best: bool) -> str:
    mark = ' class="best"' if best else ""
    return (
        f'<tr{mark} data-count="{o.instance_count}" data-phase="{esc(o.phase)}">'
        f"<td>{esc(o.phase)}{' (best)' if best else ''}</td>"
        f'<td class="num">{o.instance_count}</td>'
        f'<td class="num">{esc(num(o.expected_instance_hours))}</td><td class="num">{_cost(o)}</td>'
        f'<td class="num">{esc(_width(o.width_after, nt.unit))}</td>'
        f'<td class="num">{esc(pct(o.narrower_by))}</td><td class="small">{esc(o.why)}</td></tr>'
    )


def _headline(nt: NextTrial) -> str:
    b = nt.best
    if b is None:
        return '<p class="muted">No trial option narrows the range.</p>'
    cost = (
        usd(b.expected_cost_usd)
        if b.expected_cost_usd is not None
        else f"{num(b.expected_instance_hours)} instance-hours at a PENDING price"
    )
    return (
        f'<p class="next-trial-best"><strong>Run a {esc(b.phase)} trial at {b.instance_count} '
        f"instances</strong> (about {esc(num(b.expected_instance_hours))} instance-hours, "
        f"{esc(cost)}): the range of the {esc(nt.measure.replace('_', ' '))} would narrow from "
        f"{esc(_width(nt.width_now, nt.unit))} to {esc(_width(b.width_after, nt.unit))} "
        f"({esc(pct(b.narrower_by))} narrower).</p>"
    )


def next_trial_block(c: CandidateAnalysis, prefix: str) -> str:
    """The candidate's next trial worth running; nothing when none is called for."""
    nt = c.next_trial
    if nt is None:
        return ""
    rows = "".join(_row(o, nt, o == nt.best) for o in nt.options)
    table = (
        f'<div class="table-wrap"><table id="{prefix}-next-trial-options"><thead><tr>'
        '<th>phase</th><th class="num">instances</th><th class="num">instance-h</th>'
        '<th class="num">cost</th><th class="num">P90 − P10 after</th>'
        '<th class="num">narrower by</th><th>why</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        if nt.options
        else ""
    )
    return (
        f'<div class="block next-trial" id="{prefix}-next-trial"><h3>Next trial worth running</h3>'
        f'<p class="small">Offered because {esc(nt.reason)}. P90 − P10 now: '
        f"{esc(_width(nt.width_now, nt.unit))}.</p>{_headline(nt)}{table}"
        f'<p class="small muted">{esc(nt.method)}</p>{notes_list(nt.notes)}</div>'
    )
