"""Engine inputs shared by several test modules: the two worked examples computed by hand (their
arithmetic is in tests/unit/test_worked_examples.py) and a hypothesis strategy of random but
well-formed scenarios (tests/unit/test_engine_properties.py and others)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.model import EstimateInput


# Example 1: all six components, no failures, a 20 % idle share. The failure rate is stated as 0
# so the arithmetic is the cost model's alone (the failure posterior has its own worked tests in
# tests/unit/test_failure_posterior.py).
def example_one():
    t = trial(
        "t-1",
        phase="target",
        count=2,
        # 3.6e8 tokens on the steady clock + 3.6e7 in the 360 s warm-up, counted apart
        work={"unit": "tokens", "done": 3.96e8, "quality_meeting": 3.96e8, "warmup": 3.6e7},
        wall={
            "compile_s": 1800,
            "compile_cache_hit": False,
            "warmup_s": 360,
            "steady_s": 3000,
            "data_wait_s": 600,
            "checkpoint_save_s": 120,
            "evaluation_s": 180,
        },
        checkpointing={"saves": 2, "size_gb": 100, "restore_verified": True},
        quality={"metric": "eval_loss", "value": 1.9},
    )
    return inputs(
        wl=workload(dataset_gb=1000),
        cand=candidate("trn2.48xlarge", 2),
        trials=[t],
        prices=snapshot(
            instance_quote("trn2.48xlarge", "36.00"), instance_quote("c7i.16xlarge", "2.856")
        ),
        assumptions={
            "idle_fraction": 0.2,
            "ebs_gb_per_instance": 100,
            "checkpoints_retained": 2,
            "storage_months_after_run": 1,
            "transfer_out_gb": 1000,
            "transfer_inter_region_gb": 500,
            "log_ingest_gb": 100,
            "custom_metrics": 50,
            "data_preparation": {"instance_type": "c7i.16xlarge", "instance_hours": 10},
            "engineering_hours": 10,
            "engineering_hourly_usd": "100",
            "failure_rate_per_instance_hour": 0,
        },
    )


# Example 2: failures at the trial's own rate, stated (the fixed point with a measured restart),
# usage scaled from the trial, PENDING price. The trial's 2 failures in 13.33 instance-hours are
# stated as the rate so the fixed point is hand-checkable; what the failure posterior makes of
# them is tests/unit/test_failure_posterior.py's.
def example_two():
    t = trial(
        "t-a",
        instance_type="trn3.48xlarge",
        phase="target",
        count=4,
        work=1.44e9,
        wall={
            "compile_s": 3600,
            "warmup_s": 0,
            "steady_s": 7200,
            "data_wait_s": 0,
            "restart_s": 1200,
        },
        reliability={"failures": 2},
        checkpointing={"restore_verified": True},
        quality={"metric": "eval_loss", "value": 1.95},
        usage={"log_ingest_gb": 4.8, "transfer_out_gb": 48},
    )
    return inputs(
        cand=candidate("trn3.48xlarge", 4),
        trials=[t],
        prices=snapshot(),
        assumptions={"checkpoint_interval_s": 1800, "failure_rate_per_instance_hour": 0.15},
    )


COUNTS = st.sampled_from([1, 2, 4, 8, 16])


@st.composite
def scenarios(draw, priced: bool | None = True) -> EstimateInput:
    n_trial = draw(COUNTS)
    trials = []
    for i in range(draw(st.integers(1, 4))):
        steady = draw(st.floats(60, 36_000))
        # physically possible on one trn2.48xlarge: 6 × 8e9 × 2e5 / (16 × 667e12) = MFU 0.9
        tps = draw(st.floats(1e3, 2e5))
        saves = draw(st.integers(0, 8))
        failures = draw(st.integers(0, 3))
        warmup_s = draw(st.floats(0, 900))
        trials.append(
            trial(
                f"t-{i}",
                count=n_trial,
                phase=draw(st.sampled_from(["baseline", "target"])),
                # the warm-up's work counted apart (work and time on one clock)
                work={
                    "unit": "tokens",
                    "done": tps * (steady + warmup_s),
                    "quality_meeting": tps * (steady + warmup_s),
                    "warmup": tps * warmup_s,
                },
                wall={
                    "compile_s": draw(st.floats(0, 7200)),
                    "warmup_s": warmup_s,
                    "steady_s": steady,
                    "data_wait_s": draw(st.floats(0, 0.3)) * steady,
                    "checkpoint_save_s": draw(st.floats(1, 300)) * saves if saves else None,
                    "evaluation_s": draw(st.floats(0, 0.1)) * steady,
                    "restart_s": draw(st.floats(0, 1800)) * failures if failures else None,
                },
                steady_throughput_samples=[tps * draw(st.floats(0.9, 1.1)) for _ in range(3)],
                reliability={"failures": failures, "rerun_s": draw(st.floats(0, 600))},
                checkpointing={
                    "saves": saves,
                    "size_gb": 50.0 if saves else None,
                    "restore_verified": draw(st.booleans()),
                },
                usage={
                    "log_ingest_gb": draw(st.floats(0, 5)),
                    "transfer_out_gb": draw(st.floats(0, 500)),
                    "transfer_inter_region_gb": draw(st.floats(0, 50)),
                    "custom_metrics": draw(st.integers(0, 20_000)),
                },
            )
        )
    count = draw(st.one_of(st.just(n_trial), COUNTS))
    priced_now = draw(st.booleans()) if priced is None else priced
    prices = [instance_quote("c7i.16xlarge", "2.856")]
    if priced_now:
        prices.append(instance_quote("trn2.48xlarge", str(draw(st.decimals("1", "120", places=4)))))
    assumptions = {
        "idle_fraction": draw(st.floats(0, 0.8)),
        "ebs_gb_per_instance": draw(st.floats(0, 2000)),
        "checkpoints_retained": draw(st.integers(0, 5)),
        "storage_months_after_run": draw(st.floats(0, 6)),
        "data_preparation": {
            "instance_type": "c7i.16xlarge",
            "instance_hours": draw(st.floats(0, 500)),
        },
        "engineering_hours": draw(st.floats(0, 400)),
        "engineering_hourly_usd": str(draw(st.decimals("0", "300", places=2))),
    }
    if draw(st.booleans()):
        assumptions["checkpoint_interval_s"] = draw(st.floats(300, 14_400))
    return inputs(
        wl=workload(
            target={"unit": "tokens", "amount": draw(st.floats(1e8, 1e12))},
            dataset_gb=draw(st.floats(0, 100_000)),
        ),
        cand=candidate("trn2.48xlarge", count),
        trials=trials,
        prices=snapshot(*prices),
        assumptions=assumptions,
    )
