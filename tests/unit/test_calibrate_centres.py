"""How `make calibrate --fit-priors` centres the exponent priors (benchmarks/calibrate.py) and
how the forward-chaining validation that chose it scores a range (benchmarks/calibration/
forward.py): hand-checked on small synthetic series."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from trncost.estimate import fit_scaling
from trncost.estimate.scaling import bootstrap

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


cal = _load("calibrate_under_test", BENCH / "calibrate.py")
fwd = _load("forward_under_test", BENCH / "calibration" / "forward.py")


def _series(sid: str, round_: str, alpha: float, counts: tuple[int, ...]):
    """A series whose every pair of counts scales with exponent `alpha`."""
    runs = {n: [(1000.0 * n**alpha, 1.0)] for n in counts}
    return cal.Series(sid, round_, runs, "synthetic")


def _alpha(mu: float) -> float:
    return 1 - math.exp(mu)


def test_the_weighted_median_is_hand_checked():
    v, w = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 1.0, 1.0, 5.0])
    assert cal._weighted_median(v, w) == 4.0
    assert cal._weighted_median(v, np.ones(4)) == 2.0  # the lower middle of an even count


def test_each_round_weighs_as_one_not_each_pair():
    # v0.6: 6 counts → 15 pairs scaling at α 0.6; v0.7 and v1.0: 2 counts each → 1 pair each,
    # at α 0.8 and 0.9. Pairs alike, v0.6's 15 pairs are the median; rounds alike, each round
    # has a third of the mass and the middle round (α 0.8) is the median.
    series = [
        _series("a", "v0.6", 0.6, (1, 2, 4, 8, 16, 32)),
        _series("b", "v0.7", 0.8, (1, 4)),
        _series("c", "v1.0", 0.9, (1, 4)),
    ]
    pairs = cal.fit_priors(series, per_round=False)["one_count"]["mu"]
    rounds = cal.fit_priors(series, per_round=True)["one_count"]["mu"]
    assert _alpha(pairs) == pytest.approx(0.6, abs=1e-3)
    assert _alpha(rounds) == pytest.approx(0.8, abs=1e-3)
    # a half-life weights by age from the newest round: at ½ y, v0.7 (0.93 y older than v1.0)
    # weighs 0.28 and v0.6 (1.98 y) 0.06, so v1.0 (α 0.9) carries the median
    recent = cal.fit_priors(series, per_round=True, half_life=0.5)["one_count"]["mu"]
    assert _alpha(recent) == pytest.approx(0.9, abs=1e-3)
    # the shipped method is the one the forward-chaining validation chose
    assert cal.PER_ROUND is True and cal.HALF_LIFE is None


def test_the_interval_score_is_hand_checked():
    inside = SimpleNamespace(p10=1.0, p90=math.e, truth_h=2.0)
    assert fwd.interval_score(inside) == pytest.approx(1.0)  # the width alone
    above = SimpleNamespace(p10=1.0, p90=math.e, truth_h=math.e**2)
    assert fwd.interval_score(above) == pytest.approx(1.0 + 10 * 1.0)  # 2/α × the miss
    below = SimpleNamespace(p10=math.e, p90=math.e**2, truth_h=1.0)
    assert fwd.interval_score(below) == pytest.approx(1.0 + 10 * 1.0)


def test_forward_spread_rules_read_only_the_earlier_folds():
    def o(covered: bool):
        # a range 1…e (width 1) holding or missing the truth by 1 in ln
        return SimpleNamespace(
            p10=1.0, p90=math.e, truth_h=2.0 if covered else math.e**2, covered=covered
        )

    sig = fwd.SIGMAS
    # in fold "a" coverage rises with σ (10 predictions: k of them covered at the k-th σ);
    # fold "b" would say otherwise, but is not read
    grid = {
        "a": {s: [o(i < min(j + 1, 10)) for i in range(10)] for j, s in enumerate(sig)},
        "b": {s: [o(False)] * 10 for s in sig},
    }
    # coverage nearest 82.5 %: 8 of 10 (80 %, 2.5 points off) at the 8th σ; 9 of 10 is 7.5 off
    assert fwd.forward_sigma(grid, ("a",), "coverage") == sig[7]
    # the interval score falls as coverage rises here (the widths are equal): the widest
    assert fwd.forward_sigma(grid, ("a",), "score") == sig[9]


def test_the_bootstrap_takes_extra_noise_and_fans_wider_with_it():
    pts = [(n, 1000 * n / (1 + 0.05 * (n - 1))) for n in (1, 2, 4, 8)]
    fit = fit_scaling(pts)
    plain, wider = bootstrap(fit), bootstrap(fit, extra=0.1)
    spread = lambda b: float(np.std(np.log(b.at(32.0))))  # noqa: E731
    assert spread(wider) > 1.2 * spread(plain)  # noise √(0.06² + 0.1²) against 0.06
    # extra 0 is the counts' own noise: the same replicates (the fit is deterministic)
    assert np.array_equal(bootstrap(fit, extra=0.0).coef, plain.coef)


def _outcome(
    truth: float, p10: float, p50: float, p90: float, regime: str = "fit: extrapolate ≤ 4×"
):
    return cal.Outcome("s", False, regime, (1, 2, 4), 8, truth, p10, p50, p90, 0.0)


def test_the_table_measures_are_hand_checked():
    # Given two predictions: one holds the truth (2 in 1…e), one misses it by 1 in ln (e² > e)
    inside = _outcome(2.0, 1.0, 2.0, math.e)
    above = _outcome(math.e**2, 1.0, 2.0, math.e)
    m = cal.Measures.of([inside, above])
    # Then coverage ½; |error| of P50: 0 and 1 − 2/e² = 0.72933 → median 0.36466; bias the same
    # signed (−0.72933, 0 → −0.36466); relative width (e − 1)/2 = 0.85914 for both; interval
    # score: width 1 each, plus 10 × 1 for the miss → mean 6
    assert (m.n, m.series, m.coverage) == (2, 1, 0.5)
    assert m.abs_error == pytest.approx((1 - 2 / math.e**2) / 2)
    assert m.bias == pytest.approx(-(1 - 2 / math.e**2) / 2)
    assert m.width == pytest.approx((math.e - 1) / 2)
    assert m.score == pytest.approx(6.0)
    # the table gives the pooled row of every prediction within 4× of the measured counts
    far = _outcome(2.0, 1.0, 2.0, math.e, regime="prior (< 3 counts): extrapolate > 4×")
    lines = cal.table([inside, above, far], "t")
    assert any(line.strip().startswith("all within 4× of the measured counts") for line in lines)
    assert [r for r in cal.by_regime([inside, above, far])] == [
        "fit: extrapolate ≤ 4×",
        "prior (< 3 counts): extrapolate > 4×",
    ]


def test_the_fit_spreads_follow_the_forward_chaining_choice():
    # the fit's spreads by interval score, s₁ and τ_out on every fit prediction (forward.py)
    assert cal.FIT_RULE == "score"
    assert {"single_instance_noise", "extrapolation_tau"} == set(cal.FIT_NOISE_GRID[0])
    assert all(g["discrepancy_dof"] > 1 for g in cal.DISCREPANCY_GRID)  # t_ν has a mean
    methods = fwd._fit_methods(cal)
    assert list(methods)[-1].endswith("(chosen)")
    assert [rule for _, _, rule in methods[list(methods)[-1]]] == ["score", "score"]
