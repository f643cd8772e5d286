"""Comparison: ranked by cost per target and by time, only among comparable candidates."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.errors import DomainError
from trncost.estimate import analyse, comparability, estimate, rank

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"), instance_quote("p5.48xlarge", "55"))


def cand(instance_type: str, work: float, count: int = 2, wl=None):
    # one target trial at 2 instances, one hour of steady work, nothing else measured
    t = trial(f"t-{instance_type}", instance_type=instance_type, phase="target", work=work)
    if wl is not None:  # the trial ran on that workload's dataset
        t = t.model_copy(update={"dataset_id": wl.dataset_id})
    # no failure, stated: the ranking's and the break-even's arithmetic alone
    return inputs(
        wl=wl,
        cand=candidate(instance_type, count),
        trials=[t],
        prices=PRICES,
        assumptions={"failure_rate_per_instance_hour": 0},
    )


def trio():
    return [
        cand("trn2.48xlarge", 3.6e8),  # 1e5 tokens/s
        cand("p5.48xlarge", 7.2e8),  # 2e5 tokens/s
        cand("trn3.48xlarge", 5.4e8),  # 1.5e5 tokens/s, no price in the snapshot
    ]


def pairs(inps):
    return [(i, estimate(i)) for i in inps]


def test_hand_checked_ranking_and_break_even():
    c = rank(pairs(trio()))
    # trn2: 7.2e9 / 1e5 = 20 h → 2 × 20 × $36 = $1,440 + the trial 2 × 1 h × $36 = $72 → $1,512
    # p5:   7.2e9 / 2e5 = 10 h → 2 × 10 × $55 = $1,100 + the trial 2 × 1 h × $55 = $110 → $1,210
    # trn3: 7.2e9 / 1.5e5 = 13.33 h, PENDING: 2 × 13.33 + 2 × 1 = 28.667 instance-hours × P
    assert [(r.instance_type, r.cost_rank, r.cost_per_target_usd) for r in c.by_cost] == [
        ("p5.48xlarge", 1, Decimal("1210.000000")),
        ("trn2.48xlarge", 2, Decimal("1512.000000")),
        ("trn3.48xlarge", None, None),
    ]
    assert [(r.instance_type, r.time_rank) for r in c.by_time] == [
        ("p5.48xlarge", 1),
        ("trn3.48xlarge", 2),
        ("trn2.48xlarge", 3),
    ]
    assert {r.group for r in c.by_cost} == {1} and c.not_comparable == []
    # break-even against the cheapest priced comparable (p5): $1,210 / 28.667 = $42.209302
    (be,) = c.break_evens
    assert be.against == "2× p5.48xlarge (us-east-1, on_demand)"
    assert be.price_key == "AmazonEC2/us-east-1/trn3.48xlarge/on_demand"
    assert be.price_usd == Decimal("42.209302")
    assert "below $42.2093 per instance-hour" in be.note


def test_incomparable_candidates_are_never_ranked_together():
    other = cand("trn2.48xlarge", 3.6e8, count=4, wl=workload(dataset_id="ds-2"))
    c = rank(pairs([*trio(), other]))
    lone = next(r for r in c.by_cost if r.instance_count == 4)
    assert lone.group == 2 and lone.cost_rank == 1 and "ranked alone" in lone.note
    assert {r.group for r in c.by_cost if r.instance_count == 2} == {1}
    assert len(c.not_comparable) == 3
    assert all("different datasets (ds-1 vs ds-2)" in n.reasons for n in c.not_comparable)


def test_mixed_timing_scopes_make_a_candidate_comparable_with_none():
    inp = cand("trn2.48xlarge", 3.6e8)
    scope = {"compile": False, "data_loading": True, "checkpoints": True, "evaluation": True}
    extra = trial("t-x", phase="target", work=3.6e8, scope=scope)
    mixed = inp.model_copy(update={"trials": [*inp.trials, extra]})
    # by default the trial on the other clock is excluded: the candidate stays comparable
    (est,) = [e for _, e in pairs([mixed])]
    assert [(a.trial_id, a.admission) for a in est.admission] == [
        ("t-trn2.48xlarge", "pooled"),
        ("t-x", "excluded"),
    ]
    assert rank(pairs([mixed, cand("p5.48xlarge", 7.2e8)])).not_comparable == []
    # pooled at the request's flag, the clocks mix
    flag = mixed.assumptions.model_copy(update={"pool_mismatched_trials": True})
    mixed = mixed.model_copy(update={"assumptions": flag})
    c = rank(pairs([mixed, cand("p5.48xlarge", 7.2e8)]))
    assert len({r.group for r in c.by_cost}) == 2
    assert any("mix timing scopes" in (r.note or "") for r in c.by_cost)
    (nc,) = c.not_comparable
    assert any(r.startswith("different timing scopes") for r in nc.reasons)


def test_a_pending_candidate_without_a_priced_comparable_gets_no_break_even():
    c = rank(pairs([cand("trn3.48xlarge", 5.4e8)]))
    (be,) = c.break_evens
    assert be.price_usd is None and be.against is None
    assert "no fully priced comparable" in be.note


def test_two_identical_candidates_are_refused():
    with pytest.raises(DomainError, match="appear twice"):
        rank(pairs([cand("p5.48xlarge", 7.2e8), cand("p5.48xlarge", 7.2e8)]))


def test_a_candidate_that_cannot_be_estimated_is_excluded_with_its_reason():
    no_trials = inputs(cand=candidate("g5.48xlarge", 2), trials=trio()[0].trials, prices=PRICES)
    a = analyse([*trio(), no_trials], samples=500, seed=1)
    (reason,) = a.comparison.excluded.values()
    assert "no trial of g5.48xlarge" in reason
    assert len(a.comparison.by_cost) == 3


ALL = [*trio(), cand("trn2.48xlarge", 3.6e8, count=4, wl=workload(dataset_id="ds-2"))]
ESTIMATED = pairs(ALL)


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(len(ALL))))
def test_swapping_candidate_order_never_changes_the_ranking(order):
    assert rank([ESTIMATED[i] for i in order]) == rank(ESTIMATED)


@settings(max_examples=20, deadline=None)
@given(st.permutations(range(len(ALL))))
def test_rows_in_one_group_are_pairwise_comparable(order):
    shuffled = [ESTIMATED[i] for i in order]
    c = rank(shuffled)
    label = {i.candidate.label if i.workload.dataset_id == "ds-1" else None: i for i, _ in shuffled}
    groups: dict[int, list[str]] = {}
    for r in c.by_cost:
        groups.setdefault(r.group, []).append(r.candidate_id)
    for members in groups.values():
        ins = [label[m] for m in members if m in label]
        for a in ins:
            for b in ins:
                assert comparability(a, b) == []
    grouped = {r.candidate_id: r.group for r in c.by_cost}
    for n in c.not_comparable:
        assert grouped[n.a] != grouped[n.b]
