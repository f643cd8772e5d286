"""The input table: every row an estimate was computed from, with its provenance.

The estimate page shows it as a section (with a count per provenance kind); the analysis page
folds one per candidate into a `<details>`, its anchors prefixed by the candidate.

The table fits its page from 1024 px up without scrolling sideways: a fixed layout (the
`<colgroup>` shares the width), the row's label with its id beneath it, values and sources
that wrap; under 760 px each row becomes a card (style.py). Every cell names its column
(`data-col`), which the narrow layout prints as the cell's label and the browser tests
measure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from trncost.display import tier_list
from trncost.model import Estimate, InputRow, ProvenanceKind
from trncost.model.basis import PriceBasis
from trncost.report.format import esc, input_value
from trncost.report.provenance import (
    KIND_HELP,
    NOT_MEASURED,
    basis_badge,
    kind_badge,
    provenance_badge,
    provenance_html,
    row_anchor,
)
from trncost.report.shell import PENDING_ROW

# (column, header, share of the width)
COLUMNS = (
    ("input", "input", 22),
    ("value", "value", 13),
    ("unit", "unit", 9),
    ("provenance", "provenance · basis", 13),
    ("source", "source", 43),
)
NUMERIC_COLUMNS = {"value", "quantity", "rate", "amount"}
NUMERIC = ' class="num"'


def basis_cell(basis: PriceBasis | None) -> str:
    """A price's basis badge in the provenance cell (a dash for a line with no price), marked
    as the `basis` column for the narrow layout and the browser tests."""
    return f'<span class="basis-of" data-col="basis">{basis_badge(basis)}</span>'


def value_cell(row: InputRow) -> str:
    if row.value is None:
        if row.provenance.kind == "pending" and getattr(row.provenance, "price_key", None):
            return '<span class="pending-text">PENDING</span>'
        if row.provenance.kind == "pending":
            return f'<span class="muted">{NOT_MEASURED}</span>'
        return '<span class="muted">—</span>'
    tiers = tier_list(row.value) if isinstance(row.value, str) else None
    if tiers:  # a tiered price: its first and last rate, every tier folded beneath
        first, last = tiers[0].rsplit(": ", 1)[-1], tiers[-1].rsplit(": ", 1)[-1]
        items = "".join(f"<li>{esc(t)}</li>" for t in tiers)
        return (
            f'<details class="tiers"><summary>{esc(first)} → {esc(last)} '
            f'<span class="small muted">({len(tiers)} tiers)</span></summary>'
            f'<ul class="tier-list small">{items}</ul></details>'
        )
    return esc(input_value(row.value, row.unit))


def _row(row: InputRow, anchor: Callable[[str], str], known: set[str]) -> str:
    kind = row.provenance.kind
    return (
        f'<tr id="{esc(anchor(row.id))}" data-kind="{esc(kind)}"'
        f"{PENDING_ROW if kind == 'pending' else ''}>"
        f'<td class="input" data-col="input"><span class="label">{esc(row.label)}</span>'
        f'<code class="row-id">{esc(row.id)}</code></td>'
        f'<td class="num value" data-col="value">{value_cell(row)}</td>'
        f'<td class="unit" data-col="unit">{esc(row.unit or "")}</td>'
        f'<td class="badges" data-col="provenance">'
        f"{provenance_badge(row.provenance, row.price_basis)}"
        f"{basis_cell(row.price_basis) if row.price_basis else ''}</td>"
        f'<td class="source small" data-col="source">{provenance_html(row.provenance, known)}</td>'
        "</tr>"
    )


def table_head(columns: Sequence[tuple[str, str, int]]) -> str:
    """The `<colgroup>` and `<thead>` of a fixed-layout table of `columns`."""
    cols = "".join(f'<col class="col-{name}" style="width:{share}%">' for name, _, share in columns)
    heads = "".join(
        f'<th scope="col" data-col="{name}"{NUMERIC if name in NUMERIC_COLUMNS else ""}>'
        f"{esc(title)}</th>"
        for name, title, _ in columns
    )
    return f"<colgroup>{cols}</colgroup><thead><tr>{heads}</tr></thead>"


def input_table(
    rows: Sequence[InputRow],
    anchor: Callable[[str], str],
    known: set[str],
    *,
    candidate: str | None = None,
) -> str:
    """The table of `rows`, each row's id attribute from `anchor`; provenance links to the
    `known` row ids."""
    body = "".join(_row(row, anchor, known) for row in rows)
    cand = f' data-candidate="{esc(candidate)}"' if candidate else ""
    return (
        f'<div class="table-wrap"><table class="fit inputs-table" data-table="inputs"{cand}>'
        f"{table_head(COLUMNS)}<tbody>{body}</tbody></table></div>"
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
        f"{input_table(est.inputs, anchor, set(), candidate=prefix)}</details>"
    )
