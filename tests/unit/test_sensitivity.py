"""The tornado: one input at a time over its range, ranked by its effect on the total."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import assume, given, settings

from tests.support.factories import inputs, instance_quote, snapshot, trial
from tests.support.scenarios import scenarios
from trncost.estimate import estimate, tornado
from trncost.model import FleetFailurePrior

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
    # failure rate: 0 failures in 2 instance-h, updated from the published failure prior:
    #   prior mean 2.0790e-5 per accelerator-hour × 16 = 3.3264e-4 per instance-hour, shape 1
    #   → rate β₀ = 1 / 3.3264e-4 = 3,006.24 instance-h; posterior Gamma(1, 3,008.24)
    #   P90 (Wilson–Hilferty): c = 1 − 1/9 + 1.281552 × √(1/9) = 1.316073; c³ = 2.279497;
    #        / 3,008.24 = 7.5775e-4 per instance-hour (the point, the mode, is 0)
    #   T = 20 / (1 − 7.5775e-4 × 2 × (600 + 900) / 3,600) = 20 / 0.999369 = 20.01264 h
    #   held 25.0158 h → 2 × 25.0158 × 36 + 72 = $1,873.14: minutes of trials no longer make
    #   the failure rate the largest swing (Jeffreys alone gave $4,070.1 here)
    fail = s["failure:rate"]
    assert fail.point == 0 and fail.low.value == 0
    assert fail.high.value == pytest.approx(7.5775e-4, rel=1e-4)
    assert float(fail.high.total_usd) == pytest.approx(1873.14, abs=0.01)
    # the failure prior's own P10–P90 (each end updated with the 2 instance-h): its high end,
    # 7.5827e-4 → posterior mean 1 / (1 / 7.5827e-4 + 2) = 7.5712e-4, a hair below
    prior = s["failure:prior"]
    assert prior.point == pytest.approx(3.3264e-4, rel=1e-4)
    assert prior.high.value == pytest.approx(7.5827e-4, rel=1e-4)
    assert 0 < prior.effect <= fail.effect
    # restart ±20 % moves nothing while the failure rate is 0
    assert s["assumption:restart_s"].effect == 0
    assert [x.input_id for x in swings] == [
        "price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand",
        "assumption:idle_fraction",
        "failure:prior",
        "failure:rate",
        "assumption:restart_s",
    ]
    assert [x.rank for x in swings] == [1, 2, 3, 4, 5]
    # throughput: one trial without samples has no observed range, so it is not swung
    assert "throughput:n=2" not in s


def test_an_end_where_the_plan_cannot_finish_ranks_first():
    inp = hand_example()
    # a fleet that records an interruption per instance-hour (1 per 16 accelerator-hours)
    fleet = FleetFailurePrior(interruptions=1, accelerator_hours=16, source="our fleet log")
    inp = inp.model_copy(
        update={
            "assumptions": inp.assumptions.model_copy(
                update={"checkpoint_interval_s": None, "restart_s": None, "failure_prior": fleet}
            )
        }
    )
    # prior Gamma(1, 1 instance-h), 0 failures in 2 → Gamma(1, 3): P90 = 2.279497 / 3 = 0.76;
    # no checkpoints: a failure loses half the run (10 h); 0.76 × 2 × 10 > 1: infeasible
    swings = tornado(inp)
    unbounded = [x for x in swings if x.effect is None]
    assert {x.input_id for x in unbounded} == {"failure:rate", "failure:prior"}
    assert [x.rank for x in unbounded] == [1, 2]  # ranked first
    for top in unbounded:
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
