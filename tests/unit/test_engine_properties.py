"""Properties of the engine that must hold for any workload, trials, prices and assumptions."""

from __future__ import annotations

import json
from decimal import Decimal

from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st

from tests.support.scenarios import scenarios
from trncost.errors import MissingEvidence
from trncost.estimate import estimate
from trncost.model import Estimate, EstimateInput, PriceSnapshot


def with_assumption(inp: EstimateInput, **values) -> EstimateInput:
    merged = {**inp.assumptions.model_dump(exclude_none=True), **values}
    return inp.model_copy(update={"assumptions": type(inp.assumptions).model_validate(merged)})


def scaled_prices(prices: PriceSnapshot, k: Decimal) -> PriceSnapshot:
    quotes = [
        q.model_copy(update={"tiers": [t.model_copy(update={"usd": t.usd * k}) for t in q.tiers]})
        for q in prices.quotes
    ]
    return prices.model_copy(update={"quotes": quotes})


def known(est: Estimate) -> Decimal:
    assert est.total_known_usd is not None
    return est.total_known_usd


@settings(max_examples=60, deadline=None)
@given(scenarios(priced=None))
def test_total_is_the_sum_of_line_items(inp):
    est = estimate(inp)
    assume(est.status != "infeasible")
    amounts = [li.amount_usd for li in est.line_items if li.amount_usd is not None]
    assert est.total_known_usd == sum(amounts, Decimal(0))
    # Issue 12: a component with a PENDING line has no subtotal (null), so the known part is
    # summed from the priced lines per component; a component without a PENDING line equals it.
    by_component = est.known_by_component()
    assert sum(by_component.values(), Decimal(0)) == est.total_known_usd
    for comp, subtotal in est.components.items():
        assert subtotal is None or subtotal == by_component[comp]
    if est.status == "complete":
        assert est.total_usd == est.total_known_usd == est.cost_per_target_usd
        assert all(li.amount_usd is not None for li in est.line_items)
    else:
        assert est.total_usd is None
        pending_qty = sum(li.quantity for li in est.line_items if li.amount_usd is None)
        assert sum(t.quantity for t in est.pending_terms) == pending_qty


@settings(max_examples=40, deadline=None)
@given(scenarios(priced=None), st.decimals("1", "5", places=3))
def test_cost_never_decreases_when_prices_rise(inp, k):
    base = estimate(inp)
    assume(base.status != "infeasible")
    dearer = estimate(inp.model_copy(update={"prices": scaled_prices(inp.prices, k)}))
    assert known(dearer) >= known(base)


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.floats(0, 0.01), st.floats(0, 0.01))
def test_cost_never_decreases_when_the_failure_rate_rises(inp, lam, extra):
    low = estimate(with_assumption(inp, failure_rate_per_instance_hour=lam))
    high = estimate(with_assumption(inp, failure_rate_per_instance_hour=lam + extra))
    assume(high.status == "complete" and low.status == "complete")
    assert high.total_usd >= low.total_usd
    assert high.time.total_h >= low.time.total_h


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.floats(0, 0.9), st.floats(0, 0.09))
def test_cost_never_decreases_when_the_idle_fraction_rises(inp, idle, extra):
    low = estimate(with_assumption(inp, idle_fraction=idle))
    high = estimate(with_assumption(inp, idle_fraction=idle + extra))
    assume(high.status == "complete")
    assert high.total_usd >= low.total_usd


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.floats(1, 10))
def test_cost_never_increases_when_throughput_rises(inp, k):
    slow = estimate(inp)
    faster_trials = [
        t.model_copy(
            update={
                "work": t.work.model_copy(
                    update={
                        "done": t.work.done * k,
                        "quality_meeting": t.work.quality_meeting * k,
                        "warmup": None if t.work.warmup is None else t.work.warmup * k,
                    }
                ),
                # a faster run's steady samples are faster too (else it is inconsistent)
                "steady_throughput_samples": [x * k for x in t.steady_throughput_samples],
            }
        )
        for t in inp.trials
    ]
    try:
        fast = estimate(inp.model_copy(update={"trials": faster_trials}))
    except MissingEvidence:  # k× faster is past the chips' peak: excluded as impossible
        reject()
    # the same trials pooled on both sides (a k× faster trial past the peak is excluded)
    assume([a.admission for a in fast.admission] == [a.admission for a in slow.admission])
    assume(slow.status == "complete" and fast.status == "complete")
    assert fast.total_usd <= slow.total_usd
    assert fast.time.total_h <= slow.time.total_h * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(scenarios(priced=False))
