"""The estimate says when it reaches past its evidence, and uses only what the trials show."""

from __future__ import annotations

import pytest

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.estimate import estimate

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))
TARGET_OK = {"metric": "eval_loss", "value": 1.9}


def codes(est) -> set[str]:
    return {w.code for w in est.warnings}


def clean_trial(trial_id="t-1", **over):
    base = dict(
        phase="target",
        count=2,
        wall={
            "steady_s": 3600,
            "compile_s": 600,
            "warmup_s": 60,
            "evaluation_s": 36,
            "checkpoint_save_s": 20,
            "data_wait_s": 0,
            "restart_s": 300,
        },
        checkpointing={"saves": 2, "size_gb": 10, "restore_verified": True},
        reliability={"failures": 1},
        quality=TARGET_OK,
    )
    base.update(over)
    return trial(trial_id, **base)


def test_a_well_evidenced_estimate_has_no_evidence_warnings():
    est = estimate(inputs(trials=[clean_trial()], prices=PRICES))
    evidence_codes = {
        "unmeasured_instance_count",
        "no_target_phase_trial",
        "restore_never_verified",
        "mixed_timing_scopes",
        "quality_gate_not_verified",
        "no_failures_observed",
    }
    assert not codes(est) & evidence_codes


def test_an_unmeasured_instance_count_is_scaled_by_the_published_prior_and_flagged():
    est = estimate(inputs(cand=candidate(count=8), trials=[clean_trial()], prices=PRICES))
    # measured: 3.6e8 tokens / (3,600 steady + 60 warm-up s: its work is not counted apart, so
    # the clock holds it) = 98,360.66 tokens/s at 2 instances → at 8: × (8/2)^α, α the prior's
    # mean exponent (1 − e^(μ + σ²/2), below 1; the point is the draws' geometric mean): less
    # than linear's 4×, never more
    from trncost.estimate.scaling_prior import PRIOR

    rate = 3.6e8 / 3660
    alpha = PRIOR.mean_exponent
    assert 0 < alpha < 1
    assert est.steady_throughput == pytest.approx(rate * 4**alpha)
    assert est.steady_throughput < 4 * rate
    assert {"unmeasured_instance_count", "extrapolated_scale"} <= codes(est)
    row = next(r for r in est.inputs if r.id == "scaling:exponent")
    assert row.provenance.kind == "published_reference" and row.value == pytest.approx(alpha)
    assert "assumption:linear_scaling" not in {r.id for r in est.inputs}


def test_any_count_beyond_the_largest_measured_is_extrapolated():
    # measured at 2: 4 (twice the largest, once tolerated) reaches past the evidence
    est = estimate(inputs(cand=candidate(count=4), trials=[clean_trial()], prices=PRICES))
    assert {"unmeasured_instance_count", "extrapolated_scale"} <= codes(est)
    assert "beyond the largest measured count (2)" in next(
        w.message for w in est.warnings if w.code == "extrapolated_scale"
    )
    # below the largest measured count: unmeasured, not extrapolated
    est = estimate(inputs(cand=candidate(count=1), trials=[clean_trial()], prices=PRICES))
    assert "unmeasured_instance_count" in codes(est)
    assert "extrapolated_scale" not in codes(est)


def test_baseline_only_evidence_is_flagged():
    est = estimate(inputs(trials=[clean_trial(phase="baseline")], prices=PRICES))
    assert {"no_target_phase_trial", "quality_gate_not_verified"} <= codes(est)


def test_target_trials_are_preferred_over_baselines_at_the_same_count():
    fast_baseline = clean_trial("t-b", phase="baseline", work=7.2e8)
    est = estimate(inputs(trials=[fast_baseline, clean_trial()], prices=PRICES))
    # the target run's 3.6e8 / (3,600 + 60 warm-up s), not the baseline's twice that
    assert est.steady_throughput == pytest.approx(3.6e8 / 3660)


def test_restore_never_verified_is_flagged():
    t = clean_trial(checkpointing={"saves": 2, "size_gb": 10, "restore_verified": False})
    assert "restore_never_verified" in codes(estimate(inputs(trials=[t], prices=PRICES)))


