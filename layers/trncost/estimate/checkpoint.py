"""Checkpoint interval advice: the interval that minimises the expected cost of one completed
target under the failure posterior, with the measured save time and restart time — a what-if
beside the interval the estimate assumes, never a change to it.

The estimate's own time model (estimate/timing.py) at interval τ::

    T_base(τ) = setup + compile + warm-up + steady + floor(steady / τ)·δ + evaluation
    T(τ)      = T_base(τ) / (1 − λ·n·(R + setup + τ/2))
    held(τ)   = T(τ) / (1 − idle fraction)

with δ the measured save seconds, R the restart seconds, λ failures per instance-hour and n the
instances. Checkpointing more often costs saves (δ/τ of the time); less often, lost work (τ/2
per failure). Every cost line grows with the held time, so the advice is

    τ* = argmin over τ of E_λ[total(τ)]     (E_λ[held(τ)] while a price is PENDING)

the expectation over the failure rate's posterior draws (estimate/failure_prior.py), every other
input at its value: one model with the estimate and its range. τ* is found on a log grid of
intervals from 2δ (at least a minute) to the steady time, refined around the best grid point
(with Young's and Daly's intervals and each candidate to the whole minute competing: the saves
are whole, so the cost steps).
Beside it, the first-order optima of the literature at the posterior mean rate, with the job's
mean time between failures M = 1 / (λ̄·n):

    Young (1974):  τ_Y = √(2·δ·M)
    Daly (2006):   τ_D = √(2·δ·M)·[1 + ⅓·√(δ/(2M)) + (1/9)·(δ/(2M))] − δ   (δ < 2M; else M)

The saving is E[total(τ_now)] − E[total(τ*)] over the same draws (paired), with the share of
draws in which τ* costs less; the cost is flat near its minimum (being 2× off costs little), and
the advice says how flat.

References
----------
J. W. Young, "A first order approximation to the optimum checkpoint interval", Commun. ACM
17(9):530–531 (1974), doi:10.1145/361147.361115; J. T. Daly, "A higher order estimate of the
optimum checkpoint interval for restart dumps", Future Generation Computer Systems
22(3):303–312 (2006), doi:10.1016/j.future.2004.11.016; DESIGN.md, "The cost model" (each failure
costs a restart plus half a checkpoint interval of lost work) and principle 10.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from trncost.estimate.money import dec, usd
from trncost.estimate.uncertainty import Prepared, stream_seed
from trncost.estimate.vector import Array, VectorModel
from trncost.model.analysis import CheckpointAdvice, IntervalWhatIf

DRAWS = 2000  # failure-rate draws the expectation is taken over
GRID = 48  # log-spaced intervals searched, then refined around the best
MIN_INTERVAL_S = 60.0
FLAT = 0.01  # the advice says how far the interval may move for ≤ 1 % more expected cost
METHOD = (
    "τ* minimises the expected total per target (expected held hours while a price is PENDING) "
    "of the estimate's own time model over the failure rate's posterior draws "
    f"({DRAWS:,}, every other input at its value): a log grid of {GRID} intervals from 2×save "
    "(≥ 1 min) to the steady time, refined around the best; Young's and Daly's first-order "
    "optima at the posterior mean rate beside it"
)


def young_s(save_s: float, mtbf_s: float) -> float:
    """Young's first-order optimum interval, √(2·δ·M).

    Parameters
    ----------
    save_s : float
        δ, seconds per checkpoint save [s].
    mtbf_s : float
        M, the job's mean time between failures [s].

    Returns
    -------
    float
        τ_Y [s].

    References
    ----------
    Young (1974).
    """
    return math.sqrt(2 * save_s * mtbf_s)


def daly_s(save_s: float, mtbf_s: float) -> float:
    """Daly's higher-order optimum interval::

        τ_D = √(2δM)·[1 + ⅓·√(δ/(2M)) + (1/9)·(δ/(2M))] − δ   for δ < 2M, else M

    Parameters
    ----------
    save_s : float
        δ, seconds per checkpoint save [s].
    mtbf_s : float
        M, the job's mean time between failures [s].

    Returns
    -------
    float
        τ_D [s].

    References
    ----------
    Daly (2006), eq. (37).
    """
    if save_s >= 2 * mtbf_s:
        return mtbf_s
    x = save_s / (2 * mtbf_s)
    return math.sqrt(2 * save_s * mtbf_s) * (1 + math.sqrt(x) / 3 + x / 9) - save_s


@dataclass(frozen=True)
class _At:
    """The model's expectation at one interval over the failure-rate draws: the means over the
    draws that finish, the share that cannot, and the per-draw objective (+inf: cannot)."""

    interval: float | None
    held: float | None  # [h]
    total: float | None  # [USD]; None while a price is PENDING
    p_infeasible: float
    objective: Array

    @property
    def score(self) -> tuple[float, float]:
        """(share that cannot finish, mean objective of those that do): fewer plans that
        cannot finish first, then the least expected cost."""
        done = self.objective[np.isfinite(self.objective)]
        return round(self.p_infeasible, 9), float(done.mean()) if done.size else math.inf


def _at(model: VectorModel, lam: Array, interval: float | None) -> _At:
    at = dataclasses.replace(model, interval=interval)
    out = at.evaluate({model.lam_row: lam})
    feasible = np.broadcast_to(out.feasible, lam.shape)
    held = np.where(feasible, np.broadcast_to(out.held_h, lam.shape), np.inf)
    known = np.where(feasible, np.broadcast_to(out.known, lam.shape), np.inf)
    priced = not model.pending_units
    objective = known if priced else held

    def mean(a: Array) -> float | None:
        done = a[np.isfinite(a)]
        return float(done.mean()) if done.size else None

    return _At(
        interval,
        mean(held),
        mean(known) if priced else None,
        float(np.mean(~feasible)),
        objective,
    )


def checkpoint_advice(prepared: Prepared, *, seed: int = 0) -> CheckpointAdvice | None:
    """The interval that minimises the expected cost per target (module docstring), with the
    what-if against the interval the estimate uses.

    Parameters
    ----------
    prepared : Prepared
        The estimate, its vector model and its uncertain inputs (estimate/uncertainty.py).
    seed : int
        The failure-rate draws' seed [unitless]: same seed, same advice.

    Returns
    -------
    CheckpointAdvice or None
        The advised interval τ* [s], Young's and Daly's [s], the interval now [s] (assumed or
        as the trials ran; None: no checkpoints), expected held hours [h] and totals [USD]
        (None while a price is PENDING) at each, the saving [h, USD] and the share of draws in
        which τ* costs less [unitless], the flat band [s]. None for an infeasible estimate;
        an advice without a τ* (and a note) when no save time was measured.

    References
    ----------
    Young (1974); Daly (2006); DESIGN.md, "The cost model".
    """
    est, model, inputs = prepared
    if est.time is None:
        return None
    p = model.point
    n = est.candidate.instance_count
    lam_point = p.get(model.lam_row, 0.0)
    rows = {r.id: r for r in est.inputs}
    now_source = (
        "assumed"
        if "assumption:checkpoint_interval_s" in rows
        else ("measured" if model.interval else "none")
    )
    restart = p.get(model.restart_row, 0.0) if model.restart_row else 0.0
    base = dict(
        current_interval_s=model.interval,
        current_source=now_source,
        save_s=model.save,
        restart_s=restart,
        failure_rate=lam_point,
        instances=n,
        mtbf_h=(1 / (lam_point * n)) if lam_point > 0 else None,
        method=METHOD,
    )
    if model.save is None or model.save <= 0:
        return CheckpointAdvice(
            **base,
            notes=["no trial measured a checkpoint save: no interval can be advised (a save "
                   "that costs nothing would be taken every second)"],
        )  # fmt: skip
    if lam_point <= 0:
        return CheckpointAdvice(
            **base, notes=["no failures expected: any interval loses nothing to failures"]
        )
    lam_item = next((u for u in inputs.items if u.row_id == model.lam_row), None)
    if lam_item is not None and lam_item.draw is not None:
        rng = np.random.default_rng(stream_seed(seed, f"checkpoint/{model.lam_row}"))
        lam = np.asarray(lam_item.draw(rng, DRAWS), dtype=float)
    else:
        lam = np.full(DRAWS, lam_point)
    save = model.save
    steady_s = est.time.steady_h * 3600
    lo = max(2 * save, MIN_INTERVAL_S)
    hi = max(steady_s, lo * 2)
    grid = [_at(model, lam, float(t)) for t in np.geomspace(lo, hi, GRID)]
    k = min(range(GRID), key=lambda i: grid[i].score)
    mtbf_s = 3600 / (lam_point * n)
    y, d = young_s(save, mtbf_s), daly_s(save, mtbf_s)
    # the saves are whole (floor(steady/τ)): the cost steps, so the refined grid, Young's and
    # Daly's intervals and each of them to the whole minute all compete
    left = grid[max(k - 1, 0)].interval or lo
    right = grid[min(k + 1, GRID - 1)].interval or hi
    fine = [_at(model, lam, float(t)) for t in np.geomspace(left, right, 25)]
    tried = [f.interval for f in fine if f.interval] + [t for t in (y, d) if lo <= t <= hi]
    tried += [max(lo, round(t / 60) * 60) for t in tried if t >= 120]
    scored = sorted(
        (((a := _at(model, lam, t)).score, t, a) for t in tried), key=lambda x: (x[0], x[1])
    )
    (p_least, least), _, _ = scored[0]
    # a whole minute within 10⁻⁵ of the least expected cost is the advice (said as it is set)
    whole = [
        (t, a)
        for (p_inf, sc), t, a in scored
        if p_inf == p_least and sc <= least * (1 + 1e-5) and t % 60 == 0
    ]
    best, best_at = whole[0] if whole else (scored[0][1], scored[0][2])
    flat = [
        a.interval
        for a in (*grid, *fine)
        if a.interval and a.score[0] == p_least and a.score[1] <= least * (1 + FLAT)
    ]
    what_if: list[IntervalWhatIf] = []
    labels = [("advised", best), ("Young", y), ("Daly", d)]
    if model.interval:
        labels.insert(0, ("now", model.interval))
    labels += [("½× advised", best / 2), ("2× advised", best * 2)]
    # past the steady time there is no save to take: the model's τ/2 loss would not hold
    labels = [(label, t) for label, t in labels if label == "now" or t <= hi]
    now: _At | None = None
    for label, t in labels:
        a = _at(model, lam, max(t, 1.0))
        if label == "now":
            now = a
        what_if.append(
            IntervalWhatIf(
                label=label,
                interval_s=t,
                expected_held_h=a.held,
                expected_total_usd=_money(a.total),
                p_infeasible=a.p_infeasible,
                saves=math.floor(steady_s / t) if t > 0 else 0,
            )
        )
    if now is None:  # no interval now: a failure loses the run so far
        now = _at(model, lam, None)
    either = np.isfinite(now.objective) | np.isfinite(best_at.objective)
    saving_h = (
        now.held - best_at.held if now.held is not None and best_at.held is not None else None
    )
    notes = []
    if model.pending_units:
        notes.append(
            "a price is PENDING: the interval minimises the expected held hours (every cost line "
            "grows with them); the saving is in hours and instance-hours"
        )
    if now_source == "none":
        notes.append(
            "no checkpoint interval measured or assumed: today a failure loses the whole run so "
            "far; the saving is against that"
        )
    if now.p_infeasible > 0 or best_at.p_infeasible > 0:
        notes.append(
            f"some failure-rate draws cannot finish (now {now.p_infeasible:.1%}, advised "
            f"{best_at.p_infeasible:.1%}): intervals are ranked by that share first, the "
            "expectations are over the draws that finish"
        )
    return CheckpointAdvice(
        **base,
        advised_s=best,
        young_s=y,
        daly_s=d,
        expected_held_h_now=now.held,
        expected_held_h_advised=best_at.held,
        expected_total_usd_now=_money(now.total),
        expected_total_usd_advised=_money(best_at.total),
        saving_h=saving_h,
        saving_instance_hours=None if saving_h is None else saving_h * n,
        saving_usd=_money(
            None if now.total is None or best_at.total is None else now.total - best_at.total
        ),
        p_advised_cheaper=(
            float(np.mean((best_at.objective < now.objective)[either])) if either.any() else None
        ),
        flat_from_s=min(flat) if flat else None,
        flat_to_s=max(flat) if flat else None,
        what_if=what_if,
        notes=notes,
    )


def _money(x: float | None) -> Decimal | None:
    return None if x is None or not math.isfinite(x) else usd(dec(round(x, 6)))
