"""Scaling fit: USL and Amdahl by least squares, hand-checked; wired into the estimate."""

from __future__ import annotations

import math

import pytest

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.errors import DomainError
from trncost.estimate import estimate, fit_scaling, monte_carlo
from trncost.estimate.scaling import noise_per_count
from trncost.estimate.scaling_prior import PRIOR


def usl(n, lam, sigma, kappa):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def test_usl_data_at_four_counts_is_recovered_and_usl_is_chosen():
    # λ = 1000, σ = 0.05, κ = 0.001:
    #   X(1) = 1000; X(2) = 2000 / 1.052 = 1901.14; X(4) = 4000 / 1.162 = 3442.34;
    #   X(8) = 8000 / (1 + 0.35 + 0.056) = 8000 / 1.406 = 5689.90
    points = [(n, usl(n, 1000, 0.05, 0.001)) for n in (1, 2, 4, 8)]
    # measurements known to 0.1 %: Amdahl's misfit is many noise widths, the USL's is 0
    fit = fit_scaling(points, noise=[0.001] * 4)
    p = fit.parameters
    assert fit.model == "usl" and fit.weights["usl"] > 0.999
    assert (p.lam, p.sigma, p.kappa) == (
        pytest.approx(1000),
        pytest.approx(0.05),
        pytest.approx(0.001),
    )
    # the USL passes through the points (χ² 0); Amdahl cannot: its χ² (in units of the 0.1 %
    # noise) is far above the ln 4 the USL's extra parameter costs
    assert p.weighted_rss == pytest.approx(0, abs=1e-12)
    assert fit.amdahl.weighted_rss > 20
    assert "BIC" in fit.choice
    # the same points with the default noise (the model floor): the data no longer single out
    # the USL, so the point value rests on both (and the range on their spread)
    loose = fit_scaling(points)
    assert 0.05 < loose.weights["usl"] < 0.95 and 0.05 < loose.weights["amdahl"] < 0.95
    # efficiency at 8: X(8) / (8 · X(1)) = 5689.90 / 8000 = 0.7112 = 1 / 1.406
    eight = fit.points[-1]
    assert eight.efficiency == pytest.approx(1 / 1.406)
    assert eight.fitted_efficiency == pytest.approx(1 / 1.406)
    assert eight.residual == pytest.approx(0, abs=1e-6)
    assert fit.predict(16) == pytest.approx(usl(16, 1000, 0.05, 0.001))


def test_amdahl_data_at_three_counts_fits_kappa_zero():
    # σ = 0.1: X(1) = 1000, X(2) = 2000 / 1.1 = 1818.18, X(4) = 4000 / 1.3 = 3076.92
    fit = fit_scaling([(1, 1000.0), (2, 2000 / 1.1), (4, 4000 / 1.3)])
    assert fit.model == "amdahl"
    assert fit.parameters.lam == pytest.approx(1000)
    assert fit.parameters.sigma == pytest.approx(0.1)
    assert fit.parameters.kappa == 0
    # Alone, Amdahl gives X(8) = 8000 / 1.7 = 4705.88 (the USL fit is the same curve, κ = 0).
    # The point is the BIC-weighted geometric mean (noise 0.06 per count, the model floor):
    #   linear X = λn: λ minimises Σ (1 − a·uᵢ)², uᵢ = Xᵢ/nᵢ = 1000, 909.09, 769.23
    #     a = Σu / Σu² = 2678.32 / 2,418,162 = 0.00110758 → λ = 902.87
    #     relative residuals −0.10758, −0.00689, 0.14801: Σr² = 0.033528 → χ² = 9.313
    #   BIC = χ² + k·ln 3: Amdahl 2.1972, USL 3.2958, linear 10.4117
    #   weights ∝ e^(−Δ/2): 1, 0.5774, 0.016456 → 0.62741, 0.36227, 0.010325
    #   X(8) = 4705.88 × (8 × 902.87 / 4705.88)^0.010325 = 4705.88 × 1.004434 = 4726.75
    assert fit.amdahl.lam * 8 / (1 + 7 * fit.amdahl.sigma) == pytest.approx(8000 / 1.7)
    assert fit.linear.lam == pytest.approx(902.87, rel=1e-5)
    assert fit.weights["linear"] == pytest.approx(0.010325, rel=1e-3)
    assert fit.weights["amdahl"] == pytest.approx(0.62741, rel=1e-4)
    assert fit.predict(8) == pytest.approx(4726.75, rel=1e-5)
    # efficiency at 4: 3076.92 / (4 × 1000) = 0.769
    assert fit.points[2].efficiency == pytest.approx(1 / 1.3)


