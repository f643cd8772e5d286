"""The failure rate: a published reference prior, updated with the trials' own failures in one
continuous model (no switch between "the prior" and "the trials alone").

Trials are short: minutes to hours of instance time, usually with no failure at all. Read alone
they say "anything up to ~1/H per instance-hour", which makes long plans on many instances look
impossible; one failure in a short trial, read alone, says the fleet fails a hundred times more
often than any published fleet. Large training runs have published their interruption counts
(estimate/data/failure_prior.json: what was counted, on how many accelerators, over how many
days, by whom and when). trncost pools them into a rate per accelerator-hour,
r̄ = Σ interruptions / Σ accelerator-hours, and for a candidate with A accelerators per
instance models the rate per instance-hour as

    λ = λ₀ · m,   λ₀ = A · r̄,   log m ~ Normal(μ, σ²),  μ = −σ²/2   (so E[m] = 1, E[λ] = λ₀)

m is how this fleet differs from the published ones (a hierarchical prior: fleets vary around
the pooled rate; σ is the file's `log_sd`). The trials' f failures in H instance-hours (only
trials whose failures are known: a job read without the agent contributes no exposure) are
Poisson, F ~ Poisson(λ·H), so the posterior over u = log m is

    p(u | f, H) ∝ exp(−(u − μ)² / (2σ²)) · exp(f·u − λ₀·H·eᵘ)

computed on a grid (no closed form; a 1-D integral). The point value is the posterior MEAN,
E[λ | f, H] = λ₀ · E[eᵘ | f, H], and the range draws u from the same grid: one model, two views.
The weight on the published fleets shrinks smoothly as the trials disagree with them: one failure
in 27 instance-hours moves the mean by the likelihood's pull against σ (a few-fold at σ = 1.28,
not a hundred-fold), many failures move it all the way (the normal prior's tails give way to a
Poisson likelihood of growing weight). When the trials show more failures than the prior's own
predictive makes plausible (P(F ≥ f) < `conflict_p`), the estimate says so (`failure_prior_
conflict`) — as a warning: the model does not change.

A user replaces the published prior with their own fleet's record through
`assumptions.failure_prior` (interruptions over accelerator-hours: λ₀ their rate × A, σ from
their record's strength, sd(log Gamma(k)) = √ψ₁(k) with k their `shape`, else the number of
interruptions they counted), or the rate itself through
`assumptions.failure_rate_per_instance_hour`. An instance type whose accelerator count trncost
does not know gets no prior: the trials alone, Jeffreys' Gamma(f + ½, H), its mean
(f + ½)/H the point.

References: Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §5 (hierarchical models) and
§2.6 (Poisson); Schmidli et al., "Robust meta-analytic-predictive priors", Biometrics 70 (2014):
the published fleets as a meta-analytic prior; estimate/data/failure_prior.json (the sources).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from trncost.estimate.mfu import chip_peak
from trncost.model.assumptions import FleetFailurePrior
from trncost.model.provenance import PublishedReference, UserAssumption
from trncost.model.trial import TrialRun

DATA_FILE = "trncost/estimate/data/failure_prior.json"
GRID_POINTS = 801  # the posterior grid over u = log m (trapezoid rule)
GRID_HALF_WIDTH = 8.0  # in prior (or likelihood) standard deviations each side
Z90 = 1.2815515655446004  # the standard normal's P90


@cache
def published() -> dict[str, Any]:
    """The published failure prior's data file (estimate/data/failure_prior.json).

    Returns
    -------
    dict
        Its JSON: sources, `log_sd` [unitless: sd of log m], `conflict_p` [probability].
    """
    text = resources.files("trncost.estimate").joinpath("data/failure_prior.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def per_accelerator_hour() -> tuple[float, float, float]:
    """The published sources pooled: r̄ = Σ interruptions / Σ accelerator-hours.

    Returns
    -------
    tuple of float
        (r̄ [interruptions/accelerator-hour], Σ interruptions [count], Σ accelerator-hours [h]),
        accelerator-hours = accelerators × days × 24.
    """
    srcs = published()["sources"]
    failures = float(sum(s["interruptions"] for s in srcs))
    hours = float(sum(s["accelerators"] * s["days"] * 24 for s in srcs))
    return failures / hours, failures, hours


def trigamma(x: float) -> float:
    """ψ₁(x), the trigamma function (recurrence to x ≥ 6, then its asymptotic series).

    Parameters
    ----------
    x : float
        [unitless], > 0.

    Returns
    -------
    float
        ψ₁(x) [unitless]: the variance of log X for X ~ Gamma(shape x).
    """
    if x <= 0:
        raise ValueError(f"trigamma needs x > 0, got {x}")
    acc = 0.0
    while x < 6.0:
        acc += 1.0 / (x * x)
        x += 1.0
    inv, inv2 = 1.0 / x, 1.0 / (x * x)
    series = inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
    return acc + series


@dataclass(frozen=True)
class FleetPrior:
    """λ = λ₀·m per instance-hour with log m ~ Normal(−σ²/2, σ²): its mean is λ₀.

    Attributes: `rate` λ₀ [1/instance-hour], `log_sd` σ [unitless], `accelerators` A per
    instance [count], where it comes from (`provenance`) and its input-table `label`.
    """

    rate: float
    log_sd: float
    accelerators: int
    provenance: PublishedReference | UserAssumption
    label: str

    @property
    def mean(self) -> float:
        """E[λ] = λ₀ [1/instance-hour]."""
        return self.rate

    @property
    def mu(self) -> float:
        """μ = −σ²/2 [unitless]: the mean of log m that makes E[m] = 1."""
        return -0.5 * self.log_sd**2

    def quantile(self, z: float) -> float:
        """The prior's λ at a standard normal quantile: λ₀·exp(μ + σz).

        Parameters
        ----------
        z : float
            The standard normal quantile [unitless] (±1.2816 for P10 / P90).

        Returns
        -------
        float
            λ [1/instance-hour].
        """
        return self.rate * math.exp(self.mu + self.log_sd * z)


def prior_for(instance_type: str, fleet: FleetFailurePrior | None) -> FleetPrior | None:
    """The failure prior of one instance of `instance_type`.

    λ₀ = A × r̄ (the published pool), or A × the fleet's interruptions / accelerator-hours
    (½ interruption when it counted none); σ = the file's `log_sd`, or for a fleet
    √ψ₁(k), k its `shape` else its interruption count (at least ½).

    Parameters
    ----------
    instance_type : str
        The candidate's instance type (its accelerators per instance from the chip table).
    fleet : FleetFailurePrior or None
        The user's own fleet record (`assumptions.failure_prior`).

    Returns
    -------
    FleetPrior or None
        None when the accelerators per instance are unknown.

    References
    ----------
    estimate/data/failure_prior.json (the published sources); DESIGN.md, "The cost model"
    (rate λ per instance-hour); Schmidli et al., Biometrics 70 (2014) (meta-analytic priors).
    """
    peak = chip_peak(instance_type)  # a SageMaker ml. type has its EC2 twin's accelerators
    if peak is None:
        return None
    a = peak.chips_per_instance
    data = published()
    if fleet is not None:
        per_acc = fleet.interruptions / fleet.accelerator_hours
        if per_acc <= 0:
            per_acc = 0.5 / fleet.accelerator_hours  # no interruption recorded: half of one
        strength = fleet.shape if fleet.shape is not None else max(fleet.interruptions, 0.5)
        return FleetPrior(
            rate=a * per_acc,
            log_sd=math.sqrt(trigamma(strength)),
            accelerators=a,
            provenance=UserAssumption(
                name="failure_prior",
                note=f"{fleet.interruptions:g} interruptions in {fleet.accelerator_hours:g} "
                f"accelerator-hours ({fleet.source})" + (f"; {fleet.note}" if fleet.note else ""),
            ),
            label=f"failure prior: your fleet's rate × {a} accelerators per instance",
        )
    rate, failures, hours = per_accelerator_hour()
    sigma = float(data["log_sd"])
    sources = [
        f"{s['title']} ({s['published']}) {s['url']}: {s['counted']}" for s in data["sources"]
    ]
    return FleetPrior(
        rate=a * rate,
        log_sd=sigma,
        accelerators=a,
        provenance=PublishedReference(
            sources=sources,
            figure=f"pooled {failures:g} interruptions / {hours:,.0f} accelerator-hours = "
            f"{rate:.3g} per accelerator-hour × {a} accelerators per {instance_type}; this "
            f"fleet's multiplier m log-normal, sd of log m {sigma:g} (mean 1)",
            data_file=DATA_FILE,
        ),
        label=f"failure prior: published interruption rate × {a} accelerators per instance",
    )


def _poisson_tail(f: int, mean: float) -> float:
    """P(F ≥ f) for F ~ Poisson(mean) [probability]."""
    if f <= 0:
        return 1.0
    if mean <= 0:
        return 0.0
    term = math.exp(-mean)
    below = term
    for k in range(1, f):
        term *= mean / k
        below += term
    return max(0.0, 1.0 - below)


@dataclass(frozen=True)
class FailurePosterior:
    """The failure rate's posterior: what the point value is and what the range draws from.

    With a prior: a grid over u = log m with its cumulative distribution (`grid`, `cdf`),
    λ = `base`·eᵘ. Without one (no accelerator count): Jeffreys' Gamma(f + ½, H) (`shape`,
    `rate`). `point` is the posterior mean [1/instance-hour]; `failures` [count] and `hours`
    [instance-hours] are the evidence it rests on; `conflict_p` the prior predictive
    P(F ≥ f) when it is below the file's `conflict_p` (a warning, not a switch).
    """

    point: float
    failures: int
    hours: float
    prior: FleetPrior | None
    base: float = 0.0
    grid: tuple[float, ...] = ()
    cdf: tuple[float, ...] = ()
    shape: float = 0.0
    rate: float = 0.0
    conflict_p: float | None = None
    unknown_trials: int = 0  # trials whose failures are not known: no exposure from them

    @property
    def uses_prior(self) -> bool:
        """Whether a fleet prior is part of the model (always, when there is one)."""
        return self.prior is not None

    @property
    def has_evidence(self) -> bool:
        """Whether the posterior is proper: a prior, or trials' exposure for Jeffreys'."""
        return self.prior is not None or self.rate > 0

    def quantile(self, p: float) -> float:
        """The posterior's p-quantile of λ [1/instance-hour] (inverse of the grid's CDF, or the
        Gamma's Wilson–Hilferty approximation without a prior).

        Parameters
        ----------
        p : float
            The probability [unitless], 0 < p < 1.

        Returns
        -------
        float
            λ [1/instance-hour].
        """
        if self.prior is None:
            return _gamma_quantile(self.shape, self.rate, p)
        return self.base * math.exp(_interp(p, self.cdf, self.grid))

    def mean_of_m(self) -> float:
        """E[m | f, H] [unitless]: how many times the prior mean the posterior mean is."""
        return self.point / self.prior.rate if self.prior is not None else math.nan

    def describe(self) -> str:
        """The posterior in words, for the input table and the range's basis [text]."""
        if self.prior is not None:
            p = self.prior
            return (
                f"λ = {p.rate:.3g} × m per instance-hour, log m ~ Normal({p.mu:.3g}, "
                f"{p.log_sd:.3g}²) updated with {self.failures} failures in {self.hours:.6g} "
                f"instance-h (Poisson): posterior mean {self.point:.3g}, P10–P90 "
                f"{self.quantile(0.1):.3g}–{self.quantile(0.9):.3g}"
            )
        return f"Gamma(shape {self.failures} + 0.5, rate {self.hours:.6g} instance-h)"


