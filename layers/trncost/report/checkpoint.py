"""The checkpoint interval advice as a section (estimate/checkpoint.py): the interval that
minimises the expected cost per target under the failure posterior, beside the interval the
estimate uses, Young's and Daly's, and the what-if table with the saving. A what-if: the
estimate itself keeps the interval it was given."""

from __future__ import annotations

from trncost.model.analysis import CheckpointAdvice, IntervalWhatIf
from trncost.report.format import esc, pct, usd
from trncost.report.shell import notes_list


def interval_text(seconds: float | None) -> str:
    """An interval in words: seconds below five minutes, minutes below two hours, else hours."""
    if seconds is None:
        return "none"
    if seconds < 300:
        return f"{seconds:,.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


def _held(w: IntervalWhatIf) -> str:
    if w.expected_held_h is None:
        return "never finishes"
    held = f"{w.expected_held_h:,.1f} h"
    return held + (f" ({pct(w.p_infeasible)} cannot finish)" if w.p_infeasible else "")


def _row(w: IntervalWhatIf) -> str:
    total = usd(w.expected_total_usd) if w.expected_total_usd is not None else "—"
    return (
        f'<tr data-label="{esc(w.label)}"><td>{esc(w.label)}</td>'
        f'<td class="num">{esc(interval_text(w.interval_s))}</td>'
        f'<td class="num">{w.saves:,}</td>'
        f'<td class="num">{_held(w)}</td>'
        f'<td class="num">{esc(total)}</td></tr>'
    )


def advice_sentence(a: CheckpointAdvice) -> str:
    """The advice in one sentence (plain text): the interval, the saving, how flat.

    Returns
    -------
    str
    """
    if a.advised_s is None:
        return "No interval advised: " + "; ".join(a.notes)
    now = (
        f"the {a.current_source} {interval_text(a.current_interval_s)}"
        if a.current_interval_s
        else "no checkpoints"
    )
    saving = (
        f"{usd(a.saving_usd)} per target"
        if a.saving_usd is not None
        else f"{a.saving_instance_hours or 0:,.1f} instance-hours per target"
    )
    text = (
        f"Checkpoint every {interval_text(a.advised_s)} instead of {now}: expected saving "
        f"{saving} ({a.saving_h or 0:,.1f} h held)"
    )
    if a.p_advised_cheaper is not None:
        text += f", cheaper in {pct(a.p_advised_cheaper)} of the failure-rate draws"
    if a.flat_from_s is not None and a.flat_to_s is not None:
        text += (
            f"; anywhere from {interval_text(a.flat_from_s)} to {interval_text(a.flat_to_s)} is "
            "within 1 % of the least expected cost"
        )
    return text + "."


def checkpoint_section(a: CheckpointAdvice | None, prefix: str = "estimate") -> str:
    """The estimate page's section; nothing without advice."""
    body = checkpoint_body(a, prefix, "h2")
    if not body:
        return ""
    return f'<section id="{prefix}-checkpoint" class="checkpoint">{body}</section>'


def checkpoint_block(a: CheckpointAdvice | None, prefix: str) -> str:
    """A candidate's block on the analysis page; nothing without advice."""
    body = checkpoint_body(a, prefix, "h3")
    if not body:
        return ""
    return f'<div class="block checkpoint" id="{prefix}-checkpoint">{body}</div>'


def checkpoint_body(a: CheckpointAdvice | None, prefix: str, heading: str) -> str:
    """The advice's heading, sentence, facts and what-if table; nothing without advice."""
    if a is None:
        return ""
    facts = (
        f"save {interval_text(a.save_s) if a.save_s else 'not measured'} (measured), restart "
        f"{interval_text(a.restart_s)}, {a.instances} instances, failure rate "
        f"{a.failure_rate:.3g} per instance-hour (posterior mean)"
        + (f", mean time between failures {a.mtbf_h:,.0f} h" if a.mtbf_h else "")
        + (
            f"; Young {interval_text(a.young_s)}, Daly {interval_text(a.daly_s)}"
            if a.young_s is not None and a.daly_s is not None
            else ""
        )
    )
    table = ""
    if a.what_if:
        table = (
            f'<div class="table-wrap"><table id="{prefix}-checkpoint-what-if"><thead><tr>'
            '<th>interval</th><th class="num">every</th><th class="num">saves</th>'
            '<th class="num">expected held</th><th class="num">expected total</th></tr>'
            f"</thead><tbody>{''.join(_row(w) for w in a.what_if)}</tbody></table></div>"
        )
    return (
        f"<{heading}>Checkpoint interval (what-if)</{heading}>"
        f'<p class="checkpoint-advice" id="{prefix}-checkpoint-advice">'
        f"{esc(advice_sentence(a))}</p><p class='small muted'>{esc(facts)}. {esc(a.method)}.</p>"
        f"{table}{notes_list([n for n in a.notes if a.advised_s is not None])}"
    )
