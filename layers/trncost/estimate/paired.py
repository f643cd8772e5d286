"""Rankings from paired draws: candidates ranked by expected cost over the same random draws,
each with its chance of being the cheapest, and the close calls said as such.

Every candidate's Monte Carlo draws its inputs from streams keyed by what the input is
(estimate/uncertainty.py `stream_key`): an assumption the candidates share is drawn alike for
all (draw i of the idle fraction is the same number for every candidate), what rests on a
candidate's own trials is its own. So draw i of every candidate is one possible world, and in
each comparable group (same work, same clock: estimate/compare.py) of fully priced candidates::

    expected_c  = mean over the draws that finish of total_c[i], its P1/P99 tails
                  winsorized (the throughput's log-t tails leave the raw mean unbounded) [USD]
    p_cheapest_c = #{i : total_c[i] < total_d[i] for every other d} / draws          [share]
    P(a < b)    = #{i : total_a[i] < total_b[i]} / draws                            [share]

(a draw that cannot finish costs +∞). The group is ranked by expected cost (a candidate whose
draws mostly cannot finish last); when the leader is cheaper than the runner-up in fewer than
CLOSE_CALL of the draws, the comparison says the call is too close (`CloseCall`) and the
decision names the trial that would separate them.

A candidate whose one price is PENDING gets the range of its break-even price over the same
paired draws (draws where either cannot finish left out)::

    P*[i] = max(0, (total_alt[i] − known[i]) / pending quantity[i])           [USD/unit]

References
----------
DESIGN.md, principle 10 (candidates ranked over paired draws, each with its chance of being
the cheapest; a close call says so); Law, Simulation Modeling and Analysis, 5th ed. (2015),
§11.2 (common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

import numpy as np

from trncost.estimate.decide_cost import CLOSE_CALL, Standing
from trncost.estimate.money import dec, usd
from trncost.estimate.uncertainty import Simulation
from trncost.model.analysis import (
    BreakEven,
    CloseCall,
    Comparison,
    MoneyPercentiles,
    RankedCandidate,
)

__all__ = ["CLOSE_CALL", "RANKED_BY", "Standing", "paired_ranking"]
WINSOR = 0.01  # each tail of a candidate's draws clipped before its expected cost is taken
RANKED_BY = (
    "expected total per target over paired draws (common random numbers; each candidate's "
    "1 % tails winsorized)"
)


def _money(x: float) -> Decimal:
    return usd(dec(round(x, 6)))


def _expected(totals: np.ndarray) -> float | None:
    """The mean of the draws that finish, each candidate's own 1 % tails winsorized (clipped
    to its P1 and P99): the throughput draws have Student-t tails on the log scale, so the raw
    mean of a cost is dominated by a handful of draws (in theory unbounded)."""
    finite = totals[np.isfinite(totals)]
    if not finite.size:
        return None
    lo, hi = np.percentile(finite, [100 * WINSOR, 100 * (1 - WINSOR)])
    return float(np.clip(finite, lo, hi).mean())


def _p50(totals: np.ndarray) -> float | None:
    finite = np.sort(totals[np.isfinite(totals)])
    if not finite.size:
        return None
    return float(finite[max(0, -(-finite.size // 2) - 1)])  # inverted CDF, as the range's


def paired_ranking(
    comparison: Comparison, simulations: Mapping[str, Simulation]
) -> tuple[Comparison, dict[str, Standing]]:
    """Re-rank each comparable group's fully priced candidates by expected cost over their
    paired draws (the module docstring gives the measures).

    Parameters
    ----------
    comparison : Comparison
        The point-value ranking (estimate/compare.py `rank`): its groups and rows.
    simulations : Mapping[str, Simulation]
        Candidate id → its Monte Carlo draws (the same seed and draw count for all).

    Returns
    -------
    tuple
        (the Comparison with expected cost [USD], P50 [USD] and p_cheapest [share] on each
        ranked row, cost ranks by expected cost, `ranked_by` and `close_calls`; candidate id →
        its Standing).
    """
    rows = list(comparison.by_cost)
    updated: dict[str, RankedCandidate] = {}
    standings: dict[str, Standing] = {}
    close_calls: list[CloseCall] = []
    for group in sorted({r.group for r in rows}):
        members = [
            r
            for r in rows
            if r.group == group and r.status == "complete" and r.candidate_id in simulations
        ]
        if not members:
            continue
        totals = np.vstack([simulations[r.candidate_id].totals() for r in members])
        expected = [_expected(t) for t in totals]
        infeasible = [float(np.mean(~np.isfinite(t))) for t in totals]
        order = sorted(
            range(len(members)),
            key=lambda k: (
                infeasible[k] >= 0.5,
                expected[k] if expected[k] is not None else np.inf,
                members[k].candidate_id,
            ),
        )
        cheapest = _cheapest(totals)
        for rank, k in enumerate(order, start=1):
            row = members[k]
            updated[row.candidate_id] = row.model_copy(
                update={
                    "cost_rank": rank,
                    "expected_usd": _money(e) if (e := expected[k]) is not None else None,
                    "p50_usd": _money(p) if (p := _p50(totals[k])) is not None else None,
                    "p_cheapest": float(np.mean(cheapest == k)),
                }
            )
        call = _close_call(group, members, totals, expected, order)
        if call is not None:
            close_calls.append(call)
        for k, row in enumerate(members):
            mine = expected[k]
            ahead = tuple(
                (
                    members[j].candidate_id,
                    _money(ej),
                    float(np.mean(totals[j] < totals[k])),
                )
                for j in order
                if j != k and (ej := expected[j]) is not None and (mine is None or ej < mine)
            )
            involved = call if call and row.candidate_id in (call.leader, call.runner_up) else None
            standings[row.candidate_id] = Standing(
                row.candidate_id,
                _money(mine) if mine is not None else None,
                ahead,
                involved,
            )
    by_cost = _reordered([updated.get(r.candidate_id, r) for r in rows])
    break_evens = [_break_even_range(b, simulations) for b in comparison.break_evens]
    return (
        comparison.model_copy(
            update={
                "by_cost": by_cost,
                "ranked_by": RANKED_BY,
                "close_calls": close_calls,
                "break_evens": break_evens,
            }
        ),
        standings,
    )


def _break_even_range(b: BreakEven, simulations: Mapping[str, Simulation]) -> BreakEven:
    """`b` with the P10/P50/P90 of its break-even price over the paired draws."""
    mine, alt = simulations.get(b.candidate_id), simulations.get(b.against or "")
    if mine is None or alt is None or b.price_key not in mine.outcome.pending:
        return b
    n = mine.samples
    quantity = np.broadcast_to(mine.outcome.pending[b.price_key], (n,))
    known = np.broadcast_to(mine.outcome.known, (n,))
    ok = mine.feasible & alt.feasible & (quantity > 0)
    if not ok.any():
        return b
    gap = alt.totals()[ok] - known[ok]
    price = np.maximum(gap / quantity[ok], 0.0)
    k = price.size
    p10, p50, p90 = (float(np.partition(price, i)[i]) for i in _ranks(k))
    return b.model_copy(
        update={
            "price_range": MoneyPercentiles(p10=_money(p10), p50=_money(p50), p90=_money(p90)),
            "p_no_price_cheaper": float(np.mean(gap <= 0)),
        }
    )


def _ranks(k: int) -> tuple[int, int, int]:
    """The inverted-CDF order statistics of P10, P50, P90 among k draws (⌈p·k⌉ − 1, as the
    range's)."""
    i10, i50, i90 = (max(0, math.ceil(p * k) - 1) for p in (0.1, 0.5, 0.9))
    return i10, i50, i90


def _cheapest(totals: np.ndarray) -> np.ndarray:
    """Per draw, the index of the cheapest candidate (−1 when none finishes)."""
    best = np.argmin(totals, axis=0)
    none = ~np.isfinite(totals.min(axis=0))
    return np.where(none, -1, best)


def _close_call(
    group: int,
    members: list[RankedCandidate],
    totals: np.ndarray,
    expected: list[float | None],
    order: list[int],
) -> CloseCall | None:
    """The leader and the runner-up when the leader is cheaper in fewer than CLOSE_CALL of the
    paired draws."""
    if len(order) < 2:
        return None
    a, b = order[0], order[1]
    ea, eb = expected[a], expected[b]
    if ea is None or eb is None:
        return None
    p = float(np.mean(totals[a] < totals[b]))
    if p >= CLOSE_CALL:
        return None
    return CloseCall(
        group=group,
        leader=members[a].candidate_id,
        runner_up=members[b].candidate_id,
        p_leader_cheaper=p,
        leader_expected_usd=_money(ea),
        runner_up_expected_usd=_money(eb),
    )


def _reordered(rows: list[RankedCandidate]) -> list[RankedCandidate]:
    """Rows by group, then cost rank (unranked last, in their former order)."""
    index = {id(r): i for i, r in enumerate(rows)}
    return sorted(
        rows,
        key=lambda r: (
            r.group,
            r.cost_rank is None,
            r.cost_rank if r.cost_rank is not None else 0,
            index[id(r)],
        ),
    )
