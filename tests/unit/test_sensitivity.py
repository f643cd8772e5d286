"""The tornado: one input at a time over its range, ranked by its effect on the total."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings

from tests.support.factories import inputs, instance_quote, snapshot, trial
from tests.support.scenarios import scenarios
from tests.unit.test_failure_posterior import dense_mean
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
    # steady 7.2e9 / 1e5 = 72,000 s = 20 h. λ: the published prior's posterior mean after 0
    # failures in 2 instance-h (≈ the prior mean 3.3264e-4, barely moved: computed by an
    # independent quadrature), and T = 20 / (1 − λ × 2 × (600 restart + 900 half-interval)
    # / 3,600); held = T / 0.8; instances 2 × held × $36 + the trial 2 × 1 h × $36
    lam = dense_mean(16 * 2.0790e-5, math.pi / math.sqrt(6), 0, 2.0)
    # to first order E[m | 0 in H] = 1 − λ₀·H·Var(m), Var(m) = e^{σ²} − 1 = e^{π²/6} − 1 = 4.1806:
    #   1 − 3.3264e-4 × 2 × 4.1806 = 0.997219
    assert lam == pytest.approx(3.3264e-4 * 0.997219, rel=1e-4)

    def total(rate: float, idle: float = 0.2, price: float = 36.0) -> float:
        t = 20 / (1 - rate * 2 * 1500 / 3600)
        return 2 * t / (1 - idle) * price + 2 * 1 * price

    assert float(est.total_usd) == pytest.approx(total(lam), abs=0.01)
    swings = tornado(inp, est)
    s = by_id(swings)
    # idle ±20 %: 0.16 and 0.24 of held time
    idle = s["assumption:idle_fraction"]
    assert float(idle.low.total_usd) == pytest.approx(total(lam, 0.16), abs=0.02)
    assert float(idle.high.total_usd) == pytest.approx(total(lam, 0.24), abs=0.02)
    assert idle.basis == "±20 % (user assumption)"
    # price ±20 %: every line on that price moves: 0.8 × and 1.2 × the total
    price = s["price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand"]
    assert float(price.low.total_usd) == pytest.approx(0.8 * total(lam), abs=0.01)
    assert float(price.high.total_usd) == pytest.approx(1.2 * total(lam), abs=0.01)
    # failure rate: its posterior P10–P90; the P90 is the prior's own barely moved:
    #   λ₀ · exp(−σ²/2 + 1.281552 σ) = 3.3264e-4 × exp(−0.822467 + 1.643700) = 7.5626e-4
    fail = s["failure:rate"]
    assert fail.point == pytest.approx(lam, rel=1e-3)
    assert fail.high.value == pytest.approx(7.5626e-4, rel=3e-3)
    assert float(fail.high.total_usd) == pytest.approx(total(fail.high.value), abs=0.01)
    # minutes of trials no longer make the failure rate the largest swing (Jeffreys alone
    # gave $4,070.1 here): the swing is cents
    assert fail.effect < 2.0
    # the failure prior's own P10–P90 (each end, as the fleet's rate, updated with the 2 h)
    prior = s["failure:prior"]
    assert prior.point == pytest.approx(3.3264e-4, rel=1e-4)
    assert prior.high.value == pytest.approx(7.5626e-4, rel=1e-3)
    assert 0 < prior.effect
    # restart ±20 % moves the total a little now that λ > 0
    assert 0 < s["assumption:restart_s"].effect < fail.effect + prior.effect
    assert [x.input_id for x in swings][:2] == [
        "price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand",
        "assumption:idle_fraction",
    ]
    assert [x.rank for x in swings] == list(range(1, len(swings) + 1))
    # throughput: one trial without samples has no observed range, so it is not swung
    assert "throughput:n=2" not in s


def test_an_end_where_the_plan_cannot_finish_ranks_first():
    inp = hand_example()
    # a fleet that records an interruption per 33 instance-hours (1 per 533 accelerator-hours),
    # held as weakly as the published prior (shape 1: σ = √ψ₁(1) = 1.2825)
    fleet = FleetFailurePrior(
        interruptions=1, accelerator_hours=533.33, shape=1.0, source="our fleet log"
    )
    inp = inp.model_copy(
        update={
            "assumptions": inp.assumptions.model_copy(
                update={"checkpoint_interval_s": None, "restart_s": None, "failure_prior": fleet}
            )
        }
    )
    # prior mean 0.03 per instance-hour, 0 failures in 2 instance-h: the point ≈ 0.024, its P90
    # ≈ 0.03 × e^{−0.8225 + 1.6437} = 0.068; no checkpoints: a failure loses half the run (10 h):
    # 0.024 × 2 × 10 = 0.48 < 1 finishes, 0.068 × 2 × 10 = 1.36 ≥ 1 at the high ends does not
    assert estimate(inp).status == "complete"
    swings = tornado(inp)
    unbounded = [x for x in swings if x.effect is None]
    assert [x.input_id for x in unbounded] == ["failure:rate"]
    assert unbounded[0].rank == 1  # ranked first
    assert unbounded[0].high.infeasible and unbounded[0].high.total_usd is None
    # the prior's own P90 (0.068) updated with the 2 clean hours lands just below infeasible: a
    # finite swing, ranked next
    assert swings[1].input_id == "failure:prior" and swings[1].effect is not None


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
