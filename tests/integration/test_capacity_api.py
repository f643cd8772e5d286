"""Issue 26 over the real API handler on moto: capacity you can book (POST and GET
/estimates/{id}/capacity, kept with the version and shown on its report), each version's
checkpoint advice and decision, and a Trainium3 estimate without trials stored as projected."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import boto3
from botocore.stub import Stubber

from tests.integration.test_api import api, seed  # noqa: F401  (the fixture)
from tests.support.factories import trial
from tests.unit.test_capacity import BLOCKS, PLANS, _dated
from trncost.pricing.client import CapacityBlockClient, TrainingPlanClient
from trncost.services.capacity import CapacityService

CAND = {"instance_type": "p5.48xlarge", "instance_count": 2, "region": "us-east-1"}


def _stub(service, method, answer, times=2):
    client = boto3.client(service, region_name="us-east-1")
    stub = Stubber(client)
    for _ in range(times):
        stub.add_response(method, answer)
    stub.activate()
    return client


def _wire(module):
    blocks = {
        "CapacityBlockOfferings": [_dated(x) for x in BLOCKS["response"]["CapacityBlockOfferings"]]
    }
    plans = {
        "TrainingPlanOfferings": [_dated(x) for x in PLANS["response"]["TrainingPlanOfferings"]]
    }
    ec2 = _stub("ec2", "describe_capacity_block_offerings", blocks)
    sm = _stub("sagemaker", "search_training_plan_offerings", plans)
    wiring = module.services
    wiring.capacity = CapacityService(
        wiring.estimates,
        wiring.capacity_store,
        lambda region: CapacityBlockClient(region, ec2),
        lambda region: TrainingPlanClient(region, sm),
        clock=lambda: datetime(2026, 3, 1, tzinfo=UTC),
    )


def test_capacity_is_quoted_kept_with_the_version_and_on_its_report(api):  # noqa: F811
    seed(api)
    t = trial("t-p5", instance_type="p5.48xlarge", phase="target", workload_id="wl-api")
    assert api("POST", "/workloads/wl-api/trials", t.model_dump(mode="json"))[0] == 201
    status, created = api("POST", "/workloads/wl-api/estimates", {"candidate": CAND})
    assert status == 201
    eid = created["estimate_id"]
    # Each version keeps its checkpoint advice and its own decision
    assert created["checkpoint"] is not None and created["decision"]["action"]
    # Nothing quoted yet: 404 naming the POST that asks
    status, err = api("GET", f"/estimates/{eid}/capacity")
    assert status == 404 and f"POST /estimates/{eid}/capacity" in err["message"]
    _wire(sys.modules["trncost_lambda_api"])  # the handler module the fixture loaded
    status, plan = api("POST", f"/estimates/{eid}/capacity")
    assert status == 201 and [d["percentile"] for d in plan["durations"]] == ["P50", "P90"]
    quotes = [q for d in plan["durations"] for q in d["quotes"]]
    assert quotes and {q["offering"]["basis"] for q in quotes} == {"official"}
    assert all(q["offering"]["expires_at"] for q in quotes)
    assert plan["on_demand"]["price_key"].endswith("p5.48xlarge/on_demand")
    status, again = api("GET", f"/estimates/{eid}/capacity")
    assert status == 200 and again == plan
    status, page = api("GET", f"/estimates/{eid}/report")
    assert status == 200 and "Capacity you can book" in page and "Checkpoint interval" in page


def test_a_trainium3_estimate_without_trials_is_stored_as_projected(api):  # noqa: F811
    seed(api)  # trn2 trials only; the stage catalog lists trn3.48xlarge
    cand = {**CAND, "instance_type": "trn3.48xlarge"}
    status, created = api("POST", "/workloads/wl-api/estimates", {"candidate": cand})
    assert status == 201 and created["estimate"]["status"] == "projected"
    rows = {r["id"]: r for r in created["estimate"]["inputs"]}
    assert rows["throughput:n=2"]["provenance"]["kind"] == "published_reference"
    assert created["decision"]["action"] == "continue_trials"
    assert "projected" in {r["code"] for r in created["decision"]["reasons"]}
    assert created["range"]["pending"]  # the trn3 price is PENDING: its quantity's range