def test_three_counts_weigh_usl_by_how_far_amdahl_misses():
    # not retrograde, a little curvature: Amdahl fits within the noise and keeps the most
    # weight (it has a residual degree of freedom); the USL still gets some: not "always Amdahl"
    fit = fit_scaling([(1, 1000.0), (2, 1900.0), (4, 3300.0)])
    assert fit.model == "amdahl" and fit.parameters.dof == 1
    assert 0.1 < fit.weights["usl"] < fit.weights["amdahl"]
    # λ = 1000, σ = 0.1, κ = 0.15: X(2) = 2000 / 1.4 = 1428.57, X(4) = 4000 / 3.1 = 1290.32;
    # throughput falls from 2 to 4 instances: Amdahl cannot follow, USL passes through
    fit = fit_scaling([(n, usl(n, 1000, 0.1, 0.15)) for n in (1, 2, 4)])
    assert fit.model == "usl"
    assert (fit.parameters.sigma, fit.parameters.kappa) == (
        pytest.approx(0.1),
        pytest.approx(0.15),
    )
    # the USL curve passes through every point (the point value is the weighted mean, so its
    # residuals carry Amdahl's small weight)
    u = fit.usl
    assert all(
        usl(p.count, u.lam, u.sigma, u.kappa) == pytest.approx(p.throughput, rel=1e-9)
        for p in fit.points
    )
    assert fit.weights["usl"] > 0.9


def test_constraints_hold_for_superlinear_data():
    # better than linear: σ and κ would be negative; the fit keeps them at 0 (linear)
    fit = fit_scaling([(1, 1000.0), (2, 2100.0), (4, 4400.0)])
    p = fit.parameters
    assert p.sigma == 0 and p.kappa == 0 and p.lam > 0
    assert any("linearly" in n for n in fit.notes)


def test_the_fit_is_the_same_in_any_order():
    pts = [(1, 1000.0), (2, 1850.0), (4, 3100.0), (8, 4300.0)]
    assert fit_scaling(pts) == fit_scaling(list(reversed(pts)))


@pytest.mark.parametrize(
    ("points", "says"),
    [
        ([(1, 1000.0), (2, 1900.0)], "≥ 3 instance counts"),
        ([], "≥ 3 instance counts"),
        ([(1, 1000.0), (2, 1900.0), (2, 1800.0)], "each instance count once"),
        ([(1, 1000.0), (2, 0.0), (4, 3000.0)], "positive"),
    ],
)
def test_too_few_or_bad_points_are_refused_with_the_reason(points, says):
    with pytest.raises(DomainError, match=says):
        fit_scaling(points)


# -- wired into the estimate -----------------------------------------------------------------
def amdahl_trials():
    # σ = 0.1, λ = 1000 tokens/s: one hour of steady work at 1, 2 and 4 instances
    return [
        trial(f"t-{n}", phase="target", count=n, work=1000 * n / (1 + 0.1 * (n - 1)) * 3600)
        for n in (1, 2, 4)
    ]


