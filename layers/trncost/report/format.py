"""Escaping and the display formats every report section uses.

The numbers and times themselves are formatted by `trncost.display`, the one module the HTML
reports, the CLI's tables and the exports share (re-exported here for the sections): money to
the cent, rates to their significant digits, timestamps to the second with their zone. A
PENDING price is shown as PENDING, never as $0. Every text that comes from data goes through
`esc`.
"""

from __future__ import annotations

from decimal import Decimal
from html import escape

from trncost.display import (
    hours,
    input_value,
    pct,
    quantity,
    rate,
    times_in,
    timestamp,
    unit_price,
    usd,
    usd_float,
)
from trncost.display import number as num

__all__ = [
    "as_float",
    "coord",
    "esc",
    "hours",
    "input_value",
    "num",
    "pct",
    "quantity",
    "rate",
    "rate_text",
    "short",
    "signed_pct",
    "timestamp",
    "times_in",
    "unit_price",
    "usd",
    "usd_float",
]


def esc(value: object) -> str:
    """`value` as text, HTML-escaped (quotes too: safe inside an attribute)."""
    return escape(str(value), quote=True)


def rate_text(value: Decimal) -> str:
    """A rate without its unit: `$0.08`."""
    return rate(value)


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


def as_float(x: Decimal | None) -> float | None:
    return None if x is None else float(x)
