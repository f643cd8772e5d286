"""The trial steps called directly (moto DynamoDB): idempotent launch, the price basis of the
budget, advisory gates, and the plan store's keys."""

from __future__ import annotations

from decimal import Decimal

from tests.support.factories import instance_quote, snapshot, workload
from tests.support.workflow_kit import FakeLauncher, fixed_prices, good_trial, plan
from trncost.services.trial_steps import TrialSteps, price_lookup_from
from trncost.store.plans import PlanStore, gate_sk, plan_pk, run_sk
from trncost.store.records import RecordStore


def _steps(table, launcher=None, prices=None):
    records = RecordStore(table)
    records.put_workload(workload(), "2026-11-28T00:00:00+00:00")
    launcher = launcher or FakeLauncher(records)
    return TrialSteps(
        PlanStore(table), records, lambda kind: launcher, prices or fixed_prices("10")
    ), launcher


def test_keys_are_spelled_once() -> None:
    assert plan_pk("p") == "PLAN#p" and run_sk(3) == "RUN#0003"
    assert gate_sk("fit", 1) == "GATE#fit#1"


def test_a_retried_launch_does_not_launch_again(table) -> None:
    steps, launcher = _steps(table)
    p = plan()
    steps.plans.create(p, "2026-11-29T00:00:00+00:00")
    first = steps.handle({"action": "launch", "plan_id": p.plan_id, "index": 0})
    again = steps.handle({"action": "launch", "plan_id": p.plan_id, "index": 0})
    assert first == again and len(launcher.launched) == 1
    req = launcher.launched[0]
    assert req.role_arn == p.role_arn and req.settings["output_uri"] == "s3://team-data/out"


def test_prices_official_then_assumed_then_none() -> None:
    snap = snapshot(instance_quote("trn2.48xlarge", "44.70"), usage=False)
    p = plan(
        launcher="ec2",
        image=None,
        sagemaker=None,
        ami="ami-0123456789abcdef0",
        ec2={"subnet_id": "subnet-0123abcd", "security_group_ids": ["sg-0123abcd"]},
        candidates=[{"instance_type": "trn2.48xlarge", "instance_count": 1, "region": "us-east-1"}],
        assumed_hourly_usd={"trn3.48xlarge": "60"},
    )
    lookup = price_lookup_from(lambda: snap)
    official = lookup("trn2.48xlarge", "us-east-1", p)
    assert official.usd_per_hour == Decimal("44.70") and official.basis.startswith("official_price")
    assumed = lookup("trn3.48xlarge", "us-east-1", p)
    assert assumed.usd_per_hour == Decimal(60) and assumed.basis.startswith("user_assumption")
    none = lookup("p5.48xlarge", "us-east-1", p)
    assert none.usd_per_hour is None and "no assumed_hourly_usd" in none.basis
    assert price_lookup_from(lambda: None)("trn2.48xlarge", "us-east-1", p).usd_per_hour is None


def test_an_advisory_gate_records_the_failure_and_continues(table) -> None:
    steps, launcher = _steps(table)
    launcher.outcome = lambda r: good_trial(r, checkpointing={"saves": 0})
    p = plan(gates={"advisory": ["fit"]})
    steps.plans.create(p, "2026-11-29T00:00:00+00:00")
    steps.handle({"action": "launch", "plan_id": p.plan_id, "index": 0})
    steps.handle(
        {"action": "check_record", "plan_id": p.plan_id, "index": 0, "polls": 0, "max_polls": 3}
    )
    cursor = steps.handle({"action": "gate", "plan_id": p.plan_id, "index": 0})
    assert cursor["action"] == "launch" and cursor["index"] == 1
    assert "advisory, continuing" in cursor["reasons"][0]
    state = steps.plans.get(p.plan_id)
    assert state.dropped == [] and state.gates[0].passed is False


def test_with_two_candidates_a_failed_gate_drops_only_that_candidate(table) -> None:
    steps, launcher = _steps(table)
    launcher.outcome = lambda r: good_trial(
        r, checkpointing={"saves": 1, "restore_verified": "trn2" not in r.instance_type}
    )
    p = plan(
        candidates=[
            {"instance_type": "ml.trn2.48xlarge", "instance_count": 1, "region": "us-east-1"},
            {"instance_type": "ml.p5.48xlarge", "instance_count": 1, "region": "us-east-1"},
        ],
        baseline=None,
        target=None,
    )
    steps.plans.create(p, "2026-11-29T00:00:00+00:00")
    for index in (0, 1):
        steps.handle({"action": "launch", "plan_id": p.plan_id, "index": index})
        steps.handle(
            {
                "action": "check_record",
                "plan_id": p.plan_id,
                "index": index,
                "polls": 0,
                "max_polls": 1,
            }
        )
        cursor = steps.handle({"action": "gate", "plan_id": p.plan_id, "index": index})
    assert cursor["action"] == "done"
    assert steps.plans.get(p.plan_id).dropped == [0]


def test_record_failure_keeps_the_lambda_error_message(table) -> None:
    steps, _ = _steps(table)
    p = plan()
    steps.plans.create(p, "2026-11-29T00:00:00+00:00")
    steps.handle(
        {
            "action": "record_failure",
            "plan_id": p.plan_id,
            "error": {
                "Error": "LaunchRejected",
                "Cause": '{"errorMessage": "RunInstances: InsufficientInstanceCapacity"}',
            },
        }
    )
    state = steps.plans.get(p.plan_id)
    assert state.status == "failed"
    assert state.outcome_reasons == ["LaunchRejected: RunInstances: InsufficientInstanceCapacity"]


def test_an_example_price_is_never_called_official_in_the_budget_reason() -> None:
    # Given the bundled example's prices (basis example), when a plan's run is priced from them
    from tests.support.examples import EXAMPLE
    from trncost_client.requestfile import load_request_file

    snap = load_request_file(EXAMPLE).prices
    p = plan(
        launcher="ec2",
        image=None,
        sagemaker=None,
        ami="ami-0123456789abcdef0",
        ec2={"subnet_id": "subnet-0123abcd", "security_group_ids": ["sg-0123abcd"]},
        candidates=[{"instance_type": "trn2.48xlarge", "instance_count": 1, "region": "us-east-2"}],
    )
    rate = price_lookup_from(lambda: snap)("trn2.48xlarge", "us-east-2", p)
    # Then the reason names the quote's own basis
    assert rate.usd_per_hour is not None and rate.basis.startswith("example price ")
    assert "official" not in rate.basis
