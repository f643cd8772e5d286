"""The estimate report leads with what a budget owner decides on: the decision and its first
reasons, the P10–P90 and P50 beside the point figure; and "complete" is green only when the
decision is ready_to_budget on official prices."""

from __future__ import annotations

import re

from tests.support.examples import example_estimates
from trncost.model.analysis import Action, Decision, Reason
from trncost.model.basis import PriceBasis
from trncost.report import render_report

READY = Decision(candidate_id="c", action=Action.ready_to_budget, reasons=[], summary="ready")
CONTINUE = Decision(
    candidate_id="c",
    action=Action.continue_trials,
    reasons=[
        Reason(code=f"r{i}", action=Action.continue_trials, message=f"reason {i}") for i in range(5)
    ],
    summary="continue_trials: r0; r1; r2; r3; r4",
)


def _status(page: str) -> str:
    return re.search(r'<span class="([^"]*)" id="status"[^>]*>([^<]*)<', page).group(0)


def test_the_headline_leads_with_the_decision_and_its_first_reasons():
    est = example_estimates()["trn2.48xlarge"]
    page = render_report(est, decision=CONTINUE)
    head = page[page.index('id="headline"') : page.index('id="total-formula"')]
    # the verdict comes before the figures, with three reasons and a link to the rest
    assert head.index('id="verdict"') < head.index('class="figures"')
    assert 'data-action="continue_trials"' in head
    assert [f"r{i}" for i in range(3)] == re.findall(r'<li data-code="(r\d)"', head)
    assert '<a href="#decision">2 more reasons</a>' in head
    # the decision section lists every reason
    assert len(re.findall(r'<li data-code="r\d">', page[page.index('id="decision"') :])) >= 5


def test_a_complete_estimate_on_example_prices_is_never_a_green_light():
    est = example_estimates()["trn2.48xlarge"]
    assert est.status == "complete" and est.price_basis == PriceBasis.example
    for decision in (None, CONTINUE, READY):
        chip = _status(render_report(est, decision=decision))
        assert "status-not-ready" in chip and "NOT READY TO BUDGET" in chip, chip


def test_only_ready_to_budget_on_official_prices_is_green():
    est = example_estimates()["trn2.48xlarge"].model_copy(
        update={"price_basis": PriceBasis.official}
    )
    assert "status-not-ready" not in _status(render_report(est, decision=READY))
    assert "status-not-ready" in _status(render_report(est, decision=CONTINUE))
