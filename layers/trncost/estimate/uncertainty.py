"""Uncertainty: a seeded, vectorised Monte Carlo over what the trials leave uncertain.

What varies, and how (each named by its input-table row id):

- throughput at n: multiplicative log-normal with median 1, r = r₀·exp(s·Z), s = √ln(1+cv²).
  cv is the larger of the between-trial spread (per-trial rates at that count) and the
  within-trial spread (steady samples). At a count no trial ran, cv is the largest measured
  one combined with the scaling fit's RMS relative residual, and beyond 2× the largest
  measured count it is widened by n / (2·n_max). One trial without ≥ 2 samples, or samples
  without variance: no throughput spread, said in `notes`.
- failure rate (measured): the Gamma posterior of a Poisson rate under Jeffreys' prior,
  λ ~ Gamma(shape = failures + ½, rate = instance-hours): with 0 failures in H hours it still
  allows ~0.45/H, where the point estimate says 0. An assumed rate: ±20 % uniform.
- restart seconds, usage rates per instance-hour: triangular(min, value, max) over the
  per-trial measurements when ≥ 2 trials measured them; one measurement: held, with a note.
- idle fraction and stated usage quantities (user assumptions): ±20 % uniform.

`spread` scales every draw's distance from its point value (0: every input at its value, the
check that the vector model reproduces the engine; 1: the evidence's spread). Percentiles are
order statistics (inverted CDF), so an infeasible draw (failures outpace the work) counts as an
infinitely expensive one and never averages into a finite figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from trncost.errors import DomainError
from trncost.estimate.engine import estimate
from trncost.estimate.evidence import EXTRAPOLATION_LIMIT, MIN_FIT_COUNTS, Evidence
from trncost.estimate.failure_prior import posterior as failure_posterior
from trncost.estimate.ledger import Ledger
from trncost.estimate.money import dec, usd
from trncost.estimate.vector import Array, VectorModel, build
from trncost.model.analysis import (
    MoneyPercentiles,
    PendingQuantityRange,
    Percentiles,
    Range,
    VariedInput,
)
from trncost.model.estimate import Estimate, EstimateInput

if TYPE_CHECKING:
    from trncost.estimate.scaling import FitPredictive

ASSUMPTION_SPREAD = 0.2
PROBE_SEED, PROBE_DRAWS = 7, 4000  # the fixed draws a drawn input's tornado ends come from
STATED_USAGE = (
    "assumption:transfer_out_gb",
    "assumption:transfer_inter_region_gb",
    "assumption:log_ingest_gb",
    "assumption:custom_metrics",
    "assumption:ebs_gb_per_instance",
    "assumption:data_preparation",
    "assumption:engineering_hours",
)
Sampler = Callable[[np.random.Generator, int], Array]


@dataclass(frozen=True)
class Uncertain:
    """One uncertain input: its value, its one-at-a-time range and its distribution."""

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
        return self.sets or self.row_id

    @property
    def target_low(self) -> float:
        return self.set_low if self.set_low is not None else self.low

    @property
    def target_high(self) -> float:
        return self.set_high if self.set_high is not None else self.high


def _z(p: float) -> float:
    # standard normal quantiles used for the Gamma P10/P90 (Wilson–Hilferty)
    return {0.1: -1.2815515655446004, 0.9: 1.2815515655446004}[p]


def gamma_quantile(shape: float, rate: float, p: float) -> float:
    """Wilson–Hilferty approximation of a Gamma quantile (no scipy), clamped at 0."""
    k = shape
    c = 1 - 1 / (9 * k) + _z(p) * math.sqrt(1 / (9 * k))
    return max(0.0, k * c**3 / rate)


def _cv(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    a = np.asarray(values, dtype=float)
    return float(np.std(a, ddof=1) / np.mean(a))


class Inputs:
    """The uncertain inputs of one estimate, read from its evidence and input rows."""

    def __init__(self, inp: EstimateInput, est: Estimate, model: VectorModel) -> None:
        self.inp, self.est, self.model = inp, est, model
        self.rows = {r.id: r for r in est.inputs}
        self.notes: list[str] = []
        self.basis: list[str] = []
        self.predictive: FitPredictive | None = None
        self.doublings = 0.0
        self.ev = Evidence(inp.workload, inp.candidate, inp.trials, Ledger(inp.prices))
        self.items: list[Uncertain] = []
        self._throughput()
        self._failure_rate()
        self._restart()
        self._idle()
        self._usage()
        self._prices()

    def _label(self, row_id: str) -> str:
        row = self.rows.get(row_id)
        return row.label if row is not None else row_id

    def _unit(self, row_id: str) -> str | None:
        row = self.rows.get(row_id)
        return row.unit if row is not None else None

    # -- throughput ------------------------------------------------------------------------
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

        self.doublings = distance_doublings(n, min(counts), max(counts))
        if n in counts:
            self._measured_throughput(n)
        elif len(counts) >= MIN_FIT_COUNTS:
            self._fitted_throughput(n, counts)
        else:
            self._prior_throughput(n, counts)
        if n > EXTRAPOLATION_LIMIT * max(counts):
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
        from trncost.estimate.scaling import FitPredictive, bootstrap

        m = self.model
        r0 = m.point[m.rate_row]
        fit = self.ev.scaling_fit()
        pred = FitPredictive(fit, bootstrap(fit), n, self._run_cv(counts))
        self.predictive = pred
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
                        row_id=row_id, label=label, unit=unit, point=r0, low=low, high=high,
                        basis=basis, distribution="not drawn: part of the throughput draw",
                        draw=None, sets=m.rate_row,
                    )
                )

    def _prior_throughput(self, n: int, counts: list[int]) -> None:
        from trncost.estimate.scaling_prior import PRIOR, distance_doublings, exponent_prior

        m = self.model
        r0 = m.point[m.rate_row]
        prior = exponent_prior([(c, self.ev.throughput(c).value) for c in counts], n)
        run_cv = self._run_cv(counts)
        # the prior's exponent spread, and at any count a run's own spread and the model floor
        spread = math.hypot(run_cv, PRIOR.model_floor)
        log_ratio = math.log(n / prior.anchor)
        mu, sig, fixed = prior.mu, prior.sigma, prior.fixed

        def sample(rng: np.random.Generator, k: int) -> Array:
            if fixed is not None:
                alpha = np.full(k, fixed)
            else:
                alpha = 1 - np.exp(mu + sig * rng.standard_normal(k))
            x = prior.anchor_rate * np.exp(alpha * log_ratio)
            x *= r0 / prior.point  # centred on the engine's value (the prior median)
            return x * np.exp(spread * rng.standard_normal(k))

        self._predictive_item(
            sample,
            prior.describe() + f" × log-normal spread {spread:.3g} (run spread and model floor)",
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
                    point=prior.median_exponent,
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

    # -- failures --------------------------------------------------------------------------
    def _failure_rate(self) -> None:
        m = self.model
        row, lam0 = m.lam_row, m.point[m.lam_row]
        if row.startswith("assumption:"):
            self._pm20(row, lam0)
            self.basis.append(f"{row}: stated failure rate (±20 %)")
            return
        post = failure_posterior(
            self.ev.trials, self.inp.candidate.instance_type, self.inp.assumptions.failure_prior
        )
        if post.rate <= 0:
            self.notes.append("no measured instance-hours: the failure rate is held at its value")
            return
        shape, rate = post.shape, post.rate
        self.basis.append(
            "failure:rate: " + ("failure prior updated with the trials" if post.uses_prior
                                else "the trials alone (Jeffreys)")
        )
        self.items.append(
            Uncertain(
                row_id=row,
                label=self._label(row),
                unit=self._unit(row),
                point=lam0,
                # the point (failures / hours) may lie outside P10–P90 (0 failures): keep it in
                low=min(lam0, gamma_quantile(shape, rate, 0.1)),
                high=max(lam0, gamma_quantile(shape, rate, 0.9)),
                basis=f"Gamma posterior P10–P90 ({post.failures} failures in "
                f"{post.hours:.4g} instance-h"
                + (", failure prior included)" if post.uses_prior else ")"),
                distribution=post.describe(),
                draw=lambda rng, k: rng.gamma(shape, 1 / rate, k),
            )
        )
        prior = post.prior
        if prior is not None and post.uses_prior and "failure:prior" in self.rows:
            # the prior's own P10 / P90 (its mean scaled), each updated with the same trials
            ends = []
            for p in (0.1, 0.9):
                prior_mean = gamma_quantile(prior.shape, prior.rate, p)
                pseudo = prior.shape / prior_mean if prior_mean > 0 else math.inf
                ends.append((prior_mean, (prior.shape + post.failures) / (pseudo + post.hours)))
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

    def _restart(self) -> None:
        m = self.model
        if m.restart_row is None:
            return
        row, point = m.restart_row, m.point[m.restart_row]
        if row.startswith("assumption:"):
            self._pm20(row, point)
            return
        per_trial = [
            t.wall.restart_s / t.reliability.failures
            for t in self.ev.trials
            if t.reliability.failures > 0 and t.wall.restart_s is not None
        ]
        self._observed(row, point, per_trial, "restart time")

    def _idle(self) -> None:
        m = self.model
        if m.idle_row is not None:
            self._pm20(m.idle_row, m.point[m.idle_row], upper=0.99)

    # -- usage -----------------------------------------------------------------------------
    def _usage(self) -> None:
        read = {r for line in self.model.lines for r in line.inputs}
        for row in sorted(read):
            point = self.model.point.get(row)
            if point is None:
                continue
            if row.startswith("usage:") and row.endswith("_per_instance_hour"):
                field_name = row.removeprefix("usage:").removesuffix("_per_instance_hour")
                per_trial = [
                    getattr(t.usage, field_name) / t.instance_hours
                    for t in self.ev.trials
                    if getattr(t.usage, field_name) is not None and t.instance_hours > 0
                ]
                self._observed(row, point, per_trial, self._label(row))
            elif row in STATED_USAGE or row == "assumption:engineering_hourly_usd":
                self._pm20(row, point, sample=row != "assumption:engineering_hourly_usd")

    def _prices(self) -> None:
        seen: set[str] = set()
        for line in self.model.lines:
            if line.price_row is None or line.price_row in seen or line.tiers is None:
                continue
            seen.add(line.price_row)
            self.items.append(
                Uncertain(
                    row_id=line.price_row,
                    label=self._label(line.price_row),
                    unit="× price",
                    point=1.0,
                    low=1 - ASSUMPTION_SPREAD,
                    high=1 + ASSUMPTION_SPREAD,
                    basis="±20 % (price)",
                    distribution="not drawn: official prices are fixed for a snapshot",
                    draw=None,
                    is_price=True,
                )
            )

    # -- helpers ---------------------------------------------------------------------------
    def _pm20(
        self, row: str, point: float, upper: float | None = None, sample: bool = True
    ) -> None:
        if point == 0:
            return
        lo, hi = point * (1 - ASSUMPTION_SPREAD), point * (1 + ASSUMPTION_SPREAD)
        if upper is not None:
            hi = min(hi, upper)
        self.items.append(
            Uncertain(
                row_id=row,
                label=self._label(row),
                unit=self._unit(row),
                point=point,
                low=lo,
                high=hi,
                basis="±20 % (user assumption)",
                distribution=f"uniform [{lo:.6g}, {hi:.6g}]",
                draw=(lambda rng, k: rng.uniform(lo, hi, k)) if sample else None,
            )
        )

    def _observed(self, row: str, point: float, values: list[float], what: str) -> None:
        if len(values) < 2:
            self.notes.append(
                f"{what}: {len(values)} trial measurement(s), no observed range: held at its value"
            )
            return
        lo, hi = min(min(values), point), max(max(values), point)
        if hi == lo:
            self.notes.append(f"{what}: every trial measured the same value: no spread")
            return
        self.items.append(
            Uncertain(
                row_id=row,
                label=self._label(row),
                unit=self._unit(row),
                point=point,
                low=lo,
                high=hi,
                basis=f"observed range of {len(values)} trial measurements",
                distribution=f"triangular({lo:.6g}, {point:.6g}, {hi:.6g})",
                draw=lambda rng, k: rng.triangular(lo, point, hi, k),
            )
        )


# -- Monte Carlo ---------------------------------------------------------------------------
def _order_stats(a: Array, ps: Sequence[float] = (0.1, 0.5, 0.9)) -> list[float]:
    """Inverted-CDF percentiles: actual draws (nan for each when there is no draw)."""
    n = a.size
    if n == 0:
        return [math.nan for _ in ps]
    idx = [max(0, math.ceil(p * n) - 1) for p in ps]
    part = np.partition(a, idx)
    return [float(part[i]) for i in idx]


def _money(values: list[float]) -> MoneyPercentiles:
    as_usd = [None if not math.isfinite(v) else usd(dec(round(v, 6))) for v in values]
    return MoneyPercentiles(p10=as_usd[0], p50=as_usd[1], p90=as_usd[2])


def _pct(values: list[float], unit: str) -> Percentiles:
    v = [x if math.isfinite(x) else None for x in values]
    return Percentiles(p10=v[0], p50=v[1], p90=v[2], unit=unit)


Prepared = tuple[Estimate, VectorModel, "Inputs"]


def prepare(inp: EstimateInput, est: Estimate | None = None) -> Prepared:
    """The estimate, its vector model and its uncertain inputs (shared by range and tornado)."""
    est = est if est is not None else estimate(inp)
    model = build(inp, est)
    return est, model, Inputs(inp, est, model)


def draw_all(
    inputs: Inputs, rng: np.random.Generator, samples: int, spread: float
) -> dict[str, Array]:
    """One draw of `samples` values per sampled input, scaled toward its value by `spread`."""
    values: dict[str, Array] = {}
    for u in inputs.items:
        if u.draw is None:
            continue
        x = u.draw(rng, samples)
        if spread != 1.0:
            x = u.point + spread * (x - u.point)
        values[u.row_id] = x
    return values


def monte_carlo(
    inp: EstimateInput,
    *,
    samples: int = 100_000,
    seed: int = 0,
    spread: float = 1.0,
    est: Estimate | None = None,
    prepared: Prepared | None = None,
) -> Range:
    """P10/P50/P90 of total cost and time to target. Same seed, same answer.

    Raises MissingEvidence (no usable trial) like `estimate`, DomainError for a bad request.
    """
    if samples < 100 or samples > 2_000_000:
        raise DomainError(f"samples must be between 100 and 2,000,000, got {samples}")
    if not 0.0 <= spread <= 1.0:
        raise DomainError(f"spread must be between 0 and 1, got {spread}")
    est, model, inputs = prepared if prepared is not None else prepare(inp, est)
    rng = np.random.default_rng(seed)
    values = draw_all(inputs, rng, samples, spread)
    out = (
        model.evaluate(values)
        if values
        else model.evaluate({model.rate_row: np.full(samples, model.point[model.rate_row])})
    )
    feasible = np.broadcast_to(out.feasible, (samples,))
    p_infeasible = float(1 - feasible.mean())
    all_ok = p_infeasible == 0

    def finishing(a: Array) -> Array:
        full = np.broadcast_to(a, (samples,))
        return full if all_ok else full[feasible]

    notes = [*model.notes, *inputs.notes]
    if p_infeasible > 0:
        notes.append(
            f"{p_infeasible:.1%} of draws cannot finish (failures outpace checkpointed work): "
            "the percentiles are over the draws that finish; p_infeasible says how many did not"
        )
    if p_infeasible == 1:
        notes.append("no draw finishes: there are no percentiles, only p_infeasible = 1")
    total_h = _order_stats(finishing(out.total_h))
    held_h = _order_stats(finishing(out.held_h))
    known_usd: MoneyPercentiles | None = None
    total_usd: MoneyPercentiles | None = None
    pending_ranges: list[PendingQuantityRange] = []
    if est.time is None:
        notes.append(
            f"the deterministic plan is infeasible ({est.infeasible_reason}): it has no cost "
            "lines, so the range gives the time of the draws that finish, not their cost"
        )
    else:
        known_usd = _money(_order_stats(finishing(out.known)))
        for key, unit in model.pending_units.items():
            pct = _order_stats(finishing(out.pending[key]))
            pending_ranges.append(
                PendingQuantityRange(
                    price_key=key,
                    unit=unit,
                    quantity=_pct(pct, unit),
                )
            )
        if model.pending_units:
            notes.append(
                "a price is PENDING: the known part and each pending quantity have their own "
                "percentiles (they move together; their sum is not a percentile of the total)"
            )
        else:
            total_usd = known_usd
    return Range(
        samples=samples,
        seed=seed,
        spread=spread,
        total_usd=total_usd,
        known_usd=known_usd,
        pending=pending_ranges,
        time_to_target_h=_pct(total_h, "h"),
        held_h=_pct(held_h, "h"),
        p_infeasible=p_infeasible,
        extrapolation_doublings=inputs.doublings,
        basis=inputs.basis,
        varied=[
            VariedInput(row_id=u.row_id, label=u.label, point=u.point, distribution=u.distribution)
            for u in inputs.items
            if u.draw is not None
        ],
        notes=notes,
    )
