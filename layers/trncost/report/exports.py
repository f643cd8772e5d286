"""The line items and the input table as CSV and as Markdown, for a spreadsheet or a document.

One estimate, or every candidate of an analysis (a `candidate` column). The texts are the
report's (`trncost.display`: money to the cent, rates to their significant digits, PENDING
never 0); CSV also carries each line's exact amount (`amount_usd`, the engine's Decimal).

CSV is one table (RFC 4180, a header row): a `table` column says whether a row is a
`line_item` or an `input`; for a line item `value` is its quantity. A cell that a spreadsheet
would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) is
prefixed with `'`, and so is any such start after a list separator inside a cell (`,` `;` tab
`|`), and every cell is quoted (OWASP's CSV injection guidance): a spreadsheet whose list
separator is `;` (or a tool that splits on it) finds no formula either. Markdown escapes
pipes, backslashes and `<` in cells and keeps each cell on one line.

Each line carries its price basis (official, saved_file, example, assumed) and whether it is
cloud (what AWS bills) or labour (assumed engineering time); each price row of the input
table its basis.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

from trncost.display import input_value, number, rate, usd
from trncost.model import Estimate, InputRow, LineItem, Provenance

CSV_COLUMNS = (
    "table",
    "candidate",
    "id",
    "component",
    "label",
    "value",
    "unit",
    "rate",
    "amount",
    "amount_usd",
    "price_key",
    "price_basis",
    "cost",
    "provenance",
    "source",
)
LINE_COLUMNS = ("component", "item", "quantity", "unit", "rate", "amount", "price basis",
                "provenance", "source")  # fmt: skip
INPUT_COLUMNS = ("id", "label", "value", "unit", "provenance", "price basis", "source")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
LIST_SEPARATORS = ",;\t|"  # what a spreadsheet may split a line on, by locale or choice
_AFTER_SEPARATOR = re.compile(r"([,;\t|][ \t\r]*)(?=[=+\-@])")


# -- plain text ---------------------------------------------------------------------------------
def provenance_text(p: Provenance) -> str:
    """Where a number comes from, as one line of plain text."""
    match p.kind:
        case "official_price":
            text = f"snapshot {p.snapshot_id} ({p.source}) · SKU {p.sku} · rate code {p.rate_code}"
            return text + (f" · effective {p.effective_date}" if p.effective_date else "")
        case "trial_measurement":
            text = f"{p.metric} ← trials {', '.join(p.trial_ids)}"
            if p.code_versions:
                text += " · code " + ", ".join(p.code_versions)
            if p.dataset_ids:
                text += " · dataset " + ", ".join(p.dataset_ids)
            return text
        case "published_reference":
            return f"{p.figure} (sources: {'; '.join(p.sources)})"
        case "user_assumption":
            return p.name + (f" — {p.note}" if p.note else "")
        case "derived":
            return p.formula + (f" (from {', '.join(p.inputs)})" if p.inputs else "")
        case _:
            return f"PENDING: {p.reason}" + (f" · P[{p.price_key}]" if p.price_key else "")


def _rate(li: LineItem) -> str:
    if li.amount_usd is None:
        return "PENDING"
    return "tiered" if li.rate_usd is None else rate(li.rate_usd, li.rate_unit)


def _amount(li: LineItem) -> str:
    if li.amount_usd is not None:
        return usd(li.amount_usd)
    return "PENDING" + (f" × P[{li.price_key}]" if li.price_key else "")


def _value(row: InputRow) -> str:
    if row.value is None:
        return "PENDING" if row.provenance.kind == "pending" else "—"
    return input_value(row.value, row.unit)


def line_cells(li: LineItem) -> list[str]:
    """A line item's cells, in `LINE_COLUMNS` order."""
    return [
        li.component.value,
        li.name,
        number(li.quantity),
        li.unit,
        _rate(li),
        _amount(li),
        li.price_basis.value if li.price_basis else "",
        li.provenance.kind,
        provenance_text(li.provenance),
    ]


def input_cells(row: InputRow) -> list[str]:
    """An input row's cells, in `INPUT_COLUMNS` order."""
    return [
        row.id,
        row.label,
        _value(row),
        row.unit or "",
        row.provenance.kind,
        row.price_basis.value if row.price_basis else "",
        provenance_text(row.provenance),
    ]


def total_text(est: Estimate) -> str:
    if est.complete:
        return usd(est.total_usd)
    if est.status == "infeasible":
        return f"no total: {est.infeasible_reason or est.total_formula}"
    return est.total_formula


# -- CSV ----------------------------------------------------------------------------------------
def csv_cell(value: object) -> str:
    """A cell no spreadsheet runs as a formula, whatever its list separator: `'` before a
    leading = + - @ tab or CR, and before one that follows a separator inside the cell."""
    text = "" if value is None else str(value)
    text = _AFTER_SEPARATOR.sub(r"\1'", text)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_rows(candidate: str, est: Estimate) -> Iterable[list[str]]:
    for li in est.line_items:
        component, item, quantity, unit, rate_text, amount, basis, kind, source = line_cells(li)
        exact = "" if li.amount_usd is None else str(li.amount_usd)
        yield ["line_item", candidate, "", component, item, quantity, unit, rate_text, amount,
               exact, li.price_key or "", basis, li.cost, kind, source]  # fmt: skip
    for row in est.inputs:
        ident, label, value, unit, kind, basis, source = input_cells(row)
        yield ["input", candidate, ident, "", label, value, unit, "", "", "", "", basis, "",
               kind, source]  # fmt: skip


def _csv(estimates: Sequence[tuple[str, Estimate]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(CSV_COLUMNS)  # plain names, as ever
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    for candidate, est in estimates:
        for row in csv_rows(candidate, est):
            writer.writerow([csv_cell(c) for c in row])
    return out.getvalue()


def estimate_csv(est: Estimate) -> str:
    """One estimate's line items and input table as one CSV table."""
    return _csv([(est.candidate.label, est)])


# -- Markdown -----------------------------------------------------------------------------------
def md_cell(value: object) -> str:
    """A table cell: one line, pipes, backslashes and `<` escaped."""
    text = "" if value is None else str(value)
    text = " ".join(text.split())  # newlines and tabs would end the row
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |"]
    lines.append("|" + "|".join(" --- " for _ in headers) + "|")
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def md_text(text: str) -> str:
    """A line of prose (a heading, a list item): one line, Markdown's specials escaped."""
    text = " ".join(text.split())
    for ch in "\\`*_[]<>#|":
        text = text.replace(ch, "\\" + ch)
    return text


def md_estimate(est: Estimate, level: str) -> list[str]:
    parts = [
        f"{level} Line items\n",
        md_table(LINE_COLUMNS, (line_cells(li) for li in est.line_items))
        if est.line_items
        else "No line items.\n",
        f"\n**AWS bill (cloud):** {md_text(usd(est.cloud_usd))} · **assumed labour:** "
        f"{md_text(usd(est.labour_usd))} · **total:** {md_text(total_text(est))}\n",
        f"\n{level} Input table ({len(est.inputs)} rows)\n",
        md_table(INPUT_COLUMNS, (input_cells(r) for r in est.inputs)),
    ]
    return parts


def estimate_markdown(est: Estimate, *, title: str, meta: Sequence[tuple[str, str]] = ()) -> str:
    """One estimate's line items and input table as a Markdown document."""
    head = [f"# {md_text(title)}\n"]
    head += [f"- {md_text(k)}: {md_text(v)}" for k, v in meta]
    return "\n".join([*head, "", *md_estimate(est, "##")])
