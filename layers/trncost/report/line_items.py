"""The estimate page's line items: every priced line with its quantity, rate, amount and
provenance (a PENDING amount shown as PENDING with the price it waits on), and the total.

Like the input table, a fixed layout that fits from 1024 px up (the item with its component
above it, the price key under a PENDING amount wrapping where it must), cards under 760 px;
every cell names its column (`data-col`)."""

from __future__ import annotations

from trncost.model import Estimate, LineItem
from trncost.report.format import esc, num, rate, usd
from trncost.report.inputs import basis_cell, table_head
from trncost.report.provenance import kind_badge, provenance_html
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
        f"{kind_badge(li.provenance.kind)}</td>"
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
    span = len(COLUMNS) - 3
    return (
        '<section id="line-items"><h2>Line items</h2><div class="table-wrap">'
        f'<table class="fit lines-table" data-table="line-items">{table_head(COLUMNS)}'
        f"<tbody>{rows}</tbody>"
        f'<tfoot><tr id="line-cloud"><td colspan="3">AWS bill (cloud)</td>'
        f'<td class="total" colspan="{span}">{cloud}</td></tr>'
        f'<tr id="line-labour"><td colspan="3">assumed labour</td>'
        f'<td class="total" colspan="{span}">{labour}</td></tr>'
        f'<tr><td colspan="3">total</td><td class="total" colspan="{span}">{total}</td></tr>'
        "</tfoot></table></div></section>"
    )
