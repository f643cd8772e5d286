"""Escaping and display formatting shared by every report section.

Money is rounded here, for display only (the engine keeps exact Decimal amounts); a PENDING
price is shown as PENDING, never as $0. Every text that comes from data goes through `esc`.
"""

from __future__ import annotations

from decimal import Decimal
from html import escape


def esc(value: object) -> str:
    """`value` as text, HTML-escaped (quotes too: safe inside an attribute)."""
    return escape(str(value), quote=True)


def usd(amount: Decimal | None) -> str:
    """Dollars to the cent with thousands separators; None (a pending price) is PENDING."""
    if amount is None:
        return "PENDING"
    text = f"{amount:,.2f}"
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def rate_text(rate: Decimal) -> str:
    return f"${rate:,f}"


def unit_price(amount: Decimal | None) -> str:
    """A price per unit (a break-even price), to 1/100 of a cent: display only."""
    if amount is None:
        return "—"
    return f"${amount:,.4f}"


def num(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    if value is None:
        return "—"
    return str(value)


def hours(h: float) -> str:
    text = f"{h:,.2f} h"
    return text + (f" (≈ {h / 24:,.1f} days)" if h >= 48 else "")


def pct(value: float, digits: int = 1) -> str:
    return f"{value * 100:.{digits}f} %"


def signed_pct(value: float) -> str:
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    size = abs(value) * 100
    return f"{sign}<0.1 %" if 0 < size < 0.05 else f"{sign}{size:.1f} %"


def short(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def coord(x: float) -> str:
    """A coordinate for an SVG attribute."""
    return f"{x:.1f}"


def usd_float(x: float) -> str:
    """An amount of money held as a float (a percentile, a swing), to the cent."""
    return usd(Decimal(str(round(x, 6))))


def quantity(x: float) -> str:
    """A quantity that will multiply a price: whole units from 1,000, else 4 digits."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def as_float(x: Decimal | None) -> float | None:
    return None if x is None else float(x)
