"""Labels that are true, and the comparison's first screen: every candidate's point, P50,
P10–P90, chance of being the cheapest, price basis and decision up front; an example price is
`example` (never an `official_price` chip), an input nobody measured is "not measured" (PENDING
is for prices), a tornado end where the plan cannot finish says "cannot finish" in the CLI as in
the report."""

from __future__ import annotations

import re

from tests.support.examples import example_estimates
from tests.support.html_page import section
from tests.unit.test_analysis_report import example, html  # noqa: F401  (fixtures)
from trncost.model.analysis import Swing, SwingEnd
from trncost.report import render_report
from trncost_client.cli.offline import _swing_line


def test_the_first_screen_has_one_row_per_candidate_with_what_a_budget_owner_decides_on(
    example,  # noqa: F811
    html,  # noqa: F811
):
    block = section(html, "summary")
    assert html.index('id="summary"') < html.index('id="decision"')
    rows = re.findall(r'<tr data-candidate="([^"]+)">(.*?)</tr>', block, re.S)
    assert {cid for cid, _ in rows} == {c.candidate_id for c in example.candidates}
    for cid, row in rows:
        c = next(x for x in example.candidates if x.candidate_id == cid)
        band = c.range.total_usd or c.range.known_usd
        for figure in (band.p50, band.p10, band.p90):
            assert f"${figure:,.2f}" in row, (cid, figure)
        assert f'data-action="{c.decision.action.value}"' in row
        assert f'class="basis basis-{c.estimate.price_basis.value}"' in row
        ranked = next(r for r in example.comparison.by_cost if r.candidate_id == cid)
        if ranked.p_cheapest is not None:
            assert f'data-p-cheapest="{ranked.p_cheapest:.4f}"' in row
        # complete on example prices: never the green light
        assert "status-not-ready" in row or c.estimate.status != "complete"


def test_example_prices_wear_their_basis_and_unmeasured_inputs_are_not_pending():
    est = example_estimates()["trn3.48xlarge"]
    page = render_report(est)
    inputs = section(page, "inputs")
    rows = dict(re.findall(r'<tr id="input-([^"]+)" data-kind[^>]*>(.*?)</tr>', inputs, re.S))
    price = next(v for k, v in rows.items() if k.startswith("price:") and "basis-example" in v)
    assert "kind-official_price" not in price and "basis-example" in price
    unmeasured = rows["usage:storage_gb"]
    assert "not measured" in unmeasured and "PENDING" not in unmeasured
    pending_price = rows["price:AmazonEC2/us-east-2/trn3.48xlarge/on_demand"]
    assert "PENDING" in pending_price


def test_the_cli_says_cannot_finish_where_the_report_does():
    end = SwingEnd(value=1.0, total_usd=None, known_usd=None, infeasible=True)
    ok = SwingEnd(value=0.5, total_usd="100", known_usd="100")
    swing = Swing(
        rank=1, input_id="failure:rate", label="failure rate", point=0.7, basis="P10–P90",
        low=ok, high=end, effect=None, effect_unit="usd",
    )  # fmt: skip
    line = _swing_line(swing)
    assert "cannot finish" in line and "PENDING" not in line


def test_every_status_has_its_label_and_its_colour():
    from typing import get_args

    from trncost.model import Estimate
    from trncost.report.shell import STATUS_TEXT
    from trncost.report.style import CSS

    for status in get_args(Estimate.model_fields["status"].annotation):
        assert STATUS_TEXT[status] == status.upper()
        assert re.search(rf"\.status-{status}\b[^{{]*\{{[^}}]*color:", CSS), status
