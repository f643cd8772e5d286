"""Numbers and times for people: the one formatting module of the HTML reports, the CLI's
tables and the CSV/Markdown exports.

- Money to the cent with thousands separators (`$17,600.00`); a PENDING amount is `PENDING`,
  never `$0`.
- A rate (a price per unit) to its significant digits, at most six, trailing zeros dropped
  but never fewer than two decimals: `$0.08 / GB-Mo`, `$2.856 / Hrs`, `$0.0000166667 / s`
  (never `$0.0800000000`).
- Quantities to six significant digits (whole units from a million); a tiered price as its
  tiers (`0–51,200: $0.023 · 51,200–512,000: $0.022 · from 512,000: $0.021`).
- Timestamps to the second with their zone (`2026-12-01 12:22:06 UTC`), never microseconds;
  a date stays a date.

Display only: the engine keeps exact Decimal amounts, and exports carry these same texts.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

PENDING = "PENDING"
DASH = "—"
RATE_DIGITS = 6


def usd(amount: Decimal | None) -> str:
    """Dollars to the cent with thousands separators; None (a pending price) is PENDING."""
    if amount is None:
        return PENDING
    text = f"{amount:,.2f}"
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def usd_float(x: float) -> str:
    """An amount of money held as a float (a percentile, a swing), to the cent."""
    return usd(Decimal(str(round(x, 6))))


def plain_rate(rate: Decimal | str | float) -> str:
    """A rate's digits without the dollar sign: significant digits (at most six), at least
    two decimals, thousands separators (`0.08`, `2.856`, `1,234.50`)."""
    value = rate if isinstance(rate, Decimal) else Decimal(str(rate))
    if not value.is_finite():
        return str(value)
    if value == 0:
        return "0.00"
    exponent = value.adjusted()  # the power of ten of the first significant digit
    places = max(2, RATE_DIGITS - 1 - exponent)
    rounded = value.quantize(Decimal(1).scaleb(-places))
    text = f"{rounded:,f}"
    if "." in text:
        whole, frac = text.split(".")
        frac = frac.rstrip("0").ljust(2, "0")
        text = f"{whole}.{frac}"
    return text


def rate(value: Decimal | str | float | None, unit: str | None = None) -> str:
    """A price per unit: `$0.08 / GB-Mo`; None is PENDING."""
    if value is None:
        return PENDING
    digits = plain_rate(value)
    text = f"-${digits[1:]}" if digits.startswith("-") else f"${digits}"
    return f"{text} / {unit}" if unit else text


def unit_price(amount: Decimal | None, unit: str | None = None) -> str:
    """A price per unit (a break-even price): a rate; None is a dash."""
    return DASH if amount is None else rate(amount, unit)


def number(value: object) -> str:
    """A quantity: six significant digits, whole units from a million; yes/no; a dash."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Decimal):
        return plain_rate(value)
    if value is None:
        return DASH
    return str(value)


def quantity(x: float) -> str:
    """A quantity that will multiply a price: whole units from 1,000, else 4 digits."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def hours(h: float) -> str:
    text = f"{h:,.2f} h"
    return text + (f" (≈ {h / 24:,.1f} days)" if h >= 48 else "")


def pct(value: float, digits: int = 1) -> str:
    return f"{value * 100:.{digits}f} %"


# -- timestamps --------------------------------------------------------------------------------
def timestamp(value: datetime | date | str | None) -> str:
    """A time to the second with its zone (`2026-12-01 12:22:06 UTC`); an ISO text is parsed
    first (a text that is not one comes back as it is); a date stays a date; None a dash."""
    if value is None:
        return DASH
    if isinstance(value, str):
        if len(value) == 10:  # a date (an effective date): nothing to round
            return value
        try:
            parsed: datetime | date = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    else:
        parsed = value
    return _when(parsed)


def _when(value: datetime | date) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.strftime("%Y-%m-%d %H:%M:%S")
        offset = value.utcoffset()
        if not offset:
            return value.strftime("%Y-%m-%d %H:%M:%S UTC")
        zone = value.strftime("%z")
        return value.strftime("%Y-%m-%d %H:%M:%S ") + f"UTC{zone[:3]}:{zone[3:5]}"
    return value.isoformat()


_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")


def times_in(text: str) -> str:
    """Every ISO timestamp inside `text` shown as `timestamp` shows it (no microseconds)."""
    return _ISO_TIME.sub(lambda m: timestamp(m.group(0)), text)


# -- values of the input table ----------------------------------------------------------------
_TIER = re.compile(r"\[([^–\]]+)–([^)]+)\) ([^;\s]+)")


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def tiers(text: str) -> str | None:
    """The engine's tier summary (`[0–5.12E+4) 0.023; [5.12E+4–∞) 0.022`) for people:
    `0–51,200: $0.023 · from 51,200: $0.022`; None when `text` is not one."""
    parts = tier_list(text)
    return None if parts is None else " · ".join(parts)


def tier_list(text: str) -> list[str] | None:
    """`tiers`, one text per tier."""
    found = _TIER.findall(text)
    if not found:
        return None
    parts = []
    for begin, end, usd_text in found:
        lo, hi, price = _decimal(begin), _decimal(end), _decimal(usd_text)
        if lo is None or price is None:
            return None
        price_text = rate(price)
        if hi is None:
            parts.append(f"from {number(float(lo))}: {price_text}")
        else:
            parts.append(f"{number(float(lo))}–{number(float(hi))}: {price_text}")
    return parts


def input_value(value: object, unit: str | None) -> str:
    """An input row's value for people: money and prices (a unit in USD) as rates, a tiered
    price as its tiers, timestamps without microseconds, quantities to six digits."""
    if isinstance(value, str):
        tiered = tiers(value)
        if tiered is not None:
            return tiered
        amount = _decimal(value)
        if amount is not None:
            return rate(amount) if (unit or "").upper().startswith("USD") else plain_rate(amount)
        return times_in(value)
    return number(value)
