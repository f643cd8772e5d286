"""The comparison's side-by-side chart and the estimate page's break-even.

Given the bundled example analysed (trn2 and p5 fully priced, trn3 waiting on a PENDING
price) and a wider one with a candidate that cannot be estimated, the chart has one row per
candidate with its cost per completed target and time to target as the analysis has them,
P10–P90 whiskers exactly where the Monte Carlo range knows them, PENDING shown as PENDING
(never a cost bar), on axes that hold every whisker; the page still fetches nothing.
The break-even section gives the engine's price, says "no price makes it cheaper" rather than
a negative price, and says why when there is none.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from tests.support.examples import EXAMPLE, example_estimates
from tests.support.html_page import Page, assert_self_contained
from trncost.estimate import analyse, break_even_price
from trncost.model.analysis import BreakEven
from trncost.report import render_analysis_report, render_report
from trncost.report.break_even import Alternative, break_even_section, break_even_text
from trncost.report.sidebyside import side_by_side
from trncost_client.requestfile import load_request_file, request_inputs

TRN2, TRN3, P5 = (
    "4× trn2.48xlarge (us-east-2, on_demand)",
    "2× trn3.48xlarge (us-east-2, on_demand)",
    "4× p5.48xlarge (us-east-2, on_demand)",
)


@pytest.fixture(scope="module")
def example():
    return analyse(request_inputs(load_request_file(EXAMPLE)), seed=1, samples=5_000)


@pytest.fixture(scope="module")
def wide():
    inputs = request_inputs(load_request_file(EXAMPLE))
    p5 = inputs[2]
    missing = p5.model_copy(
        update={"candidate": p5.candidate.model_copy(update={"instance_type": "g5.48xlarge"})}
    )
    return analyse([*inputs, missing], seed=1, samples=2_000)


ROW = re.compile(
    r'<g class="sbs-row" data-candidate="([^"]+)">(.*?)</g>(?=<g class="sbs|</svg>)', re.S
)


def _rows(chart: str) -> dict[str, str]:
    return dict(ROW.findall(chart))


def test_one_row_per_candidate_with_its_cost_and_time(example):
    chart = side_by_side(example)
    rows = _rows(chart)
    assert set(rows) == {TRN2, TRN3, P5}
    for c in example.candidates:
        row = rows[c.candidate_id]
        est = c.estimate
        assert est is not None and est.time is not None
        assert f'data-time="{est.time.total_h:.2f}"' in row
        if est.complete:
            assert f'data-cost="{float(est.cost_per_target_usd):.2f}"' in row
        else:  # PENDING: a word, never a cost bar
            assert 'data-cost="PENDING"' in row and not re.search(r'data-cost="\d', row)


def test_whiskers_are_the_ranges_p10_p90_and_lie_on_the_axes(example):
    chart = side_by_side(example)
    rows = _rows(chart)
    for c in example.candidates:
        whiskers = re.findall(
            r'class="whisker" data-p10="([\d.]+)" data-p90="([\d.]+)"', rows[c.candidate_id]
        )
        r = c.range
        assert r is not None
        expected = []
        if r.total_usd is not None and r.total_usd.p10 is not None:
            expected.append((f"{float(r.total_usd.p10):.2f}", f"{float(r.total_usd.p90):.2f}"))
        if r.time_to_target_h is not None and r.time_to_target_h.p10 is not None:
            expected.append((f"{r.time_to_target_h.p10:.2f}", f"{r.time_to_target_h.p90:.2f}"))
        assert whiskers == expected, c.candidate_id
    # every mark inside the chart's width
    for x in re.findall(r' x2?="([\d.]+)"', chart):
        assert 0 <= float(x) <= 1000
    for w in re.findall(r' width="([\d.-]+)"', chart):
        assert float(w) >= 0


def test_a_candidate_that_could_not_be_estimated_says_so(wide):
    rows = _rows(side_by_side(wide))
    missing = next(c for c in wide.candidates if c.estimate is None)
    assert 'data-cost="NOT ESTIMATED"' in rows[missing.candidate_id]
    assert 'data-time="NOT ESTIMATED"' in rows[missing.candidate_id]


def test_the_analysis_page_leads_its_comparison_with_the_chart(example):
    html = render_analysis_report(example)
    assert_self_contained(html)
    comparison = re.search(r'<section id="comparison">.*?</section>', html, re.S).group(0)
    assert comparison.index('id="side-by-side"') < comparison.index('id="ranking"')
    assert "url(#hatch-pending)" in comparison and 'id="hatch-pending"' in html


def test_a_negative_break_even_is_never_shown_as_a_price(example):
    from trncost.report.anchors import PageAnchors
    from trncost.report.comparison import comparison

    be = BreakEven(candidate_id=TRN3, price_key="k", unit="instance-hour", against=P5,
                   price_usd=Decimal("-3.5"), note="the known part alone ...")  # fmt: skip
    comp = example.comparison.model_copy(update={"break_evens": [be]})
    text = Page(comparison(comp, PageAnchors(example))).text
    assert "no price makes it cheaper" in text and "-$3.5" not in text


# -- the single estimate's break-even --------------------------------------------------------
@pytest.fixture(scope="module")
def estimates():
    return example_estimates()


def test_the_break_even_section_gives_the_engines_price(estimates):
    trn3, p5 = estimates["trn3.48xlarge"], estimates["p5.48xlarge"]
    price = break_even_price(trn3, p5.total_usd)
    assert price is not None and price > 0
    be = BreakEven(candidate_id=TRN3, price_key=trn3.pending_terms[0].price_key,
                   unit="instance-hour", against=P5, price_usd=price, note="n")  # fmt: skip
    alt = Alternative(
        be, against_estimate_id="est-p5", against_total_usd=p5.total_usd, considered=2
    )
    html = render_report(trn3, alternative=alt)
    assert_self_contained(html)
    page = Page(html)
    (p,) = page.find("p", id="break-even-value")
    assert p["data-break-even"] == "price"
    from trncost.display import rate

    assert rate(price, "instance-hour") in page.text and "est-p5" in page.text
    sections = [a["id"] for t, a in page.tags if t == "section"]
    assert sections.index("break-even") == sections.index("headline") + 1
    assert "below" in break_even_text(be)


def test_no_price_makes_it_cheaper_and_no_alternative(estimates):
    trn3 = estimates["trn3.48xlarge"]
    never = BreakEven(candidate_id=TRN3, price_key="k", unit="instance-hour", against=P5,
                      price_usd=Decimal("-12.3"), note="n")  # fmt: skip
    text = Page(break_even_section(trn3, Alternative(never, considered=2))).text
    assert "No price makes it cheaper" in text and "-$12" not in text and "−" not in text
    assert "no price makes it cheaper" in break_even_text(never)
    alone = Page(break_even_section(trn3, Alternative(None, considered=0))).text
    assert "No break-even price" in alone and "no other estimate" in alone
    several = BreakEven(candidate_id=TRN3, price_key="k", unit="h", against=None, price_usd=None,
                        note="2 prices are PENDING: a break-even needs exactly one")  # fmt: skip
    assert "exactly one" in Page(break_even_section(trn3, Alternative(several, considered=3))).text


def test_a_complete_estimate_has_no_break_even_section(estimates):
    trn2 = estimates["trn2.48xlarge"]
    assert break_even_section(trn2, Alternative(None, considered=2)) == ""
    assert 'id="break-even' not in render_report(trn2)
