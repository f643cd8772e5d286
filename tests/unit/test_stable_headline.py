"""A headline that holds still (issue 22): stability and monotonicity as properties of the one
model behind the point figure and its range.

- a few more clean minutes on one trial move the P50 by little;
- one failure in a short trial moves it as much as the posterior says and no more;
- more failures, a higher price or a slower trial never make a candidate cheaper (point and
  P50: the paired draws of the same seed make the P50 comparison exact, not noisy);
- p_infeasible stays near 0 unless the evidence really says the plan cannot finish.

Plus the issue's cases: the 70B example (trn2 trials at 2 and 4, one failure in ~27 trn2
instance-hours; p5 at 2; planned at 16 and 32) and its decisions, and credits that count the
spend of a target under way at the expiry the same way for every candidate.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.estimate import analyse, credits_runway, estimate, monte_carlo
from trncost.estimate.failure_prior import posterior
from trncost.model import Credits
from trncost_client.requestfile import load_request_file, request_inputs

ROOT = Path(__file__).resolve().parents[2]
SAMPLES, SEED = 4_000, 11


def p50(inp) -> float:
    r = monte_carlo(inp, samples=SAMPLES, seed=SEED)
    band = r.total_usd or r.known_usd
    assert band is not None and band.p50 is not None
    return float(band.p50)


def plan(
    *,
    steady_s: float = 3600.0,
    failures: int = 0,
    rate: float = 1e5,
    price: str = "36",
    count: int = 16,
    extra_s: float = 0.0,
) -> object:
    """Two target trials at 4 instances (one of them `extra_s` longer, one with `failures`), a
    plan at `count` instances of a 2e11-token target, hourly checkpoints, 15-minute restarts."""
    trials = []
    for i in range(2):
        s = steady_s + (extra_s if i == 0 else 0.0)
        f = failures if i == 1 else 0
        trials.append(
            trial(
                f"t-{i}",
                phase="target",
                count=4,
                work=rate * s,
                wall={"steady_s": s, "restart_s": 900.0 * f if f else None},
                steady_throughput_samples=[rate * 0.99, rate, rate * 1.01],
                reliability={"failures": f},
                checkpointing={"saves": 2, "size_gb": 100, "restore_verified": True},
            )
        )
    return inputs(
        wl=workload(target={"unit": "tokens", "amount": 2e11}),
        cand=candidate("trn2.48xlarge", count),
        trials=trials,
        prices=snapshot(instance_quote("trn2.48xlarge", price)),
        assumptions={"checkpoint_interval_s": 3600, "restart_s": 900},
    )


FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.floats(60, 1800), st.floats(1800, 14_400))
def test_a_few_more_clean_minutes_move_the_p50_by_little(extra_s, steady_s):
    # Given trials with no failure, when one of them ran `extra_s` longer at the same rate
    before, after = p50(plan(steady_s=steady_s)), p50(plan(steady_s=steady_s, extra_s=extra_s))
    # Then the P50 moves by less than 2 % (more clean exposure only lowers the failure rate a
    # little: the prior's weight is smooth)
    assert abs(after - before) / before < 0.02
    # and not up by more than the noise of re-weighting the throughput samples (0.1 %)
    assert after <= before * 1.001


def test_one_failure_in_a_short_trial_moves_the_p50_as_the_posterior_says_and_no_more():
    # Given two 1-hour trials at 4 instances (8 instance-hours), with and without one failure
    clean, failed = plan(steady_s=3600), plan(steady_s=3600, failures=1)
    est_clean, est_failed = estimate(clean), estimate(failed)
    # Then the point moves by exactly the fixed point at the posterior means...
    lam = {
        name: posterior(inp.trials, "trn2.48xlarge", None).point
        for name, inp in (("clean", clean), ("failed", failed))
    }
    assert lam["failed"] > lam["clean"]
    loss_h = (900 + 1800) / 3600  # restart + half the hourly interval

    def time_h(rate: float) -> float:
        return est_clean.time.base_h / (1 - rate * 16 * loss_h)

    assert est_clean.time.total_h == pytest.approx(time_h(lam["clean"]), rel=1e-9)
    assert est_failed.time.total_h == pytest.approx(time_h(lam["failed"]), rel=1e-9)
    # ...and the P50 by a few percent, not the +91 % of "the trials alone"
    moved = p50(failed) / p50(clean) - 1
    assert 0 < moved < 0.10
    trials_alone = 1 / (8.0 - 1) * 16 * loss_h  # one failure per ~8 instance-h, read alone
    assert trials_alone > 1  # would not even finish: the cliff that is gone


@FAST
@given(
    st.integers(0, 4),
    st.floats(0.5, 0.99),
    st.decimals("1.01", "3", places=2),
    st.sampled_from([4, 16, 32]),
)
def test_more_failures_a_higher_price_or_a_slower_trial_never_make_it_cheaper(
    failures, slower, dearer, count
):
    base = plan(failures=failures, count=count)
    est = estimate(base)
    assume(est.status == "complete")
    variants = {
        "one more failure": plan(failures=failures + 1, count=count),
        "a slower trial": plan(failures=failures, count=count, rate=1e5 * slower),
        "a higher price": plan(failures=failures, count=count, price=str(36 * dearer)),
    }
    for what, inp in variants.items():
        other = estimate(inp)
        if other.status == "infeasible":
            continue  # even dearer: it cannot finish at all
        assert other.total_usd >= est.total_usd, what
        assert p50(inp) >= p50(base) * (1 - 1e-9), what


@FAST
@given(st.floats(60, 36_000), st.sampled_from([2, 8, 16, 64]), st.floats(1e10, 1e12))
def test_p_infeasible_stays_near_zero_unless_the_evidence_says_so(steady_s, count, target):
    # Given clean trials of any length and a long plan on up to 64 instances, checkpointing
    # hourly: the fleet prior bounds the failure rate, so almost every draw finishes
    inp = plan(steady_s=steady_s, count=count)
    inp = inp.model_copy(update={"workload": workload(target={"unit": "tokens", "amount": target})})
    assert monte_carlo(inp, samples=SAMPLES, seed=SEED).p_infeasible < 0.01


def test_p_infeasible_says_so_when_the_evidence_does():
    # Given 12 failures in two 1-hour trials at 4 instances (a failure every ~40 instance-
    # minutes) and a plan on 64 instances: failures really do outpace the checkpointed work
    inp = plan(failures=12, count=64)
    assert monte_carlo(inp, samples=SAMPLES, seed=SEED).p_infeasible > 0.5


# -- the cases ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def seventy_b():
    request = load_request_file(ROOT / "examples" / "llama-70b" / "estimate.json")
    inputs_ = request_inputs(request)
    return inputs_, analyse(inputs_, seed=0, samples=20_000)


def _candidate(analysis, label_start: str):
    (found,) = [c for c in analysis.candidates if c.candidate_id.startswith(label_start)]
    return found


def test_the_70b_case_has_its_point_inside_its_range_and_every_draw_finishes(seventy_b):
    _, analysis = seventy_b
    for cand in analysis.candidates:
        r, est = cand.range, cand.estimate
        assert r.p_infeasible < 0.01, cand.candidate_id  # was 21 % for 16× trn2
        assert r.total_usd.p10 <= est.total_usd <= r.total_usd.p90, cand.candidate_id


def test_the_70b_case_ranks_by_expected_cost_and_calls_the_close_one_close(seventy_b):
    _, analysis = seventy_b
    c = analysis.comparison
    assert c.ranked_by.startswith("expected total per target over paired draws")
    ranked = [r for r in c.by_cost if r.cost_rank is not None]
    expected = [r.expected_usd for r in ranked]
    assert expected == sorted(expected)  # ranks follow the expected cost
    assert sum(r.p_cheapest for r in ranked) == pytest.approx(1.0)
    # 16× p5 and 16× trn2 are not separated by the draws: too close to call, and both
    # decisions say so, naming the trial that would separate them with its cost
    (call,) = c.close_calls
    assert {call.leader, call.runner_up} == {
        "16× trn2.48xlarge (us-east-2, on_demand)",
        "16× p5.48xlarge (us-east-2, on_demand)",
    }
    assert call.p_leader_cheaper < 0.7 and call.separating_trial.startswith("the trial that")
    assert "$" in call.separating_trial
    for cid in (call.leader, call.runner_up):
        reasons = {r.code: r for r in _candidate(analysis, cid).decision.reasons}
        assert reasons["too_close_to_call"].action == "continue_trials"
        assert call.separating_trial in reasons["too_close_to_call"].message


def test_at_32_instances_a_loss_past_the_evidence_is_a_reason_to_measure_not_to_move(seventy_b):
    # Given 32× trn2: 8× past the largest trn2 trial (4), resting on the published scaling
    # prior alone; whatever its cost against p5, the decision stays inside the evidence
    _, analysis = seventy_b
    d = _candidate(analysis, "32× trn2.48xlarge").decision
    codes = {r.code: r.action for r in d.reasons}
    assert d.action == "continue_trials"
    assert "costlier_than_alternative" not in codes
    assert codes.get("scale_extrapolated") == "continue_trials"
    if "costlier_at_unmeasured_scale" in codes:
        assert codes["costlier_at_unmeasured_scale"] == "continue_trials"


def test_costlier_at_a_measured_scale_still_compares_alternatives():
    # Given both candidates measured at their planned count (4), trn2 dearer by far
    def measured(instance_type: str, price: str):
        t = [
            trial(
                f"{instance_type}-{i}",
                instance_type=instance_type,
                phase="target",
                count=4,
                work=3.6e8,
                steady_throughput_samples=[0.99e5, 1e5, 1.01e5],
                checkpointing={"saves": 2, "size_gb": 10, "restore_verified": True},
            )
            for i in range(2)
        ]
        return inputs(
            cand=candidate(instance_type, 4),
            trials=t,
            prices=snapshot(instance_quote(instance_type, price)),
        )

    a = analyse(
        [measured("trn2.48xlarge", "200"), measured("p5.48xlarge", "40")], seed=1, samples=2000
    )
    (trn2,) = [c for c in a.candidates if c.candidate_id.startswith("4× trn2")]
    codes = {r.code: r.action for r in trn2.decision.reasons}
    assert codes["costlier_than_alternative"] == "compare_alternatives"


def test_unused_credits_at_expiry_count_the_target_under_way_hand_checked():
    # Given 10 days (240 h) per target back to back at $17,280 a target (2 × 240 h × $36),
    # $72 of trial lines once, $50,000 of credits expiring 25 days after the start
    t = trial("t-1", phase="target", count=2, work=3.0e7, wall={"steady_s": 3600})
    est = estimate(
        inputs(
            trials=[t],
            prices=snapshot(instance_quote("trn2.48xlarge", "36")),
            assumptions={"failure_rate_per_instance_hour": 0},
        )
    )
    r = credits_runway(
        est,
        Credits(amount_usd="50000", expires_on="2026-01-26", start_on="2026-01-01"),
        as_of="2026-01-01",
    )
    # targets on days 0–10 and 10–20 are done ($34,560); the third runs days 20–30 and by day 25
    # has spent half of $17,280 = $8,640: unused = 50,000 − 72 − 34,560 − 8,640 = $6,728
    # (counting only the finished targets said $15,368)
    assert r.targets_before_expiry == 2 and r.limited_by == "expiry"
    assert any("$6,728.00 unused on 2026-01-26" in n for n in r.notes), r.notes
    assert Decimal(50000 - 72 - 34560 - 8640) == Decimal(6728)
