"""The draws of throughput and failure rate the range rests on (the Monte Carlo's two
evidence-driven inputs), as `Uncertain` inputs: the distribution each draw comes from, and the
one-at-a-time ends the tornado swings it to — including the swings that move them without being
drawn themselves (the scaling model form and fit parameters, the scaling exponent, the failure
prior).

Throughput at n, modelled on the log scale; the engine's point value is the same model's
exp(E[ln X]) (the draws' geometric mean: one model, two views), so it lies inside P10–P90:
- a measured count: multiplicative log-normal, median (= geometric mean) the measured rate, cv
  the larger of the between-trial and within-trial spreads;
- ≥ 3 measured counts: the fit's bootstrap curves centred on the fit (parameter and model-form
  uncertainty) × a Student-t spread of the model discrepancy, a run's own spread and τ per
  doubling to the nearest measured count; past the measured counts a share from the local
  power law (estimate/scaling_predictive.py);
- 1–2 measured counts: the published scaling prior's power law from the nearest count,
  ln(1 − α) ~ N(μ, σ) (estimate/scaling_prior.py; linear is its upper bound) × the Student-t
  spread of a run's own spread and the prior's discrepancy; its point is at E[α].
Failure rate: the Gamma posterior of the failure prior updated with the trials (estimate/
failure_prior.py), or the trials alone (Jeffreys) when they contradict it.

References
----------
DESIGN.md, principles 9 and 10 (calibrated ranges; one model, two views); docs/estimates.md,
"How ranges are built"; E. B. Wilson and M. M. Hilferty, "The distribution of chi-square",
PNAS 17(12):684–688 (1931) (`gamma_quantile`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import cast

import numpy as np

from trncost.estimate.evidence import EXTRAPOLATION_LIMIT, MIN_FIT_COUNTS, Evidence
from trncost.estimate.failure_prior import Z90, FailurePosterior, posterior_of
from trncost.estimate.failure_prior import posterior as failure_posterior
from trncost.estimate.vector import Array, VectorModel
from trncost.model.estimate import EstimateInput, InputRow

PROBE_SEED, PROBE_DRAWS = 7, 4000  # the fixed draws a drawn input's tornado ends come from

Sampler = Callable[[np.random.Generator, int], Array]


@dataclass(frozen=True)
class Uncertain:
    """One uncertain input: its value, its one-at-a-time range and its distribution.

    `point`, `low` and `high` are in the unit of its input row (`unit`; for a price, a factor
    on the price: × price); `draw(rng, k)` gives k values in that unit.
    """

    row_id: str
    label: str
    unit: str | None
    point: float
    low: float
    high: float
    basis: str
    distribution: str
    draw: Sampler | None  # None: tornado only (prices, scaling and failure-prior swings)
    is_price: bool = False
    # A swing that moves another row: the tornado sets `sets` to set_low / set_high (e.g. the
    # scaling model form moves the throughput row; the failure prior moves the failure rate).
    sets: str | None = None
    set_low: float | None = None
    set_high: float | None = None

    @property
    def target(self) -> str:
        """The input row the tornado sets: `sets`, else this input's own row."""
        return self.sets or self.row_id

    @property
    def target_low(self) -> float:
        """The value the low end sets `target` to [unit of the row]."""
        return self.set_low if self.set_low is not None else self.low

    @property
    def target_high(self) -> float:
        """The value the high end sets `target` to [unit of the row]."""
        return self.set_high if self.set_high is not None else self.high


def _z(p: float) -> float:
    # standard normal quantiles used for the Gamma P10/P90 (Wilson–Hilferty)
    return {0.1: -1.2815515655446004, 0.9: 1.2815515655446004}[p]


