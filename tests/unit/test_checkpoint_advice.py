"""Checkpoint interval advice (estimate/checkpoint.py): the interval that minimises the expected
cost per target under the failure posterior, with the measured save and restart times, shown as
a what-if with its saving against the interval the estimate uses."""

from __future__ import annotations

import math

import pytest

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.estimate import analyse, estimate
from trncost.estimate.checkpoint import checkpoint_advice, daly_s, young_s
from trncost.estimate.uncertainty import prepare
from trncost.model import Assumptions
from trncost.report.checkpoint import advice_sentence, checkpoint_section

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))
MIN = 60.0
H = 3600.0


def _trials(save_s=90.0, saves=12, failures=1):
    """A 6-hour target run at 8 instances with a measured save time, saves and a failure."""
    return [
        trial(
            "t-target",
            phase="target",
            count=8,
            work=8e5 * 21600,
            wall={
                "steady_s": 21600,
                "checkpoint_save_s": save_s * saves,
                "restart_s": 600.0 * failures,
            },
            checkpointing={"saves": saves, "size_gb": 100, "restore_verified": True},
            reliability={"failures": failures},
        )
    ]


def _inp(**kw):
    """A 50-hour plan (1.44e11 tokens at 8e5 tokens/s) on 8 instances."""
    return inputs(
        wl=workload(target={"unit": "tokens", "amount": 1.44e11}),
        cand=candidate(count=8),
        trials=_trials(**kw),
        prices=PRICES,
    )


@pytest.mark.parametrize(
    ("mtbf_s", "daly_min"),
    [(24 * H, 116.7), (6 * H, 56.7), (15 * MIN, 9.1)],  # Daly (2006)'s own checks, δ = 5 min
)
def test_daly_matches_the_papers_checks(mtbf_s, daly_min):
    assert daly_s(5 * MIN, mtbf_s) / MIN == pytest.approx(daly_min, abs=0.15)


def test_young_is_the_square_root_of_twice_save_times_mtbf():
    assert young_s(120.0, 10 * H) == pytest.approx(math.sqrt(2 * 120 * 10 * H))
    assert daly_s(10 * H, 2 * H) == 2 * H  # δ ≥ 2M: the interval is M


def test_the_advice_minimises_the_expected_cost_and_says_its_saving():
    # Given a run that saved every 30 minutes (90 s per save) and failed once
    inp = _inp()
    est = estimate(inp)
    advice = checkpoint_advice(prepare(inp, est), seed=1)
    assert advice is not None and advice.current_source == "measured"
    assert advice.current_interval_s == pytest.approx(21600 / 12)
    # Then the advised interval costs no more than the one now; it is shorter than Young's at
    # the posterior MEAN rate (the posterior's tail of high rates costs more than its mean)
    assert advice.expected_total_usd_advised <= advice.expected_total_usd_now
    assert advice.young_s / 3 < advice.advised_s <= advice.young_s
    assert advice.saving_usd == pytest.approx(
        advice.expected_total_usd_now - advice.expected_total_usd_advised
    )
    assert advice.saving_h > 0 and 0.5 < advice.p_advised_cheaper <= 1
    # And the what-if table has the interval now first, the advice, Young's and Daly's
    labels = [w.label for w in advice.what_if]
    assert labels[:4] == ["now", "advised", "Young", "Daly"]
    advised = next(w for w in advice.what_if if w.label == "advised")
    assert all(w.expected_total_usd >= advised.expected_total_usd for w in advice.what_if)
    # And the band within 1 % of the least cost holds the advice (the cost is flat there)
    assert advice.flat_from_s <= advice.advised_s <= advice.flat_to_s
    # And the estimate itself keeps the interval it was given (a what-if, not a change)
    assert estimate(inp) == est


def test_an_assumed_interval_is_the_one_compared_against():
    inp = _inp().model_copy(
        update={"assumptions": Assumptions.model_validate({"checkpoint_interval_s": 600})}
    )
    advice = checkpoint_advice(prepare(inp), seed=1)
    assert advice.current_source == "assumed" and advice.current_interval_s == 600
    assert advice.saving_usd > 0


def test_no_measured_save_means_no_advice_and_says_why():
    trials = [trial("t-a", count=8, work=8e5 * 3600, checkpointing={"saves": 0})]
    inp = inputs(cand=candidate(count=8), trials=trials, prices=PRICES)
    advice = checkpoint_advice(prepare(inp), seed=1)
    assert advice is not None and advice.advised_s is None
    assert any("no trial measured a checkpoint save" in n for n in advice.notes)
    assert advice_sentence(advice).startswith("No interval advised")


def test_a_pending_price_is_advised_on_held_hours():
    inp = _inp().model_copy(update={"prices": snapshot()})
    advice = checkpoint_advice(prepare(inp), seed=1)
    assert advice.saving_usd is None and advice.saving_instance_hours > 0
    assert "instance-hours per target" in advice_sentence(advice)


def test_the_analysis_and_its_page_carry_the_advice():
    a = analyse([_inp()], samples=500, seed=3)
    advice = a.candidates[0].checkpoint
    assert advice is not None and advice.advised_s is not None
    html = checkpoint_section(advice, "c1")
    assert 'id="c1-checkpoint-what-if"' in html and "Checkpoint every" in html
