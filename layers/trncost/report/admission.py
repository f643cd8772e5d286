"""Which trials count: every trial of the candidate's instance type and platform, pooled into
the figures or excluded with its reasons (estimate/admission.py). Shown where the input table
is: a section on the estimate page, folded per candidate on the analysis page."""

from __future__ import annotations

from trncost.model import Estimate
from trncost.report.format import esc


def admission_table(est: Estimate, table_id: str) -> str:
    rows = "".join(
        f'<tr data-trial="{esc(a.trial_id)}" data-admission="{esc(a.admission)}">'
        f"<td><code>{esc(a.trial_id)}</code></td><td>{esc(a.phase)}</td>"
        f"<td>{esc(a.status)}</td><td class='num'>{a.instance_count}</td>"
        f"<td><strong>{esc(a.admission)}</strong></td>"
        f'<td class="small">'
        + "; ".join(f"<code>{esc(r.code)}</code>: {esc(r.message)}" for r in a.reasons)
        + "</td></tr>"
        for a in est.admission
    )
    return (
        f'<div class="table-wrap"><table id="{esc(table_id)}"><thead><tr><th>trial</th>'
        "<th>phase</th><th>status</th><th class='num'>instances</th><th>admission</th>"
        f"<th>why</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _counts(est: Estimate) -> str:
    pooled = sum(a.admission == "pooled" for a in est.admission)
    return f"{pooled} pooled, {len(est.admission) - pooled} excluded"


def admission_section(est: Estimate) -> str:
    """The estimate page's admission table; nothing when the estimate lists no trial."""
    if not est.admission:
        return ""
    return (
        f'<section id="admission"><h2>Trials: which count ({_counts(est)})</h2>'
        '<p class="small">Excluded trials are left out of every figure; they still count as '
        "cost (adaptation &amp; reruns): they ran and were billed.</p>"
        f"{admission_table(est, 'admission-table')}</section>"
    )


def admission_details(est: Estimate, prefix: str) -> str:
    """One candidate's admission table on the analysis page, folded."""
    if not est.admission:
        return ""
    return (
        f'<details class="admission" id="{esc(prefix)}-admission"><summary>Trials: which '
        f"count ({_counts(est)})</summary>"
        f"{admission_table(est, f'{prefix}-admission-table')}</details>"
    )
