"""The figures of an estimate and what changed between two: the refresh rule's pure part."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.estimate import estimate
from trncost.estimate.changes import changes, figures


def _estimate(*trials, usd="36"):
    return estimate(
        inputs(
            cand=candidate("trn2.48xlarge", 2),
            trials=list(trials),
            prices=snapshot(instance_quote("trn2.48xlarge", usd)),
        )
    )


def test_the_same_estimate_has_no_change() -> None:
    e = _estimate(trial("t-1"))
    assert changes(e, e) == []


def test_a_trial_of_another_instance_type_changes_no_figure() -> None:
    # Given an estimate of trn2 from one trn2 trial
    before = _estimate(trial("t-1"))
    # When a trn3 trial of the same workload is added (its inputs change: one more trial)
    after = _estimate(trial("t-1"), trial("t-9", instance_type="trn3.48xlarge"))
    # Then no figure of the trn2 estimate moved
    assert changes(before, after) == []


def test_a_faster_trial_moves_the_time_and_the_totals_from_what_to_what() -> None:
    # Given a trn2 estimate, then a second trn2 trial twice as fast
    before = _estimate(trial("t-1"))
    after = _estimate(trial("t-1"), trial("t-2", work=7.2e8))
    moved = {c.figure: c for c in changes(before, after)}
    # Then the time to target, the throughput and the totals are listed with both values
    for key in ("time.total_h", "steady_throughput", "total_usd", "component:instances"):
        assert key in moved, sorted(moved)
    total = moved["total_usd"]
    assert Decimal(total.after) < Decimal(total.before)
    assert total.before == str(before.total_usd.quantize(Decimal("0.01")))
    assert float(moved["time.total_h"].after) < float(moved["time.total_h"].before)
    assert "status" not in moved  # still complete


def test_a_new_price_moves_the_instance_line_and_says_the_snapshot_is_no_figure() -> None:
    before = _estimate(trial("t-1"), usd="36")
    after = _estimate(trial("t-1"), usd="30")
    moved = {c.figure for c in changes(before, after)}
    assert "total_usd" in moved
    assert any(f.startswith("line:instances:") for f in moved), moved
    relabelled = before.model_copy(update={"snapshot_id": "ps-other"})
    assert changes(before, relabelled) == []


def test_a_price_becoming_pending_is_a_change_of_status_and_of_the_line() -> None:
    before = _estimate(trial("t-1"))
    pending = estimate(
        inputs(cand=candidate("trn2.48xlarge", 2), trials=[trial("t-1")], prices=snapshot())
    )
    moved = {c.figure: c for c in changes(before, pending)}
    assert moved["status"].before == "complete" and moved["status"].after == "incomplete"
    assert moved["total_usd"].after is None
    assert any(c.after == "PENDING" for c in moved.values()), moved


@settings(max_examples=40, deadline=None)
@given(
    work=st.floats(min_value=1e7, max_value=1e10),
    cents=st.integers(min_value=0, max_value=10_000),
)
def test_changes_list_exactly_the_figures_that_differ(work: float, cents: int) -> None:
    a = _estimate(trial("t-1"))
    usd = str(Decimal(30) + Decimal(cents) / 100)
    b = _estimate(trial("t-1"), trial("t-2", work=work), usd=usd)
    fa, fb = figures(a), figures(b)
    listed = {c.figure for c in changes(a, b)}
    none = ("", None)
    differ = {k for k in fa.keys() | fb.keys() if fa.get(k, none)[1] != fb.get(k, none)[1]}
    assert listed == differ
    assert changes(b, b) == [] and (listed == set()) == (fa == fb)