def test_pooling_trials_with_different_timing_scopes_is_flagged():
    other = clean_trial(
        "t-2",
        wall={"steady_s": 3600},
        scope={"compile": False, "data_loading": True, "checkpoints": True, "evaluation": True},
    )
    # by default the trial on another clock is excluded (a tie goes to the fuller clock)
    est = estimate(inputs(trials=[clean_trial(), other], prices=PRICES))
    assert "mixed_timing_scopes" not in codes(est)
    (excluded,) = [a for a in est.admission if a.admission == "excluded"]
    assert excluded.trial_id == "t-2" and excluded.reasons[0].code == "other_timing_scope"
    assert "compile" in excluded.reasons[0].message
    # pooled at the request's flag, and said so
    est = estimate(
        inputs(
            trials=[clean_trial(), other],
            prices=PRICES,
            assumptions={"pool_mismatched_trials": True},
        )
    )
    (w,) = [w for w in est.warnings if w.code == "mixed_timing_scopes"]
    assert "compile" in w.message
    assert "mismatched_trials_pooled" in codes(est)


def test_a_failed_quality_gate_is_not_verification():
    t = clean_trial(quality={"metric": "eval_loss", "value": 2.5})
    assert "quality_gate_not_verified" in codes(estimate(inputs(trials=[t], prices=PRICES)))


def test_failed_and_diverged_runs_cost_money_but_add_no_throughput():
    failed = clean_trial("t-f", status="failed", work=1e12)
    diverged = clean_trial("t-d", status="diverged", work=1e12, quality_work=0)
    est = estimate(inputs(trials=[clean_trial(), failed, diverged], prices=PRICES))
    assert est.steady_throughput == pytest.approx(3.6e8 / 3660)  # warm-up on the clock
    assert {a.trial_id: a.admission for a in est.admission} == {
        "t-1": "pooled",
        "t-f": "excluded",
        "t-d": "excluded",
    }
    trial_lines = [li.name for li in est.line_items if li.name.startswith("trial ")]
    assert len(trial_lines) == 3


def test_without_a_measured_restart_the_checkpoint_restore_is_a_flagged_lower_bound():
    t = clean_trial(wall={"steady_s": 3600, "checkpoint_restore_s": 120})
    est = estimate(inputs(trials=[t], prices=PRICES))
    row = next(r for r in est.inputs if r.id == "failure:restart_s")
    assert row.value == 120 and "restore only" in row.label
    assert "restart_not_measured" in codes(est)


def test_a_stated_failure_rate_replaces_the_measurement_and_its_warnings():
    t = clean_trial(reliability={"failures": 0})
    measured = estimate(inputs(trials=[t], prices=PRICES))
    assert "no_failures_observed" in codes(measured)
    stated = estimate(
        inputs(trials=[t], prices=PRICES, assumptions={"failure_rate_per_instance_hour": 0.01})
    )
    assert "no_failures_observed" not in codes(stated)
    ids = {r.id for r in stated.inputs}
    assert "assumption:failure_rate_per_instance_hour" in ids and "failure:rate" not in ids
    assert stated.time.total_h > measured.time.total_h


def test_trials_on_another_parallelism_or_sdk_are_flagged():
    t = clean_trial(
        candidate={
            "instance_type": "trn2.48xlarge",
            "instance_count": 2,
            "region": "us-east-1",
            "parallelism": {"tensor": 4},
            "neuron_sdk_version": "2.25.0",
        }
    )
    cand = candidate(parallelism={"tensor": 8}, neuron_sdk_version="2.27.0")
    est = estimate(inputs(cand=cand, trials=[t], prices=PRICES))
    assert {"parallelism_mismatch", "neuron_sdk_version_mismatch"} <= codes(est)


def test_a_price_override_is_a_user_assumption_never_an_official_price():
    override = {
        "key": {"service": "AmazonEC2", "region": "us-east-1", "item": "trn2.48xlarge"},
        "usd": "30",
        "unit": "Hrs",
        "note": "EDP discount",
    }
    est = estimate(
        inputs(trials=[clean_trial()], prices=PRICES, assumptions={"price_overrides": [override]})
    )
    row = next(r for r in est.inputs if r.id == "price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand")
    assert row.provenance.kind == "user_assumption" and row.value == "30"
    line = next(li for li in est.line_items if li.component == "instances")
    assert line.rate_usd == 30
