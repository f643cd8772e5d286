"""Scaling fit: throughput at instance counts the trials did not run, from those they did.

Universal Scalability Law (Gunther):   X(n) = λn / (1 + σ(n−1) + κn(n−1))
Amdahl's law is the κ = 0 case.        λ: one instance's throughput, σ: contention, κ: coherency.

Method (numpy only). The USL is linear in its parameters once inverted:

    y(n) = n / X(n) = a + b·(n−1) + c·n(n−1),   a = 1/λ, b = σ/λ, c = κ/λ

so the fit is a linear least squares for (a, b, c). Each equation is divided by its measured
y, so the residual minimised is (y − ŷ)/y = X/X̂ − 1: the relative error in throughput (to
first order), which keeps a large count's big numbers from drowning a small count's. The
constraints λ > 0, σ ≥ 0, κ ≥ 0 are met exactly by solving on every face of the feasible
region (all parameters free; κ = 0; σ = 0; both 0) and keeping the feasible solution with the
least residual: for a convex least squares that is the constrained optimum.

Choice. With 3 counts the USL has no residual degree of freedom (it passes through every
point), so Amdahl is kept unless the measurements are retrograde (throughput falls at a larger
count), which Amdahl cannot follow. With ≥ 4 counts the model with the smaller residual
variance per degree of freedom, RSS / (counts − parameters), wins; a tie keeps Amdahl. A USL
fit whose κ comes out 0 *is* Amdahl.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from trncost.errors import DomainError
from trncost.estimate.evidence import MIN_FIT_COUNTS  # defined once, with the evidence
from trncost.model.analysis import ScalingFit, ScalingParameters, ScalingPoint

FloatArray = NDArray[np.float64]
Face = tuple[int, ...]  # the columns of [1, n−1, n(n−1)] left free (the others fixed at 0)

USL_FORMULA = "X(n) = λn / (1 + σ(n−1) + κn(n−1))"
AMDAHL_FORMULA = "X(n) = λn / (1 + σ(n−1))"
METHOD = (
    "weighted linear least squares of n/X(n) on [1, n−1, n(n−1)] (weights 1/(n/X(n)): "
    "relative throughput error), λ > 0, σ ≥ 0, κ ≥ 0 enforced by solving on each face"
)


def _solve(n: FloatArray, y: FloatArray, columns: Face, n_params: int) -> ScalingParameters | None:
    design = np.stack([np.ones_like(n), n - 1, n * (n - 1)], axis=1)[:, columns]
    w = 1.0 / y
    coef, *_ = np.linalg.lstsq(design * w[:, None], y * w, rcond=None)
    full = np.zeros(3)
    full[list(columns)] = coef
    a, b, c = float(full[0]), float(full[1]), float(full[2])
    if a <= 0 or b < -1e-15 or c < -1e-15:
        return None
    b, c = max(b, 0.0), max(c, 0.0)
    fitted = a + b * (n - 1) + c * n * (n - 1)
    rss = float(np.sum(((y - fitted) / y) ** 2))
    return ScalingParameters(
        lam=float(1 / a),
        sigma=float(b / a),
        kappa=float(c / a),
        weighted_rss=rss,
        dof=len(n) - n_params,
    )


def _best(n: FloatArray, y: FloatArray, faces: Sequence[Face], n_params: int) -> ScalingParameters:
    solutions = [s for f in faces if (s := _solve(n, y, f, n_params)) is not None]
    # (0,) alone is always feasible: a = weighted mean of y > 0.
    return min(solutions, key=lambda s: s.weighted_rss)


def fit_scaling(
    points: Sequence[tuple[int, float]], row_ids: Sequence[str] | None = None
) -> ScalingFit:
    """Fit USL and Amdahl to (instance count, throughput) points and choose between them.

    Raises DomainError with the reason when the points cannot support a fit (fewer than 3
    distinct counts, a repeated count, a non-positive count or throughput).
    """
    counts = [int(c) for c, _ in points]
    if len(set(counts)) != len(counts):
        raise DomainError(f"scaling fit: each instance count once, got {sorted(counts)}")
    if len(counts) < MIN_FIT_COUNTS:
        raise DomainError(
            f"scaling fit needs throughput at ≥ {MIN_FIT_COUNTS} instance counts, have "
            f"{len(counts)} ({', '.join(map(str, sorted(counts))) or 'none'}): below that "
            "trncost scales linearly from the nearest count, as a flagged user assumption"
        )
    if any(c < 1 for c in counts) or any(not (x > 0 and np.isfinite(x)) for _, x in points):
        raise DomainError("scaling fit: counts must be ≥ 1 and throughputs positive and finite")
    ids = list(row_ids) if row_ids is not None else [f"throughput:n={c}" for c in counts]
    order = np.argsort(counts)
    n = np.array(counts, dtype=float)[order]
    x = np.array([float(v) for _, v in points])[order]
    ids = [ids[i] for i in order]
    y = n / x

    usl = _best(n, y, [(0, 1, 2), (0, 1), (0, 2), (0,)], 3)
    amdahl = _best(n, y, [(0, 1), (0,)], 2)
    m = len(n)
    retrograde = bool(np.any(np.diff(x) < 0))
    notes: list[str] = []
    if usl.kappa == 0:
        chosen, choice = "amdahl", "the USL fit has κ = 0: it is Amdahl's law"
    elif m == MIN_FIT_COUNTS:
        if retrograde:
            chosen = "usl"
            choice = (
                "throughput falls at a larger count (retrograde), which Amdahl cannot follow; "
                "with 3 counts the USL passes through every point (no residual degree of freedom)"
            )
        else:
            chosen = "amdahl"
            choice = (
                "3 counts leave the USL no residual degree of freedom; Amdahl keeps one and "
                "the measurements are not retrograde"
            )
    else:
        s_usl, s_amdahl = usl.weighted_rss / (m - 3), amdahl.weighted_rss / (m - 2)
        if s_usl < s_amdahl:
            chosen = "usl"
            choice = (
                f"USL residual variance per degree of freedom {s_usl:.3g} < Amdahl's {s_amdahl:.3g}"
            )
        else:
            chosen = "amdahl"
            choice = (
                f"Amdahl residual variance per degree of freedom {s_amdahl:.3g} ≤ USL's "
                f"{s_usl:.3g}: the extra parameter does not pay for itself"
            )
    params = usl if chosen == "usl" else amdahl
    if params.sigma == 0 and params.kappa == 0:
        notes.append("σ = κ = 0: the measurements scale linearly (or better) within the fit")
    if params.sigma > 1:
        notes.append(f"σ = {params.sigma:.3g} > 1: more instances are slower than one")
    lam, sig, kap = params.lam, params.sigma, params.kappa
    fitted = lam * n / (1 + sig * (n - 1) + kap * n * (n - 1))
    pts = [
        ScalingPoint(
            count=int(n[i]),
            throughput=float(x[i]),
            fitted=float(fitted[i]),
            residual=float(x[i] - fitted[i]),
            relative_residual=float((x[i] - fitted[i]) / x[i]),
            efficiency=float(x[i] / (n[i] * lam)),
            fitted_efficiency=float(1 / (1 + sig * (n[i] - 1) + kap * n[i] * (n[i] - 1))),
            row_id=ids[i],
        )
        for i in range(m)
    ]
    return ScalingFit(
        model=chosen,
        formula=USL_FORMULA if chosen == "usl" else AMDAHL_FORMULA,
        method=METHOD,
        parameters=params,
        usl=usl,
        amdahl=amdahl,
        choice=choice,
        points=pts,
        max_measured_count=int(n[-1]),
        notes=notes,
    )


def relative_rms(fit: ScalingFit) -> float:
    """Root-mean-square relative residual of the chosen fit (0 for an exact fit)."""
    r = np.array([p.relative_residual for p in fit.points])
    return float(np.sqrt(np.mean(r**2)))
