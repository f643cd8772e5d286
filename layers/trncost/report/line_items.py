"""The estimate page's line items: every priced line with its quantity, rate, amount and
provenance (a PENDING amount shown as PENDING with the price it waits on), and the total."""

from __future__ import annotations

from trncost.model import Estimate, LineItem
from trncost.report.format import esc, num, rate_text, usd
from trncost.report.provenance import basis_badge, kind_badge, provenance_html
from trncost.report.shell import COMPONENT_LABELS, PENDING_ROW


def _rate_cell(li: LineItem) -> str:
    if li.amount_usd is None:
        return '<span class="pending-text">PENDING</span>'
    if li.rate_usd is None:
        return '<span class="muted">tiered</span>'
    unit = f" / {esc(li.rate_unit)}" if li.rate_unit else ""
    return f"{esc(rate_text(li.rate_usd))}{unit}"


def _amount_cell(li: LineItem) -> str:
    if li.amount_usd is not None:
        return esc(usd(li.amount_usd))
    return '<span class="pending-text">PENDING</span>' + (
        f'<div class="small mono">× P[{esc(li.price_key)}]</div>' if li.price_key else ""
    )


def _row(li: LineItem, known: set[str]) -> str:
    pending = li.amount_usd is None
    return (
        f'<tr{PENDING_ROW if pending else ""} data-component="{li.component.value}">'
        f"<td>{esc(COMPONENT_LABELS[li.component])}</td><td>{esc(li.name)}</td>"
        f'<td class="num">{esc(num(li.quantity))}</td><td>{esc(li.unit)}</td>'
        f'<td class="num">{_rate_cell(li)}</td><td class="num">{_amount_cell(li)}</td>'
        f"<td>{basis_badge(li.price_basis)}</td>"
        f"<td>{kind_badge(li.provenance.kind)}</td>"
        f'<td class="source small">{provenance_html(li.provenance, known)}</td></tr>'
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
    return (
        '<section id="line-items"><h2>Line items</h2><div class="table-wrap"><table>'
        "<thead><tr><th>component</th><th>item</th><th class='num'>quantity</th><th>unit</th>"
        "<th class='num'>rate</th><th class='num'>amount</th><th>price basis</th>"
        "<th>provenance</th><th>basis</th></tr></thead>"
        f"<tbody>{rows}</tbody>"
        f'<tfoot><tr id="line-cloud"><td colspan="5">AWS bill (cloud)</td>'
        f'<td class="num" colspan="4">{cloud}</td></tr>'
        f'<tr id="line-labour"><td colspan="5">assumed labour</td>'
        f'<td class="num" colspan="4">{labour}</td></tr>'
        f'<tr><td colspan="5">total</td><td class="num" colspan="4">{total}</td></tr>'
        "</tfoot></table></div></section>"
    )
