"""The tornado: one input at a time over its range, ranked by its effect on the total."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import assume, given, settings

from tests.support.factories import inputs, instance_quote, snapshot, trial
from tests.support.scenarios import scenarios
from trncost.estimate import estimate, tornado

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))


def hand_example():
    # one target trial: 1e5 tokens/s at 2 instances, 3,600 s, no failure, no samples
    t = trial("t-1", phase="target", count=2, work=3.6e8, wall={"steady_s": 3600})
    return inputs(
        trials=[t],
        prices=PRICES,
        assumptions={"idle_fraction": 0.2, "checkpoint_interval_s": 1800, "restart_s": 600},
    )


def by_id(swings):
    return {s.input_id: s for s in swings}


def test_hand_checked_swings_and_their_order():
    inp = hand_example()
    est = estimate(inp)
    # steady 7.2e9 / 1e5 = 72,000 s = 20 h; λ = 0 measured → T = 20 h; held = 20 / 0.8 = 25 h
    # instances 2 × 25 h × $36 = $1,800; the trial 2 × 1 h × $36 = $72 → $1,872
    assert est.total_usd == Decimal("1872.000000")
    swings = tornado(inp, est)
    s = by_id(swings)
    # idle ±20 %: 0.16 → held 20 / 0.84 = 23.8095 h → 2 × 23.8095 × 36 + 72 = $1,786.29
    #             0.24 → held 20 / 0.76 = 26.3158 h → 2 × 26.3158 × 36 + 72 = $1,966.74
    idle = s["assumption:idle_fraction"]
    assert float(idle.low.total_usd) == pytest.approx(1786.29, abs=0.02)
    assert float(idle.high.total_usd) == pytest.approx(1966.74, abs=0.02)
    assert idle.effect == pytest.approx(180.45, abs=0.03)
    assert idle.basis == "±20 % (user assumption)"
    # price ±20 %: every line on that price moves: 0.8 × 1,872 = $1,497.60, 1.2 × = $2,246.40
    price = s["price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand"]
    assert price.low.total_usd == Decimal("1497.600000")
    assert price.high.total_usd == Decimal("2246.400000")
    assert price.effect == pytest.approx(748.8)
    # failure rate: 0 failures in 2 instance-h → Gamma(0.5, 2) P10–P90 (Wilson–Hilferty)
    #   P90: c = 1 − 1/4.5 + 1.281552 × √(1/4.5) = 0.777778 + 0.604129 = 1.381907;
    #        c³ = 2.638982; × 0.5 / 2 = 0.659746 per instance-hour
    #   T = 20 / (1 − 0.659746 × 2 × (600 + 900) / 3,600) = 20 / 0.450212 = 44.423 h
    #   held 44.423 / 0.8 = 55.529 h → 2 × 55.529 × 36 + 72 = $4,070.1: the largest swing
    fail = s["failure:rate"]
    assert fail.high.value == pytest.approx(0.659746, rel=1e-5)
    assert float(fail.high.total_usd) == pytest.approx(4070.1, abs=0.2)
    # restart ±20 % moves nothing while the failure rate is 0
    assert s["assumption:restart_s"].effect == 0
    assert [x.input_id for x in swings] == [
        "failure:rate",
        "price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand",
        "assumption:idle_fraction",
        "assumption:restart_s",
    ]
    assert [x.rank for x in swings] == [1, 2, 3, 4]
    # throughput: one trial without samples has no observed range, so it is not swung
    assert "throughput:n=2" not in s


def test_an_end_where_the_plan_cannot_finish_ranks_first():
    inp = hand_example()
    inp = inp.model_copy(
        update={
            "assumptions": inp.assumptions.model_copy(
                update={"checkpoint_interval_s": None, "restart_s": None}
            )
        }
    )
    # no checkpoints: a failure loses half the run (10 h); λ = 0.66 × 2 × 10 > 1: infeasible
    top = tornado(inp)[0]
    assert top.input_id == "failure:rate" and top.effect is None
    assert top.high.infeasible and top.high.total_usd is None


@settings(max_examples=30, deadline=None)
@given(scenarios(priced=None))
def test_swings_name_input_rows_are_ranked_and_bracket_the_point(inp):
    est = estimate(inp)
    assume(est.status != "infeasible")
    swings = tornado(inp, est)
    ids = {r.id for r in est.inputs}
    assert {s.input_id for s in swings} <= ids
    assert [s.rank for s in swings] == list(range(1, len(swings) + 1))
    effects = [s.effect for s in swings]
    finite = [e for e in effects if e is not None]
    assert effects[: len(effects) - len(finite)] == [None] * (len(effects) - len(finite))
    assert finite == sorted(finite, reverse=True)
    for s in swings:
        assert s.low.value <= s.point <= s.high.value
        assert s.effect_unit == ("usd" if est.status == "complete" else "relative")
        if est.status == "incomplete" and not s.low.infeasible:
            assert s.low.total_usd is None and s.low.pending_quantities