def gamma_quantile(shape: float, rate: float, p: float) -> float:
    """A quantile of Gamma(shape, rate), by the Wilson–Hilferty approximation (no scipy)::

        x_p = k·(1 − 1/(9k) + z_p·√(1/(9k)))³ / rate,   k = shape, clamped at 0

    Parameters
    ----------
    shape : float
        The Gamma shape k [unitless].
    rate : float
        The Gamma rate [instance-hours] (a failure rate's pseudo-exposure).
    p : float
        0.1 or 0.9 (the only quantiles z_p is tabled for) [unitless].

    Returns
    -------
    float
        x_p [1/instance-hour] for a failure rate's posterior (1/rate's unit in general).

    References
    ----------
    E. B. Wilson and M. M. Hilferty, "The distribution of chi-square", PNAS 17(12):684–688
    (1931).
    """
    k = shape
    c = 1 - 1 / (9 * k) + _z(p) * math.sqrt(1 / (9 * k))
    return max(0.0, k * c**3 / rate)


def _cv(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    a = np.asarray(values, dtype=float)
    return float(np.std(a, ddof=1) / np.mean(a))


class EvidenceDraws:
    """The throughput and failure-rate inputs of `Inputs` (a mixin: `Inputs` sets the fields):
    each adds its `Uncertain` items, notes and the range's basis (module docstring)."""

    inp: EstimateInput
    model: VectorModel
    ev: Evidence
    rows: Mapping[str, InputRow]
    items: list[Uncertain]
    notes: list[str]
    basis: list[str]
    doublings: float

    def _label(self, row_id: str) -> str:
        row = self.rows.get(row_id)
        return row.label if row is not None else row_id

    def _unit(self, row_id: str) -> str | None:
        row = self.rows.get(row_id)
        return row.unit if row is not None else None

    def _pm20(
        self, row: str, point: float, upper: float | None = None, sample: bool = True
    ) -> None:
        raise NotImplementedError  # Inputs defines it

    # -- throughput ----
    def _spread_at(self, count: int) -> tuple[float | None, float, float]:
        """(cv, low factor, high factor) from per-trial rates and steady samples at `count`."""
        rates, samples = self.ev.rates_by_trial(count), self.ev.samples_at(count)
        cvs = [c for c in (_cv(rates), _cv(samples)) if c is not None]
        if not cvs:
            return None, 1.0, 1.0
        lows, highs = [], []
        for values in (rates, samples):
            if len(values) >= 2:
                mean = float(np.mean(values))
                # clamped: equal values over a mean that rounds off by an ulp bracket it still
                lows.append(min(min(values) / mean, 1.0))
                highs.append(max(max(values) / mean, 1.0))
        return max(cvs), min(lows), max(highs)

    def _throughput(self) -> None:
        m = self.model
        n = self.inp.candidate.instance_count
        counts = self.ev.measured_counts()
        from trncost.estimate.scaling_prior import distance_doublings

        if self.ev.projected:
            self._projected_throughput(n)
        elif n in counts:
            self._measured_throughput(n)
        elif len(counts) >= MIN_FIT_COUNTS:
            self._fitted_throughput(n, counts)
        else:
            self._prior_throughput(n, counts)
        if counts:
            self.doublings = distance_doublings(n, min(counts), max(counts))
        if counts and n > EXTRAPOLATION_LIMIT * max(counts):
            self.notes.append(
                f"{n} instances is beyond {EXTRAPOLATION_LIMIT:g}× the largest measured count "
                f"({max(counts)}): the throughput range widens with the distance"
            )
        drawn = next((u for u in self.items if u.row_id == m.rate_row), None)
        row = self.rows.get(m.rate_row)
        what = drawn.distribution if drawn is not None else "held at its value"
        self.basis.append(f"{m.rate_row} ({row.label if row else m.rate_row}): {what}")

    def _run_cv(self, counts: list[int]) -> float:
        """A run's own relative spread: the RMS of the measured counts' spreads (0 unknown)."""
        known = [c for m in counts if (c := self.ev.spread_at(m)) is not None]
        return float(np.sqrt(np.mean(np.square(known)))) if known else 0.0

    def _measured_throughput(self, n: int) -> None:
        m = self.model
        r0 = m.point[m.rate_row]
        cv, lo, hi = self._spread_at(n)
        where = f"at {n} instances"
        if cv is None:
            self.notes.append(
                f"throughput spread unknown {where}: one trial and fewer than 2 steady samples; "
                "throughput held at its value (run a repeat to get a range)"
            )
            return
        if cv == 0:
            self.notes.append(
                f"throughput samples {where} show no variation (zero variance): the range "
                "holds no throughput uncertainty"
            )
            return
        s = math.sqrt(math.log1p(cv * cv))
        self.items.append(
            Uncertain(
                row_id=m.rate_row,
                label=self._label(m.rate_row),
                unit=self._unit(m.rate_row),
                point=r0,
                low=r0 * lo,
                high=r0 * hi,
                basis="observed range of trial measurements",
                distribution=f"log-normal, median {r0:.6g}, cv {cv:.3g}",
                draw=lambda rng, k: r0 * np.exp(s * rng.standard_normal(k)),
            )
        )

    def _predictive_item(
        self, sample: Callable[[np.random.Generator, int], Array], distribution: str, basis: str
    ) -> None:
        """The throughput row drawn from `sample`; its tornado ends are the draws' P10/P90."""
        m = self.model
        r0 = m.point[m.rate_row]
        probe = sample(np.random.default_rng(PROBE_SEED), PROBE_DRAWS)
        lo, hi = (float(v) for v in np.percentile(probe, [10, 90]))
        self.items.append(
            Uncertain(
                row_id=m.rate_row,
                label=self._label(m.rate_row),
                unit=self._unit(m.rate_row),
                point=r0,
                low=min(lo, r0),
                high=max(hi, r0),
                basis=basis,
                distribution=distribution,
                draw=sample,
            )
        )

    def _fitted_throughput(self, n: int, counts: list[int]) -> None:
        from trncost.estimate.scaling import bootstrap, discrepancy
        from trncost.estimate.scaling_predictive import FitPredictive
        from trncost.estimate.scaling_prior import PRIOR

        m = self.model
        r0 = m.point[m.rate_row]
        fit = self.ev.scaling_fit()
        extra = PRIOR.bootstrap_discrepancy * discrepancy(fit)[0]
        pred = FitPredictive(fit, bootstrap(fit, extra=extra), n, self._run_cv(counts))
        # r0 is pred.point (evidence.py computes it with the same model): the draws' log-mean
        self._predictive_item(
            lambda rng, k: pred.draw(rng, k, r0),
            pred.describe(),
            f"scaling fit over {len(counts)} counts: bootstrap P10–P90",
        )
        unit = self._unit(m.rate_row)
        lo, hi = pred.model_range()
        weights = ", ".join(f"{k} {v:.0%}" for k, v in fit.weights.items())
        for row_id, label, (low, high), basis in (
            (
                "scaling:weights",
                f"scaling model form: throughput at {n} by linear, Amdahl or USL",
                (min(lo, r0), max(hi, r0)),
                f"lowest … highest of the three models at {n} (weights {weights})",
            ),
            (
                "scaling:lambda",
                f"scaling fit parameters: throughput at {n} (bootstrap P10–P90)",
                pred.parameter_range(r0),
                "parameter uncertainty of the fit (bootstrap P10–P90, no extra spread)",
            ),
        ):
            if row_id in self.rows and high > low:
                self.items.append(
                    Uncertain(
                        row_id=row_id,
                        label=label,
                        unit=unit,
                        point=r0,
                        low=low,
                        high=high,
                        basis=basis,
                        distribution="not drawn: part of the throughput draw",
                        draw=None,
                        sets=m.rate_row,
                    )
                )

    def _prior_throughput(self, n: int, counts: list[int]) -> None:
        from trncost.estimate.scaling_prior import PRIOR, distance_doublings, exponent_prior

        m = self.model
        r0 = m.point[m.rate_row]
        prior = exponent_prior([(c, self.ev.throughput(c).value) for c in counts], n)
        run_cv = self._run_cv(counts)
        # the prior's exponent spread, and at any count a run's own spread and the prior's
        # discrepancy (Student-t; its own constants, calibrated with the exponent spreads)
        spread = math.hypot(run_cv, PRIOR.prior_discrepancy_scale)
        dof = PRIOR.prior_discrepancy_dof
        log_ratio = math.log(n / prior.anchor)
        mu, sig, fixed = prior.mu, prior.sigma, prior.fixed

        def sample(rng: np.random.Generator, k: int) -> Array:
            if fixed is not None:
                alpha = np.full(k, fixed)
            else:
                alpha = 1 - np.exp(mu + sig * rng.standard_normal(k))
            x = prior.anchor_rate * np.exp(alpha * log_ratio)
            # × 1: the engine's value r0 is prior.point, this model's exp(E[ln X]) (mean α)
            x *= r0 / prior.point
            return x * np.exp(spread * rng.standard_t(dof, k))

        self._predictive_item(
            sample,
            prior.describe()
            + f" × Student-t spread {spread:.3g}, ν {dof:g} (run spread and the prior's "
            "discrepancy)",
            "published scaling prior (P10–P90)"
            if fixed is None
            else "the two measured counts' power law",
        )
        if fixed is None and "scaling:exponent" in self.rows:
            z = 1.2815515655446004
            a_lo, a_hi = prior.exponent_quantile(z), prior.exponent_quantile(-z)
            self.items.append(
                Uncertain(
                    row_id="scaling:exponent",
                    label=f"scaling exponent α from {prior.anchor} to {n} instances",
                    unit=None,
                    point=prior.mean_exponent,
                    low=a_lo,
                    high=a_hi,
                    basis="published scaling prior P10–P90 (linear α = 1 is its upper bound)",
                    distribution="not drawn: part of the throughput draw",
                    draw=None,
                    sets=m.rate_row,
                    set_low=r0 * prior.rate(a_lo) / prior.point,
                    set_high=r0 * prior.rate(a_hi) / prior.point,
                )
            )
        if distance_doublings(n, min(counts), max(counts)) > 0 and fixed is None:
            self.notes.append(
                f"{len(counts)} measured count(s): the throughput at {n} comes from the "
                "published scaling prior (linear scaling is its upper bound, never its centre)"
            )

    def _projected_throughput(self, n: int) -> None:
        """A projected candidate (estimate/projection.py): the source's own throughput draw at
        the matched count × exp(ln r), ln r ~ Normal(μ, s²) after the candidate's fit trials."""
        from trncost.estimate.projected import ProjectedEvidence

        ev = self.ev
        assert isinstance(ev, ProjectedEvidence)
        m = self.model
        r0 = m.point[m.rate_row]
        proj = ev.projection(n)
        src_inp = self.inp.model_copy(
            update={
                "candidate": ev.source.candidate.model_copy(
                    update={"instance_count": proj.source_count}
                )
            }
        )
        src = _SourceDraws(src_inp, ev.src, proj.source_row, proj.source_rate)
        src._throughput()
        drawn = next((u for u in src.items if u.row_id == proj.source_row), None)
        source_draw = drawn.draw if drawn is not None else None
        x_src, scale, mu, sd = proj.source_rate, proj.scale, proj.ratio.mu, proj.ratio.sd
        centre = r0 / (x_src * scale * math.exp(mu))  # 1: r0 is the projection's point

        def sample(rng: np.random.Generator, k: int) -> Array:
            x = source_draw(rng, k) if source_draw is not None else np.full(k, x_src)
            return x * (scale * centre) * np.exp(mu + sd * rng.standard_normal(k))

        src_type = ev.source.candidate.instance_type
        self.notes += [f"{src_type} (the projection's source): {note}" for note in src.notes]
        source_what = drawn.distribution if drawn is not None else "held at its value"
        self._predictive_item(
            sample,
            f"projected: the {ev.source.candidate.instance_type} throughput at "
            f"{proj.source_count} ({source_what}) × r, {proj.ratio.describe()}",
            "cross-chip projection (P10–P90): the source's spread and the published ratio's",
        )
        self.notes.append(
            f"the throughput is PROJECTED from {ev.source.candidate.instance_type} trials and a "
            "published per-chip ratio (no throughput trial of its own): the range is a planning "
            "range, wide by the ratio's spread across chip generations"
        )
        if "projection:ratio" in self.rows:
            lo, hi = proj.ratio.quantile(-Z90), proj.ratio.quantile(Z90)
            self.items.append(
                Uncertain(
                    row_id="projection:ratio",
                    label=self._label("projection:ratio"),
                    unit=None,
                    point=proj.ratio.point,
                    low=lo,
                    high=hi,
                    basis="the per-chip ratio's P10–P90 (cross-chip prior, updated with the "
                    "candidate's fit trials)",
                    distribution="not drawn: part of the throughput draw",
                    draw=None,
                    sets=m.rate_row,
                    set_low=r0 * lo / proj.ratio.point,
                    set_high=r0 * hi / proj.ratio.point,
                )
            )

    # -- failures --------------------------------------------------------------------------
    def _failure_rate(self) -> None:
        m = self.model
        row, lam0 = m.lam_row, m.point[m.lam_row]
        if row.startswith("assumption:"):
            self._pm20(row, lam0)
            self.basis.append(f"{row}: stated failure rate (±20 %)")
            return
        post = failure_posterior(
            self.ev.failure_trials,
            self.inp.candidate.instance_type,
            self.inp.assumptions.failure_prior,
        )
        if not post.has_evidence:
            self.notes.append("no measured instance-hours: the failure rate is held at its value")
            return
        self.basis.append(
            "failure:rate: "
            + (
                "the failure prior updated with the trials (posterior mean = the point)"
                if post.uses_prior
                else "the trials alone (Jeffreys; posterior mean = the point)"
            )
        )
        self.items.append(
            Uncertain(
                row_id=row,
                label=self._label(row),
                unit=self._unit(row),
                point=lam0,
                low=min(lam0, post.quantile(0.1)),
                high=max(lam0, post.quantile(0.9)),
                basis=f"posterior P10–P90 ({post.failures} failures in {post.hours:.4g} "
                "instance-h" + (", failure prior included)" if post.uses_prior else ")"),
                distribution=post.describe(),
                draw=_failure_sampler(post),
            )
        )
        prior = post.prior
        if prior is not None and "failure:prior" in self.rows:
            # the prior's own P10 / P90 (the fleet at those multipliers), each updated with the
            # same trials: how much the estimate rests on which fleet it is like
            ends = []
            for z in (-Z90, Z90):
                moved = prior.quantile(z)
                shifted = replace(prior, rate=moved)
                ends.append((moved, posterior_of(shifted, post.failures, post.hours).point))
            (lo_v, lo_set), (hi_v, hi_set) = ends
            self.items.append(
                Uncertain(
                    row_id="failure:prior",
                    label=self._label("failure:prior"),
                    unit=self._unit("failure:prior"),
                    point=prior.mean,
                    low=min(lo_v, prior.mean),
                    high=max(hi_v, prior.mean),
                    basis="the failure prior's own P10–P90, each updated with the trials",
                    distribution="not drawn: part of the failure-rate draw",
                    draw=None,
                    sets=row,
                    set_low=min(lo_set, lam0),
                    set_high=max(hi_set, lam0),
                )
            )


@dataclass
class _RatePoint:
    """The two fields of a vector model a source's throughput draw reads."""

    rate_row: str
    point: dict[str, float]


class _SourceDraws(EvidenceDraws):
    """The throughput draw of a projection's source: its own model (measured, fitted or the
    published prior) at the matched count, around its point `rate`."""

    def __init__(self, inp: EstimateInput, ev: Evidence, rate_row: str, rate: float) -> None:
        self.inp, self.ev = inp, ev
        self.model = cast(VectorModel, _RatePoint(rate_row, {rate_row: rate}))
        self.rows: Mapping[str, InputRow] = {}
        self.items, self.notes, self.basis = [], [], []
        self.doublings = 0.0


def _failure_sampler(post: FailurePosterior) -> Sampler:
    """Draws of λ [1/instance-hour] from the posterior: inverse-CDF sampling of the grid over
    u = log m (λ = λ₀·eᵘ), or Jeffreys' Gamma without a prior.

    Returns
    -------
    Sampler
        (rng, k) → k draws of λ [1/instance-hour]."""
    if post.prior is None:
        shape, rate = post.shape, post.rate
        return lambda rng, k: rng.gamma(shape, 1 / rate, k)
    cdf = np.asarray(post.cdf, dtype=float)
    grid = np.asarray(post.grid, dtype=float)
    base = post.base
    return lambda rng, k: base * np.exp(np.interp(rng.random(k), cdf, grid))
