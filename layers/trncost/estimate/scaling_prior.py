"""The published scaling prior: what multi-node training results say about throughput at a count
no trial ran, for the fits (their noise floor and extrapolation spread) and, below 3 measured
counts, instead of a fit.

With fewer than 3 counts trncost scales from the nearest measured count n₀ by a power law

    X(n) = X(n₀) · (n / n₀)^α,        1 − α ~ LogNormal(μ, s)

α is the scaling exponent (1 = linear). 1 − α is log-normal, so α < 1 always: linear is the
prior's upper bound and never its centre. The model is on the log scale, ln X(n) = ln X(n₀) +
α·ln(n/n₀) (+ a zero-mean spread, estimate/draws.py), so its point value — the posterior mean
in the model's own scale, exp(E[ln X]) — is the power law at the MEAN exponent

    E[α] = 1 − exp(μ + s²/2)

(the log-normal's mean), below the median exponent 1 − exp(μ): the point and the range's draws
are one model (DESIGN.md, principle 10). With 2 counts their measured exponent α₁₂ informs the
exponent beyond them: ln(1 − α) ~ N(a + b·ln(1 − α₁₂), s₂) (efficiency keeps falling with scale,
and series that scaled well so far tend to keep scaling better); between the two counts the
measured power law is used. The constants, and the sources they were fitted on, are in
estimate/data/scaling_prior.json (written by `make calibrate` — see benchmarks/calibrate.py).

Pure Python (no numpy): the engine's point value uses it at cold start. Units: n in
instances, X in the throughput's unit (target units/s), α unitless.

References
----------
estimate/data/scaling_prior.json (`source`: the MLPerf Training and HPC rounds and commits the
constants were fitted on, by benchmarks/calibrate.py); docs/estimates.md, "How ranges are
built"; DESIGN.md, principles 6 and 9.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

LOSS_FLOOR = 0.01  # a measured exponent ≥ 0.99 is read as 0.99 (1 − α = 0.01) for the prior


@dataclass(frozen=True)
class ScalingPrior:
    """The published scaling prior's constants, as estimate/data/scaling_prior.json gives
    them (each field's comment says what it is; spreads are log spreads, unitless)."""

    model_floor: float  # s_floor: relative noise every fitted count gets (model form)
    extrapolation_tau: float  # log spread per doubling past the measured counts
    interpolation_tau: float  # log spread per doubling to the nearest measured count, inside
    # model discrepancy of a fit at any count: ln(truth / curve) ~ s·t_ν, s² ~ Scaled-Inv-χ²
    # (ν₀, s₀²) updated with the fit's own residuals (see scaling.FitPredictive)
    discrepancy_scale: float  # s₀
    discrepancy_dof: float  # ν₀: the prior's weight, in residual degrees of freedom
    local_weight: float  # past the measured counts: share of the draws from the local power law
    # the bootstrap's noise: each count's own, and this share of the discrepancy scale s
    # (added in quadrature; 0: the counts' noise alone)
    bootstrap_discrepancy: float
    # s₁: relative noise added (in quadrature) to a single instance's count in a fit — one
    # instance's collectives stay on its own links; from two on they cross the network
    single_instance_noise: float
    # the Student-t spread of the prior's draws at any count (1–2 measured counts: a run's own
    # spread and this scale, ν this; kept apart from the fit's discrepancy prior above)
    prior_discrepancy_scale: float
    prior_discrepancy_dof: float
    one_count_mu: float  # ln(1 − α) ~ N(μ, s) with one measured count
    one_count_sigma: float
    two_count_intercept: float  # ln(1 − α) ~ N(a + b·ln(1 − α₁₂), s₂) with two
    two_count_slope: float
    two_count_sigma: float
    source: str  # what the constants were fitted on (series ids and their repositories)
    raw: dict[str, Any]

    @property
    def median_exponent(self) -> float:
        """α's median with one measured count, 1 − exp(μ) [unitless]."""
        return 1 - math.exp(self.one_count_mu)

    @property
    def mean_exponent(self) -> float:
        """α's mean with one measured count, 1 − exp(μ + σ²/2) [unitless]: the exponent of
        the point value."""
        return 1 - math.exp(self.one_count_mu + self.one_count_sigma**2 / 2)


@cache
def load() -> ScalingPrior:
    """The prior, read once from estimate/data/scaling_prior.json (`PRIOR`).

    Returns
    -------
    ScalingPrior
    """
    text = resources.files("trncost.estimate").joinpath("data/scaling_prior.json").read_text()
    d = json.loads(text)
    return ScalingPrior(
        model_floor=float(d["model_floor"]),
        extrapolation_tau=float(d["extrapolation_tau"]),
        interpolation_tau=float(d["interpolation_tau"]),
        discrepancy_scale=float(d["discrepancy"]["scale"]),
        discrepancy_dof=float(d["discrepancy"]["dof"]),
        local_weight=float(d["local_weight"]),
        bootstrap_discrepancy=float(d.get("bootstrap_discrepancy", 0.0)),
        single_instance_noise=float(d.get("single_instance_noise", 0.0)),
        prior_discrepancy_scale=float(d["prior_discrepancy"]["scale"]),
        prior_discrepancy_dof=float(d["prior_discrepancy"]["dof"]),
        one_count_mu=float(d["one_count"]["mu"]),
        one_count_sigma=float(d["one_count"]["sigma"]),
        two_count_intercept=float(d["two_count"]["intercept"]),
        two_count_slope=float(d["two_count"]["slope"]),
        two_count_sigma=float(d["two_count"]["sigma"]),
        source=str(d["source"]),
        raw=d,
    )


PRIOR = load()


def distance_doublings(count: float, n_min: float, n_max: float) -> float:
    """How far `count` lies outside [n_min, n_max]::

        log2(count / n_max) above, log2(n_min / count) below, 0 inside

    Parameters
    ----------
    count, n_min, n_max : float
        Instances [instances].

    Returns
    -------
    float
        [doublings]
    """
    if count > n_max:
        return math.log2(count / n_max)
    if count < n_min:
        return math.log2(n_min / count)
    return 0.0


@dataclass(frozen=True)
class ExponentPrior:
    """The throughput at `count` from one or two measured counts and the published prior.

    `mu`/`sigma` describe ln(1 − α); `fixed` is set between two measured counts, where the
    measured exponent is used (the range then spreads it by a run's own cv and the model
    discrepancy alone: estimate/draws.py). `count` and `anchor` (n₀) are in instances,
    `anchor_rate` (X(n₀)) in target units/s."""

    count: int
    anchor: int
    anchor_rate: float
    mu: float
    sigma: float
    measured: tuple[tuple[int, float], ...]
    fixed: float | None = None

    @property
    def median_exponent(self) -> float:
        """α's median [unitless]: the fixed exponent, else 1 − exp(μ)."""
        return self.fixed if self.fixed is not None else 1 - math.exp(self.mu)

    @property
    def mean_exponent(self) -> float:
        """α's mean [unitless]: the fixed exponent, else 1 − exp(μ + σ²/2) (the mean of the
        log-normal 1 − α). ln X is linear in α, so the point value uses it."""
        if self.fixed is not None:
            return self.fixed
        return 1 - math.exp(self.mu + self.sigma**2 / 2)

    def rate(self, exponent: float) -> float:
        """X(n₀)·(count / n₀)^α at α = `exponent`.

        Parameters
        ----------
        exponent : float
            α [unitless].

        Returns
        -------
        float
            The throughput at `count` [target units/s].
        """
        return float(self.anchor_rate * (self.count / self.anchor) ** exponent)

    @property
    def point(self) -> float:
        """The throughput at `count` at the mean exponent, X(n₀)·(count/n₀)^E[α]: exp(E[ln X])
        of the prior's draws, the posterior mean in the model's log scale [target units/s]."""
        return self.rate(self.mean_exponent)

    def exponent_quantile(self, z: float) -> float:
        """α at the standard-normal quantile z of ln(1 − α) (a higher z: more loss)::

            α = 1 − exp(μ + σ·z)        (the fixed exponent between two measured counts)

        Parameters
        ----------
        z : float
            A standard-normal quantile [unitless] (±1.2816 for P90 and P10 of the loss).

        Returns
        -------
        float
            α [unitless].
        """
        if self.fixed is not None:
            return self.fixed
        return 1 - math.exp(self.mu + self.sigma * z)

    def describe(self) -> str:
        """The prior in words (formula, μ, σ, α's mean, median and P10–P90), for the input table.

        Returns
        -------
        str
        """
        if self.fixed is not None:
            (n1, _), (n2, _) = self.measured
            return (
                f"between the measured counts {n1} and {n2}: their power law, exponent "
                f"{self.fixed:.3g}"
            )
        lo, hi = self.exponent_quantile(1.2815515655446004), self.exponent_quantile(-1.28155)
        return (
            f"published scaling prior from {self.anchor} instances: X(n) = X({self.anchor})·"
            f"(n/{self.anchor})^α, 1 − α ~ LogNormal(μ {self.mu:.3g}, σ {self.sigma:.3g}); "
            f"α mean {self.mean_exponent:.3g} (the point value's), median "
            f"{self.median_exponent:.3g}, P10–P90 {lo:.3g}–{hi:.3g} (linear = 1 is the upper bound)"
        )


def exponent_prior(measured: list[tuple[int, float]], count: int) -> ExponentPrior:
    """The throughput prior at `count` from one or two measured counts::

        one count n₀:   X(n) = X(n₀)·(n/n₀)^α,  ln(1 − α) ~ N(μ₁, σ₁)
        point:          X(n₀)·(n/n₀)^E[α],      E[α] = 1 − exp(μ + σ²/2)
        two counts:     α₁₂ = ln(X(n₂)/X(n₁)) / ln(n₂/n₁);
                        between them α = α₁₂ (fixed), else from the nearer count
                        ln(1 − α) ~ N(a + b·ln(max(1 − α₁₂, 0.01)), σ₂)

    Parameters
    ----------
    measured : list[tuple[int, float]]
        (count [instances], throughput [target units/s]); the first two (by count) are used.
    count : int
        Where the throughput is wanted [instances].

    Returns
    -------
    ExponentPrior
        The anchor n₀ and X(n₀), the distribution of ln(1 − α) (or the fixed exponent).

    References
    ----------
    estimate/data/scaling_prior.json (`one_count`, `two_count`); docs/estimates.md, "How
    ranges are built".
    """
    p = PRIOR
    pts = tuple(sorted(measured))
    if len(pts) == 1:
        ((n0, x0),) = pts
        return ExponentPrior(count, n0, x0, p.one_count_mu, p.one_count_sigma, pts)
    (n1, x1), (n2, x2) = pts[:2]
    a12 = math.log(x2 / x1) / math.log(n2 / n1)
    if n1 < count < n2:
        return ExponentPrior(count, n1, x1, 0.0, 0.0, pts, fixed=a12)
    anchor, rate = (n2, x2) if count > n2 else (n1, x1)
    loss = max(1 - a12, LOSS_FLOOR)
    mu = p.two_count_intercept + p.two_count_slope * math.log(loss)
    return ExponentPrior(count, anchor, rate, mu, p.two_count_sigma, pts)
