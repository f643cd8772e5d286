"""The HTML report: one self-contained page per estimate.

Given the bundled example's estimates (trn2 and p5 complete, trn3 waiting on a PENDING price)
and an infeasible plan, when each is rendered, then the page shows the total (or the formula in
the pending price, or the reason it cannot finish), the cost-breakdown chart, the line items,
the warnings and every input row with its provenance; escapes what it is given; fetches nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal

import pytest

from tests.support.examples import example_estimates
from tests.support.factories import inputs, instance_quote, snapshot, trial, workload
from tests.support.html_page import Page, assert_self_contained, section
from trncost.estimate import estimate
from trncost.model import Component, EstimateWarning, InputRow, UserAssumption
from trncost.report import render_report
from trncost.report.format import usd

TRN3_KEY = "AmazonEC2/us-east-2/trn3.48xlarge/on_demand"


def render(est, **meta):
    return render_report(est, **meta)


@pytest.fixture(scope="module")
def example():
    return example_estimates()


@pytest.fixture(scope="module")
def pages(example):
    return {
        kind: render_report(
            est,
            estimate_id=f"est-{kind}",
            version=3,
            created_at="2026-11-02T10:00:00Z",
            workload_name="Llama 3.1 8B continued pre-training",
        )
        for kind, est in example.items()
    }


@pytest.fixture(scope="module")
def infeasible():
    # 1 − λ·n·(t_restart + interval/2) = 1 − 1.0 × 2 × (0.5 + 0.5) = −1 ≤ 0: never finishes
    t = trial("t-tiny", phase="target", count=2, work=3.6e8, wall={"steady_s": 3600})
    est = estimate(
        inputs(
            wl=workload(target={"unit": "tokens", "amount": 1e6}),
            trials=[t],
            prices=snapshot(instance_quote("trn2.48xlarge", "36.00")),
            assumptions={
                "failure_rate_per_instance_hour": 1.0,
                "restart_s": 1800,
                "checkpoint_interval_s": 3600,
            },
        )
    )
    assert est.status == "infeasible"
    return est


# -- the headline --------------------------------------------------------------------------------
def test_a_complete_estimate_shows_its_cost_per_target_and_per_million_tokens(example, pages):
    est, html = example["trn2.48xlarge"], pages["trn2.48xlarge"]
    page = Page(html)
    headline = Page(section(html, "headline")).text
    assert f"${est.total_usd:,.2f}" in headline
    assert usd(est.cost_per_million_tokens_usd) in headline
    assert "Cost per completed target" in headline and "Cost per 1M tokens" in headline
    (badge,) = page.find("span", id="status")
    assert badge["data-status"] == "complete"
    assert "COMPLETE" in page.text and "INCOMPLETE" not in page.text
    assert "PENDING" not in headline


def test_the_header_names_workload_candidate_estimate_engine_and_snapshot(example, pages):
    est, text = example["p5.48xlarge"], Page(pages["p5.48xlarge"]).text
    for expected in (
        "Llama 3.1 8B continued pre-training",
        est.workload_id,
        "4× p5.48xlarge",
        "est-p5.48xlarge",
        "version 3",
        "2026-11-02 10:00:00 UTC",  # to the second, with its zone
        est.engine_version,
        est.snapshot_id,
    ):
        assert expected in text, expected
    assert f"${est.total_usd:,.2f}" in text


def test_an_incomplete_estimate_gives_the_formula_in_the_pending_price_never_zero(example, pages):
    est, html = example["trn3.48xlarge"], pages["trn3.48xlarge"]
    headline = Page(section(html, "headline")).text
    assert "INCOMPLETE" in Page(html).text
    assert est.total_formula in headline
    assert f"${est.total_known_usd:,.2f} + " in headline
    assert f"P[{TRN3_KEY}]" in headline
    (term,) = est.pending_terms
    assert "no Price List product for trn3.48xlarge" in term.reason
    assert term.reason in headline
    # PENDING is shown as PENDING: nowhere on the page is it a zero dollar amount.
    assert "$0.00" not in html
    figure = re.search(r'<div class="figure" id="cost-per-target">.*?</div></div>', html)
    assert "PENDING" in Page(figure.group(0)).text


def test_an_infeasible_estimate_says_why_and_shows_no_total(infeasible):
    html = render(infeasible)
    page = Page(html)
    assert page.errors == []
    (badge,) = page.find("span", id="status")
    assert badge["data-status"] == "infeasible" and "INFEASIBLE" in page.text
    headline = Page(section(html, "headline")).text
    assert infeasible.infeasible_reason in headline and "cannot finish" in headline
    assert "$" not in headline  # no total, no $0
    assert not page.find("g", **{"class": "bar-row"})
    assert "No cost breakdown" in page.text
    for w in infeasible.warnings:
        assert w.code in page.text


def test_time_to_target_is_split_into_its_parts(example, pages):
    t = example["trn2.48xlarge"].time
    text = Page(section(pages["trn2.48xlarge"], "time")).text
    for part in ("steady", "compile", "warm-up", "checkpoints", "evaluation", "failures", "held"):
        assert part in text, part
    assert f"{t.steady_h:,.2f} h" in text
    assert f"{t.total_h:,.2f} h" in text and f"{t.held_h:,.2f} h" in text


# -- chart, line items, warnings, inputs ------------------------------------------------------
@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"])
def test_the_chart_has_one_labelled_bar_per_component(example, pages, kind):
    est, html = example[kind], pages[kind]
    chart = re.search(r'<svg class="chart" id="cost-chart".*?</svg>', html, re.S).group(0)
    bars = Page(chart).find("g", **{"class": "bar-row"})
    assert [b["data-component"] for b in bars] == [c.value for c in Component]
    pending = {li.component for li in est.line_items if li.amount_usd is None}
    chart_text = Page(chart).text
    for comp, bar in zip(Component, bars, strict=True):
        known = est.components[comp]
        if comp in pending:
            assert bar["data-state"] in {"pending", "partial"}
        else:
            assert bar["data-state"] == "known"
            assert usd(known) in chart_text


def test_pending_components_are_hatched_not_drawn_as_zero(example, pages):
    chart = re.search(r'<svg class="chart" id="cost-chart".*?</svg>', pages["trn3.48xlarge"], re.S)
    page = Page(chart.group(0))
    states = {b["data-component"]: b["data-state"] for b in page.find("g", **{"class": "bar-row"})}
    assert states["instances"] == "pending"  # only the PENDING price: no known part
    assert states["adaptation_reruns"] == "partial"  # engineering known + trn3 trials pending
    assert len(page.find("rect", **{"class": "bar-pending"})) == 2
    assert "PENDING (unknown amount)" in page.text and "$0.00" not in page.text
    # Issue 12: the component's subtotal is null (it has a PENDING line); its known part is
    # the sum of its priced lines.
    assert example["trn3.48xlarge"].components[Component.adaptation_reruns] is None
    known = example["trn3.48xlarge"].known_by_component()[Component.adaptation_reruns]
    assert f"{usd(known)} + PENDING" in page.text


@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge"])
def test_line_items_list_every_line_with_pending_shown_as_pending(example, pages, kind):
    est = example[kind]
    table = section(pages[kind], "line-items")
    page = Page(table)
    rows = [a for t, a in page.tags if t == "tr" and "data-component" in a]
    assert len(rows) == len(est.line_items)
    text = page.text
    for li in est.line_items:
        assert li.name in text
        if li.amount_usd is not None:
            assert usd(li.amount_usd) in text
    for col in ("component", "item", "quantity", "unit", "rate", "amount", "provenance"):
        assert col in text
    pending_rows = [a for a in rows if a.get("class") == "pending-row"]
    assert len(pending_rows) == sum(li.amount_usd is None for li in est.line_items)
    # Money is rounded for display only: no micro-dollar strings on the page.
    for li in est.line_items:
        if li.amount_usd is not None and li.amount_usd != li.amount_usd.quantize(Decimal("0.01")):
            assert str(li.amount_usd) not in table


@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"])
def test_warnings_are_all_shown(example, pages, kind):
    est = example[kind]
    text = Page(section(pages[kind], "warnings")).text
    assert est.warnings and f"Warnings ({len(est.warnings)})" in text
    for w in est.warnings:
        assert w.code in text and w.message in text
    assert "example_prices" in text


@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"])
def test_the_input_table_has_every_row_with_its_provenance_and_source(example, pages, kind):
    est = example[kind]
    html = section(pages[kind], "inputs")
    page = Page(html)
    rows = [a for t, a in page.tags if t == "tr" and "data-kind" in a]
    assert [r["id"] for r in rows] == [f"input-{row.id}" for row in est.inputs]
    assert [r["data-kind"] for r in rows] == [row.provenance.kind for row in est.inputs]
    text = page.text
    for row in est.inputs:
        p = row.provenance
        assert row.id in text and row.label in text
        match p.kind:
            case "official_price":
                assert p.snapshot_id in text and p.sku in text and p.rate_code in text
            case "trial_measurement":
                assert p.metric in text and all(t in text for t in p.trial_ids)
            case "user_assumption":
                assert p.name in text and (p.note is None or p.note in text)
            case "derived":
                assert p.formula in text
            case "pending":
                assert p.reason in text
    kinds = {r["data-kind"] for r in rows}
    assert {"official_price", "trial_measurement", "user_assumption", "derived"} <= kinds
    for kind_name in kinds:
        assert page.find("span", **{"class": f"kind kind-{kind_name}"})


def test_derived_rows_link_to_the_rows_they_come_from(pages):
    page = Page(pages["trn2.48xlarge"])
    ids = {a["id"] for _, a in page.tags if a.get("id")}
    links = [a["href"] for t, a in page.tags if t == "a" and a.get("href")]
    assert links and all(h.startswith("#") for h in links)
    assert all(h[1:] in ids for h in links), [h for h in links if h[1:] not in ids]


def test_pending_inputs_say_pending_with_their_reason(example, pages):
    html = section(pages["trn3.48xlarge"], "inputs")
    row = re.search(rf'<tr id="input-price:{re.escape(TRN3_KEY)}".*?</tr>', html, re.S)
    text = Page(row.group(0)).text
    assert "PENDING" in text and "no Price List product for trn3.48xlarge" in text


# -- safety and shape ---------------------------------------------------------------------------
def test_everything_is_escaped(example):
    est = example["trn3.48xlarge"]
    evil = "<script>alert('x')</script>"
    est = est.model_copy(
        update={
            "inputs": [
                *est.inputs,
                InputRow(
                    id="assumption:evil",
                    label='<img src="x" onerror="alert(1)">',
                    value="<b>bold</b>",
                    unit="&",
                    provenance=UserAssumption(name="evil", note=evil),
                ),
            ],
            "warnings": [*est.warnings, EstimateWarning(code="evil", message="</li>" + evil)],
        }
    )
    html = render(est, workload_name=evil, estimate_id='"><script>x</script>')
    page = Page(html)
    assert page.errors == []
    assert "<script" not in html.lower() and "<img" not in html.lower() and "<b>" not in html
    assert not page.find("script") and not page.find("img")
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert evil in page.text  # shown as text, in the title, the header, the note, the warning
    assert page.text.count(evil) >= 3


@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"])
def test_the_page_is_self_contained(pages, kind):
    html = pages[kind]
    assert_self_contained(html)


@pytest.mark.parametrize("kind", ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"])
def test_the_page_parses_and_its_tags_balance(pages, kind):
    html = pages[kind]
    page = Page(html)
    assert page.errors == []
    assert page.doctype and page.doctype.lower() == "doctype html"
    for tag in ("html", "head", "body", "main", "header", "footer", "style"):
        assert len(page.find(tag)) == 1, tag
    assert re.match(r"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">", html)
    sections = [a["id"] for t, a in page.tags if t == "section"]
    assert sections == [
        "headline",
        "warnings",
        "breakdown",
        "time",
        "line-items",
        "admission",  # which trials count (issue 13), where the input table is
        "inputs",
    ]
    assert len(page.find("svg")) == 2
    assert len(html.encode()) < 300_000


def test_print_styles_and_no_javascript(pages):
    html = pages["trn2.48xlarge"]
    assert "@media print" in html
    assert "<script" not in html and "javascript:" not in html.lower()


def test_without_stored_metadata_the_page_still_renders(example):
    est = example["p5.48xlarge"]
    page = Page(render(est))
    assert page.errors == []
    assert "not stored" in page.text
    title = re.search(r"<title>(.*?)</title>", render(est)).group(1)
    assert est.workload_id in title and est.candidate.label in title and "COMPLETE" in title


def test_money_is_rounded_for_display_with_separators():
    assert usd(Decimal("1234567.891")) == "$1,234,567.89"
    assert usd(Decimal("0.004")) == "$0.00"
    assert usd(Decimal("-5")) == "-$5.00"
    assert usd(None) == "PENDING"


def test_importing_the_report_stays_light():
    # The report is rendered inside the API Lambda: no rich, no boto3 on its import path.
    code = (
        "import sys, trncost.report; "
        "heavy = [m for m in ('rich', 'boto3', 'jinja2') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
