"""The decision rules, one test per rule, each checked by hand against the seed checklist:
繼續試跑 (continue trials) / 轉用其他實例比較 (compare alternatives) / 暫緩遷移 (pause)."""

from __future__ import annotations

import pytest

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.errors import MissingEvidence
from trncost.estimate import analyse, decide, estimate

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"), instance_quote("p5.48xlarge", "80"))
OK = {"metric": "eval_loss", "value": 1.9}


def verified(trial_id="t-1", instance_type="trn2.48xlarge", **over):
    """A target run that verified everything: quality, restore, a failure and its restart,
    utilization, on the workload's code and dataset."""
    base = dict(
        instance_type=instance_type,
        phase="target",
        count=2,
        work=3.6e8,
        wall={"steady_s": 3600, "compile_s": 600, "checkpoint_save_s": 20, "restart_s": 300},
        checkpointing={"saves": 2, "size_gb": 10, "restore_verified": True},
        reliability={"failures": 1},
        quality=OK,
        utilization={"neuroncore": 0.8} if instance_type.startswith("trn") else {"gpu": 0.8},
    )
    base.update(over)
    return trial(trial_id, **base)


def case(trials, instance_type="trn2.48xlarge", count=2, prices=PRICES, **assumptions):
    return inputs(
        cand=candidate(instance_type, count), trials=trials, prices=prices, assumptions=assumptions
    )


def gpu():
    # p5 at $80/h and the same throughput: dearer than trn2 at $36/h
    inp = case([verified("g-1", "p5.48xlarge"), verified("g-2", "p5.48xlarge")], "p5.48xlarge")
    return inp, estimate(inp)


def run(inp, **kw):
    try:
        est = estimate(inp)
        return decide(inp, est, alternatives=[gpu()], **kw)
    except MissingEvidence as exc:
        return decide(inp, None, alternatives=[gpu()], error=str(exc), **kw)


def codes(d):
    return {r.code: r.action.value for r in d.reasons}


def test_everything_verified_and_cheapest_is_ready_to_budget():
    d = run(case([verified("t-1"), verified("t-2")]))
    assert d.action == "ready_to_budget" and d.reasons == []


# -- pause / adapt -------------------------------------------------------------------------
def test_fit_not_passed_pauses():
    failed = [verified("t-1", status="failed"), verified("t-2", status="diverged")]
    d = run(case(failed))
    assert d.action == "pause_migration"
    assert codes(d)["fit_not_passed"] == "pause_migration"


def test_unsupported_ops_in_the_current_code_pause():
    ops = verified("t-2", reliability={"failures": 1, "unsupported_ops": ["aten::_fft_r2c"]})
    d = run(case([verified("t-1"), ops]))
    assert d.action == "pause_migration"
    assert "aten::_fft_r2c" in next(r.message for r in d.reasons if r.code == "unsupported_ops")


def test_unsupported_ops_fixed_in_an_older_code_version_do_not_count():
    old = verified(
        "t-0", code_version="git:old", reliability={"failures": 1, "unsupported_ops": ["x"]}
    )
    d = run(case([verified("t-1"), verified("t-2"), old]))
    assert "unsupported_ops" not in codes(d)


def test_unverified_software_changes_without_reproducible_data_pause():
    # one run only (≥ 2 needed to reproduce) and 120 engineering hours of changes planned
    d = run(case([verified()], engineering_hours=120, engineering_hourly_usd="100"))
    assert d.action == "pause_migration"
    assert codes(d)["unverified_software_changes"] == "pause_migration"


def test_unmeasured_utilization_without_reproducible_data_pauses():
    d = run(case([verified(utilization={})]))
    assert codes(d)["unverified_utilization"] == "pause_migration"
    # with a repeat the same gap no longer pauses
    d = run(case([verified("t-1", utilization={}), verified("t-2", utilization={})]))
    assert "unverified_utilization" not in codes(d)


def test_a_pending_price_without_reproducible_data_pauses():
    d = run(case([verified(instance_type="trn3.48xlarge")], "trn3.48xlarge"))
    assert d.action == "pause_migration"
    assert codes(d)["unverified_prices"] == "pause_migration"


# -- continue trials -----------------------------------------------------------------------
def test_baseline_only_evidence_continues_trials():
    d = run(case([verified("t-1", phase="baseline"), verified("t-2", phase="baseline")]))
    assert d.action == "continue_trials"
    assert codes(d) == {
        "representative_load_unverified": "continue_trials",
        "quality_unverified": "continue_trials",
    }


def test_unverified_quality_continues_trials():
    bad = {"metric": "eval_loss", "value": 2.5}  # gate: eval_loss at most 2.0
    d = run(case([verified("t-1", quality=bad), verified("t-2", quality=bad)]))
    assert codes(d) == {"quality_unverified": "continue_trials"}