def test_a_pending_price_never_yields_a_complete_total(inp):
    est = estimate(inp)
    assume(est.status != "infeasible")
    assert est.status == "incomplete"
    assert est.total_usd is None and est.cost_per_target_usd is None
    assert [t.price_key for t in est.pending_terms] == [
        "AmazonEC2/us-east-1/trn2.48xlarge/on_demand"
    ]
    assert "P[AmazonEC2/us-east-1/trn2.48xlarge/on_demand]" in est.total_formula
    assert all(li.provenance.kind == "pending" for li in est.line_items if li.amount_usd is None)


@settings(max_examples=40, deadline=None)
@given(scenarios(priced=None))
def test_every_line_and_input_has_provenance_and_resolvable_inputs(inp):
    est = estimate(inp)
    ids = {row.id for row in est.inputs}
    assert len(ids) == len(est.inputs)
    for row in est.inputs:
        assert row.provenance.kind in {
            "official_price",
            "trial_measurement",
            "user_assumption",
            "published_reference",
            "derived",
            "pending",
        }
        if row.provenance.kind == "published_reference":
            assert row.provenance.sources and row.provenance.figure, row.id
        if row.provenance.kind == "derived":
            assert set(row.provenance.inputs) <= ids, row.id
    for li in est.line_items:
        assert li.provenance.kind in {"derived", "pending"}
        assert li.inputs and set(li.inputs) <= ids, li.name
    prices = [r for r in est.inputs if r.id.startswith("price:")]
    assert all(r.provenance.kind in {"official_price", "pending"} for r in prices)


def _money_fields(est: Estimate):
    yield est.total_known_usd
    yield est.total_usd
    yield est.cloud_usd
    yield est.labour_usd
    yield est.cost_per_target_usd
    yield est.cost_per_million_tokens_usd
    yield from est.components.values()
    for li in est.line_items:
        yield li.amount_usd
        yield li.rate_usd


@settings(max_examples=40, deadline=None)
@given(scenarios(priced=None))
def test_money_never_becomes_float(inp):
    est = estimate(inp)
    for value in _money_fields(est):
        assert value is None or isinstance(value, Decimal)
    dumped = json.loads(est.model_dump_json())
    # Issue 12: an infeasible estimate has no known total (null), never a number 0.
    if est.status == "infeasible":
        assert dumped["total_known_usd"] is None
    else:
        assert isinstance(dumped["total_known_usd"], str)
    for key in ("cloud_usd", "labour_usd"):
        assert dumped[key] is None or isinstance(dumped[key], str)
    for li in dumped["line_items"]:
        assert li["amount_usd"] is None or isinstance(li["amount_usd"], str)
    # and back: the JSON form round-trips to the same Decimals
    assert Estimate.model_validate_json(est.model_dump_json()) == est


@settings(max_examples=30, deadline=None)
@given(scenarios(priced=None))
def test_same_input_same_estimate(inp):
    assert estimate(inp) == estimate(inp)


# -- issue 12: PENDING is never a number; the cloud bill apart from assumed labour -------------
@settings(max_examples=60, deadline=None)
@given(scenarios(priced=None))
def test_a_pending_line_never_yields_a_number_in_components(inp):
    est = estimate(inp)
    if est.status == "infeasible":
        assert all(v is None for v in est.components.values())
        assert est.total_known_usd is None
        return
    for comp, subtotal in est.components.items():
        lines = [li for li in est.line_items if li.component == comp]
        if any(li.amount_usd is None for li in lines):
            assert subtotal is None, comp
        else:
            assert subtotal == sum((li.amount_usd for li in lines), Decimal(0)), comp


@settings(max_examples=60, deadline=None)
@given(scenarios(priced=None))
def test_cloud_plus_labour_is_the_total(inp):
    est = estimate(inp)
    assume(est.status != "infeasible")
    labour = [li for li in est.line_items if li.cost == "labour"]
    cloud = [li for li in est.line_items if li.cost == "cloud"]
    assert est.labour_usd == sum((li.amount_usd for li in labour), Decimal(0))
    assert all(li.price_key is None and li.price_basis is None for li in labour)
    if est.status == "complete":
        assert est.cloud_usd + est.labour_usd == est.total_usd == est.cost_per_target_usd
        assert est.cloud_usd == sum((li.amount_usd for li in cloud), Decimal(0))
    else:
        # only priced lines can wait on a price, and they are all on the cloud bill
        assert est.cloud_usd is None and est.total_usd is None
        assert (
            est.labour_usd
            + sum((li.amount_usd for li in cloud if li.amount_usd is not None), Decimal(0))
            == est.total_known_usd
        )


@settings(max_examples=40, deadline=None)
@given(scenarios(priced=None))
def test_the_price_basis_is_the_weakest_priced_line(inp):
    est = estimate(inp)
    priced = [li for li in est.line_items if li.price_key and li.amount_usd is not None]
    if not priced:
        assert est.price_basis is None
        return
    assert est.price_basis == min((li.price_basis for li in priced), key=lambda b: b.strength)
    assert all(li.price_basis is None for li in est.line_items if li.amount_usd is None)
