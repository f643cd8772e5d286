"""Issue 17 on the API handler, on moto: every write stores its caller (the IAM ARN API Gateway
authenticated) and answers with it, `local` when nobody was authenticated; the stage's trial
plan bounds; a numeric input past its physical bound is a 422 naming the field; JSON that
cannot be parsed safely is a 400 before any route runs."""

from __future__ import annotations

import json

import boto3
import pytest

from tests.support.events import SAVED_PRICE_LIST as SAVED_US_EAST_1
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, load_handler
from tests.support.workflow_kit import plan_data
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    PLAN_MAX_BUDGET_ENV,
    PLAN_MAX_RUN_HOURS_ENV,
    STATE_MACHINE_ARN_ENV,
    TABLE_NAME_ENV,
)
from trncost.store.schema import WORKLOAD_SK, workload_pk
from trncost.workflow.definition import render, substitutions

ALICE = "arn:aws:sts::123456789012:assumed-role/trncost-planner/alice"
CATALOG = {"instance_types": ["trn2.48xlarge"], "regions": ["us-east-1"]}


@pytest.fixture
def api(table, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(CATALOG_ENV, json.dumps(CATALOG))
    monkeypatch.setenv(LIVE_PRICES_ENV, "false")
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "true")  # the seeding upload asks to be latest
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv(PLAN_MAX_BUDGET_ENV, "5000")
    monkeypatch.setenv(PLAN_MAX_RUN_HOURS_ENV, "24")
    arn = boto3.client("stepfunctions").create_state_machine(
        name="trial-plans",
        definition=render(substitutions("arn:aws:lambda:us-east-1:123456789012:function:s")),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    monkeypatch.setenv(STATE_MACHINE_ARN_ENV, arn)
    module = load_handler("api")

    def call(method, path, body=None, *, caller=ALICE, raw_body=None):
        event = api_event(method, path, body, raw_body=raw_body)
        if caller is not None:
            event["requestContext"]["identity"]["userArn"] = caller
        out = module.handler(event, FakeContext())
        return out["statusCode"], json.loads(out["body"])

    return call


def _seed(api) -> None:
    assert api("POST", "/workloads", workload().model_dump(mode="json"))[0] == 201
    t = trial("t-1", count=2, phase="target")
    assert api("POST", "/workloads/wl-1/trials", t.model_dump(mode="json"))[0] == 201
    saved = json.loads(SAVED_US_EAST_1.read_text())
    assert api("POST", "/prices/snapshots", {"saved_price_list": saved, "publish": True})[0] == 201


def test_every_write_stores_and_answers_its_caller(api, table) -> None:
    status, made = api("POST", "/workloads", workload().model_dump(mode="json"))
    assert status == 201 and made["created_by"] == ALICE
    item = (
        boto3.resource("dynamodb")
        .Table(table)
        .get_item(Key={"pk": workload_pk("wl-1"), "sk": WORKLOAD_SK})["Item"]
    )
    assert item["created_by"] == ALICE
    t = trial("t-1", count=2, phase="target")
    status, imported = api("POST", "/workloads/wl-1/trials", t.model_dump(mode="json"))
    assert status == 201 and imported["recorded_by"] == ALICE
    saved = json.loads(SAVED_US_EAST_1.read_text())
    status, taken = api("POST", "/prices/snapshots", {"saved_price_list": saved, "publish": True})
    assert status == 201 and taken["taken_by"] == ALICE
    (listed,) = api("GET", "/prices/snapshots")[1]["items"]
    assert listed["taken_by"] == ALICE
    body = {"candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2,
                          "region": "us-east-1"}}  # fmt: skip
    status, est = api("POST", "/workloads/wl-1/estimates", body)
    assert status == 201 and est["created_by"] == ALICE
    assert api("GET", f"/estimates/{est['estimate_id']}")[1]["created_by"] == ALICE
    plan = plan_data()
    plan.pop("workload_id")
    status, submitted = api("POST", "/workloads/wl-1/trial-plans", plan)
    assert status == 201 and submitted["submitted_by"] == ALICE
    assert api("GET", f"/trial-plans/{submitted['plan_id']}")[1]["submitted_by"] == ALICE


def test_a_request_nobody_authenticated_is_local(api) -> None:
    status, made = api("POST", "/workloads", workload().model_dump(mode="json"), caller=None)
    assert status == 201 and made["created_by"] == "local"


@pytest.mark.parametrize(
    ("over", "field"),
    [({"budget_cap_usd": "5000.01"}, "budget_cap_usd"), ({"max_run_minutes": 24 * 60 + 1},
                                                          "max_run_minutes")],
)  # fmt: skip
def test_a_plan_above_the_stage_bounds_is_a_422_naming_the_field(api, over, field) -> None:
    _seed(api)
    plan = plan_data(**over)
    plan.pop("workload_id")
    status, body = api("POST", "/workloads/wl-1/trial-plans", plan)
    assert status == 422 and body["fields"] == [field], body
    assert "trial_plans." in body["message"]


@pytest.mark.parametrize(
    ("assumptions", "field"),
    [
        ({"engineering_hours": 1e30, "engineering_hourly_usd": "100"},
         "assumptions.engineering_hours.value"),
        ({"engineering_hours": 10, "engineering_hourly_usd": "1e15"},
         "assumptions.engineering_hourly_usd.value"),
        ({"transfer_out_gb": 1e30}, "assumptions.transfer_out_gb.value"),
        ({"checkpoints_retained": 10**20}, "assumptions.checkpoints_retained.value"),
        ({"failure_rate_per_instance_hour": 1e6},
         "assumptions.failure_rate_per_instance_hour.value"),
    ],
)  # fmt: skip
def test_a_value_past_its_physical_bound_is_a_422_naming_the_field(api, assumptions, field):
    _seed(api)
    body = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"},
        "assumptions": assumptions,
    }
    status, answer = api("POST", "/workloads/wl-1/estimates", body)
    assert status == 422 and field in answer["fields"], answer


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"a": ' + "[" * 1000 + "]" * 1000 + "}", "nested deeper than 64"),
        ('{"a": ' + "9" * 31 + "}", "more than 30 digits"),
        ('{"a": ' + "9" * 5000 + "}", "more than 30 digits"),
    ],
)
def test_json_that_cannot_be_parsed_safely_is_a_400(api, raw, why) -> None:
    status, body = api("POST", "/workloads", raw_body=raw)
    assert status == 400 and why in body["message"] and body["fields"] == ["body"], body
