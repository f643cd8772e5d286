"""The failure rate (issue 22): the published fleet prior updated by the trials' own failures
and exposure in one continuous model — log m ~ Normal(−σ²/2, σ²), λ = λ₀·m, failures Poisson —
whose posterior MEAN is the point value and whose draws are the range's. No switch to "the
trials alone": the prior's weight shrinks smoothly as the trials disagree with it.

Hand checks: the pooled prior is arithmetic on the data file; the posterior mean is checked
against an independent dense quadrature (numpy, 400,001 points, a wider window) of
E[λ₀·eᵘ·L(u)] / E[L(u)] under the prior, L(u) = exp(f·u − λ₀·H·eᵘ).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.estimate import estimate, monte_carlo
from trncost.estimate.failure_prior import (
    per_accelerator_hour,
    posterior,
    posterior_of,
    prior_for,
    published,
    trigamma,
)
from trncost.estimate.uncertainty import prepare
from trncost.model import FleetFailurePrior

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))
TRN2 = "trn2.48xlarge"


def dense_mean(rate: float, sigma: float, failures: int, hours: float) -> float:
    """E[λ | f, H] by an independent quadrature: u over μ ± 12σ and the likelihood's peak."""
    mu = -0.5 * sigma**2
    hi = max(mu + 12 * sigma, math.log((failures + 1) / (rate * hours)) + 6) if hours else mu + 12
    u = np.linspace(mu - 12 * sigma, hi, 400_001)
    log_w = -((u - mu) ** 2) / (2 * sigma**2) + failures * u - rate * hours * np.exp(u)
    w = np.exp(log_w - log_w.max())
    return float(rate * np.sum(w * np.exp(u)) / np.sum(w))


def failing_trial(failures: int | None, steady_s: float, count: int = 4, trial_id: str = "t-f"):
    return trial(
        trial_id,
        phase="target",
        count=count,
        work=1e5 * count * steady_s,
        wall={"steady_s": steady_s, "restart_s": 900.0 * failures if failures else None},
        reliability={"failures": failures},
    )


def test_the_published_prior_is_pooled_from_its_sources_and_has_mean_lambda0_hand_checked():
    # Llama 3: 419 in 16,384 × 54 × 24 = 21,233,664 GPU-h; Lablup: 10 in 504 × 55 × 24 =
    # 665,280; OPT: 54 in 992 × 56 × 24 = 1,333,248 → 483 / 23,232,192 = 2.0790e-5 per GPU-h
    rate, failures, hours = per_accelerator_hour()
    assert (failures, hours) == (483, 23_232_192)
    assert rate == pytest.approx(2.0790e-5, rel=1e-4)
    for src in published()["sources"]:
        assert src["url"].startswith("https://") and src["published"] and src["counted"]
    # trn2.48xlarge has 16 chips: λ₀ = 16 × 2.0790e-5 = 3.3264e-4 per instance-hour; σ from the
    # file is π/√6 = 1.2825 (the log-spread of the exponential prior it replaced)
    prior = prior_for(TRN2, None)
    assert prior.rate == pytest.approx(16 * 2.0790e-5, rel=1e-4)
    assert prior.log_sd == pytest.approx(math.pi / math.sqrt(6), abs=1e-4)
    # E[m] = 1 under log m ~ N(−σ²/2, σ²): the prior's mean is λ₀ (checked by quadrature)
    assert dense_mean(prior.rate, prior.log_sd, 0, 0.0) == pytest.approx(prior.rate, rel=1e-6)
    assert prior.provenance.kind == "published_reference"
    assert prior_for("x9.unknown", None) is None  # accelerators unknown: no prior, no guess


@pytest.mark.parametrize(
    ("failures", "hours"), [(0, 0.33), (0, 26.6), (1, 26.6), (2, 13.3), (5, 26.6), (20, 26.6)]
)
def test_the_posterior_mean_is_the_quadrature_of_the_model(failures, hours):
    prior = prior_for(TRN2, None)
    post = posterior_of(prior, failures, hours)
    assert post.point == pytest.approx(
        dense_mean(prior.rate, prior.log_sd, failures, hours), rel=2e-3
    )


