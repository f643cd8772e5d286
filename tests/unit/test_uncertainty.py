"""The range: a seeded, vectorised Monte Carlo that agrees with the engine at zero spread."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from tests.support.scenarios import example_one, example_two, scenarios
from trncost.errors import DomainError, MissingEvidence
from trncost.estimate import estimate, monte_carlo
from trncost.estimate.uncertainty import gamma_quantile

CENT = Decimal("0.01")
PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))
CKPT = {"checkpoint_interval_s": 1800}


def spread_trials(d: float, samples: float = 0.02):
    """Two target trials at 2 instances whose rates are 1e5 × (1 ± d), with steady samples."""
    out = []
    for i, k in enumerate((1 - d, 1 + d)):
        rate = 1e5 * k
        out.append(
            trial(
                f"t-{i}",
                phase="target",
                work=rate * 3600,
                steady_throughput_samples=[rate * (1 - samples), rate, rate * (1 + samples)],
                reliability={"failures": 1},
                wall={"steady_s": 3600, "restart_s": 300},
            )
        )
    return out


def test_zero_spread_reproduces_the_worked_examples_to_the_cent():
    for inp in (example_one(), example_two()):
        est = estimate(inp)
        r = monte_carlo(inp, samples=200, seed=1, spread=0)
        known = r.known_usd
        assert known.p10 == known.p50 == known.p90
        assert abs(known.p50 - est.total_known_usd) <= CENT
        assert r.time_to_target_h.p50 == pytest.approx(est.time.total_h)
        if est.status == "complete":
            assert r.total_usd == known
        else:
            # PENDING stays symbolic: the quantity that multiplies the unknown price
            assert r.total_usd is None
            (term,) = est.pending_terms
            (q,) = r.pending
            assert q.price_key == term.price_key
            assert q.quantity.p50 == pytest.approx(term.quantity)


@settings(max_examples=60, deadline=None)
@given(scenarios(priced=None))
def test_zero_spread_p50_equals_the_engine_for_any_scenario(inp):
    est = estimate(inp)
    assume(est.status != "infeasible")
    r = monte_carlo(inp, samples=100, seed=0, spread=0, est=est)
    assert abs(r.known_usd.p50 - est.total_known_usd) <= CENT, r.notes
    if est.status == "complete":
        assert abs(r.total_usd.p50 - est.total_usd) <= CENT
    for q, term in zip(r.pending, est.pending_terms, strict=True):
        assert q.quantity.p50 == pytest.approx(term.quantity, rel=1e-9)
    assert not [n for n in r.notes if "does not reproduce" in n or "no formula" in n]


@settings(max_examples=30, deadline=None)
@given(scenarios(priced=None), st.integers(0, 2**32 - 1))
def test_percentiles_are_ordered_and_the_seed_fixes_the_answer(inp, seed):
    est = estimate(inp)
    assume(est.status != "infeasible")
    r = monte_carlo(inp, samples=2000, seed=seed, est=est)
    assert r == monte_carlo(inp, samples=2000, seed=seed, est=est)
    for pct in (r.known_usd, r.time_to_target_h, r.held_h):
        values = [v for v in (pct.p10, pct.p50, pct.p90) if v is not None]
        assert values == sorted(values)
        # a None (infeasible draws) only ever sits at the top
        assert [v is None for v in (pct.p10, pct.p50, pct.p90)] in (
            [False, False, False],
            [False, False, True],
            [False, True, True],
            [True, True, True],
        )


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 0.2), st.floats(1.0, 3.0))
def test_a_wider_trial_spread_never_narrows_the_range(d, k):
    assume(d * k < 0.6)

    # Only the trials' throughput varies here (failure rate stated as 0): the cost falls as the
    # throughput rises, and with the same seed each draw moves further from the median as the
    # spread widens, so P10 can only fall and P90 only rise. (With several inputs varying at
    # once, percentiles of their combined effect need not be monotone in any one of them.)
    def width(spread):
        inp = inputs(
            trials=spread_trials(spread),
            prices=PRICES,
            assumptions={**CKPT, "failure_rate_per_instance_hour": 0},
        )
        r = monte_carlo(inp, samples=4000, seed=11)
        return r.total_usd.p90 - r.total_usd.p10, r.time_to_target_h

    narrow, wide = width(d), width(d * k)
    assert wide[0] >= narrow[0] - CENT
    assert wide[1].p90 - wide[1].p10 >= narrow[1].p90 - narrow[1].p10 - 1e-9


def test_different_seeds_give_different_draws():
    inp = inputs(trials=spread_trials(0.1), prices=PRICES, assumptions=CKPT)
    assert monte_carlo(inp, samples=1000, seed=1) != monte_carlo(inp, samples=1000, seed=2)


def test_what_varies_is_named_by_input_row_and_distribution():
    inp = inputs(
        trials=spread_trials(0.1), prices=PRICES, assumptions={**CKPT, "idle_fraction": 0.1}
    )
    r = monte_carlo(inp, samples=1000, seed=1)
    varied = {v.row_id: v.distribution for v in r.varied}
    ids = {row.id for row in estimate(inp).inputs}
    assert set(varied) <= ids
    # 2 failures in 2 trials × 2 instances × 3,900 s = 4.333 instance-h: the published prior
    # updated with them (one model: its posterior mean is the point)
    assert varied["failure:rate"].startswith("λ = 0.000333 × m per instance-hour")
    assert (
        "updated with 2 failures in 4.33333 instance-h (Poisson): posterior mean"
        in (varied["failure:rate"])
    )
    # per-trial rates 0.9e5 and 1.1e5: cv = stdev / mean = 14,142 / 100,000 = 0.141
    assert varied["throughput:n=2"] == "log-normal, median 100000, cv 0.141"
    assert varied["assumption:idle_fraction"] == "uniform [0.08, 0.12]"


def test_gamma_quantiles_by_wilson_hilferty_hand_checked():
    # Gamma(shape 1.5, rate 10), P90: c = 1 − 1/13.5 + 1.28155 × √(1/13.5)
    #   = 0.925926 + 0.348795 = 1.274721; c³ = 2.071311; × 1.5 / 10 = 0.310697
    assert gamma_quantile(1.5, 10, 0.9) == pytest.approx(0.310697, rel=1e-5)
    # the exact P90 is χ²₃(0.9) / 2 / 10 = 6.25139 / 20 = 0.312570: within 1 %
    assert gamma_quantile(1.5, 10, 0.9) == pytest.approx(0.312570, rel=0.01)
    assert 0 <= gamma_quantile(0.5, 10, 0.1) < gamma_quantile(0.5, 10, 0.9)


def test_zero_variance_samples_and_a_single_trial_are_explained_not_hidden():
    flat = trial("t-1", phase="target", steady_throughput_samples=[1e5, 1e5, 1e5])
    r = monte_carlo(inputs(trials=[flat], prices=PRICES), samples=500, seed=1)
    assert any("zero variance" in n for n in r.notes)
    assert "throughput:n=2" not in {v.row_id for v in r.varied}
    lone = trial("t-1", phase="target")
    r = monte_carlo(inputs(trials=[lone], prices=PRICES), samples=500, seed=1)
    assert any("throughput spread unknown" in n for n in r.notes)


def test_infeasible_draws_are_reported_as_p_infeasible_never_as_a_null_percentile():
    # an assumed failure rate right at the edge: about half the draws cannot finish
    inp = inputs(
        trials=[trial("t-1", phase="target")],
        prices=PRICES,
        assumptions={
            "failure_rate_per_instance_hour": 1.0,
            "restart_s": 0,
            "checkpoint_interval_s": 3600,
        },
    )
    # λ·n·(interval/2) = 1.0 × 2 × 0.5 h = 1.0: the point itself is infeasible
    assert estimate(inp).status == "infeasible"
    r = monte_carlo(inp, samples=2000, seed=5)
    assert 0.3 < r.p_infeasible < 0.7
    # the percentiles are over the draws that finish: none is silently null, each is finite
    t = r.time_to_target_h
    assert None not in (t.p10, t.p50, t.p90) and t.p10 <= t.p50 <= t.p90
    # a feasible draw's time is finite: T = T_base / (1 − λ·n·0.5 h) with λ ≤ 1.2
    assert t.p90 < float("inf")
    # the deterministic plan has no cost lines: no cost range, and the notes say why
    assert r.known_usd is None and any("infeasible" in n for n in r.notes)
    assert any("p_infeasible" in n for n in r.notes)


def test_bad_requests_are_refused_with_the_reason():
    inp = inputs(trials=spread_trials(0.1), prices=PRICES, assumptions=CKPT)
    with pytest.raises(DomainError, match="samples"):
        monte_carlo(inp, samples=10)
    with pytest.raises(DomainError, match="spread"):
        monte_carlo(inp, spread=2)
    with pytest.raises(MissingEvidence):
        monte_carlo(inputs(cand=candidate("g5.48xlarge"), trials=spread_trials(0.1), prices=PRICES))
