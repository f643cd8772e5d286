"""Same work, same clock: comparability and break-even against the best alternative."""

from __future__ import annotations

from decimal import Decimal

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.estimate import best_comparable, break_even_price, comparability, estimate

PRICES = snapshot(instance_quote("p5.48xlarge", "55"))
SCOPE_NO_COMPILE = {"compile": False, "data_loading": True, "checkpoints": True, "evaluation": True}


def pair(gpu_scope=None, gpu_workload=None):
    trn3 = inputs(
        cand=candidate("trn3.48xlarge", 2),
        trials=[trial("t-n", instance_type="trn3.48xlarge", phase="target")],
        prices=PRICES,
    )
    gpu = inputs(
        wl=gpu_workload,
        cand=candidate("p5.48xlarge", 2),
        trials=[
            trial("t-g", instance_type="p5.48xlarge", phase="target", work=7.2e8, scope=gpu_scope)
        ],
        prices=PRICES,
    )
    return trn3, gpu


def test_same_target_dataset_gate_and_scope_are_comparable():
    a, b = pair()
    assert comparability(a, b) == []


def test_a_different_timing_scope_is_not_comparable_and_says_why():
    a, b = pair(gpu_scope=SCOPE_NO_COMPILE)
    (reason,) = comparability(a, b)
    assert reason == "different timing scopes (the clocks differ in: compile)"


def test_a_different_target_or_dataset_is_not_comparable():
    a, b = pair(gpu_workload=workload(dataset_id="ds-2", target={"unit": "tokens", "amount": 1e9}))
    reasons = comparability(a, b)
    assert any(r.startswith("different targets") for r in reasons)
    assert "different datasets (ds-1 vs ds-2)" in reasons


def test_break_even_against_the_cheapest_comparable_alternative():
    a, b = pair()
    ea, eb = estimate(a), estimate(b)
    assert ea.status == "incomplete" and eb.status == "complete"
    best = best_comparable((a, ea), [(b, eb)])
    assert best is not None and best[1] is eb
    price = break_even_price(ea, eb.total_usd)
    (term,) = ea.pending_terms
    # at the break-even price the incomplete total equals the alternative
    assert abs(ea.total_known_usd + price * Decimal(repr(term.quantity)) - eb.total_usd) < Decimal(
        "0.000001"
    )
    # an incomparable alternative is never used for break-even
    a2, b2 = pair(gpu_scope=SCOPE_NO_COMPILE)
    assert best_comparable((a2, estimate(a2)), [(b2, estimate(b2))]) is None


def test_break_even_needs_exactly_one_pending_price():
    a, _ = pair()
    complete = estimate(
        inputs(
            cand=candidate("p5.48xlarge", 2),
            trials=[trial("t-g", instance_type="p5.48xlarge")],
            prices=PRICES,
        )
    )
    assert break_even_price(complete, Decimal(100)) is None
    assert break_even_price(estimate(a), Decimal(100)) is not None
