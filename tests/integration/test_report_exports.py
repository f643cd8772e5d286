"""The report routes' formats through the real API handler on moto: the HTML page (with the
break-even of a PENDING price against the best comparable estimate of the workload), and the
line items and input table as CSV and Markdown (`?format=csv|md`) with their content types;
any other format is a 422 naming `format`."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest

from tests.support.events import saved_price_list
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from tests.support.html_page import Page, assert_self_contained
from trncost.estimate import break_even_price
from trncost.model import Estimate
from trncost.settings import ACCEPT_UPLOADS_ENV, LIVE_PRICES_ENV


@pytest.fixture
def api(table, monkeypatch):
    lambda_env(monkeypatch, table, **{LIVE_PRICES_ENV: "false", ACCEPT_UPLOADS_ENV: "true"})
    module = load_handler("api")

    def call(method, path, body=None, **kw):
        response = module.handler(api_event(method, path, body, **kw), FakeContext())
        headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            headers.setdefault(name, ",".join(values))
        raw = response["body"]
        ctype = headers.get("Content-Type", "")
        payload = json.loads(raw) if "json" in ctype and raw else raw
        return response["statusCode"], payload, headers

    yield call


TRN2 = {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
TRN3 = {"instance_type": "trn3.48xlarge", "instance_count": 2, "region": "us-east-1"}


def seed(call) -> None:
    wl = workload(workload_id="wl-rep", dataset_gb=100).model_dump(mode="json")
    assert call("POST", "/workloads", wl)[0] == 201
    trials = (("r-1", "trn2.48xlarge"), ("r-2", "trn2.48xlarge"), ("r-3", "trn3.48xlarge"))
    for tid, itype in trials:
        t = trial(tid, instance_type=itype, count=2, phase="target", workload_id="wl-rep")
        assert call("POST", "/workloads/wl-rep/trials", t.model_dump(mode="json"))[0] == 201
    saved = saved_price_list()
    body = {"saved_price_list": saved, "note": "t", "publish": True}
    status, taken, _ = call("POST", "/prices/snapshots", body)
    assert status == 201 and taken["published_as_latest"], taken


def create(call, candidate, **assumptions) -> tuple[str, Estimate]:
    status, created, _ = call(
        "POST", "/workloads/wl-rep/estimates", {"candidate": candidate, "assumptions": assumptions}
    )
    assert status == 201, created
    return created["estimate_id"], Estimate.model_validate(created["estimate"])


def test_a_pending_report_gives_the_engines_break_even_against_the_comparable_estimate(api):
    seed(api)
    trn2_id, trn2 = create(api, TRN2)
    trn3_id, trn3 = create(api, TRN3)
    assert trn2.status == "complete" and trn3.status == "incomplete"
    status, page, headers = api("GET", f"/estimates/{trn3_id}/report")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert_self_contained(page)
    found = Page(page)
    assert found.find("p", id="break-even-value", data_break_even="price")
    price = break_even_price(trn3, trn2.total_usd)
    assert price is not None and price > 0
    from trncost.display import rate

    assert rate(price, trn3.pending_terms[0].unit) in found.text
    assert trn2_id in found.text and "trn2.48xlarge" in found.text
    # the complete estimate has nothing to break even
    assert 'id="break-even' not in api("GET", f"/estimates/{trn2_id}/report")[1]


def test_no_price_makes_it_cheaper_when_the_known_part_alone_costs_more(api):
    seed(api)
    create(api, TRN2)
    # labour alone (known, assumed) costs more than the whole trn2 plan
    trn3_id, trn3 = create(api, TRN3, engineering_hours=50000, engineering_hourly_usd="200")
    page = api("GET", f"/estimates/{trn3_id}/report")[1]
    found = Page(page)
    assert found.find("p", id="break-even-value", data_break_even="never")
    assert "No price makes it cheaper" in found.text
    assert "-$" not in found.text.split("Break-even price", 1)[1].split("Warnings", 1)[0]


def test_a_pending_estimate_alone_says_there_is_nothing_to_break_even_against(api):
    seed(api)
    trn3_id, _ = create(api, TRN3)
    found = Page(api("GET", f"/estimates/{trn3_id}/report")[1])
    assert found.find("p", id="break-even-none")
    assert "this workload has no other estimate" in found.text


def test_the_estimate_report_as_csv_and_markdown(api):
    seed(api)
    trn3_id, trn3 = create(api, TRN3)
    status, body, headers = api("GET", f"/estimates/{trn3_id}/report", query={"format": "csv"})
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    assert (
        "attachment" in headers["Content-Disposition"] and ".csv" in headers["Content-Disposition"]
    )
    rows = list(csv.DictReader(io.StringIO(body)))
    lines = [r for r in rows if r["table"] == "line_item"]
    inputs = [r for r in rows if r["table"] == "input"]
    assert len(lines) == len(trn3.line_items) and len(inputs) == len(trn3.inputs)
    pending = [r for r in lines if r["amount"].startswith("PENDING")]
    assert pending and all(r["amount_usd"] == "" for r in pending)  # never 0
    priced = [r for r in lines if r["amount_usd"]]
    assert sum(Decimal(r["amount_usd"]) for r in priced) == trn3.total_known_usd
    assert {r["id"] for r in inputs} == {row.id for row in trn3.inputs}

    status, md, headers = api(
        "GET", f"/estimates/{trn3_id}/report", query={"format": "md", "version": "1"}
    )
    assert status == 200 and headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert "## Line items" in md and "## Input table" in md and "Break-even" in md
    table_rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len(table_rows) == 2 * 2 + len(trn3.line_items) + len(trn3.inputs)  # 2 header lines each


@pytest.mark.parametrize("fmt", ["pdf", "HTML", "csv;", ""])
def test_any_other_format_is_a_422_naming_format(api, fmt):
    seed(api)
    trn3_id, _ = create(api, TRN3)
    status, err, _ = api("GET", f"/estimates/{trn3_id}/report", query={"format": fmt})
    assert status == 422, err
    assert err["error"] == "validation_error" and err["fields"] == ["format"]
    assert "format" in err["message"]


def test_the_comparison_report_as_csv_and_markdown(api):
    seed(api)
    body = {"candidates": [{"candidate": TRN2}, {"candidate": TRN3}], "samples": 1000}
    path = "/workloads/wl-rep/comparisons/report"
    status, page, headers = api("POST", path, body)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    status, text, headers = api("POST", path, body, query={"format": "csv"})
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["candidate"] for r in rows} == {
        "2× trn2.48xlarge (us-east-1, on_demand)",
        "2× trn3.48xlarge (us-east-1, on_demand)",
    }
    status, md, headers = api("POST", path, body, query={"format": "md"})
    assert status == 200 and headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert md.count("### Line items") == 2 and "## Candidates" in md
    status, err, _ = api("POST", path, body, query={"format": "xlsx"})
    assert status == 422 and any("format" in f for f in err["fields"])


def test_a_stored_comparisons_report_in_every_format(api):
    seed(api)
    body = {"candidates": [{"candidate": TRN2}, {"candidate": TRN3}], "samples": 1000}
    status, stored, _ = api("POST", "/workloads/wl-rep/comparisons", body)
    assert status == 201, stored
    path = f"/comparisons/{stored['comparison_id']}/report"
    status, page, headers = api("GET", path)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert 'id="side-by-side"' in page
    status, text, headers = api("GET", path, query={"format": "csv"})
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    assert stored["comparison_id"] in headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(text)))
    # what the page's first screen says comes first: the summary, range and decision
    assert {"summary", "range", "decision", "decision_reason", "line_item", "input"} <= {
        r["table"] for r in rows
    }
    decided = {r["candidate"]: r["label"] for r in rows if r["table"] == "decision"}
    analysis = stored["analysis"]
    assert decided == {c["candidate_id"]: c["decision"]["action"] for c in analysis["candidates"]}
    p50 = {
        r["candidate"]: r["amount_usd"] for r in rows if r["table"] == "range" and r["id"] == "p50"
    }
    for c in analysis["candidates"]:
        band = c["range"]["total_usd"] or c["range"]["known_usd"]
        assert p50[c["candidate_id"]] == str(band["p50"])
    status, md, headers = api("GET", path, query={"format": "md"})
    assert status == 200 and headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert md.count("### Input table") == 2
    assert md.count("**Decision:**") == 2 and md.count("**Range (") == 2
    assert "| candidate | status | point | P50 | P10–P90 | p cheapest |" in md
    status, err, _ = api("GET", path, query={"format": "docx"})
    assert status == 422 and err["fields"] == ["format"]


def test_a_comparison_with_credits_exports_its_runway(api):
    seed(api)
    credits = {"amount_usd": "100000", "expires_on": "2027-03-01", "as_of": "2026-10-15"}
    body = {"candidates": [{"candidate": TRN2}], "samples": 1000, "credits": credits}
    status, stored, _ = api("POST", "/workloads/wl-rep/comparisons", body)
    assert status == 201, stored
    path = f"/comparisons/{stored['comparison_id']}/report"
    status, text, _ = api("GET", path, query={"format": "csv"})
    runway = {
        r["id"]: r["value"] for r in csv.DictReader(io.StringIO(text)) if r["table"] == "runway"
    }
    expected = stored["analysis"]["candidates"][0]["runway"]
    assert runway["targets_on_credits"] == str(expected["targets_on_credits"])
    assert runway["limited_by"] == expected["limited_by"]
    status, md, _ = api("GET", path, query={"format": "md"})
    assert "**Credits runway**" in md and "targets_on_credits" in md
