"""Sensitivity: one input at a time to the ends of its range, the others at their values.

Ranges: the observed range of the trial measurements (min/max of per-trial values; the Gamma
posterior P10–P90 for a measured failure rate), or ±20 % for user assumptions and prices.
Ranked by the swing of the total in USD. While a price is PENDING the total is unknown, so the
rank is by the larger relative swing of the known part and of each pending quantity (the
amount that will multiply the unknown price). An end at which the plan cannot finish ranks
first. All variants are evaluated in one vectorised pass over the same model as the range.

References
----------
DESIGN.md, "Analysis on top" (a one-at-a-time sensitivity, tornado, ranks which input moves the
total most); seeds/000 (將利用率、訓練失敗、重跑和配套資源用量分開調整，
觀察哪個輸入最容易改變總成本).
"""

from __future__ import annotations

import math

import numpy as np

from trncost.estimate.money import dec, usd
from trncost.estimate.uncertainty import Prepared, prepare
from trncost.estimate.vector import Array
from trncost.model.analysis import Swing, SwingEnd
from trncost.model.estimate import Estimate, EstimateInput


def tornado(
    inp: EstimateInput, est: Estimate | None = None, *, prepared: Prepared | None = None
) -> list[Swing]:
    """The swings of every uncertain input of `inp`, largest effect first: each input alone
    at the low and the high end of its range, every other at its value::

        effect = |total(high) − total(low)|                                      [USD]
        effect = max over the known part and each pending quantity of
                 |x(high) − x(low)| / |x(point)|          (a price PENDING)      [unitless]

    Parameters
    ----------
    est : Estimate or None
        `inp`'s estimate (computed when None).
    prepared : Prepared or None
        The estimate, vector model and uncertain inputs already built (`uncertainty.prepare`),
        shared with the range.

    Returns
    -------
    list[Swing]
        Ranked: an end at which the plan cannot finish first, then by effect; each with the
        input's point and ends [unit of the row], the total or known part [USD] and pending
        quantities at each end. Empty for an infeasible plan or no uncertain input.

    References
    ----------
    DESIGN.md, "Analysis on top" (tornado); seeds/000 (用敏感性檢查決定是否擴大試跑).
    """
    est, model, inputs = prepared if prepared is not None else prepare(inp, est)
    items = inputs.items
    if not items or est.time is None:
        return []
    k = len(items)
    size = 2 * k + 1  # slot 0: every input at its value; then (low, high) per input
    values: dict[str, Array] = {}
    factors: dict[str, Array] = {}
    for i, u in enumerate(items):
        target = factors if u.is_price else values
        row = u.target
        if row not in target:  # one array per row: several swings may set the same row
            target[row] = np.full(size, 1.0 if u.is_price else model.point.get(row, u.point))
        target[row][1 + 2 * i], target[row][2 + 2 * i] = u.target_low, u.target_high
    out = model.evaluate(values, factors)
    known = np.broadcast_to(out.known, (size,))
    feasible = np.broadcast_to(out.feasible, (size,))
    pending = {key: np.broadcast_to(q, (size,)) for key, q in out.pending.items()}
    priced = not pending

    def end(j: int, value: float) -> SwingEnd:
        if not feasible[j]:
            return SwingEnd(value=value, total_usd=None, known_usd=None, infeasible=True)
        amount = usd(dec(round(float(known[j]), 6)))
        return SwingEnd(
            value=value,
            total_usd=amount if priced else None,
            known_usd=amount,
            pending_quantities={key: float(q[j]) for key, q in pending.items()},
        )

    swings = []
    for i, u in enumerate(items):
        lo, hi = 1 + 2 * i, 2 + 2 * i
        if not (feasible[lo] and feasible[hi]):
            effect = None
        elif priced:
            effect = abs(float(known[hi] - known[lo]))
        else:
            rel = [_rel(known, lo, hi)] + [_rel(q, lo, hi) for q in pending.values()]
            effect = max(rel)
        swings.append((u, end(lo, u.low), end(hi, u.high), effect))
    swings.sort(key=lambda s: (s[3] is not None, -(s[3] or 0.0), s[0].row_id))
    return [
        Swing(
            rank=r,
            input_id=u.row_id,
            label=u.label,
            unit=u.unit,
            point=u.point,
            basis=u.basis,
            low=low,
            high=high,
            effect=effect,
            effect_unit="usd" if priced else "relative",
        )
        for r, (u, low, high, effect) in enumerate(swings, start=1)
    ]


def _rel(a: Array, lo: int, hi: int) -> float:
    base = float(a[0])
    if base == 0 or not math.isfinite(base):
        return 0.0
    return abs(float(a[hi] - a[lo])) / abs(base)
