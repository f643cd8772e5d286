"""The throughput at one instance count from a ≥ 3-count scaling fit: the distribution the range
draws from and the point value the line items use — one model, two views (DESIGN.md,
principle 10).

The model is on the log scale. With X̂(n) the fit's BIC-weighted geometric mean of linear,
Amdahl and USL at n (estimate/scaling.py):

    fit share      ln X = ln X̂(n) + b + e,        e ~ d·t_ν
    local share    ln X = ln X(n₀) + α·ln(n/n₀) + e′,   ln(1 − α) ~ N(μ, σ),  e′ ~ √(s² + cv²)·t_ν

`b` is a bootstrap curve's log offset from the curves' geometric mean (the parametric bootstrap
of the fit, estimate/scaling.py: zero mean by construction); `d = √(s² + cv² + (τ·δ)²)` with s
the model discrepancy (`scaling.discrepancy`), cv a run's own spread and τ per doubling δ to the
nearest measured count (τ_in between measured counts, τ_out past them); ν > 1, so t_ν has mean
0. Past the measured counts a share w (the priors file's `local_weight`) of the draws comes from
the local power law of the two nearest measured counts instead (n₀ the nearer, the published
exponent prior of estimate/scaling_prior.py given their measured exponent); between them w = 0.

Point value: the posterior mean in the model's own scale, exp(E[ln X])::

    X_point(n) = exp((1 − w)·ln X̂(n) + w·(ln X(n₀) + E[α]·ln(n/n₀))),   E[α] = 1 − exp(μ + σ²/2)

— X̂(n) between and at the measured counts. So the point is the draws' geometric mean and lies
inside their P10–P90.

Units: n in instances; X in the throughput's unit (target units/s); b, e, s, τ, α unitless.

References
----------
DESIGN.md, principles 9 and 10; estimate/scaling.py (the fit, bootstrap and discrepancy, with
their papers); estimate/scaling_prior.py (the exponent prior); estimate/data/
scaling_prior.json (s₀, ν₀, τ_in, τ_out, local_weight); docs/estimates.md, "How ranges are
built".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trncost.estimate.scaling import (
    MODELS,
    REPLICATES,
    Bootstrap,
    FloatArray,
    _predict,
    discrepancy,
)
from trncost.estimate.scaling_prior import PRIOR, ExponentPrior, distance_doublings, exponent_prior
from trncost.model.analysis import ScalingFit, ScalingParameters

LOCAL_POINT_FORMULA = (
    "exp((1 − w)·ln X̂(n) + w·(ln X(n₀) + E[α]·ln(n/n₀))), E[α] = 1 − exp(μ + σ²/2)"
)


def local_prior(fit: ScalingFit, count: int) -> ExponentPrior | None:
    """Past the measured counts: the power law of the two nearest measured counts with the
    published prior on its exponent (estimate/scaling_prior.py); None between them, or when
    the priors file gives it no share (`local_weight` 0).

    Parameters
    ----------
    fit : ScalingFit
        The ≥ 3-count fit (its measured points).
    count : int
        The count [instances].

    Returns
    -------
    ExponentPrior or None
        Anchored at the nearer measured count n₀ [instances] and its throughput [target
        units/s].
    """
    counts = [p.count for p in fit.points]
    if distance_doublings(count, min(counts), max(counts)) <= 0 or PRIOR.local_weight <= 0:
        return None
    pts = sorted((p.count, p.throughput) for p in fit.points)
    near = pts[-2:] if count > pts[-1][0] else pts[:2]
    return exponent_prior(near, count)


def predictive_point(fit: ScalingFit, count: int) -> float:
    """The point throughput at `count`: exp(E[ln X]) of the fit's predictive (module
    docstring)::

        X̂(n)                                                   between the measured counts
        exp((1 − w)·ln X̂(n) + w·(ln X(n₀) + E[α]·ln(n/n₀))), E[α] = 1 − exp(μ + σ²/2)
                                                                past them

    Parameters
    ----------
    fit : ScalingFit
        The ≥ 3-count fit.
    count : int
        The count [instances].

    Returns
    -------
    float
        [target units/s]

    References
    ----------
    DESIGN.md, principle 10; estimate/data/scaling_prior.json (`local_weight`, the exponent
    prior).
    """
    fitted = math.log(fit.predict(float(count)))
    local = local_prior(fit, count)
    if local is None:
        return math.exp(fitted)
    w = PRIOR.local_weight
    return math.exp((1 - w) * fitted + w * math.log(local.point))


@dataclass(frozen=True)
class FitPredictive:
    """The throughput at one count from a ≥ 3-count fit (module docstring): the bootstrap
    curves there, centred on the fit, × a heavy-tailed discrepancy (Student-t: the true curve
    is none of the three, at a measured count too), a run's own spread and τ per doubling to
    the nearest measured count; past the measured counts a share of the draws comes from the
    local power law instead. `point` is exp(E[ln X]) of these draws."""

    fit: ScalingFit
    boot: Bootstrap
    count: int
    run_cv: float

    @property
    def doublings(self) -> float:
        """How far the count lies outside the measured range [doublings] (0 inside)."""
        return distance_doublings(self.count, self.boot.n_min, self.boot.n_max)

    @property
    def nearest_doublings(self) -> float:
        """Distance to the nearest measured count [doublings]: the distance the fit's form is
        trusted over (between 1 and 64 instances, 8 is 3 doublings from either; past the
        range it is `doublings`)."""
        return min(abs(math.log2(self.count / p.count)) for p in self.fit.points)

    @cached_property
    def discrepancy(self) -> tuple[float, float]:
        """(scale s [unitless], degrees of freedom ν [unitless]) of the model discrepancy
        (see `scaling.discrepancy`)."""
        return discrepancy(self.fit)

    @property
    def tau(self) -> float:
        """Log spread per doubling to the nearest measured count [1/doublings]: τ_in between
        measured counts (a wide gap is a stretch the fit's form is not checked on), τ_out
        past them (the curve is checked on one side only). Two constants, tuned apart
        (benchmarks/calibrate.py)."""
        return PRIOR.extrapolation_tau if self.doublings > 0 else PRIOR.interpolation_tau

    @property
    def extra_sd(self) -> float:
        """Scale of the spread added to every fit draw [unitless]: the discrepancy s, a
        run's own cv and τ per doubling to the nearest measured count,
        √(s² + cv² + (τ × doublings)²)."""
        s, _ = self.discrepancy
        return math.sqrt(s**2 + self.run_cv**2 + (self.tau * self.nearest_doublings) ** 2)

    @cached_property
    def curves(self) -> FloatArray:
        """The bootstrap curves' throughputs at the count, centred on the fit: each × X̂(n) /
        their geometric mean, so their log-mean is ln X̂(n) [target units/s]."""
        raw = self.boot.at(float(self.count))
        return raw * (self.fit.predict(float(self.count)) / float(np.exp(np.mean(np.log(raw)))))

    @cached_property
    def local(self) -> ExponentPrior | None:
        """Past the measured counts: the local power law (`local_prior`). None inside."""
        return local_prior(self.fit, self.count)

    @property
    def point(self) -> float:
        """exp(E[ln X]) of the draws (`predictive_point`) [target units/s]."""
        return predictive_point(self.fit, self.count)

    def _local_draw(self, rng: np.random.Generator, k: int, local: ExponentPrior) -> FloatArray:
        s, nu = self.discrepancy
        alpha = 1 - np.exp(local.mu + local.sigma * rng.standard_normal(k))
        x = local.anchor_rate * np.exp(alpha * math.log(self.count / local.anchor))
        return x * np.exp(math.hypot(self.run_cv, s) * rng.standard_t(nu, k))

    def draw(self, rng: np.random.Generator, k: int, point: float | None = None) -> FloatArray:
        """k draws of the throughput at the count::

            X = curve × exp(extra_sd × t_ν)

        with `curve` one of the centred bootstrap curves drawn at random; past the measured
        counts, a share w drawn from the local power law instead (X(n₀)·(n/n₀)^α ×
        exp(√(cv² + s²) × t_ν)). Their log-mean is ln `point`.

        Parameters
        ----------
        rng : np.random.Generator
            The Monte Carlo's generator.
        k : int
            Draws [draws].
        point : float or None
            The engine's value at the count [target units/s]: every draw × point / `self.point`
            (1 when the engine's value is this model's, as it is by construction). None: the
            model's own.

        Returns
        -------
        FloatArray
            k throughputs [target units/s].
        """
        _, nu = self.discrepancy
        out = self.curves[rng.integers(0, self.curves.size, k)]
        out = out * np.exp(self.extra_sd * rng.standard_t(nu, k))
        local = self.local
        if local is not None:
            use = rng.random(k) < PRIOR.local_weight
            out[use] = self._local_draw(rng, int(use.sum()), local)
        return out if point is None else out * (point / self.point)

    def describe(self) -> str:
        """The draw's distribution in words, for the range's basis.

        Returns
        -------
        str
            The bootstrap (replicates, models chosen), the Student-t spread and its parts, the
            local power law's share past the measured counts, and the point (the draws'
            geometric mean).
        """
        shares = ", ".join(
            f"{m} {v:.0%}"
            for m, v in sorted(self.boot.model_shares().items(), key=lambda t: -t[1])
            if v > 0
        )
        s, nu = self.discrepancy
        text = (
            f"bootstrap of the {len(self.fit.points)}-count fit ({REPLICATES} replicate curves; "
            f"models chosen: {shares}) × Student-t spread, scale {self.extra_sd:.3g}, ν {nu:.3g} "
            f"(model discrepancy {s:.3g}"
            + (f", run spread {self.run_cv:.3g}" if self.run_cv > 0 else "")
            + (
                f", τ {self.tau:g} × {self.nearest_doublings:.2g} doublings to "
                "the nearest measured count"
                if self.nearest_doublings > 0 and self.tau > 0
                else ""
            )
            + ")"
        )
        local = self.local
        if local is not None:
            text += (
                f"; {PRIOR.local_weight:.0%} of the draws from the local power law: "
                + local.describe()
            )
        return text + "; the point value is the draws' geometric mean, exp(E[ln X])"

    def model_range(self) -> tuple[float, float]:
        """The model-form swing at the count: the lowest and highest of the three fitted
        families' predictions and, past the measured counts, the local power law's.

        Returns
        -------
        tuple[float, float]
            (lowest, highest) [target units/s].
        """
        values = [
            float(_predict(np.array(_coef(getattr(self.fit, m))), float(self.count)))
            for m in MODELS
        ]
        if self.local is not None:
            values.append(self.local.point)
        return float(min(values)), float(max(values))

    def parameter_range(self, point: float) -> tuple[float, float]:
        """P10 and P90 of the centred bootstrap curves at the count (× point / `self.point`),
        widened to include `point`.

        Parameters
        ----------
        point : float
            The engine's value at the count [target units/s].

        Returns
        -------
        tuple[float, float]
            (P10, P90) [target units/s].
        """
        lo, hi = np.percentile(self.curves * (point / self.point), [10, 90])
        return float(min(lo, point)), float(max(hi, point))


def _coef(p: ScalingParameters | None) -> list[float]:
    if p is None:
        return [1.0, 0.0, 0.0]
    a = 1 / p.lam
    return [a, p.sigma * a, p.kappa * a]
