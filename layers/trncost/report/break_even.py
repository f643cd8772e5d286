"""The estimate page's break-even: for an estimate waiting on one PENDING price, the price at
which it costs as much per completed target as the best comparable alternative (the cheapest
fully priced estimate of the same workload on the same work and clock).

The figure is the engine's (`trncost.estimate.rank`, as the comparison computes it); this
module only says it. A break-even is never shown as a negative price: when the known part
alone already costs more than the alternative, no price makes this candidate cheaper.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from trncost.model import Estimate
from trncost.model.analysis import BreakEven
from trncost.report.format import esc, unit_price, usd


@dataclass(frozen=True)
class Alternative:
    """The break-even of an estimate against the others of its workload."""

    break_even: BreakEven | None
    against_estimate_id: str | None = None
    against_total_usd: Decimal | None = None
    considered: int = 0  # the other estimates of the workload that were looked at


def no_price_makes_it_cheaper(b: BreakEven) -> bool:
    """The engine says so (#13: never a negative price); a comparison stored before it may
    still hold a price below zero, which means the same."""
    return b.no_price_makes_it_cheaper or (b.price_usd is not None and b.price_usd < 0)


def break_even_text(b: BreakEven) -> str:
    """One plain sentence: the break-even price, that no price makes it cheaper, or why
    there is none."""
    if b.against is not None and no_price_makes_it_cheaper(b):
        return f"no price makes it cheaper than {b.against}: the known part alone costs more"
    if b.against is None or b.price_usd is None:
        return b.note
    return (
        f"below {unit_price(b.price_usd, b.unit)} it costs less per completed target than "
        f"{b.against}"
    )


def _against(alt: Alternative) -> str:
    b = alt.break_even
    assert b is not None and b.against is not None
    name = f"<strong>{esc(b.against)}</strong>"
    if alt.against_estimate_id:  # named, not linked: the page fetches and links nothing
        name += f" (estimate <code>{esc(alt.against_estimate_id)}</code>)"
    if alt.against_total_usd is not None:
        name += f", {esc(usd(alt.against_total_usd))} per completed target"
    return name


def break_even_section(est: Estimate, alt: Alternative | None) -> str:
    """The section; nothing for an estimate with no PENDING price (or when nobody asked)."""
    if not est.incomplete or alt is None:
        return ""
    b = alt.break_even
    head = '<section id="break-even"><h2>Break-even price</h2>'
    key = "" if b is None else f"<code>P[{esc(b.price_key)}]</code>"
    if b is not None and b.against is not None and no_price_makes_it_cheaper(b):
        return (
            f'{head}<p class="break-even bad" id="break-even-value" data-break-even="never">'
            f"<strong>No price makes it cheaper</strong> than {_against(alt)}: the known part "
            f"alone ({esc(usd(est.total_known_usd))}) already costs more, whatever {key} "
            "turns out to be.</p></section>"
        )
    if b is None or b.against is None or b.price_usd is None:
        why = b.note if b is not None else "no comparable estimate of this workload is fully priced"
        looked = (
            f" ({alt.considered} other estimate{'s' if alt.considered != 1 else ''} of this "
            "workload looked at)"
            if alt.considered
            else " (this workload has no other estimate)"
        )
        return (
            f'{head}<p class="muted" id="break-even-none" data-break-even="none">'
            f"No break-even price: {esc(why)}{looked}.</p></section>"
        )
    return (
        f'{head}<p class="break-even" id="break-even-value" data-break-even="price">'
        f'{key} <span class="figure-inline">{esc(unit_price(b.price_usd, b.unit))}</span></p>'
        f"<p>Below this price the candidate costs less per completed target than the best "
        f"comparable alternative, {_against(alt)}; above it, more. Known part "
        f"{esc(usd(est.total_known_usd))} + the pending quantity × the price.</p></section>"
    )
