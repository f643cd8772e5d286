"""Same work, same clock: whether two candidates' estimates may be compared at all, and the
ranking of those that may (by total cost per completed target, and by time), with break-even
prices for the PENDING ones.

References
----------
DESIGN.md, principle 5 (same work, same clock) and principle 3 (break-even prices); seeds/000
(要讓比較有意義，兩邊需使用相同的訓練目標、資料、品質門檻和計時範圍).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal

from trncost.errors import DomainError
from trncost.estimate.admission import admit
from trncost.estimate.money import usd
from trncost.model.analysis import BreakEven, Comparison, NotComparable, RankedCandidate
from trncost.model.estimate import Estimate, EstimateInput, PendingTerm
from trncost.model.trial import TimingScope

Member = tuple[str, EstimateInput, Estimate]  # candidate id, its input, its estimate


def _scopes(inp: EstimateInput) -> set[TimingScope]:
    """The clocks of the candidate's pooled throughput trials (estimate/admission.py); a
    candidate without one is on the clock of the trials it is projected from
    (estimate/projection.py)."""
    pool = inp.assumptions.pool_mismatched_trials
    pooled = admit(inp.workload, inp.candidate, inp.trials, pool_mismatched=pool).pooled
    found = {t.timing_scope for t in pooled if t.usable_for_throughput}
    if not found:
        from trncost.estimate.projection import source_for

        source = source_for(inp)
        if source is not None:
            pooled = admit(inp.workload, source.candidate, inp.trials, pool_mismatched=pool).pooled
            found = {t.timing_scope for t in pooled if t.usable_for_throughput}
    return found


def clock_key(inp: EstimateInput) -> str | None:
    """The one clock `inp`'s pooled throughput trials share, as a key: two estimates of one
    workload are comparable when their keys are equal and not None (`comparability`).

    Returns
    -------
    str or None
        The timing scope as JSON; None when no trial is usable or they mix clocks (comparable
        with no candidate, itself included).
    """
    scopes = _scopes(inp)
    return next(iter(scopes)).model_dump_json() if len(scopes) == 1 else None


def comparability(a: EstimateInput, b: EstimateInput) -> list[str]:
    """Why candidates `a` and `b` are not comparable.

    They are when they share the target (amount and unit), the dataset, the quality gate and
    one timing scope: every pooled throughput trial of each runs on the same clock (what it
    includes: compile, data loading, checkpoints, evaluation, …), the same for both. A
    candidate whose trials mix clocks, or have none usable, is comparable with no one, itself
    included.

    Returns
    -------
    list[str]
        The reasons, each a sentence; empty when comparable.

    References
    ----------
    DESIGN.md, principle 5; seeds/000 (相同的訓練目標、資料、品質門檻和計時範圍).
    """
    reasons = []
    wa, wb = a.workload, b.workload
    if wa.target != wb.target:
        reasons.append(
            f"different targets ({wa.target.amount:g} {wa.target.unit} vs "
            f"{wb.target.amount:g} {wb.target.unit})"
        )
    if wa.dataset_id != wb.dataset_id:
        reasons.append(f"different datasets ({wa.dataset_id} vs {wb.dataset_id})")
    if wa.quality_gate != wb.quality_gate:
        reasons.append("different quality gates")
    sa, sb = _scopes(a), _scopes(b)
    if len(sa) != 1 or sa != sb:
        diffs = sorted({d for x in sa for y in sb for d in x.differences(y)})
        reasons.append(
            "different timing scopes"
            + (f" (the clocks differ in: {', '.join(diffs)})" if diffs else "")
        )
    return reasons


def best_comparable(
    pending: tuple[EstimateInput, Estimate],
    others: list[tuple[EstimateInput, Estimate]],
) -> tuple[EstimateInput, Estimate] | None:
    """The cheapest complete estimate among `others` comparable with `pending`.

    Returns
    -------
    tuple[EstimateInput, Estimate] or None
        The lowest `total_usd` among the complete, comparable estimates; None when there is
        none.
    """
    inp = pending[0]
    complete = [
        (total, i, e)
        for i, e in others
        if e.status == "complete"
        and (total := e.total_usd) is not None
        and not comparability(inp, i)
    ]
    best = min(complete, key=lambda p: p[0], default=None)
    return None if best is None else (best[1], best[2])


# -- ranking ---------------------------------------------------------------------------------
def candidate_ids(inputs: Sequence[EstimateInput]) -> list[str]:
    """A stable, order-independent name per candidate of `inputs`: its label, plus the
    workload when two candidates share a label. Two that still share a name are refused
    (DomainError).

    Returns
    -------
    list[str]
        One id per input, in input order.
    """
    labels = [i.candidate.label for i in inputs]
    ids = [
        f"{label} [{i.workload.workload_id}]" if labels.count(label) > 1 else label
        for label, i in zip(labels, inputs, strict=True)
    ]
    dupes = sorted({x for x in ids if ids.count(x) > 1})
    if dupes:
        raise DomainError(
            f"candidates must differ (instance type, count, region, purchase option or "
            f"workload); these appear twice: {', '.join(dupes)}"
        )
    return ids


def rank(
    candidates: Sequence[tuple[EstimateInput, Estimate]],
    *,
    excluded: dict[str, str] | None = None,
) -> Comparison:
    """Rank `candidates` by the total cost of a completed target (cloud + labour, the figure
    break-even prices are read against) and by time, within groups of comparable candidates
    only (`comparability`). Input order never matters.

    Parameters
    ----------
    candidates : Sequence[tuple[EstimateInput, Estimate]]
        Each candidate's input and estimate.
    excluded : dict[str, str] or None
        Candidates that could not be estimated: id → why (listed, never ranked).

    Returns
    -------
    Comparison
        `by_cost` (complete estimates by `total_usd` [USD], ties by time then id; the
        PENDING and infeasible after them, unranked) and `by_time` (by expected time to
        target [h]), each row with its group, the cloud/labour split and price basis;
        `not_comparable` pairs with their reasons; `break_evens`: for each PENDING candidate
        with exactly one PENDING price, the price [USD/unit] at which it equals the cheapest
        fully priced candidate of its group, (alternative − known) / quantity, never negative
        ("no price makes it cheaper" when the known part alone reaches it).

    References
    ----------
    DESIGN.md, principles 3 and 5; seeds/000 (同等訓練目標下實測成本).
    """
    ids = candidate_ids([i for i, _ in candidates])
    named = sorted(zip(ids, candidates, strict=True), key=lambda x: x[0])
    groups: list[list[Member]] = []
    for cid, (inp, est) in named:
        home = next((g for g in groups if all(not comparability(inp, gi) for _, gi, _ in g)), None)
        if home is None or comparability(inp, inp):
            groups.append([(cid, inp, est)])
        else:
            home.append((cid, inp, est))

    by_cost: list[RankedCandidate] = []
    by_time: list[RankedCandidate] = []
    break_evens: list[BreakEven] = []
    for number, group in enumerate(groups, start=1):
        priced = sorted(
            (m for m in group if m[2].status == "complete" and m[2].total_usd is not None),
            key=lambda m: (m[2].total_usd, _total_h(m[2]), m[0]),
        )
        cost_rank = {m[0]: r for r, m in enumerate(priced, start=1)}
        timed = sorted(
            (m for m in group if m[2].time is not None), key=lambda m: (_total_h(m[2]), m[0])
        )
        time_rank = {m[0]: r for r, m in enumerate(timed, start=1)}
        rows = {m[0]: _row(m, number, cost_rank, time_rank, len(group)) for m in group}
        unpriced = sorted((m for m in group if m[0] not in cost_rank), key=lambda m: m[0])
        by_cost += [rows[m[0]] for m in priced] + [rows[m[0]] for m in unpriced]
        untimed = sorted((m for m in group if m[0] not in time_rank), key=lambda m: m[0])
        by_time += [rows[m[0]] for m in timed] + [rows[m[0]] for m in untimed]
        for cid, _, est in group:
            if est.incomplete:
                break_evens += _break_evens(cid, est, priced[0] if priced else None)

    not_comparable = []
    for i, (ca, (ia, _)) in enumerate(named):
        for cb, (ib, _) in named[i + 1 :]:
            reasons = comparability(ia, ib)
            if reasons:
                not_comparable.append(NotComparable(a=ca, b=cb, reasons=reasons))
    return Comparison(
        by_cost=by_cost,
        by_time=by_time,
        not_comparable=not_comparable,
        break_evens=break_evens,
        excluded=dict(sorted((excluded or {}).items())),
    )


def _total_h(est: Estimate) -> float:
    """Expected hours to target; a plan that cannot finish never does (∞)."""
    return est.time.total_h if est.time is not None else math.inf


def _row(
    member: Member,
    group: int,
    cost_rank: Mapping[str, int],
    time_rank: Mapping[str, int],
    group_size: int,
) -> RankedCandidate:
    cid, inp, est = member
    note = None
    if comparability(inp, inp):
        note = "its trials mix timing scopes (or have none usable): comparable with no candidate"
    elif group_size == 1:
        note = "no other candidate is comparable: ranked alone"
    if est.projected:
        note = (
            "PROJECTED from another chip's trials (no throughput trial of its own): a planning "
            "figure, not ranked by cost" + ("; see its break-even price" if est.incomplete else "")
        )
    elif est.status == "incomplete":
        note = "price PENDING: not ranked by cost; see its break-even price"
    elif est.status == "infeasible":
        note = f"infeasible: {est.infeasible_reason}"
    return RankedCandidate(
        candidate_id=cid,
        group=group,
        instance_type=est.candidate.instance_type,
        instance_count=est.candidate.instance_count,
        status=est.status,
        cost_per_target_usd=est.cost_per_target_usd,
        total_usd=est.total_usd,
        cloud_usd=est.cloud_usd,
        labour_usd=est.labour_usd,
        price_basis=est.price_basis,
        total_known_usd=est.total_known_usd,
        pending_formula=est.total_formula if est.incomplete else None,
        time_to_target_h=est.time.total_h if est.time is not None else None,
        cost_rank=cost_rank.get(cid),
        time_rank=time_rank.get(cid),
        note=note,
    )


def _break_evens(cid: str, est: Estimate, best: Member | None) -> list[BreakEven]:
    """The break-even price of each PENDING term against `best`, the cheapest priced one."""
    # `best` is ranked by cost, so it is fully priced: its total is known
    best_total = best[2].total_usd if best is not None else None
    against = (best[0], best_total) if best is not None and best_total is not None else None
    return break_evens_of(cid, est.pending_terms, est.total_known_usd, against)


def break_evens_of(
    cid: str,
    terms: Sequence[PendingTerm],
    known_usd: Decimal | None,
    against: tuple[str, Decimal] | None,
) -> list[BreakEven]:
    """The break-even price of a PENDING candidate against the cheapest fully priced
    comparable one: P* = (alternative total − known part) / pending quantity, never negative,
    defined for exactly one PENDING price.

    Parameters
    ----------
    cid : str
        The PENDING candidate's id.
    terms : Sequence[PendingTerm]
        Its PENDING terms (quantity × unknown price).
    known_usd : Decimal or None
        Its known part [USD].
    against : tuple[str, Decimal] or None
        The id and total [USD] of the cheapest fully priced comparable candidate; None: there
        is none.

    Returns
    -------
    list[BreakEven]
        One per term: the price, "no price makes it cheaper" when the known part alone reaches
        the alternative, or why there is none.
    """
    if len(terms) != 1:
        return [
            BreakEven(
                candidate_id=cid,
                price_key=t.price_key,
                unit=t.unit,
                against=None,
                price_usd=None,
                note=f"{len(terms)} prices are PENDING: a break-even needs exactly one",
            )
            for t in terms
        ]
    term = terms[0]
    if against is None:
        return [
            BreakEven(
                candidate_id=cid,
                price_key=term.price_key,
                unit=term.unit,
                against=None,
                price_usd=None,
                note="no fully priced comparable candidate to break even against",
            )
        ]
    bid, best_total = against
    exceeds = known_usd is not None and known_usd >= best_total
    price = (
        None
        if known_usd is None or term.quantity <= 0 or exceeds
        else (best_total - known_usd) / Decimal(repr(term.quantity))
    )
    if exceeds:
        note = (
            f"the known part alone (${known_usd or 0:,.2f}) already exceeds {bid} "
            f"(${best_total:,.2f}): no price makes it cheaper"
        )
    elif price is None:
        note = "the pending quantity is 0: the price does not move the total"
    else:
        note = (
            f"below ${price:,.4f} per {term.unit} this candidate costs less per target than "
            f"{bid} (${best_total:,.2f})"
        )
    return [
        BreakEven(
            candidate_id=cid,
            price_key=term.price_key,
            unit=term.unit,
            against=bid,
            price_usd=None if price is None else usd(price),
            no_price_makes_it_cheaper=exceeds,
            note=note,
        )
    ]