def test_an_unmeasured_count_uses_the_fit_with_traceable_parameters():
    est = estimate(
        inputs(
            cand=candidate(count=8),
            trials=amdahl_trials(),
            prices=snapshot(instance_quote("trn2.48xlarge", "36")),
        )
    )
    # The estimate's fit weighs the single instance by √(s_floor² + s₁²) = √(0.06² + 0.4²) =
    # 0.40447 (one instance's collectives never cross the network), 2 and 4 by 0.06:
    #   linear: a = Σ(uᵢ/sᵢ²) / Σ(uᵢ²/sᵢ²), uᵢ = 1000, 909.09, 769.23 → λ = 846.99, χ² = 4.0340
    #   BIC: linear 4.0340 + ln 3 = 5.1326, Amdahl 2 ln 3 = 2.1972, USL 3 ln 3 = 3.2958
    #   weights ∝ e^(−Δ/2): 0.23046, 1, 0.57735 → linear 0.12748, Amdahl 0.55316, USL 0.31936
    #   X̂(8) = exp(0.12748 ln(8 × 846.99) + 0.87252 ln(8000 / 1.7)) = 4929.75
    # 8 is past the measured counts: the point is exp(E[ln X]) of the draws, half of which come
    # from the local power law of 2 and 4 (α₁₂ = ln(3076.92 / 1818.18) / ln 2 = 0.75894):
    #   μ = −1.1331 + 0.1329 × ln(1 − 0.75894) = −1.32221, σ₂ = 1.1,
    #   E[α] = 1 − exp(μ + σ²/2) = 0.51189, X_local = 3076.92 × 2^0.51189 = 4387.43
    #   point = exp(½ ln 4929.75 + ½ ln 4387.43) = 4650.69 tokens/s
    assert est.steady_throughput == pytest.approx(4650.69, rel=1e-5)
    rows = {r.id: r for r in est.inputs}
    row = rows["throughput:n=8"]
    assert row.provenance.kind == "derived"
    assert row.provenance.inputs == [
        "scaling:lambda",
        "scaling:sigma",
        "scaling:kappa",
        "throughput:n=2",
        "throughput:n=4",
    ]
    assert "local power law" in row.label and "E[α]" in row.provenance.formula
    assert rows["scaling:lambda"].value == pytest.approx(1000)
    assert rows["scaling:sigma"].value == pytest.approx(0.1)
    assert rows["scaling:lambda"].provenance.inputs == [
        "throughput:n=1",
        "throughput:n=2",
        "throughput:n=4",
    ]
    assert "assumption:linear_scaling" not in rows
    codes = {w.code for w in est.warnings}
    # 8 is past the largest measured count (4): any count beyond it is extrapolation
    assert {"unmeasured_instance_count", "extrapolated_scale"} <= codes


def test_extrapolating_past_twice_the_largest_count_is_flagged_and_widens_the_range():
    def inp(count):
        return inputs(
            cand=candidate(count=count),
            trials=[
                t.model_copy(update={"steady_throughput_samples": [s * 0.97, s, s * 1.03]})
                for t in amdahl_trials()
                for s in [t.work.done / 3600]
            ],
            prices=snapshot(instance_quote("trn2.48xlarge", "36")),
            assumptions={"checkpoint_interval_s": 1800, "failure_rate_per_instance_hour": 0.001},
        )

    est = estimate(inp(16))
    assert "extrapolated_scale" in {w.code for w in est.warnings}
    near, far = (
        monte_carlo(inp(8), samples=5000, seed=3),
        monte_carlo(inp(16), samples=5000, seed=3),
    )
    # measured 1, 2, 4: 8 instances is one doubling past them, 16 two
    assert near.extrapolation_doublings == pytest.approx(1)
    assert far.extrapolation_doublings == pytest.approx(2)
    rel = lambda r: (r.total_usd.p90 - r.total_usd.p10) / r.total_usd.p50  # noqa: E731
    assert rel(far) > rel(near)


def test_each_counts_noise_and_the_single_instance_term_are_hand_checked():
    # Given cv 0.1 over 4 trials at 1 instance and an unmeasured spread (1 trial) at 2
    s1, floor = PRIOR.single_instance_noise, PRIOR.model_floor
    one, two = noise_per_count([0.1, None], [4, 1], [1, 2])
    # Then sᵢ = √(cvᵢ²/kᵢ + s_floor² + s₁²·[nᵢ = 1]); the unmeasured count takes the RMS cv
    assert one == pytest.approx(math.sqrt(0.1**2 / 4 + floor**2 + s1**2))
    assert two == pytest.approx(math.sqrt(0.1**2 + floor**2))
    # without counts there is no single-instance term (a fit of points alone)
    assert noise_per_count([0.1], [4]) == [pytest.approx(math.sqrt(0.1**2 / 4 + floor**2))]
    assert s1 > 0  # published: one instance's collectives never cross the network
