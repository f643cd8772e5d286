"""Credits runway: completed targets the credits pay for, before they expire, and what they
do not cover. No clock: the caller passes `as_of`."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.errors import DomainError
from trncost.estimate import analyse, credits_runway, estimate
from trncost.estimate.credits import civil_from_days, days_from_civil
from trncost.model import Credits

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))


def simple(**assumptions):
    # 1e5 tokens/s at 2 instances → 20 h per target; no failure (stated: the runway's arithmetic
    # alone), no idle
    t = trial("t-1", phase="target", count=2, work=3.6e8, wall={"steady_s": 3600})
    stated = {"failure_rate_per_instance_hour": 0, **assumptions}
    return estimate(inputs(trials=[t], prices=PRICES, assumptions=stated))


def test_paced_runway_limited_by_expiry_hand_checked():
    est = simple()
    credits = Credits(amount_usd="10000", expires_on="2026-04-01", targets_per_month=2)
    r = credits_runway(est, credits, as_of="2026-01-01")
    # per target: instances 2 × 20 h × $36 = $1,440; once: the trial 2 × 1 h × $36 = $72
    assert r.covered_per_target_usd == Decimal("1440.000000")
    assert r.one_time_covered_usd == Decimal("72.000000")
    # fit: floor((10,000 − 72) / 1,440) = floor(6.894) = 6
    assert r.targets_fit == 6
    # 2026-01-01 → 2026-04-01 = 90 days; 2 per month = one start every 30.436875 / 2 = 15.218
    # days, each target 20 h = 0.833 days long, counted from its own start: starts on days 0,
    # 15.2, 30.4, 45.7, 60.9, 76.1 all end before day 90 → floor((90 − 0.833) / 15.218) + 1 = 6
    # (trncost said floor(90 / 15.218) = 5 before: each target taken to last its whole slot)
    assert r.targets_before_expiry == 6 and r.targets_on_credits == 6
    # the credits would run out during the 7th target, day 6 × 15.218 + 0.894 × 0.833 = 92.06,
    # after the expiry: limited by it; unused on expiry: 9,928 − 6 × 1,440 = $1,288
    assert r.limited_by == "expiry" and r.runs_out_on is None
    assert any("$1,288.00 unused" in n for n in r.notes)


def test_back_to_back_runway_limited_by_credits_hand_checked():
    est = simple()
    credits = Credits(amount_usd="10000", expires_on="2027-01-01", start_on="2026-01-10")
    r = credits_runway(est, credits, as_of="2026-01-01")
    assert r.targets_fit == 6 and r.limited_by == "credits"
    # 6.894 targets × 20 h = 137.9 h = 5.745 days after 2026-01-10 → 2026-01-15
    assert r.runs_out_on == "2026-01-15"
    assert "back to back from 2026-01-10" in r.pace


def test_lines_the_credits_do_not_cover_are_named_with_their_cost():
    est = simple(ebs_gb_per_instance=1000, engineering_hours=10, engineering_hourly_usd="100")
    r = credits_runway(est, Credits(amount_usd="5000", expires_on="2027-01-01"), as_of="2026-01-01")
    names = {u.name: u for u in r.uncovered}
    # EBS: 1,000 GB × 2 × (20 h / 730) months × $0.08 = $4.383562 per target
    assert names["EBS gp3 volumes"].amount_usd == Decimal("4.383562")
    assert names["engineering (adaptation, debugging)"].one_time
    assert r.uncovered_per_target_usd == Decimal("4.383562")


def test_a_pending_covered_price_gives_the_runway_as_a_function_of_the_price():
    t = trial("t-1", instance_type="trn3.48xlarge", phase="target", work=3.6e8)
    no_failure = {"failure_rate_per_instance_hour": 0}  # stated: the runway's arithmetic alone
    est = estimate(
        inputs(cand=candidate("trn3.48xlarge"), trials=[t], prices=PRICES, assumptions=no_failure)
    )
    r = credits_runway(
        est, Credits(amount_usd="10000", expires_on="2027-01-01"), as_of="2026-01-01"
    )
    assert not r.known and r.targets_fit is None and r.limited_by == "unknown"
    # 40 instance-hours per target (2 × 20 h) and 2 once (the trial)
    assert r.formula == (
        "targets = floor(($10,000.00 − $0.00 − 2 × P[AmazonEC2/us-east-1/trn3.48xlarge/on_demand])"
        " / ($0.00 + 40 × P[AmazonEC2/us-east-1/trn3.48xlarge/on_demand]))"
    )


def test_dates_without_a_clock():
    assert days_from_civil("1970-01-01") == 0
    assert days_from_civil("2000-03-01") == 11017
    assert civil_from_days(days_from_civil("2024-02-29")) == "2024-02-29"
    assert days_from_civil("2026-04-01") - days_from_civil("2026-01-01") == 90
    with pytest.raises(DomainError, match="calendar date"):
        days_from_civil("2026-02-30")


def test_bad_credits_are_refused_with_the_reason():
    with pytest.raises(ValidationError, match="ISO date"):
        Credits(amount_usd="1", expires_on="next year")
    with pytest.raises(ValidationError, match="before as_of"):
        Credits(amount_usd="1", expires_on="2027-01-01", start_on="2026-01-01", as_of="2026-02-01")
    t = trial("t-1", phase="target")
    with pytest.raises(DomainError, match="as_of"):
        analyse(
            [inputs(trials=[t], prices=PRICES)],
            samples=200,
            credits=Credits(amount_usd="1", expires_on="2027-01-01"),
        )


def test_the_issue_calendar_100k_at_one_target_a_month_until_march_fits_four():
    # $100k, 1 target per month from 2026-11-01 until 2027-03-01 (120 days), 20 h a target:
    # starts on 2026-11-01, 12-01, 12-31 and 2027-01-31 (every 30.436875 days), the 4th ends
    # 2027-02-01, before the expiry → 4 by the calendar; floor(120 / 30.437) = 3 was trncost's
    est = simple()
    credits = Credits(amount_usd="100000", expires_on="2027-03-01", targets_per_month=1)
    r = credits_runway(est, credits, as_of="2026-11-01")
    assert days_from_civil("2027-03-01") - days_from_civil("2026-11-01") == 120
    assert r.targets_before_expiry == 4 and r.targets_on_credits == 4
    # fit: floor((100,000 − 72) / 1,440) = 69: the expiry limits it
    assert r.targets_fit == 69 and r.limited_by == "expiry"


def test_a_paced_plan_from_a_start_date_counts_from_that_date_not_from_today():
    # Given the same $100k at 1 target a month, asked on 2026-10-15 for a plan starting
    # 2026-11-01: the calendar from the start date (4 targets before 2027-03-01), not from today
    est = simple()
    credits = Credits(
        amount_usd="100000",
        expires_on="2027-03-01",
        start_on="2026-11-01",
        targets_per_month=1,
        as_of="2026-10-15",
    )
    r = credits_runway(est, credits, as_of=credits.as_of)
    assert r.targets_before_expiry == 4 and r.targets_on_credits == 4
    assert r.pace == "1 target per month from 2026-11-01" and r.as_of == "2026-10-15"
    # from today instead, a fifth start (2026-10-15 + 4 × 30.44 d = 2027-02-13) would fit
    today = credits.model_copy(update={"start_on": None})
    assert credits_runway(est, today, as_of="2026-10-15").targets_before_expiry == 5


def test_a_paced_runway_runs_out_during_a_target_not_in_the_gap_after_it():
    # 3.0e7 tokens / 3,600 s = 8,333.3 tokens/s at 2 → 7.2e9 / 8,333.3 = 864,000 s = 240 h = 10
    # days a target; per target 2 × 240 h × $36 = $17,280; once: the trial 2 × 1 h × $36 = $72
    t = trial("t-1", phase="target", count=2, work=3.0e7, wall={"steady_s": 3600})
    no_failure = {"failure_rate_per_instance_hour": 0}  # stated: the runway's arithmetic alone
    est = estimate(inputs(trials=[t], prices=PRICES, assumptions=no_failure))
    assert est.time.held_h == pytest.approx(240)
    # $72 + 2.5 targets: two whole targets, then half of the third
    credits = Credits(amount_usd="43272", expires_on="2027-01-01", targets_per_month=1)
    r = credits_runway(est, credits, as_of="2026-01-01")
    assert r.covered_per_target_usd == Decimal("17280.000000") and r.targets_fit == 2
    # the third target starts on day 2 × 30.436875 = 60.87 (2026-03-02) and spends its $8,640
    # over its first 5 days: the balance is 0 on day 65.87 → 2026-03-07. (trncost said day
    # 2.5 × 30.436875 = 76.09 → 2026-03-18: eleven days late, spending through the idle gap)
    assert r.runs_out_on == "2026-03-07" and r.limited_by == "credits"
    assert civil_from_days(days_from_civil("2026-01-01") + 76) == "2026-03-18"


def test_credits_never_pay_labour_whatever_they_are_said_to_cover():
    est = simple(engineering_hours=10, engineering_hourly_usd="100")
    everything = Credits(
        amount_usd="5000",
        expires_on="2027-01-01",
        covers=["instances", "storage", "data_transfer", "logs", "data_preparation",
                "adaptation_reruns"],
    )  # fmt: skip
    r = credits_runway(est, everything, as_of="2026-01-01")
    (labour,) = [u for u in r.uncovered if u.name == "engineering (adaptation, debugging)"]
    assert labour.amount_usd == Decimal("1000.000000") and labour.one_time
    # the covered one-time part is the trial's instance-hours only: 2 × 1 h × $36
    assert r.one_time_covered_usd == Decimal("72.000000")
