"""Estimate vs actual on moto, through the service and the API handler: the example estimate,
the bill of its run (FOCUS 1.2), imports that replace a billing period whole (a repeated file
changes nothing), the comparison, the scorecard, the report and the forecast as FOCUS rows."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from tests.support import actuals_kit as kit
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from trncost.model.catalog import Catalog
from trncost.settings import ACCOUNT_ID_ENV, Settings
from trncost.wiring import Wiring
from trncost_client.local.runtime import default_catalog

RUN_START = date(2026, 12, 3)


@pytest.fixture
def stage(table) -> tuple[Wiring, str, str]:
    """The example workload, trials, bundled prices and its trn2 estimate: (services, workload
    id, estimate id)."""
    services = Wiring(
        Settings(
            table_name=table,
            catalog=Catalog.model_validate(default_catalog()),
            account_id="123456789012",
        )
    )
    workload_id, estimate_id = kit.seed_stage(services)
    return services, workload_id, estimate_id


def test_the_bill_of_a_run_is_kept_and_compared_with_its_forecast(stage):
    services, workload_id, estimate_id = stage
    bill = kit.run_bill(estimate_id, workload_id, RUN_START)
    # When the bill of the estimate's run is imported
    result = services.actuals.import_body(bill.encode(), "text/csv", "someone")
    # Then its rows are counted, matched to the estimate, the period created
    assert (result.rows_read, result.matched, result.unmatched) == (25, 24, 1)
    assert result.unmatched_reasons == {"no_trncost_tag": 1}
    (period,) = result.periods
    assert (period.period, period.outcome, period.changes.added) == ("2026-12", "created", 9)
    assert result.tag_keys_seen == {"trncost:estimate-id": 24}
    # And the estimate is compared with what was billed
    found = services.actuals.comparison(estimate_id)
    forecast = services.estimates.version(estimate_id).estimate
    assert found.actual_usd == kit.billed_total()
    assert found.excluded_usd == Decimal(-50)  # tax 50, credit −100
    assert found.estimate_usd < forecast.cloud_usd  # the trials and labour are not the run's
    assert found.p10_usd < found.estimate_usd < found.p90_usd
    assert found.inside_range is True and 0 < found.relative_error < 0.05
    gap = found.gap
    assert gap.hours + gap.rate + gap.not_estimated == found.actual_usd - found.estimate_usd
    assert gap.not_estimated == Decimal("2.50")  # the inter-AZ transfer
    assert gap.rate == Decimal("2.112")  # the data preparation hours at $2.90, not $2.856
    assert found.forecast_before_spend and found.estimate_version == 1


def test_the_same_file_again_changes_nothing_and_a_new_delivery_replaces_the_period(stage):
    services, workload_id, estimate_id = stage
    first = kit.run_bill(estimate_id, workload_id, RUN_START)
    services.actuals.import_body(first.encode(), "text/csv", "someone")
    before = services.actuals.comparison(estimate_id)
    # When the same file comes again
    again = services.actuals.import_body(first.encode(), "text/csv", "someone")
    # Then nothing is written
    assert not again.changed and [p.outcome for p in again.periods] == ["unchanged"]
    assert services.actuals.comparison(estimate_id) == before
    # When AWS delivers the period again, the run having gone on a day longer
    later = kit.run_bill(
        estimate_id, workload_id, RUN_START, kit.RunBill(hours_each=Decimal("118.5"))
    )
    replaced = services.actuals.import_body(later.encode(), "text/csv", "someone")
    # Then the period is replaced (not added to), and the answer says which lines changed
    (period,) = replaced.periods
    assert period.outcome == "replaced"
    assert (period.changes.added, period.changes.removed, period.changes.changed) == (0, 0, 1)
    now = services.actuals.comparison(estimate_id)
    assert now.actual_usd == kit.billed_total(kit.RunBill(hours_each=Decimal("118.5")))
    assert now.inside_range is False and now.relative_error > 0.2


def test_rows_of_an_estimate_this_stage_has_not_are_unmatched_and_not_kept(stage):
    services, workload_id, _ = stage
    bill = kit.run_bill("est-0000000000ff", workload_id, RUN_START)
    result = services.actuals.import_body(bill.encode(), "text/csv", "someone")
    assert result.matched == 0 and result.unknown_estimate_ids == ["est-0000000000ff"]
    assert result.unmatched_reasons["unknown_estimate"] == 24
    assert services.actuals.store.estimates_with_actuals() == {}


def test_an_export_supersedes_cost_explorer_in_its_period(stage):
    from trncost.billing.cost_explorer import parse

    services, workload_id, estimate_id = stage
    path = kit.BILLING / "ce_get_cost_and_usage_by_tag_and_usage_type.json"
    sample = json.loads(kit.sample_text(path, estimate_id).replace("2025-06", "2026-12"))
    ce = parse(sample["response_pages"], date(2026, 12, 1), date(2027, 1, 1))
    services.actuals.import_bill(ce, "cost-explorer")
    assert services.actuals.comparison(estimate_id).periods[0].source == "cost_explorer"
    bill = kit.run_bill(estimate_id, workload_id, RUN_START)
    services.actuals.import_body(bill.encode(), "text/csv", "someone")
    found = services.actuals.comparison(estimate_id)
    assert [(p.source, p.superseded) for p in found.periods] == [("focus_1_2", ["cost_explorer"])]
    assert found.actual_usd == kit.billed_total()
    assert {s.kind: s.used for s in found.sources} == {"cost_explorer": False, "focus_1_2": True}


def test_a_version_made_after_the_spend_began_is_not_called_a_forecast(stage):
    services, workload_id, estimate_id = stage
    bill = kit.run_bill(estimate_id, workload_id, date(2026, 11, 20))  # before the estimate
    services.actuals.import_body(bill.encode(), "text/csv", "someone")
    found = services.actuals.comparison(estimate_id)
    assert found.forecast_before_spend is False
    assert any("not a forecast" in n for n in found.notes)


# -- the API --------------------------------------------------------------------------------------
@pytest.fixture
def api(stage, monkeypatch):
    services, _, _ = stage
    lambda_env(monkeypatch, services.settings.table_name, **{ACCOUNT_ID_ENV: "123456789012"})
    module = load_handler("api")

    def call(method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any, dict]:
        response = module.handler(api_event(method, path, body, **kwargs), FakeContext())
        headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            headers.setdefault(name, ",".join(values))
        text = response["body"]
        parsed = json.loads(text) if "json" in headers.get("Content-Type", "") else text
        return response["statusCode"], parsed, headers

    return call


def test_post_actuals_takes_a_focus_csv_and_answers_201_then_200(api, stage):
    _, workload_id, estimate_id = stage
    bill = kit.run_bill(estimate_id, workload_id, RUN_START)
    headers = {"Content-Type": "text/csv"}
    status, body, _ = api("POST", "/actuals", raw_body=bill, headers=headers)
    assert status == 201, body
    assert {"rows_read", "matched", "unmatched"} <= set(body)
    assert (body["rows_read"], body["matched"], body["unmatched"]) == (25, 24, 1)
    status, body, _ = api("POST", "/actuals", raw_body=bill, headers=headers)
    assert status == 200 and body["changed"] is False


def test_post_actuals_takes_gzip_and_parquet_base64_encoded_and_the_clis_json(api, stage):
    from trncost.billing.files import read_bill_bytes

    _, workload_id, estimate_id = stage
    bill = kit.run_bill(estimate_id, workload_id, RUN_START)
    packed = base64.b64encode(gzip.compress(bill.encode())).decode()
    status, body, _ = api(
        "POST", "/actuals", raw_body=packed, base64_body=True,
        headers={"Content-Type": "application/gzip"},
    )  # fmt: skip
    assert status == 201 and body["matched"] == 24
    # the same delivery as JSON (what `trncost actuals import` sends): nothing new
    parsed = read_bill_bytes(bill.encode()).model_dump(mode="json")
    status, body, _ = api("POST", "/actuals", parsed)
    assert status == 200 and body["matched"] == 24 and body["changed"] is False


def test_post_actuals_parquet(api, stage, tmp_path):
    import duckdb

    _, workload_id, estimate_id = stage
    source = tmp_path / "bill.csv"
    source.write_text(kit.run_bill(estimate_id, workload_id, RUN_START))
    out = tmp_path / "bill.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT * REPLACE (CAST(json(Tags) AS MAP(VARCHAR, VARCHAR)) AS Tags) FROM "
        f"read_csv('{source}', all_varchar=true)) TO '{out}' (FORMAT PARQUET)"
    )
    body64 = base64.b64encode(out.read_bytes()).decode()
    status, body, _ = api(
        "POST", "/actuals", raw_body=body64, base64_body=True,
        headers={"Content-Type": "application/vnd.apache.parquet"},
    )  # fmt: skip
    assert status == 201 and (body["rows_read"], body["matched"]) == (25, 24)


@pytest.mark.parametrize(
    ("kwargs", "status", "field"),
    [
        ({"raw_body": "a,b\n1,2\n", "headers": {"Content-Type": "text/csv"}}, 422, "body"),
        ({"raw_body": "x", "headers": {"Content-Type": "text/plain"}}, 415, None),
        ({"body": {"format": "focus_1_2"}}, 422, "rows_read"),
        ({"raw_body": "x" * 6_000_001, "headers": {"Content-Type": "text/csv"}}, 413, None),
    ],
)
def test_post_actuals_refuses_what_it_cannot_read_naming_it(api, kwargs, status, field):
    got, body, _ = api("POST", "/actuals", **kwargs)
    assert got == status, body
    if field:
        assert field in body["fields"] and field in body["message"]


def test_get_estimate_actuals_answers_the_fields_the_issue_names(api, stage):
    _, workload_id, estimate_id = stage
    status, body, _ = api("GET", f"/estimates/{estimate_id}/actuals")
    assert status == 404 and "no actuals yet" in body["message"]
    bill = kit.run_bill(estimate_id, workload_id, RUN_START)
    api("POST", "/actuals", raw_body=bill, headers={"Content-Type": "text/csv"})
    status, body, _ = api("GET", f"/estimates/{estimate_id}/actuals")
    assert status == 200
    names = ("actual_usd", "estimate_usd", "p10_usd", "p50_usd", "p90_usd", "inside_range")
    assert set(names) | {"relative_error", "gap", "periods", "sources"} <= set(body)
    assert set(body["gap"]) == {"hours", "rate", "not_estimated"}
    assert Decimal(body["actual_usd"]) == kit.billed_total()


def test_the_scorecard_its_page_and_the_estimate_report_show_the_actuals(api, stage):
    _, workload_id, estimate_id = stage
    bill = kit.run_bill(estimate_id, workload_id, RUN_START)
    api("POST", "/actuals", raw_body=bill, headers={"Content-Type": "text/csv"})
    status, card, _ = api("GET", "/actuals/scorecard", query={"workload_id": workload_id})
    assert status == 200
    assert {"estimates_with_actuals", "inside_p10_p90", "median_abs_relative_error",
            "by_component"} <= set(card)  # fmt: skip
    assert (card["estimates_with_actuals"], card["inside_p10_p90"]) == (1, 1)
    status, _, _ = api("GET", "/actuals/scorecard", query={"workload_id": "no-such-workload"})
    assert status == 404
    status, page, headers = api("GET", "/actuals/scorecard/report")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert estimate_id in page and 'data-fig="inside">1<' in page
    status, report, _ = api("GET", f"/estimates/{estimate_id}/report")
    assert status == 200 and 'id="actuals"' in report and "Estimate vs actual" in report


def test_the_report_as_focus_rows(api, stage):
    _, _, estimate_id = stage
    status, text, headers = api(
        "GET", f"/estimates/{estimate_id}/report", query={"format": "focus", "start": "2026-12-03"}
    )
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["x_Percentile"] for r in rows} == {"point", "P10", "P50", "P90"}
    assert rows[0]["ChargePeriodStart"] == "2026-12-03T00:00:00Z"
    assert {r["x_PriceBasis"] for r in rows} == {"example"}  # the bundled prices
    status, body, _ = api(
        "GET", f"/estimates/{estimate_id}/report", query={"format": "focus", "start": "soon"}
    )
    assert status == 422 and "start" in body["fields"]
