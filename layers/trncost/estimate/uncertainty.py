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

import numpy as np

from trncost.errors import DomainError
from trncost.estimate.engine import estimate
from trncost.estimate.evidence import EXTRAPOLATION_LIMIT, MIN_FIT_COUNTS, Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.money import dec, usd
from trncost.estimate.scaling import relative_rms
from trncost.estimate.vector import Array, VectorModel, build
from trncost.model.analysis import (
    MoneyPercentiles,
    PendingQuantityRange,
    Percentiles,
    Range,
    VariedInput,
)
from trncost.model.estimate import Estimate, EstimateInput

ASSUMPTION_SPREAD = 0.2
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
    draw: Sampler | None  # None: tornado only (prices)
    is_price: bool = False


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
        self.widening = 1.0
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
        r0 = m.point[m.rate_row]
        if n in counts:
            cv, lo, hi = self._spread_at(n)
            where = f"at {n} instances"
        else:
            spreads = [self._spread_at(c) for c in counts]
            known = [(s_cv, low, high) for s_cv, low, high in spreads if s_cv is not None]
            cv = max((s[0] for s in known), default=None)
            lo = min((s[1] for s in known), default=1.0)
            hi = max((s[2] for s in known), default=1.0)
            if len(counts) >= MIN_FIT_COUNTS:
                rms = relative_rms(self.ev.scaling_fit())
                cv = math.hypot(cv or 0.0, rms) if (cv is not None or rms > 0) else None
                lo, hi = lo - rms, hi + rms
            if n > EXTRAPOLATION_LIMIT * max(counts):
                self.widening = n / (EXTRAPOLATION_LIMIT * max(counts))
                self.notes.append(
                    f"{n} instances is beyond {EXTRAPOLATION_LIMIT:g}× the largest measured count "
                    f"({max(counts)}): the throughput spread is widened ×{self.widening:.3g}"
                )
            where = f"from the measured counts {', '.join(map(str, counts))}"
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
        cv *= self.widening
        lo = max(1e-6, 1 - (1 - lo) * self.widening)
        hi = 1 + (hi - 1) * self.widening
        s = math.sqrt(math.log1p(cv * cv))
        self.items.append(
            Uncertain(
                row_id=m.rate_row,
                label=self._label(m.rate_row),
                unit=self._unit(m.rate_row),
                point=r0,
                low=r0 * lo,
                high=r0 * hi,
                basis="observed range of trial measurements"
                + (f" (widened ×{self.widening:.3g})" if self.widening > 1 else ""),
                distribution=f"log-normal, median {r0:.6g}, cv {cv:.3g}",
                draw=lambda rng, k: r0 * np.exp(s * rng.standard_normal(k)),
            )
        )

    # -- failures --------------------------------------------------------------------------
    def _failure_rate(self) -> None:
        m = self.model
        row, lam0 = m.lam_row, m.point[m.lam_row]
        if row.startswith("assumption:"):
            self._pm20(row, lam0)
            return
        failures = sum(t.reliability.failures for t in self.ev.trials)
        hours = sum(t.instance_hours for t in self.ev.trials)
        if hours <= 0:
            self.notes.append("no measured instance-hours: the failure rate is held at its value")
            return
        shape = failures + 0.5
        self.items.append(
            Uncertain(
                row_id=row,
                label=self._label(row),
                unit=self._unit(row),
                point=lam0,
                # the point (failures / hours) may lie outside P10–P90 (0 failures): keep it in
                low=min(lam0, gamma_quantile(shape, hours, 0.1)),
                high=max(lam0, gamma_quantile(shape, hours, 0.9)),
                basis=f"Gamma posterior P10–P90 ({failures} failures in {hours:.4g} instance-h)",
                distribution=f"Gamma(shape {failures} + 0.5, rate {hours:.6g} instance-h)",
                draw=lambda rng, k: rng.gamma(shape, 1 / hours, k),
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
    """Inverted-CDF percentiles: actual draws, never an interpolation with infinity."""
    n = a.size
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
    infeasible_share = float(1 - feasible.mean())
    notes = [*model.notes, *inputs.notes]
    if infeasible_share > 0:
        notes.append(
            f"{infeasible_share:.1%} of draws cannot finish (failures outpace checkpointed "
            "work): they count as infinitely expensive in the percentiles"
        )
    total_h = _order_stats(np.broadcast_to(out.total_h, (samples,)))
    held_h = _order_stats(np.broadcast_to(out.held_h, (samples,)))
    known_usd: MoneyPercentiles | None = None
    total_usd: MoneyPercentiles | None = None
    pending_ranges: list[PendingQuantityRange] = []
    if est.time is None:
        notes.append(f"the deterministic plan is infeasible: {est.infeasible_reason}")
    else:
        known_arr = np.where(feasible, np.broadcast_to(out.known, (samples,)), np.inf)
        known_usd = _money(_order_stats(known_arr))
        for key, unit in model.pending_units.items():
            q = np.where(feasible, np.broadcast_to(out.pending[key], (samples,)), np.inf)
            pct = _order_stats(q)
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
        infeasible_share=infeasible_share,
        widened_for_extrapolation=inputs.widening,
        varied=[
            VariedInput(row_id=u.row_id, label=u.label, point=u.point, distribution=u.distribution)
            for u in inputs.items
            if u.draw is not None
        ],
        notes=notes,
    )
