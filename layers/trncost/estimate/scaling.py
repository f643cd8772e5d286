"""Scaling: throughput at instance counts the trials did not run, and how sure that is.

Three models (n instances, X throughput, λ one instance's throughput):

    linear   X(n) = λn
    Amdahl   X(n) = λn / (1 + σ(n−1))                      σ: contention
    USL      X(n) = λn / (1 + σ(n−1) + κn(n−1))            κ: coherency (Gunther)

Fit. Each model is linear in its parameters once inverted, y(n) = n / X(n) = a + b(n−1) +
c·n(n−1) with a = 1/λ, b = σ/λ, c = κ/λ, so each fit is a weighted linear least squares
(numpy only). Each equation is divided by y·sᵢ: the residual is the relative throughput error
(X/X̂ − 1 to first order) in units of that count's noise sᵢ, where

    sᵢ² = cvᵢ² / kᵢ + s_floor²

cvᵢ is the spread between the kᵢ trials at that count (their steady samples when there is one
trial), and s_floor (priors file) is how closely real curves follow any of the three families.
σ ≥ 0 and κ ≥ 0 are met exactly by solving on every face of the feasible region and keeping the
feasible solution with the least residual (for a convex least squares: the constrained optimum).

Model form. The noise is known, so Schwarz's criterion is BIC = χ² + k·ln m (k = 1, 2, 3
parameters, m counts) and the model weights are w ∝ exp(−ΔBIC / 2). The point value is the
weighted geometric mean of the three models' predictions: it says which models it rests on and
by how much. With 3 counts the USL passes through every point (χ² = 0, BIC = 3 ln 3), so it
carries weight whenever Amdahl misses the points by more than their noise allows (it is even
with Amdahl at χ²_A = ln 3): the old rule "Amdahl unless retrograde" always chose Amdahl on 3
counts, which over-predicted retrograde scaling. (BIC rather than AIC: with 3–5 counts its
penalty, ln m per parameter, is the lighter one, and on synthetic USL data it halves the
over-prediction where AIC takes off a third; `make calibrate` gives the same errors with both.)

Uncertainty. A parametric bootstrap: B replicates of the measured throughputs perturbed by their
noise, Xᵢ* = Xᵢ·exp(sᵢ·Z), each refitted with the three models and the BIC winner kept
(bootstrap model selection, Buckland, Burnham & Augustin 1997): parameter and model-form
uncertainty in one set of curves, which fan out away from the measured counts. The predictive
at one count, and its point value (the draws' geometric mean), are in estimate/
scaling_predictive.py: the curves × a Student-t spread (the model discrepancy, `discrepancy`: the
true curve is none of the three; a run's own spread; τ per doubling to the nearest measured
count), past the measured counts a share from the local power law. Each count's noise sᵢ has a
floor s_floor, and a single instance more (`noise_per_count`). s_floor, s₁, the discrepancy
prior and τ come from published multi-scale results (estimate/data/scaling_prior.json, fitted
and tuned by `python benchmarks/calibrate.py --fit-priors` on the tuning rounds).

Fewer than 3 counts: see estimate/scaling_prior.py (a published prior over the scaling exponent,
linear its upper bound).

Units: n in instances; X, λ in the throughput's unit (target units/s); σ, κ unitless.

References
----------
G. M. Amdahl, "Validity of the single processor approach to achieving large scale computing
capabilities", AFIPS Conference Proceedings 30:483–485 (1967); N. J. Gunther, Guerrilla
Capacity Planning, Springer (2007), the Universal Scalability Law; G. Schwarz, "Estimating the
dimension of a model", Annals of Statistics 6(2):461–464 (1978); S. T. Buckland, K. P.
Burnham and N. H. Augustin, "Model selection: an integral part of inference", Biometrics
53(2):603–618 (1997); A. Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.6 (the
scaled inverse-χ² prior of a variance). The constants: estimate/data/scaling_prior.json.
DESIGN.md, "The cost model" (a scaling fit over several counts, USL/Amdahl, least squares,
flagged when extrapolated) and principle 9.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trncost.errors import DomainError
from trncost.estimate.evidence import MIN_FIT_COUNTS  # defined once, with the evidence
from trncost.estimate.scaling_prior import PRIOR
from trncost.model.analysis import ScalingFit, ScalingParameters, ScalingPoint

FloatArray = NDArray[np.float64]
Face = tuple[int, ...]  # the columns of [1, n−1, n(n−1)] left free (the others fixed at 0)

USL_FORMULA = "X(n) = λn / (1 + σ(n−1) + κn(n−1))"
AMDAHL_FORMULA = "X(n) = λn / (1 + σ(n−1))"
LINEAR_FORMULA = "X(n) = λn"
FORMULAS = {"usl": USL_FORMULA, "amdahl": AMDAHL_FORMULA, "linear": LINEAR_FORMULA}
METHOD = (
    "weighted linear least squares of n/X(n) on [1, n−1, n(n−1)], each count weighted by "
    "1/(n/X · its noise); λ > 0, σ ≥ 0, κ ≥ 0 enforced on each face; linear, Amdahl and USL "
    "weighted by Schwarz's criterion (χ² + k·ln m, noise known); uncertainty by parametric "
    "bootstrap with model selection in each replicate"
)
MODELS = ("linear", "amdahl", "usl")
FACES: dict[str, tuple[Face, ...]] = {
    "linear": ((0,),),
    "amdahl": ((0, 1), (0,)),
    "usl": ((0, 1, 2), (0, 1), (0, 2), (0,)),
}
PARAMS = {"linear": 1, "amdahl": 2, "usl": 3}
REPLICATES = 400
BOOTSTRAP_SEED = 20_140_314  # the fit is deterministic: its replicates never depend on a caller


def _design(n: FloatArray) -> FloatArray:
    return np.stack([np.ones_like(n), n - 1, n * (n - 1)], axis=1)


def _fit_batch(n: FloatArray, x: FloatArray, s: FloatArray, model: str) -> tuple[FloatArray, ...]:
    """(coefficients (B, 3), χ² (B,)) of `model` fitted to each row of throughputs x (B, m)."""
    y = n / x
    w = 1.0 / (y * s)
    design = _design(n)
    scale = np.array([1.0, 1.0 / max(n[-1], 1.0), 1.0 / max(n[-1] ** 2, 1.0)])
    best_coef = np.zeros((x.shape[0], 3))
    best_chi = np.full(x.shape[0], np.inf)
    for face in FACES[model]:
        cols = list(face)
        d = design[:, cols] * scale[cols]  # column scaling keeps the normal equations sane
        a = d[None, :, :] * w[:, :, None]
        ata = np.einsum("bmi,bmj->bij", a, a)
        atb = np.einsum("bmi,bm->bi", a, y * w)
        coef_scaled = np.linalg.solve(ata, atb[:, :, None])[:, :, 0]
        full = np.zeros_like(best_coef)
        full[:, cols] = coef_scaled * scale[cols]
        ok = (full[:, 0] > 0) & (full[:, 1] >= -1e-12 * full[:, 0]) & (full[:, 2] >= -1e-15)
        full[:, 1:] = np.maximum(full[:, 1:], 0.0)
        chi = np.sum(((y - full @ design.T) * w) ** 2, axis=1)
        better = ok & (chi < best_chi)
        best_coef[better], best_chi[better] = full[better], chi[better]
    return best_coef, best_chi


def _predict(coef: FloatArray, count: float) -> FloatArray:
    """Throughput at `count` for each row of coefficients (a, b, c)."""
    return count / (coef[..., 0] + coef[..., 1] * (count - 1) + coef[..., 2] * count * (count - 1))


def _params(coef: FloatArray, chi: float, dof: int) -> ScalingParameters:
    a, b, c = (float(v) for v in coef)
    return ScalingParameters(lam=1 / a, sigma=b / a, kappa=c / a, weighted_rss=float(chi), dof=dof)


@dataclass(frozen=True)
class Bootstrap:
    """The replicate curves of a fit: coefficients (B, 3) of each replicate's BIC winner
    (a = 1/λ, b = σ/λ, c = κ/λ), the model each chose, and the measured range [n_min, n_max]
    [instances]."""

    coef: FloatArray
    chosen: tuple[str, ...]
    n_min: int
    n_max: int

    def at(self, count: float) -> FloatArray:
        """Every replicate's throughput at `count`: count / (a + b(count − 1) + c·count(count − 1)).

        Parameters
        ----------
        count : float
            Instances [instances].

        Returns
        -------
        FloatArray
            One throughput per replicate [target units/s].
        """
        return _predict(self.coef, count)

    def model_shares(self) -> dict[str, float]:
        """How often each model won a replicate.

        Returns
        -------
        dict[str, float]
            linear, amdahl, usl → share of the replicates [unitless].
        """
        return {m: self.chosen.count(m) / len(self.chosen) for m in MODELS}


def noise_per_count(
    cvs: Sequence[float | None], trials: Sequence[int], counts: Sequence[int] | None = None
) -> list[float]:
    """Each count's relative noise for the fit::

        sᵢ = √(cvᵢ²/kᵢ + s_floor² + s₁²·[nᵢ = 1])

    a count without a measured spread taking the others' RMS cv (0 when none is measured). s₁
    (the single-instance noise) is added at one instance only: one instance's collectives stay
    on its own links (NeuronLink, NVLink), from two instances on they cross the network (EFA,
    InfiniBand), so a single instance lies on another curve than the rest and the fit weighs
    it less (tuned on published multi-scale results: it cut the leave-one-out and the
    extrapolation interval scores in forward chaining, benchmarks/calibrate.py).

    Parameters
    ----------
    cvs : Sequence[float or None]
        Each count's throughput spread cvᵢ (`Evidence.spread_at`) [unitless].
    trials : Sequence[int]
        Each count's number of trials kᵢ [trials].
    counts : Sequence[int] or None
        Each count nᵢ [instances] (None: no single-instance term).

    Returns
    -------
    list[float]
        sᵢ per count [unitless].

    References
    ----------
    estimate/data/scaling_prior.json (`model_floor`, s_floor; `single_instance_noise`, s₁);
    DESIGN.md, principle 9.
    """
    known = [c for c in cvs if c is not None]
    typical = float(np.sqrt(np.mean(np.square(known)))) if known else 0.0
    floor, single = PRIOR.model_floor, PRIOR.single_instance_noise
    at = list(counts) if counts is not None else [0] * len(cvs)
    return [
        math.sqrt(
            ((c if c is not None else typical) ** 2) / max(k, 1)
            + floor**2
            + (single**2 if n == 1 else 0.0)
        )
        for c, k, n in zip(cvs, trials, at, strict=True)
    ]


def fit_scaling(
    points: Sequence[tuple[int, float]],
    row_ids: Sequence[str] | None = None,
    noise: Sequence[float] | None = None,
) -> ScalingFit:
    """Fit linear, Amdahl and USL to (instance count, throughput) points and weigh them
    (the module docstring: the fit, σ, κ ≥ 0, BIC = χ² + k·ln m, w ∝ exp(−ΔBIC/2)).

    Parameters
    ----------
    points : Sequence[tuple[int, float]]
        (count [instances], throughput [target units/s]), ≥ 3 distinct counts.
    row_ids : Sequence[str] or None
        Each point's input row (default `throughput:n=<count>`).
    noise : Sequence[float] or None
        Each point's relative noise sᵢ [unitless] (default: the model floor alone).

    Returns
    -------
    ScalingFit
        The three models' parameters (λ [target units/s], σ, κ [unitless], weighted χ²), their
        BIC weights, the most weighted model, each point with its fitted value [target
        units/s] and efficiency X/(nλ) [unitless], the measured range and notes.

    Raises
    ------
    DomainError
        Fewer than 3 distinct counts, a repeated count, a non-positive count or throughput.

    References
    ----------
    Amdahl (1967); Gunther (2007); Schwarz (1978): see the module docstring.
    """
    counts = [int(c) for c, _ in points]
    if len(set(counts)) != len(counts):
        raise DomainError(f"scaling fit: each instance count once, got {sorted(counts)}")
    if len(counts) < MIN_FIT_COUNTS:
        raise DomainError(
            f"scaling fit needs throughput at ≥ {MIN_FIT_COUNTS} instance counts, have "
            f"{len(counts)} ({', '.join(map(str, sorted(counts))) or 'none'}): below that "
            "trncost scales from the nearest count with the published scaling prior"
        )
    if any(c < 1 for c in counts) or any(not (x > 0 and np.isfinite(x)) for _, x in points):
        raise DomainError("scaling fit: counts must be ≥ 1 and throughputs positive and finite")
    ids = list(row_ids) if row_ids is not None else [f"throughput:n={c}" for c in counts]
    s_all = list(noise) if noise is not None else [PRIOR.model_floor] * len(counts)
    order = np.argsort(counts)
    n = np.array(counts, dtype=float)[order]
    x = np.array([float(v) for _, v in points])[order]
    s = np.array(s_all, dtype=float)[order]
    ids = [ids[i] for i in order]
    m = len(n)

    fits = {model: _fit_batch(n, x[None, :], s, model) for model in MODELS}
    bic = {model: float(chi[0]) + math.log(m) * PARAMS[model] for model, (_, chi) in fits.items()}
    best = min(bic.values())
    raw = {model: math.exp(-(b - best) / 2) for model, b in bic.items()}
    total = sum(raw.values())
    weights = {model: raw[model] / total for model in MODELS}
    params = {
        model: _params(coef[0], chi[0], m - PARAMS[model]) for model, (coef, chi) in fits.items()
    }
    chosen = max(MODELS, key=lambda k: (weights[k], -PARAMS[k]))
    notes: list[str] = []
    p = params[chosen]
    if p.sigma == 0 and p.kappa == 0:
        notes.append("σ = κ = 0: the measurements scale linearly (or better) within the fit")
    if p.sigma > 1:
        notes.append(f"σ = {p.sigma:.3g} > 1: more instances are slower than one")
    if params["usl"].kappa == 0 and chosen != "linear":
        notes.append("the USL fit has κ = 0 here: it is Amdahl's law")
    ranked = sorted(MODELS, key=lambda k: -weights[k])
    choice = ", ".join(f"{k} {weights[k]:.0%} (BIC {bic[k]:.3g})" for k in ranked)
    fit = ScalingFit(
        model=chosen,
        formula=FORMULAS[chosen],
        method=METHOD,
        parameters=p,
        usl=params["usl"],
        amdahl=params["amdahl"],
        linear=params["linear"],
        weights=weights,
        choice=f"BIC weights (noise known: BIC = χ² + k·ln {m}): {choice}",
        points=[],
        max_measured_count=int(n[-1]),
        min_measured_count=int(n[0]),
        noise=[float(v) for v in s],
        notes=notes,
    )
    fitted = [fit.predict(float(c)) for c in n]
    lam = p.lam
    fitted_points = [
        ScalingPoint(
            count=int(n[i]),
            throughput=float(x[i]),
            fitted=fitted[i],
            residual=float(x[i] - fitted[i]),
            relative_residual=float((x[i] - fitted[i]) / x[i]),
            efficiency=float(x[i] / (n[i] * lam)),
            fitted_efficiency=float(fitted[i] / (n[i] * lam)),
            row_id=ids[i],
        )
        for i in range(m)
    ]
    return fit.model_copy(update={"points": fitted_points})


def discrepancy(fit: ScalingFit) -> tuple[float, float]:
    """The model discrepancy of `fit`: ln(truth / curve) ~ s·t_ν.

    s² has a Scaled-Inv-χ²(ν₀, s₀²) prior (s₀, ν₀ from published results, the priors file)
    updated with the fit's own residuals rᵢ = ln(Xᵢ / X̂ᵢ)::

        s² = (ν₀s₀² + Σ rᵢ²) / (ν₀ + m − k),   ν = ν₀ + m − k

    (m counts, k parameters of the chosen model; with m = k the fit passes through every point
    and its residuals say nothing: the prior alone). A fit that misses its own points widens
    its range everywhere, inside the measured counts too.

    Returns
    -------
    tuple[float, float]
        s [unitless] (a relative spread: a log ratio) and ν [unitless].

    References
    ----------
    Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.6; estimate/data/
    scaling_prior.json (`discrepancy`: s₀, ν₀).
    """
    m = len(fit.points)
    dof = max(m - PARAMS.get(fit.model, 1), 0)
    ss = (
        sum(math.log(p.throughput / p.fitted) ** 2 for p in fit.points if p.fitted > 0)
        if dof
        else 0.0
    )
    nu0, s0 = PRIOR.discrepancy_dof, PRIOR.discrepancy_scale
    return math.sqrt((nu0 * s0**2 + ss) / (nu0 + dof)), nu0 + dof


def bootstrap(fit: ScalingFit, replicates: int = REPLICATES, extra: float = 0.0) -> Bootstrap:
    """Replicate curves of `fit`: its measured points perturbed by their noise,
    Xᵢ* = Xᵢ·exp(√(sᵢ² + extra²)·Z), refitted with the three models, the BIC winner of each
    replicate kept. Seeded with BOOTSTRAP_SEED: the same fit, the same curves.

    Parameters
    ----------
    replicates : int
        B [replicates] (400).
    extra : float
        Relative noise added in quadrature to each point's [unitless] (the priors file's
        `bootstrap_discrepancy` × the discrepancy scale; 0: the points' own noise).

    Returns
    -------
    Bootstrap
        B curves (coefficients) and the model each chose.

    References
    ----------
    Buckland, Burnham and Augustin (1997) (bootstrap model selection); Schwarz (1978).
    """
    n = np.array([p.count for p in fit.points], dtype=float)
    x = np.array([p.throughput for p in fit.points])
    s = np.hypot(np.array(fit.noise or [PRIOR.model_floor] * len(n)), extra)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    xs = x[None, :] * np.exp(s[None, :] * rng.standard_normal((replicates, len(n))))
    coefs, scores = [], []
    for model in MODELS:
        coef, chi = _fit_batch(n, xs, s, model)
        coefs.append(coef)
        scores.append(chi + math.log(len(n)) * PARAMS[model])
    pick = np.argmin(np.stack(scores, axis=1), axis=1)
    coef = np.stack(coefs, axis=1)[np.arange(replicates), pick]
    return Bootstrap(
        coef=coef,
        chosen=tuple(MODELS[i] for i in pick),
        n_min=int(n[0]),
        n_max=int(n[-1]),
    )