def test_unverified_restore_continues_trials():
    ck = {"saves": 2, "size_gb": 10, "restore_verified": False}
    d = run(case([verified("t-1", checkpointing=ck), verified("t-2", checkpointing=ck)]))
    assert codes(d) == {"restore_unverified": "continue_trials"}


def test_unverified_reruns_continue_trials():
    calm = dict(reliability={"failures": 0}, wall={"steady_s": 3600, "checkpoint_save_s": 20})
    d = run(case([verified("t-1", **calm), verified("t-2", **calm)]))
    assert d.action == "continue_trials"
    assert codes(d) == {"rerun_unverified": "continue_trials"}


def test_a_count_far_past_the_trials_continues_trials():
    d = run(case([verified("t-1"), verified("t-2")], count=8))
    # 8 > 2: extrapolated, scaled from one measured count by the published prior, no target
    # trial at 8. The two failures in ~2.5 trial instance-hours move the fleet prior toward the
    # trials (one model, issue 22) without making the plan impossible: before, the trials "spoke
    # alone" (a failure every 1.2 instance-hours) and the plan could not finish
    assert codes(d) == {
        "scale_extrapolated": "continue_trials",
        "scale_from_prior": "continue_trials",
        "target_not_at_planned_scale": "continue_trials",
    }


def test_no_trial_at_all_starts_with_a_fit_trial():
    # Given a candidate with no trial and no chip on record to project it from
    d = run(case([verified("g-1", "p5.48xlarge")], "g5.48xlarge"))
    # Then the only reason is its missing fit trial
    assert d.action == "continue_trials" and set(codes(d)) == {"no_trials"}


def test_no_trial_of_its_own_is_projected_and_never_budgeted():
    # Given a Trainium2 candidate whose only trials ran on p5 (a chip on record)
    d = run(case([verified("g-1", "p5.48xlarge")]))
    # Then it is projected: continue trials, starting with its fit trial, never ready
    assert d.action == "continue_trials"
    assert {"no_trials", "projected"} <= set(codes(d))
    assert "fit trial" in next(r.message for r in d.reasons if r.code == "projected")


# -- compare alternatives ------------------------------------------------------------------
def test_costlier_than_a_comparable_alternative_compares():
    dear = snapshot(instance_quote("trn2.48xlarge", "200"), instance_quote("p5.48xlarge", "80"))
    inp = case([verified("t-1"), verified("t-2")], prices=dear)
    d = decide(inp, estimate(inp), alternatives=[gpu()])
    assert d.action == "compare_alternatives"
    assert codes(d) == {"costlier_than_alternative": "compare_alternatives"}


def test_limited_key_features_compare():
    d = run(case([verified("t-1"), verified("t-2")]), limited_features=["expert parallelism"])
    assert d.action == "compare_alternatives"
    assert codes(d) == {"key_features_limited": "compare_alternatives"}


def test_a_pending_price_with_verified_evidence_compares_at_the_break_even():
    trn3 = [verified("t-1", "trn3.48xlarge"), verified("t-2", "trn3.48xlarge")]
    d = run(case(trn3, "trn3.48xlarge"))
    assert d.action == "compare_alternatives"
    (r,) = d.reasons
    assert r.code == "price_pending" and "breaks even with 2× p5.48xlarge" in r.message


def test_a_pending_price_with_evidence_gaps_still_means_more_trials():
    trn3 = [verified(t, "trn3.48xlarge", phase="baseline") for t in ("t-1", "t-2")]
    d = run(case(trn3, "trn3.48xlarge"))
    assert d.action == "continue_trials"
    assert codes(d)["price_pending"] == "continue_trials"


def test_the_strongest_action_wins_and_every_reason_is_listed():
    ops = verified("t-1", phase="baseline", reliability={"failures": 1, "unsupported_ops": ["x"]})
    d = run(case([ops, verified("t-2", phase="baseline")]), limited_features=["fp8"])
    assert d.action == "pause_migration"
    assert [r.action.value for r in d.reasons] == sorted(
        (r.action.value for r in d.reasons),
        key=["pause_migration", "compare_alternatives", "continue_trials"].index,
    )
    assert {"unsupported_ops", "key_features_limited", "representative_load_unverified"} <= set(
        codes(d)
    )


def test_the_migration_decision_is_the_best_trainium_candidate():
    a = analyse(
        [case([verified("t-1"), verified("t-2")]), case([verified("t-1")], count=8), gpu()[0]],
        samples=500,
        seed=1,
    )
    assert a.decision.action == "ready_to_budget"
    assert a.decision.candidate_id == "2× trn2.48xlarge (us-east-1, on_demand)"
    actions = {c.candidate_id: c.decision.action.value for c in a.candidates}
    assert actions["8× trn2.48xlarge (us-east-1, on_demand)"] == "continue_trials"


@pytest.mark.parametrize("samples", [500])
def test_analysis_is_deterministic(samples):
    inps = [case([verified("t-1"), verified("t-2")]), gpu()[0]]
    assert analyse(inps, samples=samples, seed=4) == analyse(inps, samples=samples, seed=4)
