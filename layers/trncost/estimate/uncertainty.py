"""Uncertainty: a seeded, vectorised Monte Carlo over what the trials leave uncertain.

What varies, and how (each named by its input-table row id):

- throughput at n and the failure rate: see estimate/draws.py (the fit's bootstrap and model
  averaging, the published scaling prior below 3 counts, the failure prior updated with the
  trials). An assumed failure rate: ±20 % uniform.
- restart seconds, usage rates per instance-hour: triangular(min, value, max) over the
  per-trial measurements when ≥ 2 trials measured them; one measurement: held, with a note.
- idle fraction and stated usage quantities (user assumptions): ±20 % uniform.

`spread` scales every draw's distance from its point value (0: every input at its value, the
check that the vector model reproduces the engine; 1: the evidence's spread). Percentiles are
order statistics (inverted CDF) over the draws that finish; the share that cannot (failures
outpace the checkpointed work) is `p_infeasible`, never hidden and never averaged in.

References
----------
DESIGN.md, "Analysis on top" (a seeded Monte Carlo over trial variance, failure rate and usage
gives P10/P50/P90) and principles 9 and 10; docs/estimates.md, "How ranges are built".
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from trncost.errors import DomainError
from trncost.estimate.draws import EvidenceDraws, Sampler, Uncertain, gamma_quantile
from trncost.estimate.engine import estimate
from trncost.estimate.evidence import Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.money import dec, usd
from trncost.estimate.vector import Array, BoolArray, Outcome, VectorModel, build
from trncost.model.analysis import (
    MoneyPercentiles,
    PendingQuantityRange,
    Percentiles,
    Range,
    VariedInput,
)
from trncost.model.estimate import Estimate, EstimateInput

__all__ = [
    "Inputs",
    "Sampler",
    "Simulation",
    "Uncertain",
    "draw_all",
    "gamma_quantile",
    "monte_carlo",
    "range_of",
    "simulate",
]

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


class Inputs(EvidenceDraws):
    """The uncertain inputs of one estimate, read from its evidence and input rows (the
    module docstring says how each varies): `items`, and the range's `notes` and `basis`.

    Parameters
    ----------
    inp : EstimateInput
        The request the estimate was made from.
    est : Estimate
        Its estimate: the input rows give each input's value.
    model : VectorModel
        The estimate's vector model (which rows it reads).
    """

    def __init__(self, inp: EstimateInput, est: Estimate, model: VectorModel) -> None:
        self.inp, self.est, self.model = inp, est, model
        self.rows = {r.id: r for r in est.inputs}
        self.notes: list[str] = []
        self.basis: list[str] = []
        self.doublings = 0.0
        self.ev = Evidence.of(inp, Ledger(inp.prices))
        self.items: list[Uncertain] = []
        self._throughput()
        self._failure_rate()
        self._restart()
        self._idle()
        self._usage()
        self._prices()

    # -- restarts, idle, usage, prices -------------------------------------------------------
    def _restart(self) -> None:
        m = self.model
        if m.restart_row is None:
            return
        row, point = m.restart_row, m.point[m.restart_row]
        if row.startswith("assumption:"):
            self._pm20(row, point)
            return
        per_trial = [
            t.wall.restart_s / (t.reliability.failures or 1)
            for t in self.ev.trials
            if (t.reliability.failures or 0) > 0 and t.wall.restart_s is not None
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
    work = np.array(a, dtype=np.float64)  # a copy: partitioned in place
    found: dict[int, float] = {}
    _select(work, 0, sorted(set(idx)), found)
    return [found[i] for i in idx]


def _select(a: Array, offset: int, ks: list[int], found: dict[int, float]) -> None:
    """The order statistics `ks` (ascending, offset into `a`): one single-k partition at the
    middle k, then each side on its own part — numpy's single-k partition is several times
    faster than its multi-k one (1.8 ms → 0.2 ms for three on 100,000 draws)."""
    if not ks:
        return
    m = len(ks) // 2
    k = ks[m] - offset
    a.partition(k)
    found[ks[m]] = float(a[k])
    _select(a[:k], offset, ks[:m], found)
    _select(a[k + 1 :], ks[m] + 1, ks[m + 1 :], found)


def _money(values: list[float]) -> MoneyPercentiles:
    as_usd = [None if not math.isfinite(v) else usd(dec(round(v, 6))) for v in values]
    return MoneyPercentiles(p10=as_usd[0], p50=as_usd[1], p90=as_usd[2])


def _pct(values: list[float], unit: str) -> Percentiles:
    v = [x if math.isfinite(x) else None for x in values]
    return Percentiles(p10=v[0], p50=v[1], p90=v[2], unit=unit)


Prepared = tuple[Estimate, VectorModel, "Inputs"]


def prepare(inp: EstimateInput, est: Estimate | None = None) -> Prepared:
    """The estimate of `inp` (made unless `est` is given), its vector model and its
    uncertain inputs, shared by the range and the tornado.

    Returns
    -------
    tuple[Estimate, VectorModel, Inputs]
    """
    est = est if est is not None else estimate(inp, check_price_overrides=False)
    model = build(inp, est)
    return est, model, Inputs(inp, est, model)


def stream_seed(seed: int, key: str) -> list[int]:
    """The seed of one input's own random stream (numpy SeedSequence entropy), so an input's
    draws do not depend on which other inputs exist.

    Parameters
    ----------
    seed : int
        The Monte Carlo's seed [unitless].
    key : str
        The input's stream key (`stream_key`).

    Returns
    -------
    list[int]
        `seed` and four 32-bit words of the key's SHA-256 [unitless].
    """
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return [seed, *(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))]


def stream_key(inputs: Inputs, row_id: str) -> str:
    """Which random stream an input draws from. Paired draws (common random numbers): a stated
    assumption the candidates share is one quantity, so every candidate's draw i of it uses the
    same random numbers; whatever rests on a candidate's own trials or its own assumptions (its
    throughput, failure rate, restarts, usage) is its own unknown: a stream of its own, keyed
    by its instance type, platform, count and region.

    Parameters
    ----------
    inputs : Inputs
        The candidate's uncertain inputs (its estimate input says where each assumption came
        from).
    row_id : str
        The input-table row drawn.

    Returns
    -------
    str
        The stream's key [unitless].
    """
    key = row_id.removeprefix("assumption:")
    shared = row_id.startswith("assumption:") and inputs.inp.assumption_sources.get(key) != (
        "candidate"
    )
    if shared:
        return f"shared/{row_id}"
    c = inputs.inp.candidate
    return f"{c.instance_type}/{c.platform}/{c.instance_count}/{c.region}/{row_id}"


def draw_all(inputs: Inputs, seed: int, samples: int, spread: float) -> dict[str, Array]:
    """One draw of `samples` values per sampled input, each from its own stream
    (`stream_key`), scaled toward its value by `spread`::

        x = point + spread × (draw − point)

    Parameters
    ----------
    inputs : Inputs
        The uncertain inputs.
    seed : int
        The Monte Carlo's seed [unitless].
    samples : int
        Draws per input [draws].
    spread : float
        1 = the evidence's spread, 0 = every input at its value [unitless].

    Returns
    -------
    dict[str, Array]
        Row id → its `samples` draws [as stated] (each in its own row's unit).
    """
    values: dict[str, Array] = {}
    for u in inputs.items:
        if u.draw is None:
            continue
        rng = np.random.default_rng(stream_seed(seed, stream_key(inputs, u.row_id)))
        x = u.draw(rng, samples)
        if spread != 1.0:
            x = u.point + spread * (x - u.point)
        values[u.row_id] = x
    return values


@dataclass(frozen=True)
class Simulation:
    """Every draw of one estimate's Monte Carlo: the vector model's outcome per draw and which
    draws finish (the range's percentiles and the paired ranking both read it)."""

    outcome: Outcome
    feasible: BoolArray
    samples: int
    p_infeasible: float

    def totals(self) -> Array:
        """Total cost per draw [USD] (known part; +inf where the plan cannot finish)."""
        known = np.broadcast_to(self.outcome.known, (self.samples,))
        return np.where(self.feasible, known, np.inf)


def simulate(
    inp: EstimateInput,
    *,
    samples: int,
    seed: int,
    spread: float = 1.0,
    est: Estimate | None = None,
    prepared: Prepared | None = None,
) -> tuple[Prepared, Simulation]:
    """Draw every uncertain input (`draw_all`) and evaluate the vector model on the draws.

    Parameters
    ----------
    inp : EstimateInput
        The estimate's inputs.
    samples : int
        Draws [draws], 100 to 2,000,000.
    seed : int
        The seed [unitless]: same seed, same draws.
    spread : float
        1 = the evidence's spread, 0 = every input at its value [unitless].
    est : Estimate or None
        Its estimate, when already made.
    prepared : Prepared or None
        Its estimate, vector model and inputs, when already made.

    Returns
    -------
    tuple
        (the prepared estimate, model and inputs; the Simulation of `samples` draws).
    """
    if samples < 100 or samples > 2_000_000:
        raise DomainError(f"samples must be between 100 and 2,000,000, got {samples}")
    if not 0.0 <= spread <= 1.0:
        raise DomainError(f"spread must be between 0 and 1, got {spread}")
    prepared = prepared if prepared is not None else prepare(inp, est)
    _, model, inputs = prepared
    values = draw_all(inputs, seed, samples, spread)
    out = (
        model.evaluate(values)
        if values
        else model.evaluate({model.rate_row: np.full(samples, model.point[model.rate_row])})
    )
    feasible = np.broadcast_to(out.feasible, (samples,))
    return prepared, Simulation(out, feasible, samples, float(1 - feasible.mean()))


def monte_carlo(
    inp: EstimateInput,
    *,
    samples: int = 100_000,
    seed: int = 0,
    spread: float = 1.0,
    est: Estimate | None = None,
    prepared: Prepared | None = None,
) -> Range:
    """P10/P50/P90 of total cost and time to target for `inp`. Same seed, same answer.

    Each draw evaluates the estimate's own time and cost formulas (estimate/vector.py) at
    the drawn inputs; the percentiles are order statistics (inverted CDF: the ⌈p·N⌉-th
    smallest) over the N draws that finish.

    Parameters
    ----------
    samples : int
        Draws [draws], 100 to 2,000,000.
    seed : int
        The generator's seed [unitless].
    spread : float
        Scales every draw's distance from its value, 0 to 1 [unitless] (0 reproduces the
        estimate).
    est : Estimate or None
        `inp`'s estimate, when already made.
    prepared : Prepared or None
        The estimate, vector model and inputs (`prepare`), when already built.

    Returns
    -------
    Range
        P10/P50/P90 of the total [USD] (of the known part [USD] and of each pending quantity
        [unit of the price] while a price is PENDING), of the time to target and the held
        time [h]; `p_infeasible` [unitless], the share of draws that cannot finish;
        `extrapolation_doublings` [doublings]; the varied inputs, the basis and notes.

    Raises
    ------
    MissingEvidence
        No usable trial (as `estimate`).
    DomainError
        `samples` or `spread` out of range, or a bad request.

    References
    ----------
    DESIGN.md, "Analysis on top" and principles 9 and 10; docs/estimates.md, "How ranges are
    built" (calibrated by `make calibrate` against MLPerf Training and HPC results).
    """
    prepared, sim = simulate(
        inp, samples=samples, seed=seed, spread=spread, est=est, prepared=prepared
    )
    return range_of(prepared, sim, seed=seed, spread=spread)


def range_of(prepared: Prepared, sim: Simulation, *, seed: int, spread: float = 1.0) -> Range:
    """The Range of a Simulation: P10/P50/P90 over the draws that finish, `p_infeasible`.

    Parameters
    ----------
    prepared : Prepared
        The estimate, its vector model and its uncertain inputs.
    sim : Simulation
        Its draws.
    seed : int
        The seed the draws came from [unitless] (recorded in the Range).
    spread : float
        The spread they were drawn at [unitless].

    Returns
    -------
    Range
        Percentiles of total cost [USD] (or the known part and each PENDING quantity), time to
        target and held time [h].
    """
    est, model, inputs = prepared
    samples, out, feasible, p_infeasible = sim.samples, sim.outcome, sim.feasible, sim.p_infeasible
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
