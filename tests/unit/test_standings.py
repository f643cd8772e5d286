"""Where an estimate stands among its workload's, from the latest versions' headlines alone
(trncost.estimate.standings): the rank and break-even a report and a list read, stored when a
version is added, the same figures the engine's ranking gives."""

from __future__ import annotations

from decimal import Decimal

from tests.unit.test_ranking import pairs, trio
from trncost.estimate import rank
from trncost.estimate.compare import clock_key
from trncost.estimate.standings import standings
from trncost.model.records import EstimateVersion
from trncost.services.versions import summary_of


def _entries(candidates):
    out = []
    for i, (inp, est) in enumerate(pairs(candidates)):
        version = EstimateVersion(
            estimate_id=f"est-{i}", version=1, created_at="t", reason="created",
            fingerprint="f", estimate=est,
        )  # fmt: skip
        out.append((f"est-{i}", summary_of(version, clock_key(inp))))
    return out


def test_the_stored_standing_is_the_rankings_rank_and_break_even():
    # Given the hand-checked trio (trn2 $1,512, p5 $1,210, trn3 PENDING)
    entries = _entries(trio())
    # When their standings are computed from the headlines alone
    got = standings(entries, at="2026-12-01T00:00:00Z")
    # Then the ranks and the break-even are the engine's ranking's
    ranked = rank(pairs(trio()))
    (be,) = ranked.break_evens
    assert (got["est-1"].cost_rank, got["est-0"].cost_rank, got["est-2"].cost_rank) == (1, 2, None)
    assert got["est-0"].ranked == 2 and got["est-2"].ranked == 0
    assert got["est-2"].break_even == be and be.price_usd == Decimal("42.209302")
    assert got["est-2"].against_estimate_id == "est-1"
    assert got["est-2"].against_total_usd == Decimal("1210.000000")
    assert all(s.considered == 2 for s in got.values())


def test_an_estimate_on_another_clock_is_ranked_alone_and_never_broken_even_against():
    entries = _entries(trio())
    eid, p5 = entries[1]
    entries[1] = (eid, p5.model_copy(update={"scope": '{"other": true}'}))
    got = standings(entries, at="t")
    assert (got["est-1"].cost_rank, got["est-1"].ranked) == (1, 1)
    assert got["est-2"].against_estimate_id == "est-0"  # trn2, the only one on its clock
    # a scope of None (mixed clocks) is comparable with none
    entries[0] = (entries[0][0], entries[0][1].model_copy(update={"scope": None}))
    got = standings(entries, at="t")
    assert got["est-0"].cost_rank is None and got["est-2"].break_even.against is None


def test_a_projected_estimate_waiting_on_a_price_gets_its_break_even_too():
    # Given the trio with trn3's estimate projected (no throughput trial of its own), its price
    # still PENDING: its total is the same formula
    entries = _entries(trio())
    eid, trn3 = entries[2]
    entries[2] = (eid, trn3.model_copy(update={"status": "projected"}))
    got = standings(entries, at="t")
    # Then it is unranked, and its break-even against the cheapest is the incomplete one's
    plain = standings(_entries(trio()), at="t")["est-2"]
    assert got["est-2"].cost_rank is None
    assert got["est-2"].break_even == plain.break_even is not None
    assert got["est-2"].against_estimate_id == "est-1"