def _interp(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """Linear interpolation of y at x over increasing xs (clamped at the ends)."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    lo, hi = 0, len(xs) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xs[mid] <= x:
            lo = mid
        else:
            hi = mid
    span = xs[hi] - xs[lo]
    t = 0.0 if span <= 0 else (x - xs[lo]) / span
    return ys[lo] + t * (ys[hi] - ys[lo])


def _gamma_quantile(shape: float, rate: float, p: float) -> float:
    """Wilson–Hilferty approximation of a Gamma(shape, rate) quantile, clamped at 0."""
    if rate <= 0:
        return math.inf
    z = {0.1: -Z90, 0.9: Z90, 0.5: 0.0}.get(p)
    if z is None:
        z = _normal_quantile(p)
    c = 1 - 1 / (9 * shape) + z * math.sqrt(1 / (9 * shape))
    return max(0.0, shape * c**3 / rate)


def _normal_quantile(p: float) -> float:
    """The standard normal's p-quantile (Acklam's rational approximation, |error| < 1.2e-9)."""
    a = (-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269,
         -30.66479806614716, 2.506628277459239)  # fmt: skip
    b = (-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972,
         -13.28068155288572)  # fmt: skip
    c = (-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734,
         4.374664141464968, 2.938163982698783)  # fmt: skip
    d = (0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


def _grid_posterior(
    prior: FleetPrior, failures: int, hours: float
) -> tuple[float, list[float], list[float]]:
    """E[λ], the grid over u = log m and its CDF, for p(u | f, H) ∝ N(u; μ, σ²)·e^{f·u − λ₀H·eᵘ}.

    The grid covers the prior (μ ± 8σ) and the likelihood's peak (log((f + ½)/(λ₀H)) ± 8/√(f+½))
    so a strong likelihood far from the prior is resolved too."""
    mu, sigma, base = prior.mu, prior.log_sd, prior.rate
    exposure = base * hours  # λ₀·H: the failures expected at m = 1
    lo, hi = mu - GRID_HALF_WIDTH * sigma, mu + GRID_HALF_WIDTH * sigma
    if exposure > 0:
        peak = math.log((failures + 0.5) / exposure)
        width = GRID_HALF_WIDTH / math.sqrt(failures + 0.5)
        lo, hi = min(lo, peak - width), max(hi, peak + width)
    step = (hi - lo) / (GRID_POINTS - 1)
    grid = [lo + i * step for i in range(GRID_POINTS)]
    inv = 1 / (2 * sigma * sigma)
    logs = [-((u - mu) ** 2) * inv + failures * u - exposure * math.exp(u) for u in grid]
    top = max(logs)
    dens = [math.exp(v - top) for v in logs]
    cdf = [0.0]
    mass = mean_m = 0.0
    for i in range(1, GRID_POINTS):
        piece = 0.5 * (dens[i - 1] + dens[i]) * step
        mass += piece
        mean_m += 0.5 * (dens[i - 1] * math.exp(grid[i - 1]) + dens[i] * math.exp(grid[i])) * step
        cdf.append(mass)
    cdf = [c / mass for c in cdf]
    return base * mean_m / mass, grid, cdf


def _predictive_tail(prior: FleetPrior, failures: int, hours: float) -> float:
    """The prior predictive P(F ≥ f): ∫ N(u; μ, σ²)·P(Poisson(λ₀H·eᵘ) ≥ f) du [probability]."""
    if failures <= 0 or hours <= 0:
        return 1.0
    n = 241
    mu, sigma = prior.mu, prior.log_sd
    total = weight = 0.0
    for i in range(n):
        z = -GRID_HALF_WIDTH + 2 * GRID_HALF_WIDTH * i / (n - 1)
        w = math.exp(-0.5 * z * z)
        total += w * _poisson_tail(failures, prior.rate * hours * math.exp(mu + sigma * z))
        weight += w
    return total / weight


def known_failures(trials: Sequence[TrialRun]) -> tuple[int, float, int]:
    """The trials' failure evidence. A trial read without the trial agent does not know its
    interruptions (`failures` None): it adds no exposure, so it never counts as failure-free.

    Parameters
    ----------
    trials : Sequence[TrialRun]
        The candidate's pooled trials.

    Returns
    -------
    tuple
        (Σ failures [interruptions], Σ instance-hours [instance-hours] of the trials whose
        failures are known, the trials whose failures are not known [trials]).
    """
    known = [t for t in trials if t.reliability.failures is not None]
    failures = sum(t.reliability.failures or 0 for t in known)
    hours = sum(t.instance_hours for t in known)
    return failures, hours, len(trials) - len(known)


def posterior_of(prior: FleetPrior, failures: int, hours: float) -> FailurePosterior:
    """`prior` updated with the trials' failures and exposure (see `posterior`).

    Parameters
    ----------
    prior : FleetPrior
        The fleet prior (λ₀ [1/instance-hour], σ [unitless]).
    failures : int
        Failures the trials saw [interruptions].
    hours : float
        Their exposure [instance-hours].

    Returns
    -------
    FailurePosterior
        Its posterior mean [1/instance-hour] and grid.
    """
    point, grid, cdf = _grid_posterior(prior, failures, hours)
    tail = _predictive_tail(prior, failures, hours)
    conflict = tail if tail < float(published()["conflict_p"]) else None
    return FailurePosterior(
        point,
        failures,
        hours,
        prior,
        base=prior.rate,
        grid=tuple(grid),
        cdf=tuple(cdf),
        conflict_p=conflict,
    )


def posterior(
    trials: Sequence[TrialRun], instance_type: str, fleet: FleetFailurePrior | None
) -> FailurePosterior:
    """The failure rate's posterior from the prior and the trials' failures and exposure.

    E[λ | f, H] = λ₀ · ∫ eᵘ p(u | f, H) du, p(u | f, H) ∝ N(u; −σ²/2, σ²)·e^{f·u − λ₀·H·eᵘ};
    with no prior, Jeffreys' Gamma(f + ½, H) and its mean (f + ½)/H.

    Parameters
    ----------
    trials : sequence of TrialRun
        The candidate's pooled trials (failures [count], instance-hours [instance-h]).
    instance_type : str
        Its instance type (accelerators per instance for the prior).
    fleet : FleetFailurePrior or None
        The user's own fleet record in place of the published prior.

    Returns
    -------
    FailurePosterior
        Its point (the posterior mean [1/instance-hour]) and what the range draws from.

    References
    ----------
    Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §5 and §2.6; DESIGN.md,
    principle 10 (one model, two views) and "The cost model".
    """
    failures, hours, unknown = known_failures(trials)
    prior = prior_for(instance_type, fleet)
    if prior is None:
        shape, rate = failures + 0.5, hours
        point = shape / rate if rate > 0 else 0.0
        return FailurePosterior(
            point, failures, hours, None, shape=shape, rate=rate, unknown_trials=unknown
        )
    return replace(posterior_of(prior, failures, hours), unknown_trials=unknown)
