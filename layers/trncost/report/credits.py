"""One candidate's credits runway on the analysis page: how many completed targets a credit
grant pays for before it runs out or expires, what it covers per target and once, and the
bill lines it does not cover."""

from __future__ import annotations

from trncost.model.analysis import Runway
from trncost.report.format import esc, num, usd
from trncost.report.shell import COMPONENT_LABELS, PENDING_ROW, meta_list, notes_list


def _count(v: int | None) -> str:
    return num(v) if v is not None else "unknown"


def _uncovered(run: Runway) -> str:
    if not run.uncovered:
        return '<p class="small">Every line is covered by the credits.</p>'
    rows = "".join(
        f"<tr{PENDING_ROW if li.amount_usd is None else ''}><td>{esc(li.name)}</td>"
        f"<td>{esc(COMPONENT_LABELS.get(li.component, li.component))}</td>"
        f'<td class="num">{esc(usd(li.amount_usd))}</td>'
        f"<td>{'once' if li.one_time else 'per target'}</td></tr>"
        for li in run.uncovered
    )
    return (
        f"<h4>Lines the credits do not cover ({len(run.uncovered)})</h4>"
        '<div class="table-wrap"><table class="uncovered"><thead><tr><th>line</th>'
        '<th>component</th><th class="num">amount</th><th>spent</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def runway_block(run: Runway | None, prefix: str) -> str:
    """The runway of a credit grant; nothing when the analysis was given none."""
    if run is None:
        return ""
    limited = {"credits": "the credit amount", "expiry": "the expiry date"}.get(
        run.limited_by or "", "unknown (a price is PENDING)"
    )
    meta = [
        ("Completed targets on credits", esc(_count(run.targets_on_credits))),
        ("Targets the credits pay for", esc(_count(run.targets_fit))),
        ("Targets before expiry", esc(_count(run.targets_before_expiry))),
        ("Limited by", esc(limited)),
        ("Credits run out on", esc(run.runs_out_on or "—")),
        ("Expires on", esc(run.expires_on)),
        ("Pace", esc(run.pace)),
        ("Covered per target", esc(usd(run.covered_per_target_usd))),
        ("Covered once (trials)", esc(usd(run.one_time_covered_usd))),
        ("Not covered per target", esc(usd(run.uncovered_per_target_usd))),
    ]
    formula = (
        f'<p class="small">Runway in the pending price:</p><code class="formula">'
        f"{esc(run.formula)}</code>"
        if run.formula
        else ""
    )
    return (
        f'<div class="block" id="{prefix}-runway"><h3>Credits runway '
        f'<span class="small muted">(as of {esc(run.as_of)})</span></h3>'
        f'<dl class="meta">{meta_list(meta)}</dl>{formula}{_uncovered(run)}'
        f"{notes_list(run.notes)}</div>"
    )
