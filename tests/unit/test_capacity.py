"""Capacity you can book (issue 26, item 2): EC2 Capacity Blocks and SageMaker Training Plans
read from their botocore shapes, weighed against a run's held-time draws, beside on-demand."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import boto3
import numpy as np
import pytest
from botocore.stub import Stubber

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.estimate import estimate
from trncost.estimate.capacity import block_hours, capacity_plan, weigh
from trncost.model.basis import PriceBasis
from trncost.model.capacity import CapacityOffering, CapacityRejection
from trncost.pricing.capacity_blocks import capacity_block_quote
from trncost.pricing.client import CapacityBlockClient, TrainingPlanClient
from trncost.pricing.offerings import ec2_offering, plan_offering, read_offerings
from trncost.services.capacity import CapacityService

EVENTS = Path(__file__).resolve().parents[1] / "events" / "capacity"
BLOCKS = json.loads((EVENTS / "capacity_block_offerings.json").read_text())
PLANS = json.loads((EVENTS / "training_plan_offerings.json").read_text())
AT = "2026-03-01T00:00:00+00:00"


def _read(raw, itype="p5.48xlarge"):
    return ec2_offering(raw, itype, queried_at=AT, basis=PriceBasis.official, origin=None)


def _dated(item: dict) -> dict:
    """A constructed answer as boto3 hands it: datetimes, not ISO text."""
    out = copy.deepcopy(item)
    for key in ("StartDate", "EndDate", "StartTime", "EndTime"):
        if key in out:
            out[key] = datetime.fromisoformat(out[key].replace("Z", "+00:00"))
    for part in out.get("ReservedCapacityOfferings", []):
        for key in ("StartTime", "EndTime"):
            part[key] = datetime.fromisoformat(part[key].replace("Z", "+00:00"))
    for key in ("RequestedStartTimeAfter", "RequestedEndTimeBefore"):
        if key in out:
            out[key] = datetime.fromisoformat(out[key].replace("Z", "+00:00"))
    return out


# -- reading the answers -------------------------------------------------------------------
def test_a_capacity_block_is_its_whole_fee_over_instances_and_hours():
    o = _read(BLOCKS["response"]["CapacityBlockOfferings"][0])
    assert isinstance(o, CapacityOffering)
    assert o.upfront_fee_usd == Decimal("52859.52") and o.duration_hours == 336
    assert o.per_instance_hour_usd == Decimal("39.33") and o.instance_count == 4
    assert o.expires_at == o.start == "2026-03-05T11:30:00Z"


def test_minutes_are_added_to_the_hours():
    raw = {**BLOCKS["response"]["CapacityBlockOfferings"][0], "CapacityBlockDurationMinutes": 30}
    o = _read(raw)
    assert o.duration_hours == pytest.approx(336.5)
    assert o.per_instance_hour_usd == (Decimal("52859.52") / Decimal(4 * 336.5)).quantize(
        Decimal("0.000001")
    )


def test_a_segmented_offering_of_another_type_is_not_a_quote_for_this_one():
    seg = BLOCKS["segmented_example"]["response"]["CapacityBlockOfferings"][0]
    found = _read(seg)
    assert isinstance(found, CapacityRejection) and "p5en.48xlarge" in found.reason


def test_placeholder_fees_are_rejected_never_priced():
    ultra = BLOCKS["ultraserver_example"]["response"]["CapacityBlockOfferings"][0]
    found = _read(ultra, "p6e-gb200.36xlarge")
    assert isinstance(found, CapacityRejection) and "not a number" in found.reason


def test_a_training_plan_joins_its_reserved_capacities():
    one, two = PLANS["response"]["TrainingPlanOfferings"]
    a = plan_offering(one, "ml.p5.48xlarge", queried_at=AT, basis=PriceBasis.official, origin=None)
    b = plan_offering(two, "ml.p5.48xlarge", queried_at=AT, basis=PriceBasis.official, origin=None)
    assert a.per_instance_hour_usd == Decimal("39.33") and a.parts == 1
    # two 168 h reserved capacities of 4 instances: the same instance-hours, in 2 parts
    assert b.parts == 2 and b.per_instance_hour_usd == Decimal("39.33")
    assert b.start == "2026-03-09T11:30:00Z" and b.end == "2026-03-30T11:30:00Z"


def test_the_snapshot_quote_reads_minutes_and_skips_other_types():
    raw = [
        {**BLOCKS["response"]["CapacityBlockOfferings"][0], "CapacityBlockDurationMinutes": 30},
        BLOCKS["segmented_example"]["response"]["CapacityBlockOfferings"][0],
    ]
    quote, rejected = capacity_block_quote(
        "p5.48xlarge", "us-east-2", raw, snapshot_id="s", queried_at=AT
    )
    assert quote.capacity_block.duration_hours == pytest.approx(336.5)
    assert len(rejected) == 1 and "p5en.48xlarge" in rejected[0].reason


# -- weighing against the draws ------------------------------------------------------------
@pytest.mark.parametrize(
    ("held", "hours"),
    [(10, 24), (23.4, 24), (23.6, 48), (100, 120), (335.5, 336), (336, 504), (4368, None)],
)
def test_blocks_are_whole_days_to_14_then_whole_weeks_to_182(held, hours):
    assert block_hours(held) == hours


def _offering(hours=96, rate="40", n=4):
    fee = Decimal(rate) * n * hours
    return CapacityOffering(
        source="ec2_capacity_block",
        offering_id="cbr-1",
        instance_type="p5.48xlarge",
        instance_count=n,
        duration_hours=hours,
        upfront_fee_usd=fee,
        per_instance_hour_usd=Decimal(rate),
        basis=PriceBasis.official,
        queried_at=AT,
    )


def test_the_chance_to_finish_inside_and_the_cost_of_running_over():
    # Given draws of 90 h (half) and 100 h (half) against a 96 h block (95.5 h usable)
    held = np.array([90.0, 100.0] * 500)
    q = weigh(_offering(), held, 4, Decimal("55"), applies=True)
    # Then half finish inside; the overrun (4.5 h) costs a day's extension or 4.5 h on demand
    assert q.p_finish_inside == pytest.approx(0.5)
    assert q.expected_overrun_h == pytest.approx(2.25)
    assert q.expected_extension_usd == pytest.approx(Decimal(0.5 * 24 * 4 * 40))
    assert q.expected_on_demand_finish_usd == pytest.approx(Decimal(0.5 * 4.5 * 4 * 55))
    fee = Decimal(40 * 4 * 96)
    assert q.expected_instances_usd == pytest.approx(fee + Decimal(0.5 * 4.5 * 4 * 55))
    on_demand = Decimal(95 * 4 * 55)
    assert q.saving_vs_on_demand_usd == pytest.approx(on_demand - q.expected_instances_usd)


def test_a_pending_on_demand_price_states_no_saving():
    plan = capacity_plan(
        candidate("trn3.48xlarge", 2),
        np.array([80.0, 90.0, np.inf]),
        {"P50": [_offering(n=2)], "P90": []},
        {"P90": ["none"]},
        on_demand_key="k",
        on_demand=None,
        on_demand_basis=None,
        queried_at=AT,
    )
    assert plan.on_demand.expected_instances_usd is None and plan.draws == 2
    assert plan.durations[0].quotes[0].saving_vs_on_demand_usd is None
    assert any("PENDING" in n for n in plan.notes)


# -- the service: stubbed EC2 and SageMaker answers ------------------------------------------
def _stubbed(service: str, method: str, answer: dict, times: int = 2):
    client = boto3.client(service, region_name="us-east-2")
    stub = Stubber(client)
    for _ in range(times):
        stub.add_response(method, answer)
    stub.activate()
    return client, stub


class _Versions:
    """The two calls CapacityService makes of the estimate service."""

    def __init__(self, inp, est):
        self.inp, self.est = inp, est

    def version(self, estimate_id, version=None):
        from trncost.model.records import EstimateVersion

        return EstimateVersion(
            estimate_id=estimate_id,
            version=1,
            created_at=AT,
            reason="created",
            fingerprint="f",
            estimate=self.est,
        )

    def input_for(self, estimate_id):
        return self.inp


def _p5_input():
    trials = [
        trial(f"p5-{i}", instance_type="p5.48xlarge", count=4, work=2e5 * 3600) for i in range(2)
    ]
    return inputs(
        cand=candidate("p5.48xlarge", 4),
        trials=trials,
        prices=snapshot(instance_quote("p5.48xlarge", "55")),
    )


def test_offerings_asked_of_ec2_and_sagemaker_are_official_with_their_expiry():
    inp = _p5_input()
    est = estimate(inp)
    blocks = {
        "CapacityBlockOfferings": [_dated(x) for x in BLOCKS["response"]["CapacityBlockOfferings"]]
    }
    plans = {
        "TrainingPlanOfferings": [_dated(x) for x in PLANS["response"]["TrainingPlanOfferings"]]
    }
    ec2, ec2_stub = _stubbed("ec2", "describe_capacity_block_offerings", blocks)
    sm, sm_stub = _stubbed("sagemaker", "search_training_plan_offerings", plans)
    service = CapacityService(
        _Versions(inp, est),
        None,
        lambda region: CapacityBlockClient(region, ec2),
        lambda region: TrainingPlanClient(region, sm),
        clock=lambda: datetime(2026, 3, 1, tzinfo=UTC),
    )
    plan = service.quote("est-1")
    # Then every offering is official, from the operation that answered, with its expiry
    quotes = [q for d in plan.durations for q in d.quotes]
    assert quotes and all(q.offering.basis == PriceBasis.official for q in quotes)
    ops = {q.offering.origin.operation for q in quotes}
    assert ops == {"ec2:DescribeCapacityBlockOfferings", "sagemaker:SearchTrainingPlanOfferings"}
    assert all(q.offering.expires_at for q in quotes)
    # And the EC2 block applies to an EC2 candidate; the plan is shown for the other platform
    assert {q.applies for q in quotes if q.offering.source == "ec2_capacity_block"} == {True}
    assert {q.applies for q in quotes if q.offering.source != "ec2_capacity_block"} == {False}
    # And beside on-demand: the rate the estimate used, and a saving per offering
    assert plan.on_demand.rate_usd == Decimal("55")
    assert all(q.saving_vs_on_demand_usd is not None for q in quotes)
    assert [d.percentile for d in plan.durations] == ["P50", "P90"]
    ec2_stub.assert_no_pending_responses()
    sm_stub.assert_no_pending_responses()


def test_a_type_botocore_does_not_know_is_none_offered_with_why():
    inp = _p5_input()
    inp = inp.model_copy(
        update={"candidate": inp.candidate.model_copy(update={"instance_type": "p5.48xlarge"})}
    )
    est = estimate(inp).model_copy(
        update={"candidate": inp.candidate.model_copy(update={"instance_type": "trn3.48xlarge"})}
    )
    ec2 = boto3.client("ec2", region_name="us-east-1")  # never called: botocore lacks the type
    sm = boto3.client("sagemaker", region_name="us-east-1")
    service = CapacityService(
        _Versions(inp, est),
        None,
        lambda region: CapacityBlockClient(region, ec2),
        lambda region: TrainingPlanClient(region, sm),
    )
    plan = service.quote("est-1")
    why = " ".join(w for d in plan.durations for w in d.none_offered)
    assert "ml.trn3.48xlarge is not a reserved-capacity type in botocore's SageMaker model" in why
    assert "trn3.48xlarge is not an EC2 instance type in botocore's model" in why


def test_read_offerings_splits_usable_from_rejected():
    items = BLOCKS["response"]["CapacityBlockOfferings"] + [
        BLOCKS["ultraserver_example"]["response"]["CapacityBlockOfferings"][0]
    ]
    found, bad = read_offerings(
        "ec2_capacity_block", items, "p5.48xlarge", queried_at=AT, basis=PriceBasis.official
    )
    assert len(found) == 2 and len(bad) == 1
