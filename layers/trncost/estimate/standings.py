"""Where each estimate of a workload stands among the others, from their latest versions'
headline figures alone (`VersionSummary`): its rank by cost per completed target among the
comparable fully priced estimates, and for an estimate waiting on one PENDING price its
break-even price against the cheapest of them of another candidate (a projected one with a
PENDING price too: its total is a formula all the same). Pure.

Comparable, as in a comparison (`trncost.estimate.compare.comparability`): estimates of one
workload share the target, the dataset and the quality gate, so they are comparable when
their pooled throughput trials share one clock (`VersionSummary.scope`, the same key); an
estimate whose trials mix clocks (scope None) is comparable with none. The service stores the
result whenever a version is added, so reading a report or a list never ranks anything.

References
----------
DESIGN.md, principles 3 (break-even prices against the best alternative) and 5 (same work,
same clock).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from trncost.estimate.compare import break_evens_of
from trncost.model.records import Standing, VersionSummary

Entry = tuple[str, VersionSummary]  # estimate id, its latest version's headline


def _cost_key(entry: Entry) -> tuple[Decimal, float, str, str]:
    eid, s = entry
    assert s.total_usd is not None
    return (s.total_usd, s.time_to_target_h or float("inf"), s.label, eid)


def standings(entries: Sequence[Entry], *, at: str) -> dict[str, Standing]:
    """Each estimate's standing among `entries` (the workload's estimates), computed `at`.

    Parameters
    ----------
    entries : Sequence[Entry]
        Every estimate of the workload: its id and its latest version's headline.
    at : str
        When (ISO 8601): the engine has no clock.

    Returns
    -------
    dict[str, Standing]
        By estimate id: `cost_rank` of `ranked` (1 = cheapest total [USD] among the complete
        estimates on its clock; ties by time [h], label, id; None when it is not complete or
        comparable with none), and for an incomplete one the break-even [USD/unit] against the
        cheapest complete comparable estimate of another candidate label.
    """
    priced: dict[str, list[Entry]] = {}
    for eid, s in entries:
        if s.status == "complete" and s.total_usd is not None and s.scope is not None:
            priced.setdefault(s.scope, []).append((eid, s))
    for group in priced.values():
        group.sort(key=_cost_key)
    others = max(len(entries) - 1, 0)
    out: dict[str, Standing] = {}
    for eid, s in entries:
        group = priced.get(s.scope or "", []) if s.scope is not None else []
        rank = next((i for i, (e, _) in enumerate(group, start=1) if e == eid), None)
        standing = Standing(
            estimate_id=eid,
            computed_at=at,
            considered=others,
            cost_rank=rank,
            ranked=len(group) if rank is not None else 0,
        )
        if s.status == "incomplete" or (s.status == "projected" and s.pending_terms):
            best = next(((e, b) for e, b in group if b.label != s.label), None)
            against = None
            if best is not None and best[1].total_usd is not None:
                against = (best[1].label, best[1].total_usd)
            found = break_evens_of(s.label, s.pending_terms, s.total_known_usd, against)
            standing = standing.model_copy(
                update={
                    "break_even": found[0] if found else None,
                    "against_estimate_id": best[0] if against and best else None,
                    "against_total_usd": against[1] if against else None,
                }
            )
        out[eid] = standing
    return out
