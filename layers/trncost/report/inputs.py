"""The input table: every row an estimate was computed from, with its provenance.

The estimate page shows it as a section (with a count per provenance kind); the analysis page
folds one per candidate into a `<details>`, its anchors prefixed by the candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from trncost.model import Estimate, InputRow, ProvenanceKind
from trncost.report.format import esc, num
from trncost.report.provenance import (
    KIND_HELP,
    basis_badge,
    kind_badge,
    provenance_html,
    row_anchor,
)
from trncost.report.shell import PENDING_ROW


def value_cell(row: InputRow) -> str:
    if row.value is None:
        if row.provenance.kind == "pending":
            return '<span class="pending-text">PENDING</span>'
        return '<span class="muted">—</span>'
    return esc(num(row.value))


def input_table(rows: Sequence[InputRow], anchor: Callable[[str], str], known: set[str]) -> str:
    """The table of `rows`, each row's id attribute from `anchor`; provenance links to the
    `known` row ids."""
    body = "".join(
        f'<tr id="{esc(anchor(row.id))}" data-kind="{esc(row.provenance.kind)}"'
        f"{PENDING_ROW if row.provenance.kind == 'pending' else ''}>"
        f'<td class="id"><code>{esc(row.id)}</code></td><td>{esc(row.label)}</td>'
        f'<td class="num">{value_cell(row)}</td><td>{esc(row.unit or "")}</td>'
        f"<td>{kind_badge(row.provenance.kind)}</td>"
        f"<td>{basis_badge(row.price_basis)}</td>"
        f'<td class="source small">{provenance_html(row.provenance, known)}</td></tr>'
        for row in rows
    )
    return (
        '<div class="table-wrap"><table><thead><tr><th>id</th><th>label</th>'
        "<th class='num'>value</th><th>unit</th><th>provenance</th><th>price basis</th>"
        "<th>source</th></tr>"
        f"</thead><tbody>{body}</tbody></table></div>"
    )


def inputs_section(est: Estimate, known: set[str]) -> str:
    """The estimate page's input table, with how many rows each provenance kind has."""
    counts = Counter(row.provenance.kind for row in est.inputs)
    legend = "".join(
        f"<li>{kind_badge(kind.value)} <span class='small'>{counts.get(kind.value, 0)} · "
        f"{esc(KIND_HELP[kind])}</span></li>"
        for kind in ProvenanceKind
    )
    return (
        f'<section id="inputs"><h2>Input table ({len(est.inputs)} rows)</h2>'
        f'<ul class="kind-counts">{legend}</ul>'
        f"{input_table(est.inputs, row_anchor, known)}</section>"
    )


def inputs_details(est: Estimate, prefix: str, anchor: Callable[[str], str]) -> str:
    """One candidate's input table on the analysis page, folded; nothing when it has none."""
    if not est.inputs:
        return ""
    # No links inside the provenance: the rows' anchors are per candidate on this page.
    return (
        f'<details class="inputs" id="{prefix}-inputs"><summary>Input table '
        f"({len(est.inputs)} rows, with provenance)</summary>"
        f"{input_table(est.inputs, anchor, set())}</details>"
    )
