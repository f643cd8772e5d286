"""The line items and input table as CSV and Markdown: every row, the report's own texts,
PENDING never 0, exact amounts that add up, and hostile texts made harmless (CSV formula
injection, Markdown pipes, newlines and HTML) — on the bundled example and hostile copies of
it."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.examples import example_estimates
from trncost.display import usd
from trncost.model import UserAssumption
from trncost.report.exports import (
    CSV_COLUMNS,
    csv_cell,
    estimate_csv,
    estimate_markdown,
    md_cell,
)
from trncost.report.render import CONTENT_TYPES, check_format, render_estimate

HOSTILE = [
    '=HYPERLINK("http://x.example/","click")',
    "+1+2",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1+1",
    "\r=1+1",
    "a | b | c",
    "two\nlines\r\nthree",
    "<script>alert(1)</script>",
    "back\\slash|",
]


@pytest.fixture(scope="module")
def example():
    return example_estimates()


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"])
def test_csv_has_every_line_and_input_row_with_exact_amounts(example, kind):
    est = example[kind]
    text = estimate_csv(est)
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS)
    rows = _rows(text)
    lines = [r for r in rows if r["table"] == "line_item"]
    inputs = [r for r in rows if r["table"] == "input"]
    assert [r["label"] for r in lines] == [li.name for li in est.line_items]
    assert [r["id"] for r in inputs] == [row.id for row in est.inputs]
    exact = sum((Decimal(r["amount_usd"]) for r in lines if r["amount_usd"]), Decimal(0))
    assert exact == est.total_known_usd
    for row, li in zip(lines, est.line_items, strict=True):
        assert row["cost"] == li.cost
        assert row["price_basis"] == (li.price_basis.value if li.price_basis else "")
        if li.amount_usd is None:
            assert row["amount"].startswith("PENDING") and row["amount_usd"] == ""
            assert row["rate"] == "PENDING"
        # rates for people: never ten decimals
        assert not re.search(r"\d\.\d{7,}", row["rate"]), row["rate"]


def test_markdown_has_both_tables_and_the_totals(example):
    est = example["trn3.48xlarge"]
    md = estimate_markdown(est, title="t", meta=[("Workload", "w")])
    assert md.startswith("# t\n") and "- Workload: w" in md
    assert "## Line items" in md and f"## Input table ({len(est.inputs)} rows)" in md
    (totals,) = [ln for ln in md.splitlines() if ln.startswith("**AWS bill")]
    assert "PENDING" in totals and usd(est.labour_usd) in totals
    assert f"{usd(est.total_known_usd)} + {est.pending_terms[0].quantity:,.2f}" in totals
    rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len(rows) == 4 + len(est.line_items) + len(est.inputs)
    # every table row has as many cells as its header
    for line in rows:
        assert len(re.split(r"(?<!\\)\|", line)) - 2 in (9, 7), line


@pytest.mark.parametrize("text", HOSTILE)
def test_csv_cells_never_start_a_formula(text):
    cell = csv_cell(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert cell.replace("'", "") == text.replace("'", "")  # only guards added


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_cells_stay_one_cell_on_one_line(text):
    cell = md_cell(text)
    assert "\n" not in cell and "\r" not in cell and "<" not in cell
    assert len(re.findall(r"(?<!\\)\|", cell)) == 0  # every pipe escaped


def test_hostile_names_in_an_estimate_are_harmless_in_both_exports(example):
    est = example["trn3.48xlarge"]
    lines = [li.model_copy(update={"name": HOSTILE[i % len(HOSTILE)]})
             for i, li in enumerate(est.line_items)]  # fmt: skip
    inputs = [
        row.model_copy(
            update={
                "label": HOSTILE[i % len(HOSTILE)],
                "provenance": UserAssumption(name="=cmd|' /C calc'!A0", note="x|y\nz"),
            }
        )
        for i, row in enumerate(est.inputs)
    ]
    hostile = est.model_copy(update={"line_items": lines, "inputs": inputs})
    rows = _rows(estimate_csv(hostile))
    assert len(rows) == len(lines) + len(inputs)  # no row split or merged by a newline
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), value
    md = estimate_markdown(hostile, title="=x | <b>", meta=[])
    table_lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(table_lines) == 4 + len(lines) + len(inputs)
    assert "<script>" not in md and "<b>" not in md


@given(st.text(max_size=40))
def test_any_text_survives_a_csv_round_trip_behind_the_guard(text):
    out = io.StringIO()
    csv.writer(out).writerow([csv_cell(text)])
    (back,) = next(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert back == csv_cell(text)
    # only `'` added, before a formula start: removing them gives the text back
    assert back.replace("'", "") == text.replace("'", "")


@pytest.mark.parametrize("separator", [",", ";", "\t", "|"])
def test_no_cell_starts_a_formula_whatever_the_list_separator(separator):
    # Given a hostile text that hides a formula after a separator (issue 23: `;`)
    text = f'trn2{separator}=HYPERLINK("http://x"){separator} @SUM(A1){separator}+1'
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL).writerow([csv_cell(text), "b"])
    line = out.getvalue()
    # When a spreadsheet splits the line on that separator, ignoring quotes
    pieces = [p.strip().strip('"').lstrip() for p in line.split(separator)]
    # Then no piece starts a formula, and every cell was quoted
    assert not any(p.startswith(("=", "+", "-", "@")) for p in pieces), pieces
    assert line.startswith('"') and '","b"' in line


def test_formats_and_content_types(example):
    est = example["trn2.48xlarge"]
    for fmt in ("html", "csv", "md"):
        done = render_estimate(est, fmt, estimate_id="est-1", version=2)
        assert done.content_type == CONTENT_TYPES[fmt]
        assert done.filename == f"trncost-est-1-v2.{fmt}"
    assert render_estimate(est, "csv").disposition.startswith("attachment;")
    with pytest.raises(ValueError, match="format"):
        check_format("pdf")
