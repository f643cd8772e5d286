"""The other ways actuals come in, and a budget from an estimate, on moto: Cost Explorer
(the actuals Lambda, moto's queued results, two pages), SageMaker's billable time at job end
(the ingest), and AWS Budgets (POST /estimates/{id}/budget)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
import requests
from botocore.stub import Stubber

from tests.support import actuals_kit as kit
from tests.support.events import load_event
from tests.support.factories import instance_quote, snapshot, trial, workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from trncost.billing.cost_explorer import CostExplorer
from trncost.metrics.sagemaker import facts_from_description
from trncost.model import Assumptions, Candidate
from trncost.services.actuals import ActualsService
from trncost.services.ingest import IngestService
from trncost.settings import ACCOUNT_ID_ENV, Settings
from trncost.wiring import Wiring

ACCOUNT = "123456789012"  # moto's
CE_QUEUE = "http://motoapi.amazonaws.com/moto-api/static/ce/cost-and-usage-results"


@pytest.fixture
def stage(table) -> tuple[Wiring, str]:
    """A workload with trials on trn2, a snapshot with trn2 and ml.trn1.32xlarge prices, and
    an estimate: (services, estimate id)."""
    services = Wiring(Settings(table_name=table, account_id=ACCOUNT))
    wl = workload()
    now = datetime.now(UTC).isoformat()
    services.records.put_workload(wl, now)
    for tid in ("t-1", "t-2"):
        services.records.put_trial(trial(tid, count=2, phase="target"), now, "api")
    prices = snapshot(
        instance_quote("trn2.48xlarge", "40.00"), instance_quote("ml.trn1.32xlarge", "24.72")
    )
    services.prices.put_snapshot(prices)
    services.prices.publish_latest(prices)
    candidate = Candidate(instance_type="trn2.48xlarge", instance_count=2, region="us-east-1")
    version = services.estimates.create(wl.workload_id, candidate, Assumptions())
    return services, version.estimate_id


# -- Cost Explorer ---------------------------------------------------------------------------------
def _ce_pages(estimate_id: str) -> list[dict[str, Any]]:
    """The constructed GetCostAndUsage pages, for `estimate_id` in December 2026."""
    text = (kit.BILLING / "ce_get_cost_and_usage_by_tag_and_usage_type.json").read_text()
    data = json.loads(text.replace(kit.SAMPLE_ESTIMATE, estimate_id).replace("2025-06", "2026-12"))
    return data["response_pages"]


def test_the_actuals_lambda_pulls_cost_explorer_page_by_page_once_a_day(stage, monkeypatch):
    services, estimate_id = stage
    # Given moto's Cost Explorer holding two pages for the estimate's tag (December 2026)
    assert requests.post(CE_QUEUE, json={"results": _ce_pages(estimate_id)}).status_code == 201
    lambda_env(monkeypatch, services.settings.table_name)
    module = load_handler("actuals")
    event = {"start": "2026-12-01", "end": "2026-12-12"}
    # When the actuals Lambda runs
    first = module.handler(event, FakeContext(function_name="trncost-actuals"))
    # Then it followed NextPageToken to the second page, and kept the estimate's month
    assert first["status"] == "ok" and first["requests"] == 2, first
    assert first["estimate_ids"] == [estimate_id]
    assert [(p["period"], p["outcome"]) for p in first["periods"]] == [("2026-12", "created")]
    found = services.actuals.comparison(estimate_id)
    assert [(p.period, p.source, p.estimated) for p in found.periods] == [
        ("2026-12", "cost_explorer", True)
    ]
    trn2 = next(x for x in found.lines if x.usage_type == "USE2-BoxUsage:trn2.48xlarge")
    assert trn2.actual_usd == Decimal(2720) and trn2.actual_quantity == Decimal(68)
    # When it runs again on the same data: nothing changes
    again = module.handler(event, FakeContext(function_name="trncost-actuals"))
    assert [p["outcome"] for p in again["periods"]] == ["unchanged"]


def test_cost_explorer_without_the_tag_active_is_answered_not_retried(stage):
    services, _ = stage
    client = boto3.client("ce", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_client_error(
        "get_cost_and_usage",
        service_error_code="DataUnavailableException",
        service_message="trncost:estimate-id is not enabled as a cost allocation tag",
    )
    service = ActualsService(
        services.actuals_store,
        services.records,
        services.estimates,
        cost_explorer=lambda: CostExplorer(client),
    )
    with stub:
        answer = service.pull_cost_explorer()
    assert answer["status"] == "not_ready" and "cost allocation tag" in answer["reason"]


def test_the_request_asks_the_tag_and_usage_type_from_the_first_of_last_month():
    from datetime import date

    from trncost.billing.cost_explorer import previous_month_start, request

    query = request(previous_month_start(date(2027, 1, 15)), date(2027, 1, 16))
    assert query["TimePeriod"] == {"Start": "2026-12-01", "End": "2027-01-16"}
    assert query["GroupBy"] == [
        {"Type": "TAG", "Key": "trncost:estimate-id"},
        {"Type": "DIMENSION", "Key": "USAGE_TYPE"},
    ]
    assert query["Metrics"] == ["UnblendedCost", "UsageQuantity"]
    # botocore itself accepts it
    Stubber(boto3.client("ce", region_name="us-east-1")).add_response(
        "get_cost_and_usage", {"ResultsByTime": []}, query
    )


# -- SageMaker at job end --------------------------------------------------------------------------
class FakeTrainingJobs:
    """DescribeTrainingJob of the sample job, with its billable time (4,144 s × 2 instances)."""

    def __init__(self, region: str) -> None:
        self.region = region

    def describe(self, job_name: str) -> Any:
        detail = load_event("sagemaker_training_job_completed")["detail"]
        return facts_from_description({**detail, "BillableTimeInSeconds": 4144})


def _job_event(estimate_id: str, *, trial_too: bool) -> dict[str, Any]:
    event = load_event("sagemaker_training_job_completed")
    tags = {"trncost:estimate-id": estimate_id, "trncost:workload-id": "wl-1"}
    if trial_too:
        tags.update(event["detail"]["Tags"])
    event["detail"]["Tags"] = tags
    return event


def test_a_sagemaker_job_of_an_estimate_is_its_first_same_day_actual(stage):
    services, estimate_id = stage
    actuals = ActualsService(
        services.actuals_store, services.records, services.estimates, sagemaker=FakeTrainingJobs
    )
    ingest = IngestService(services.records, services.claims, collector=None, actuals=actuals)  # type: ignore[arg-type]
    # When the job (tagged with the estimate, not a trial) ends
    outcome = ingest.ingest(_job_event(estimate_id, trial_too=False))
    # Then its billable time × instance count, at the snapshot's rate, is the actual
    assert outcome.status == "actual_recorded", outcome
    hours = Decimal(4144 * 2) / Decimal(3600)
    found = actuals.comparison(estimate_id)
    (line,) = [x for x in found.lines if x.kind == "not_estimated"]  # an EC2 estimate's
    assert line.actual_usd == (hours * Decimal("24.72")).quantize(Decimal("0.000001"))
    assert [(p.source, p.estimated) for p in found.periods] == [("sagemaker", True)]
    # And the same event again changes nothing
    assert ingest.ingest(_job_event(estimate_id, trial_too=False)).status == "actual_recorded"
    assert actuals.comparison(estimate_id).actual_usd == found.actual_usd


def test_a_job_of_no_estimate_here_is_a_rejected_ingest_saying_so(stage):
    services, _ = stage
    actuals = ActualsService(
        services.actuals_store, services.records, services.estimates, sagemaker=FakeTrainingJobs
    )
    ingest = IngestService(services.records, services.claims, collector=None, actuals=actuals)  # type: ignore[arg-type]
    outcome = ingest.ingest(_job_event("est-000000000000", trial_too=False))
    assert outcome.status == "rejected"
    assert "estimate est-000000000000 (trncost:estimate-id), which this stage has not" in (
        outcome.reason
    )
    assert [r.reason for r in ingest.rejected()] == [outcome.reason]


# -- a budget from an estimate ---------------------------------------------------------------------
@pytest.fixture
def api(stage, monkeypatch):
    services, _ = stage
    lambda_env(monkeypatch, services.settings.table_name, **{ACCOUNT_ID_ENV: ACCOUNT})
    module = load_handler("api")

    def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        response = module.handler(api_event(method, path, body), FakeContext())
        return response["statusCode"], json.loads(response["body"])

    return call


def test_a_budget_on_the_estimates_tag_with_p90_limit_and_alerts_at_p50_and_p90(api, stage):
    services, estimate_id = stage
    body = {"subscribers": [{"type": "EMAIL", "address": "ml-owner@example.com"}],
            "start": "2026-12-01"}  # fmt: skip
    status, view = api("POST", f"/estimates/{estimate_id}/budget", body)
    assert status == 201, view
    budgets = boto3.client("budgets", region_name="us-east-1")
    made = budgets.describe_budget(AccountId=ACCOUNT, BudgetName=view["budget_name"])["Budget"]
    assert view["budget_name"] == f"trncost-{estimate_id}" and ":" not in view["budget_name"]
    assert made["FilterExpression"] == {
        "Tags": {"Key": "trncost:estimate-id", "Values": [estimate_id], "MatchOptions": ["EQUALS"]}
    }
    assert made["Metrics"] == ["UnblendedCost"]
    assert Decimal(made["BudgetLimit"]["Amount"]) == Decimal(view["limit_usd"])
    alerts = {a["percentile"]: Decimal(a["threshold_usd"]) for a in view["alerts"]}
    assert alerts["P50"] < alerts["P90"] == Decimal(view["limit_usd"])
    notes = budgets.describe_notifications_for_budget(
        AccountId=ACCOUNT, BudgetName=view["budget_name"]
    )["Notifications"]
    assert sorted(n["Threshold"] for n in notes) == [float(alerts["P50"]), float(alerts["P90"])]
    assert {n["NotificationType"] for n in notes} == {"ACTUAL"}
    # the same request again: unchanged
    status, again = api("POST", f"/estimates/{estimate_id}/budget", body)
    assert status == 200 and again["outcome"] == "unchanged"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"subscribers": []}, "subscribers"),
        ({"subscribers": [{"type": "EMAIL", "address": "not-an-address"}]}, "subscribers.0"),
        (
            {"subscribers": [{"type": "SNS", "address": f"arn:aws:sns:us-east-1:{ACCOUNT}:a"},
                             {"type": "SNS", "address": f"arn:aws:sns:us-east-1:{ACCOUNT}:b"}]},
            "subscribers",
        ),
        ({"subscribers": [{"type": "EMAIL", "address": "a@b.co"}], "start": "2027-01-01",
          "end": "2026-01-01"}, "end"),
    ],
)  # fmt: skip
def test_a_budget_request_it_cannot_make_is_a_422_naming_the_field(api, stage, body, field):
    _, estimate_id = stage
    status, answer = api("POST", f"/estimates/{estimate_id}/budget", body)
    assert status == 422, answer
    assert any(f.startswith(field) for f in answer["fields"]) or field in answer["message"]


def test_a_budget_for_an_unknown_estimate_is_a_404(api):
    body = {"subscribers": [{"type": "EMAIL", "address": "a@b.co"}]}
    status, answer = api("POST", "/estimates/est-000000000000/budget", body)
    assert status == 404