def test_one_failure_in_27_instance_hours_moves_the_rate_a_few_fold_not_a_hundredfold():
    # Given the case: 1 failure in 26.6 trn2 instance-hours (the prior expects 0.009)
    prior = prior_for(TRN2, None)
    post = posterior_of(prior, 1, 26.6)
    # Then the prior's predictive calls it surprising (P ≈ 0.009) but the model does not switch:
    assert post.conflict_p is not None and post.conflict_p == pytest.approx(0.0087, abs=5e-4)
    # the posterior mean moves ~4.5× (not to the trials' own 1/26.6 = 0.0376, 113×)
    assert 3 < post.point / prior.rate < 6
    assert post.point < 0.1 * (1 / 26.6)
    # and many failures do move it to the trials: 20 in 26.6 h → within 2× of 20/26.6
    heavy = posterior_of(prior, 20, 26.6)
    assert heavy.point > 0.5 * 20 / 26.6


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 30), st.floats(0.1, 5_000), st.floats(1.01, 4.0))
def test_more_failures_never_lower_the_rate_and_more_clean_exposure_never_raises_it(f, h, k):
    prior = prior_for(TRN2, None)
    base = posterior_of(prior, f, h).point
    assert posterior_of(prior, f + 1, h).point > base
    assert posterior_of(prior, f, h * k).point < base
    # continuous in the evidence: a 1 % longer exposure moves it by about 1 % at most
    assert posterior_of(prior, f, h * 1.01).point == pytest.approx(base, rel=0.012)


def test_a_trial_whose_failures_are_unknown_adds_no_exposure():
    # Given a job read without the agent (failures null) beside a clean agent trial
    clean = failing_trial(0, 3600, trial_id="t-clean")
    unknown = failing_trial(None, 360_000, trial_id="t-unknown")  # 400 instance-hours
    with_unknown = posterior([clean, unknown], TRN2, None)
    without = posterior([clean], TRN2, None)
    # Then its 400 instance-hours are not counted as failure-free
    assert (
        with_unknown.hours == pytest.approx(without.hours) and with_unknown.point == without.point
    )
    assert with_unknown.unknown_trials == 1
    est = estimate(inputs(cand=candidate(count=4), trials=[clean, unknown], prices=PRICES))
    assert "failures_not_known" in {w.code for w in est.warnings}


def test_your_fleet_record_replaces_the_published_prior_with_its_own_strength():
    fleet = FleetFailurePrior(
        interruptions=30, accelerator_hours=100_000, source="our 2026 fleet log"
    )
    prior = prior_for(TRN2, fleet)
    # 30 / 100,000 = 3e-4 per accelerator-hour × 16 = 4.8e-3 per instance-hour; strength 30
    # interruptions: σ = √ψ₁(30) = 0.18411 (the sd of log Gamma(30))
    assert prior.rate == pytest.approx(4.8e-3)
    assert prior.log_sd == pytest.approx(math.sqrt(trigamma(30)), rel=1e-9)
    # ψ₁(30) ≈ 1/30 + 1/(2·30²) + 1/(6·30³) = 0.0333333 + 0.0005556 + 0.0000062 = 0.0338951
    assert trigamma(30) == pytest.approx(0.0338951, rel=1e-5)
    assert trigamma(1) == pytest.approx(math.pi**2 / 6, rel=1e-9)  # ψ₁(1) = π²/6
    base = inputs(trials=[failing_trial(0, 600, count=2)], prices=PRICES)
    own = base.model_copy(
        update={"assumptions": base.assumptions.model_copy(update={"failure_prior": fleet})}
    )
    rows = {row.id: row for row in estimate(own).inputs}
    assert rows["failure:prior"].provenance.kind == "user_assumption"
    assert "our 2026 fleet log" in rows["failure:prior"].provenance.note
    # a strong record barely moves with 0.33 clean instance-hours
    assert rows["failure:rate"].value == pytest.approx(4.8e-3, rel=0.01)


def test_without_a_prior_the_trials_speak_by_jeffreys_mean():
    t = trial("t-x", instance_type="x9.big", count=2, work=7.2e8, wall={"steady_s": 3600},
              reliability={"failures": 1})  # fmt: skip
    post = posterior([t], "x9.big", None)
    assert post.prior is None and post.point == pytest.approx(1.5 / t.instance_hours)


def test_the_point_is_the_mean_of_the_failure_draws():
    # one model, two views: the Monte Carlo's failure draws average to the point value
    t = failing_trial(1, 24_000)
    inp = inputs(
        wl=workload(target={"unit": "tokens", "amount": 7.2e11}),
        cand=candidate(count=16),
        trials=[t],
        prices=PRICES,
        assumptions={"checkpoint_interval_s": 3600},
    )
    est, model, items = prepare(inp)
    (drawn,) = [u for u in items.items if u.row_id == model.lam_row]
    draws = drawn.draw(np.random.default_rng(5), 400_000)
    assert draws.mean() == pytest.approx(model.point[model.lam_row], rel=0.01)
    r = monte_carlo(inp, samples=20_000, seed=3)
    assert r.p_infeasible < 0.001
    t10, t50, t90 = (float(x) for x in (r.total_usd.p10, r.total_usd.p50, r.total_usd.p90))
    assert t10 <= float(est.total_usd) <= t90  # the point lies inside its own P10–P90
