"""The estimate page's line items: every priced line with its quantity, rate, amount and
provenance (a PENDING amount shown as PENDING with the price it waits on), and the total.

Like the input table, a fixed layout that fits from 1024 px up (the item with its component
above it, the price key under a PENDING amount wrapping where it must), cards under 760 px;
every cell names its column (`data-col`)."""

from __future__ import annotations

from trncost.model import Estimate, LineItem
from trncost.report.format import esc, num, rate, usd
from trncost.report.inputs import basis_cell, table_head
from trncost.report.provenance import provenance_badge, provenance_html
from trncost.report.shell import COMPONENT_LABELS, PENDING_ROW

# (column, header, share of the width)
COLUMNS = (
    ("item", "component / item", 19),
    ("quantity", "quantity", 9),
    ("unit", "unit", 10),
    ("rate", "rate", 12),
    ("amount", "amount", 11),
    ("provenance", "basis · provenance", 12),
    ("source", "source", 27),
)


def _rate_cell(li: LineItem) -> str:
    if li.amount_usd is None:
        return '<span class="pending-text">PENDING</span>'
    if li.rate_usd is None:
        return '<span class="muted">tiered</span>'
    return esc(rate(li.rate_usd, li.rate_unit))


def _amount_cell(li: LineItem) -> str:
    if li.amount_usd is not None:
        return esc(usd(li.amount_usd))
    # the price it waits on: named in the source cell when the provenance carries it
    said = getattr(li.provenance, "price_key", None) == li.price_key
    return '<span class="pending-text">PENDING</span>' + (
        f'<div class="small mono price-key">× P[{esc(li.price_key)}]</div>'
        if li.price_key and not said
        else ""
    )


def _row(li: LineItem, known: set[str]) -> str:
    pending = li.amount_usd is None
    return (
        f'<tr{PENDING_ROW if pending else ""} data-component="{li.component.value}">'
        f'<td class="input" data-col="item"><span class="component small muted">'
        f'{esc(COMPONENT_LABELS[li.component])}</span><span class="label">{esc(li.name)}</span>'
        "</td>"
        f'<td class="num" data-col="quantity">{esc(num(li.quantity))}</td>'
        f'<td class="unit" data-col="unit">{esc(li.unit)}</td>'
        f'<td class="num" data-col="rate">{_rate_cell(li)}</td>'
        f'<td class="num" data-col="amount">{_amount_cell(li)}</td>'
        f'<td class="badges" data-col="provenance">{basis_cell(li.price_basis)}'
        f"{provenance_badge(li.provenance, li.price_basis)}</td>"
        f'<td class="source small" data-col="source">{provenance_html(li.provenance, known)}</td>'
        "</tr>"
    )


def line_items(est: Estimate, known: set[str]) -> str:
    if not est.line_items:
        return (
            '<section id="line-items"><h2>Line items</h2>'
            '<p class="muted">No line items.</p></section>'
        )
    rows = "".join(_row(li, known) for li in est.line_items)
    total = (
        esc(usd(est.total_usd))
        if est.complete
        else f'<span class="pending-text">{esc(est.total_formula)}</span>'
    )
    cloud, labour = esc(usd(est.cloud_usd)), esc(usd(est.labour_usd))
    names = [name for name, _, _ in COLUMNS]
    at = names.index("amount")  # each total in the amount column, under the amounts it sums
    after = len(names) - at - 1

    def foot(label: str, value: str, ident: str = "", formula: bool = False) -> str:
        row_id = f' id="{ident}"' if ident else ""
        if formula:  # a formula in the PENDING price: too long for one column
            cell = f'<td class="total total-formula" colspan="{after + 1}">{value}</td>'
        else:
            cell = f'<td class="num total">{value}</td><td colspan="{after}"></td>'
        return f'<tr{row_id}><td colspan="{at}">{label}</td>{cell}</tr>'

    return (
        '<section id="line-items"><h2>Line items</h2><div class="table-wrap">'
        f'<table class="fit lines-table" data-table="line-items">{table_head(COLUMNS)}'
        f"<tbody>{rows}</tbody><tfoot>"
        + foot("AWS bill (cloud)", cloud, "line-cloud")
        + foot("assumed labour", labour, "line-labour")
        + foot("total", total, formula=not est.complete)
        + "</tfoot></table></div></section>"
    )
