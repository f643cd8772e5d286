"""Worked examples computed by hand; the arithmetic is in the comments.

Given a workload, trials, prices and assumptions, when the engine estimates, then every line and
the total match the hand computation (to the micro-dollar the engine keeps).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.support.factories import (
    candidate,
    inputs,
    instance_quote,
    quote,
    snapshot,
    trial,
    workload,
)
from tests.support.scenarios import example_one, example_two
from trncost.estimate import break_even_price, estimate
from trncost.model import CapacityBlockTerms, PriceKey, PurchaseOption

MICRO = Decimal("0.000001")


def line(est, name: str):
    matches = [li for li in est.line_items if li.name == name]
    assert len(matches) == 1, f"{name!r} not in {[li.name for li in est.line_items]}"
    return matches[0]


def close(actual: Decimal | None, expected: str) -> bool:
    assert actual is not None
    return abs(actual - Decimal(expected)) <= MICRO


# ---------------------------------------------------------------------------------------------
# Example 1: all six components, no failures, a 20 % idle share.
# ---------------------------------------------------------------------------------------------
# The inputs: tests/support/scenarios.py example_one.


def test_example_one_time_to_target():
    est = estimate(example_one())
    t = est.time
    # throughput  = 3.6e8 tokens / (3000 steady + 600 data-wait s) = 100,000 tokens/s
    assert est.steady_throughput == pytest.approx(100_000)
    # steady      = 7.2e9 / 1e5 = 72,000 s = 20 h
    assert t.steady_h == pytest.approx(20)
    # compile     = 1,800 s = 0.5 h (one-time, the only measured compile is a cache miss)
    # warm-up     = 360 s = 0.1 h
    assert (t.compile_h, t.warmup_h) == (pytest.approx(0.5), pytest.approx(0.1))
    # checkpoints: interval = 3,600 / 2 saves = 1,800 s; save = 120 / 2 = 60 s;
    #              floor(72,000 / 1,800) = 40 saves × 60 s = 2,400 s
    assert t.checkpoint_h == pytest.approx(2400 / 3600)
    # evaluation  = 180 / 3,600 = 0.05 of steady → 3,600 s = 1 h
    assert t.evaluation_h == pytest.approx(1)
    # T_base = 1,800 + 360 + 72,000 + 2,400 + 3,600 = 80,160 s; no failures observed → T = T_base
    assert t.base_h == pytest.approx(80160 / 3600)
    assert t.total_h == pytest.approx(80160 / 3600)
    # held = 80,160 / (1 − 0.2) = 100,200 s
    assert t.held_h == pytest.approx(100200 / 3600)
    assert est.effective_throughput == pytest.approx(7.2e9 / 80160)


def test_example_one_cost_lines_and_total():
    est = estimate(example_one())
    assert est.status == "complete"
    held_months = Decimal(100200) / Decimal(3600) / Decimal(730)  # 0.038127853...
    # instances: 2 × 100,200 billed s / 3,600 × $36 = $2,004.00
    assert line(est, "2× trn2.48xlarge").amount_usd == Decimal("2004.000000")
    # EBS gp3: 100 GB × 2 × 0.0381279 months × $0.08 = $0.610046
    assert close(line(est, "EBS gp3 volumes").amount_usd, "0.610046")
    # S3: (1,000 dataset + 2 × 100 GB checkpoints) = 1,200 GB, first tier $0.023
    #     × (0.0381279 held + 1 after) months = 27.6 × 1.0381279 = $28.652329
    assert close(line(est, "S3 Standard (dataset, checkpoints, artifacts)").amount_usd, "28.652329")
    # transfer out: 1,000 GB in one billing month, first tier $0.09 = $90
    assert line(est, "data transfer out to the internet").amount_usd == Decimal("90.000000")
    # inter-region: 500 GB × $0.02 = $10
    assert line(est, "inter-region data transfer").amount_usd == Decimal("10.000000")
    # logs: 100 GB × $0.50 = $50; stored on average half the run: 100 × 0.0190639 × $0.03
    assert line(est, "CloudWatch Logs ingestion").amount_usd == Decimal("50.000000")
    assert close(line(est, "CloudWatch Logs storage").amount_usd, "0.057192")
    # custom metrics: 50 × $0.30 × 0.0381279 months = $0.571918
    assert close(line(est, "CloudWatch custom metrics").amount_usd, "0.571918")
    # data preparation: 10 h × $2.856 = $28.56
    assert line(est, "preprocessing (c7i.16xlarge)").amount_usd == Decimal("28.560000")
    # the trial: 2 instances × 6,060 s wall = 12,120 instance-s = 3.3667 h × $36 = $121.20
    assert line(est, "trial t-1 (target, 2× trn2.48xlarge)").amount_usd == Decimal("121.200000")
    # engineering: 10 h × $100 = $1,000
    assert line(est, "engineering (adaptation, debugging)").amount_usd == Decimal("1000.000000")
    # total = 2004 + 0.610046 + 28.652329 + 90 + 10 + 50 + 0.057192 + 0.571918 + 28.56
    #         + 121.20 + 1000 = $3,333.651485
    assert close(est.total_usd, "3333.651485")
    assert est.total_usd == sum(li.amount_usd for li in est.line_items)
    assert est.cost_per_target_usd == est.total_usd
    # per 1M tokens: 3,333.651485 / 7,200 = $0.463007
    assert close(est.cost_per_million_tokens_usd, "0.463007")
    assert held_months > 0


def test_example_one_components_sum_to_total_and_every_line_is_traceable():
    est = estimate(example_one())
    assert set(est.components) == {
        "instances",
        "storage",
        "data_transfer",
        "logs",
        "data_preparation",
        "adaptation_reruns",
    }
    assert sum(est.components.values()) == est.total_usd
    ids = {row.id for row in est.inputs}
    for li in est.line_items:
        assert li.provenance.kind == "derived"
        assert set(li.inputs) <= ids, li.name
    price_row = next(r for r in est.inputs if r.id.startswith("price:AmazonEC2/us-east-1/trn2"))
    assert price_row.provenance.kind == "official_price"
    assert price_row.provenance.sku == "SKU-trn2.48xlarge"
    throughput_row = next(r for r in est.inputs if r.id == "throughput:n=2")
    assert throughput_row.provenance.kind == "trial_measurement"
    assert throughput_row.provenance.trial_ids == ["t-1"]
    idle_row = next(r for r in est.inputs if r.id == "assumption:idle_fraction")
    assert idle_row.provenance.kind == "user_assumption"
    codes = {w.code for w in est.warnings}
    assert codes == set()  # the failure rate is stated (0): no failure-evidence warning


# ---------------------------------------------------------------------------------------------
# Example 2: measured failures (the fixed point), usage scaled from the trial, PENDING price.
# ---------------------------------------------------------------------------------------------
# The inputs: tests/support/scenarios.py example_two.


def test_example_two_failure_fixed_point():
    est = estimate(example_two())
    t = est.time
    # throughput = 1.44e9 / 7,200 s = 200,000 tokens/s → steady = 7.2e9 / 2e5 = 36,000 s
    assert t.steady_h == pytest.approx(10)
    # no checkpoint save measured → no checkpoint time (warned); evaluation not measured (warned)
    assert t.checkpoint_h == 0 and t.evaluation_h == 0
    # T_base = 3,600 compile + 0 warm-up + 36,000 = 39,600 s = 11 h
    assert t.base_h == pytest.approx(11)
    # λ = 2 failures / (4 × 12,000 s / 3,600) = 2 / 13.333 = 0.15 per instance-hour
    # restart = 1,200 / 2 = 600 s; lost work = interval / 2 = 900 s → 1,500 s = 0.41667 h
    # 1 − 0.15 × 4 × 0.41667 = 0.75 → T = 39,600 / 0.75 = 52,800 s = 14.667 h
    assert t.total_h == pytest.approx(52800 / 3600)
    assert t.failure_overhead_h == pytest.approx((52800 - 39600) / 3600)
    assert t.held_h == pytest.approx(52800 / 3600)
    codes = {w.code for w in est.warnings}
    assert {"checkpoint_save_not_measured", "evaluation_not_measured"} <= codes


def test_example_two_pending_price_keeps_the_total_symbolic():
    est = estimate(example_two())
    assert est.status == "incomplete"
    assert est.total_usd is None and est.cost_per_target_usd is None
    assert est.cost_per_million_tokens_usd is None
    # logs: 4.8 GB / 13.333 instance-h = 0.36 GB per instance-hour × 4 × 14.667 h = 21.12 GB
    #       ingestion 21.12 × $0.50 = $10.56
    #       storage 21.12 × (14.667 / 730 / 2) months × $0.03 = $0.006365
    # transfer out: 48 / 13.333 = 3.6 GB per instance-hour × 4 × 14.667 = 211.2 GB × $0.09
    #       = $19.008
    assert line(est, "CloudWatch Logs ingestion").amount_usd == Decimal("10.560000")
    assert close(line(est, "CloudWatch Logs storage").amount_usd, "0.006365")
    assert close(line(est, "data transfer out to the internet").amount_usd, "19.008")
    # known part = 10.56 + 0.006365 + 19.008 = $29.574365
    assert close(est.total_known_usd, "29.574365")
    # pending: the run 4 × 52,800 s = 58.667 instance-h + the trial 4 × 12,000 s = 13.333 → 72
    (term,) = est.pending_terms
    assert term.price_key == "AmazonEC2/us-east-1/trn3.48xlarge/on_demand"
    assert term.quantity == pytest.approx(72.0)
    assert "no Price List product for trn3.48xlarge" in term.reason
    assert est.total_formula == (
        "$29.57 + 72.00 instance-hour × P[AmazonEC2/us-east-1/trn3.48xlarge/on_demand]"
    )
    instance_line = line(est, "4× trn3.48xlarge")
    assert instance_line.amount_usd is None and instance_line.provenance.kind == "pending"
    # break-even against a $5,000 alternative: (5,000 − 29.574365) / 72 = $69.0337 per hour
    be = break_even_price(est, Decimal("5000"))
    assert abs(be - Decimal("69.033689")) < Decimal("0.00001")


# ---------------------------------------------------------------------------------------------
# Example 3: billing rules and tiers at their edges.
# ---------------------------------------------------------------------------------------------
def tiny(**assumptions):
    # 1e6 tokens at 100,000 tokens/s: 10 s of steady work and nothing else measured.
    t = trial("t-tiny", phase="target", count=2, work=3.6e8, wall={"steady_s": 3600})
    return inputs(
        wl=workload(target={"unit": "tokens", "amount": 1e6}, dataset_gb=60000),
        trials=[t],
        prices=snapshot(instance_quote("trn2.48xlarge", "36.00")),
        assumptions=assumptions,
    )


def test_ec2_bills_a_60_second_minimum():
    est = estimate(tiny())
    assert est.time.held_h == pytest.approx(10 / 3600)
    # held 10 s, billed max(60, 10) = 60 s per instance: 2 × 60 / 3,600 × $36 = $1.20
    assert line(est, "2× trn2.48xlarge").amount_usd == Decimal("1.200000")


def test_s3_and_transfer_tiers():
    est = estimate(tiny(storage_months_after_run=2, transfer_out_gb=20000))
    # S3: 60,000 GB/month = 51,200 × $0.023 + 8,800 × $0.022 = 1,177.60 + 193.60 = $1,371.20
    #     × (2 + 10 s / 3,600 / 730) months = 1,371.20 × 2.0000038 = $2,742.405218
    assert close(
        line(est, "S3 Standard (dataset, checkpoints, artifacts)").amount_usd, "2742.405218"
    )
    # transfer out, one billing month: 10,240 × $0.09 + 9,760 × $0.085 = 921.60 + 829.60
    assert line(est, "data transfer out to the internet").amount_usd == Decimal("1751.200000")


def test_transfer_over_several_billing_months_is_tiered_per_month():
    # steady 7.2e9 / 1e5 = 72,000 s = 20 h... make it 1,000 h: 3.6e11 tokens → 2 billing months
    t = trial("t-1", phase="target", count=2, work=3.6e8, wall={"steady_s": 3600})
    est = estimate(
        inputs(
            wl=workload(target={"unit": "tokens", "amount": 3.6e11}),
            trials=[t],
            prices=snapshot(instance_quote("trn2.48xlarge", "36.00")),
            assumptions={"transfer_out_gb": 40960, "failure_rate_per_instance_hour": 0},
        )
    )
    assert est.time.held_h == pytest.approx(1000)
    # ceil(1,000 / 730) = 2 months of 20,480 GB: 2 × (10,240 × 0.09 + 10,240 × 0.085) = $3,584
    assert line(est, "data transfer out to the internet").amount_usd == Decimal("3584.000000")


def test_sagemaker_bills_seconds_without_minimum():
    t = trial(
        "t-sm",
        instance_type="ml.trn1.32xlarge",
        phase="target",
        count=2,
        work=3.6e8,
        wall={"steady_s": 3600},
        candidate={
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 2,
            "region": "us-east-1",
            "platform": "sagemaker",
        },
    )
    key = PriceKey.for_instance("ml.trn1.32xlarge", "us-east-1", platform="sagemaker")
    est = estimate(
        inputs(
            wl=workload(target={"unit": "tokens", "amount": 1e6}),
            trials=[t],
            cand=candidate("ml.trn1.32xlarge", 2, platform="sagemaker"),
            prices=snapshot(quote(key, [(0, None, "36.00")], "Hrs")),
            assumptions={"failure_rate_per_instance_hour": 0},
        )
    )
    # 10 s held, 10 s billed: 2 × 10 / 3,600 × $36 = $0.20
    assert line(est, "2× ml.trn1.32xlarge").amount_usd == Decimal("0.200000")


def test_capacity_block_charges_whole_blocks():
    t = trial("t-1", phase="target", count=2, work=3.6e8, wall={"steady_s": 3600})
    key = PriceKey.for_instance("trn2.48xlarge", "us-east-1", PurchaseOption.capacity_block)
    block = quote(
        key,
        [(0, None, "2400.00")],
        "block",
        capacity_block=CapacityBlockTerms(duration_hours=24, instance_count=4),
        source="capacity_block_query",
    )
    # 30 h of work: 1.08e10 tokens at 1e5 tokens/s
    est = estimate(
        inputs(
            wl=workload(target={"unit": "tokens", "amount": 1.08e10}),
            trials=[t],
            cand=candidate("trn2.48xlarge", 2, purchase_option="capacity_block"),
            prices=snapshot(block, instance_quote("trn2.48xlarge", "36.00")),
        )
    )
    # ceil(30 h / 24 h) = 2 blocks in time × ceil(2 / 4) = 1 in count = 2 blocks × $2,400
    li = line(est, "trn2.48xlarge capacity blocks")
    assert li.quantity == 2 and li.amount_usd == Decimal("4800.000000")


def test_a_plan_whose_failures_outpace_its_checkpoints_is_infeasible():
    est = estimate(
        tiny(failure_rate_per_instance_hour=1.0, restart_s=1800, checkpoint_interval_s=3600)
    )
    # 1 − 1.0 × 2 × (0.5 h restart + 0.5 h lost) = −1 ≤ 0: never finishes
    assert est.status == "infeasible"
    assert est.total_usd is None and est.time is None and est.line_items == []
    assert "cannot finish" in est.infeasible_reason


def test_artifacts_a_trial_kept_in_s3_are_stored_too():
    inp = example_one()
    t = inp.trials[0]
    t = t.model_copy(update={"usage": t.usage.model_copy(update={"storage_gb": 300.0})})
    est = estimate(inp.model_copy(update={"trials": [t]}))
    # (1,000 dataset + 200 checkpoints + 300 artifacts) GB × $0.023 × 1.0381279 months
    #  = 34.5 × 1.0381279 = $35.815411
    assert close(line(est, "S3 Standard (dataset, checkpoints, artifacts)").amount_usd, "35.815411")
    row = next(r for r in est.inputs if r.id == "usage:storage_gb")
    assert row.provenance.kind == "trial_measurement" and row.value == 300.0
