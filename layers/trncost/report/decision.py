"""The analysis page's top: the header (workload, candidates, Monte Carlo, engines, snapshots,
the migration decision) and the decision section (the migration's action and every reason,
then each candidate's own decision)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from trncost.model.analysis import Analysis, CandidateAnalysis, Decision
from trncost.report.anchors import PageAnchors
from trncost.report.format import esc
from trncost.report.shell import action_badge, meta_list, notes_list


def _codes(items: Iterable[str]) -> str:
    return ", ".join(f"<code>{esc(x)}</code>" for x in items) or "—"


def header(analysis: Analysis, workload: str, workload_id: str | None) -> str:
    estimates = [c.estimate for c in analysis.candidates if c.estimate is not None]
    snapshots = sorted({e.snapshot_id for e in estimates})
    engines = sorted({e.engine_version for e in estimates})
    n_err = sum(c.error is not None for c in analysis.candidates)
    counts = f"{len(analysis.candidates)} ({len(estimates)} estimated"
    counts += f", {n_err} could not be)" if n_err else ")"
    ident = (
        f' <span class="muted">(<code>{esc(workload_id)}</code>)</span>'
        if workload_id and workload_id != workload
        else ""
    )
    meta = [
        ("Workload", esc(workload) + ident),
        ("Candidates", esc(counts)),
        ("Monte Carlo", f"{analysis.samples:,} samples · seed {analysis.seed}"),
        ("Engine version", _codes(engines)),
        ("Price snapshot", _codes(snapshots)),
    ]
    d = analysis.decision
    verdict = (
        f"Migration decision: {action_badge(d.action, ident='migration-action')}"
        if d is not None
        else '<span class="muted">No migration decision: nothing could be decided.</span>'
    )
    return (
        '<header class="report-header"><div class="card">'
        '<p class="muted small">trncost · analysis: decision, comparison, range, sensitivity, '
        "scaling</p>"
        f"<h1>{esc(workload)}</h1>"
        f'<p class="candidate">{verdict}</p>'
        f'<dl class="meta">{meta_list(meta)}</dl></div></header>'
    )


def _evidence(items: Sequence[str]) -> str:
    if not items:
        return '<span class="muted">—</span>'
    return ", ".join(f"<code>{esc(x)}</code>" for x in items)


def _reasons_table(decision: Decision, table_id: str) -> str:
    if not decision.reasons:
        return f'<p class="small muted" id="{esc(table_id)}">No reason held it back.</p>'
    rows = "".join(
        f'<tr data-code="{esc(r.code)}"><td><code class="reason-code">{esc(r.code)}</code></td>'
        f"<td>{action_badge(r.action, small=True)}</td><td>{esc(r.message)}</td>"
        f'<td class="small">{_evidence(r.evidence)}</td></tr>'
        for r in decision.reasons
    )
    return (
        f'<div class="table-wrap"><table class="reasons" id="{esc(table_id)}"><thead><tr>'
        "<th>reason</th><th>points to</th><th>message</th><th>evidence</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def reason_list(decision: Decision) -> str:
    """A decision's reasons as a list; nothing when it has none."""
    if not decision.reasons:
        return ""
    items = "".join(
        f'<li data-code="{esc(r.code)}"><code class="reason-code">{esc(r.code)}</code>: '
        f"{esc(r.message)}"
        + (f" <span class='small muted'>({_evidence(r.evidence)})</span>" if r.evidence else "")
        + "</li>"
        for r in decision.reasons
    )
    return f'<ul class="reason-list">{items}</ul>'


def _candidate_row(c: CandidateAnalysis, page: PageAnchors) -> str:
    dec = c.decision
    if dec is None:
        cell, reasons = '<span class="muted">—</span>', ""
    else:
        cell = action_badge(dec.action, small=True)
        reasons = (
            reason_list(dec) if dec.reasons else f'<span class="small">{esc(dec.summary)}</span>'
        )
    action = dec.action.value if dec is not None else ""
    return (
        f'<tr data-candidate="{esc(c.candidate_id)}" data-action="{action}">'
        f"<td>{page.candidate_link(c.candidate_id)}</td><td>{cell}</td><td>{reasons}</td></tr>"
    )


def decision(analysis: Analysis, page: PageAnchors) -> str:
    d = analysis.decision
    if d is None:
        top = '<p class="muted">No decision: no candidate could be decided on.</p>'
    else:
        top = (
            f'<div class="verdict verdict-{d.action.value}" id="migration-decision">'
            f"<p>{action_badge(d.action)} for the migration, from "
            f"{page.candidate_link(d.candidate_id)}</p>"
            f'<p class="small">{esc(d.summary)}</p></div>'
            f"<h3>Every reason ({len(d.reasons)})</h3>" + _reasons_table(d, "migration-reasons")
        )
    rows = "".join(_candidate_row(c, page) for c in analysis.candidates)
    per_candidate = (
        "<h3>Each candidate's decision</h3>"
        '<div class="table-wrap"><table id="candidate-decisions"><thead><tr><th>candidate</th>'
        "<th>decision</th><th>reasons</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )
    notes = notes_list(analysis.notes)
    return f'<section id="decision"><h2>Decision</h2>{top}{per_candidate}{notes}</section>'
