"""Numbers for people (trncost.display): worked examples for rates, money, timestamps and
tiered prices as the reports, the CLI and the exports print them, and properties over any
rate: significant digits without a float's noise, never rounded away, never 0 for a nonzero
price."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trncost import display


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        ("0.0800000000", "GB-Mo", "$0.08 / GB-Mo"),  # the example
        ("2.8560000000", "Hrs", "$2.856 / Hrs"),
        ("44.4683000000", "Hrs", "$44.4683 / Hrs"),
        ("0.0000166667", "s", "$0.0000166667 / s"),
        ("0.5", None, "$0.50"),
        ("110", "h", "$110.00 / h"),
        ("1234.5678901", None, "$1,234.57"),
        ("0", None, "$0.00"),
        ("-3.20", None, "-$3.20"),
    ],
)
def test_rates_to_significant_digits(value, unit, text):
    assert display.rate(Decimal(value), unit) == text


def test_a_pending_rate_and_amount_are_pending_never_zero():
    assert display.rate(None, "Hrs") == "PENDING"
    assert display.usd(None) == "PENDING"
    assert display.unit_price(None) == "—"


@pytest.mark.parametrize(
    ("amount", "text"),
    [("17600", "$17,600.00"), ("8.907023", "$8.91"), ("0.004", "$0.00"), ("-5.5", "-$5.50")],
)
def test_money_to_the_cent(amount, text):
    assert display.usd(Decimal(amount)) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2026-12-01T12:22:06.123456+00:00", "2026-12-01 12:22:06 UTC"),
        ("2026-11-02T10:00:00Z", "2026-11-02 10:00:00 UTC"),
        ("2026-11-02T10:00:00.5+02:00", "2026-11-02 10:00:00 UTC+02:00"),
        ("2026-11-02T10:00:00", "2026-11-02 10:00:00"),
        ("2026-11-01", "2026-11-01"),
        ("not a time", "not a time"),
        (None, "—"),
    ],
)
def test_timestamps_to_the_second_with_their_zone(value, text):
    assert display.timestamp(value) == text


def test_datetimes_and_texts_holding_timestamps():
    when = datetime(2026, 12, 1, 9, 5, 7, 999_999, tzinfo=UTC)
    assert display.timestamp(when) == "2026-12-01 09:05:07 UTC"
    minus5 = when.astimezone(timezone(timedelta(hours=-5)))
    assert display.timestamp(minus5) == "2026-12-01 04:05:07 UTC-05:00"
    assert display.times_in("taken 2026-12-01T09:05:07.123+00:00 by x") == (
        "taken 2026-12-01 09:05:07 UTC by x"
    )


def test_tiered_prices_as_their_tiers():
    engine = "[0–5.12E+4) 0.023; [5.12E+4–5.12E+5) 0.022; [5.12E+5–∞) 0.021"
    assert display.tiers(engine) == (
        "0–51,200: $0.023 · 51,200–512,000: $0.022 · from 512,000: $0.021"
    )
    assert display.tier_list("[0–1E+4) 0.3; [1E+4–∞) 0.1") == [
        "0–10,000: $0.30",
        "from 10,000: $0.10",
    ]
    assert display.tiers("0.08") is None and display.tiers("[garbage") is None


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        ("0.08", "USD/GB-Mo", "$0.08"),
        ("2.8560", "USD/Hrs", "$2.856"),
        ("110", "USD/h", "$110.00"),
        ("12.50", "tokens", "12.50"),
        (0.0003326418789927356, "1/instance-hour", "0.000332642"),
        (50_000_000_000.0, "tokens", "50,000,000,000"),
        (True, None, "yes"),
        (3, "instances", "3"),
        ("some text", None, "some text"),
    ],
)
def test_input_values(value, unit, text):
    assert display.input_value(value, unit) == text


@given(
    st.decimals(
        min_value=Decimal("0.0000001"), max_value=Decimal("1000000"), allow_nan=False, places=10
    )
)
def test_a_rate_keeps_six_significant_digits_and_never_shows_noise(value):
    text = display.plain_rate(value)
    shown = Decimal(text.replace(",", ""))
    assert shown > 0  # a nonzero price never prints as 0
    # at most six significant digits beyond what cents need, and within rounding of the value
    digits = text.replace(",", "").replace(".", "").lstrip("0")
    assert len(digits.rstrip("0")) <= max(6, len(str(int(value))) + 2)
    assert abs(shown - value) <= max(Decimal("0.005"), value * Decimal("0.000005"))
    assert "." in text and len(text.split(".")[1]) >= 2
    assert "E" not in text and "e" not in text
