"""The API Lambda through its real handler on moto: workload → trials → prices → estimate →
versions → report, and every kind of bad request answered with a 4xx that names the problem."""

from __future__ import annotations

import base64
import json
import re

import pytest

from tests.support.events import saved_price_list
from tests.support.examples import ROOT
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from trncost import __version__
from trncost.settings import ACCEPT_UPLOADS_ENV, LIVE_PRICES_ENV


@pytest.fixture
def api(table, monkeypatch):
    # this stage publishes uploads that ask ("publish": true)
    lambda_env(monkeypatch, table, **{LIVE_PRICES_ENV: "false", ACCEPT_UPLOADS_ENV: "true"})
    module = load_handler("api")

    def call(method, path, body=None, **kw):
        response = module.handler(api_event(method, path, body, **kw), FakeContext())
        multi = response.get("multiValueHeaders") or {}
        ctype = (response.get("headers") or {}).get("Content-Type") or ",".join(
            multi.get("Content-Type", [])
        )
        raw = response["body"]
        payload = json.loads(raw) if "json" in ctype and raw else raw
        return response["statusCode"], payload

    yield call


def seed(call):
    wl = workload(workload_id="wl-api", dataset_gb=100).model_dump(mode="json")
    assert call("POST", "/workloads", wl)[0] == 201
    for tid, count in (("t-1", 2), ("t-2", 2)):
        t = trial(tid, count=count, phase="target", workload_id="wl-api").model_dump(mode="json")
        assert call("POST", "/workloads/wl-api/trials", t)[0] == 201
    saved = saved_price_list()
    body = {"saved_price_list": saved, "note": "t", "publish": True}
    status, taken = call("POST", "/prices/snapshots", body)
    assert status == 201 and taken["published_as_latest"]
    return taken


def test_the_whole_flow(api):
    taken = seed(api)
    assert api("GET", "/health") == (200, {"status": "ok", "version": __version__})
    status, page = api("GET", "/workloads")
    assert status == 200 and [w["workload_id"] for w in page["items"]] == ["wl-api"]
    status, trials = api("GET", "/workloads/wl-api/trials", query={"limit": "1"})
    assert status == 200 and len(trials["items"]) == 1 and trials["next_cursor"]
    status, rest = api(
        "GET", "/workloads/wl-api/trials", query={"limit": "1", "cursor": trials["next_cursor"]}
    )
    assert len(rest["items"]) == 1 and rest["items"][0] != trials["items"][0]
    assert api("GET", "/trials/t-1")[1]["trial"]["trial_id"] == "t-1"

    body = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"},
        "assumptions": {"idle_fraction": {"value": 0.1, "note": "queueing"}},
    }
    status, created = api("POST", "/workloads/wl-api/estimates", body)
    assert status == 201 and created["version"] == 1
    est = created["estimate"]
    assert est["status"] == "complete" and isinstance(est["total_usd"], str)
    assert est["snapshot_id"] == taken["snapshot_id"]
    eid = created["estimate_id"]
    assert api("GET", f"/estimates/{eid}")[1]["estimate"] == est
    assert api("GET", f"/estimates/{eid}", query={"version": "1"})[0] == 200
    assert api("GET", f"/estimates/{eid}/versions")[1]["versions"][0]["version"] == 1
    status, html = api("GET", f"/estimates/{eid}/report")
    assert status == 200 and "<!DOCTYPE html>" in html[:200] and "trn2.48xlarge" in html

    # trn3 has no price: the estimate is incomplete, never $0
    body["candidate"]["instance_type"] = "trn3.48xlarge"
    t3 = trial(
        "t-3", instance_type="trn3.48xlarge", count=2, phase="target", workload_id="wl-api"
    ).model_dump(mode="json")
    api("POST", "/workloads/wl-api/trials", t3)
    status, pending = api("POST", "/workloads/wl-api/estimates", body)
    assert status == 201 and pending["estimate"]["status"] == "incomplete"
    assert pending["estimate"]["total_usd"] is None

    status, snaps = api("GET", "/prices/snapshots")
    assert [s["snapshot_id"] for s in snaps["items"]] == [taken["snapshot_id"]]
    status, latest = api("GET", "/prices/snapshots/latest")
    assert latest["snapshot_id"] == taken["snapshot_id"]
    sid = taken["snapshot_id"]
    status, diff = api("GET", f"/prices/snapshots/{sid}/diff/{sid}")
    assert status == 200 and diff["changed"] == [] and diff["added"] == []


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("GET", "/workloads/nope", 404),
        ("GET", "/trials/nope", 404),
        ("GET", "/estimates/nope", 404),
        ("GET", "/estimates/nope/versions", 404),
        ("GET", "/estimates/nope/report", 404),
        ("GET", "/prices/snapshots/nope", 404),
        ("GET", "/prices/snapshots/latest", 404),
        ("GET", "/no/such/route", 404),
    ],
)
def test_unknown_ids_are_404(api, method, path, code):
    status, body = api(method, path)
    assert status == code and body["error"] == "not_found"


def test_conflicts_are_409(api):
    seed(api)
    wl = workload(workload_id="wl-api").model_dump(mode="json")
    status, body = api("POST", "/workloads", wl)
    assert status == 409 and "wl-api exists" in body["message"]
    t = trial("t-1", workload_id="wl-api").model_dump(mode="json")
    assert api("POST", "/workloads/wl-api/trials", t)[0] == 409


def test_an_estimate_without_prices_or_evidence_says_what_is_missing(api):
    wl = workload(workload_id="wl-api").model_dump(mode="json")
    api("POST", "/workloads", wl)
    body = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
    }
    status, err = api("POST", "/workloads/wl-api/estimates", body)
    assert status == 409 and err["error"] == "no_price_snapshot"
    saved = saved_price_list()
    api("POST", "/prices/snapshots", {"saved_price_list": saved, "publish": True})
    status, err = api("POST", "/workloads/wl-api/estimates", body)
    assert status == 422 and err["error"] == "missing_evidence"
    assert "no trial of trn2.48xlarge" in err["message"] and err["fields"] == ["trial"]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda w: w.pop("target"), "target"),
        (lambda w: w["target"].update(amount=-1), "target.amount"),
        (lambda w: w["target"].update(unit="bytes"), "target.unit"),
        (lambda w: w.update(surprise=1), "surprise"),
    ],
)
def test_bad_workloads_are_422_naming_the_field(api, mutate, field):
    wl = workload(workload_id="wl-bad").model_dump(mode="json")
    mutate(wl)
    status, err = api("POST", "/workloads", wl)
    assert status == 422 and err["error"] == "validation_error"
    assert field in err["fields"], err


def test_bad_query_parameters_are_422(api):
    status, err = api("GET", "/workloads", query={"limit": "0"})
    assert status == 422 and "limit" in err["fields"]
    status, err = api("GET", "/workloads", query={"cursor": "garbage"})
    assert status == 422 and "cursor" in err["message"]


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"raw_body": "{not json"}, 400, "bad_request"),
        (
            {"raw_body": base64.b64encode(b"\xff\xfe\xfd").decode(), "base64_body": True},
            400,
            "bad_request",
        ),
        (
            {"raw_body": "{}", "headers": {"Content-Type": "text/plain"}},
            415,
            "unsupported_media_type",
        ),
        ({"raw_body": json.dumps({"x": "a" * (1024 * 1024)})}, 413, "payload_too_large"),
        ({"raw_body": "!!!", "base64_body": True}, 400, "bad_request"),
    ],
)
def test_malformed_bodies_are_4xx_with_a_message(api, kwargs, status, code):
    got, err = api("POST", "/workloads", **kwargs)
    assert got == status and err["error"] == code and err["message"]


def test_live_snapshots_are_refused_where_they_are_off(api):
    status, err = api("POST", "/prices/snapshots", {})
    assert status == 409 and err["error"] == "live_prices_off"


def test_a_bad_saved_price_list_is_422(api):
    status, err = api("POST", "/prices/snapshots", {"saved_price_list": {"hello": 1}})
    assert status == 422 and "saved_price_list" in err["message"]


def test_rejected_ingests_are_visible(api, table):
    from trncost.store.ingest import IngestStore

    IngestStore(table).reject(
        "2026-11-30T10:00:00Z",
        "ev-1",
        "no trncost:workload tag",
        {"source": "aws.sagemaker", "detail-type": "x"},
    )
    status, page = api("GET", "/ingest/rejected")
    assert status == 200 and page["items"][0]["reason"] == "no trncost:workload tag"


def test_the_checked_in_openapi_document_is_the_generated_one():
    # Given the document the package ships, and the repository's openapi.json (a link to it)
    from trncost.api.app import SPEC_FILE
    from trncost.api.openapi import render

    assert (ROOT / "openapi.json").resolve() == SPEC_FILE.resolve()
    # When the document is generated from the routes, Then the file is that output
    assert SPEC_FILE.read_text(encoding="utf-8") == render(), "stale: run `make openapi`"


def test_openapi_json_and_swagger_ui_serve_the_checked_in_document(api):
    from trncost.api.app import SPEC_FILE

    # Given the checked-in document
    spec = SPEC_FILE.read_text(encoding="utf-8")
    # When /openapi.json is asked for, Then it is that document
    status, doc = api("GET", "/openapi.json")
    assert status == 200 and doc == json.loads(spec)
    assert doc["info"]["title"] == "trncost" and "/workloads/{workload_id}/trials" in doc["paths"]
    # When /docs is asked for, Then Swagger UI shows that very document, as written
    status, page = api("GET", "/docs")
    assert status == 200 and "SwaggerUIBundle" in page
    assert spec.replace("</", "<\\/") in page
    assert "Create a workload" in page  # a summary written in trncost.api.docs
    # and it is self-contained: no script or stylesheet fetched from anywhere (no CDN)
    assert "https://" not in page.split("<body", 1)[0]
    assert re.search(r"<(script|link)\b[^>]*\b(src|href)=", page) is None
    # and the document it names (Swagger UI's link) is the same one
    assert api("GET", "/docs", query={"format": "json"}) == (200, doc)


def test_comparisons_rank_range_and_decide(api):
    seed(api)
    t3 = trial(
        "t-3", instance_type="trn3.48xlarge", count=2, phase="target", workload_id="wl-api"
    ).model_dump(mode="json")
    api("POST", "/workloads/wl-api/trials", t3)

    def plan(it):
        return {
            "candidate": {
                "instance_type": it,
                "instance_count": 2,
                "region": "us-east-1",
            }
        }

    body = {
        "candidates": [plan("trn2.48xlarge"), plan("trn3.48xlarge"), plan("g5.48xlarge")],
        "seed": 7,
        "samples": 2000,
    }
    status, stored = api("POST", "/workloads/wl-api/comparisons", body)
    assert status == 201, stored
    analysis = stored["analysis"]
    by_id = {c["candidate_id"]: c for c in analysis["candidates"]}
    assert len(by_id) == 3
    errors = [c for c in analysis["candidates"] if c["error"]]
    assert len(errors) == 1 and "no trial of g5.48xlarge" in errors[0]["error"]
    ranked = [r for r in analysis["comparison"]["by_cost"] if r["cost_rank"] is not None]
    assert [r["instance_type"] for r in ranked] == ["trn2.48xlarge"]  # trn3 is PENDING
    (be,) = analysis["comparison"]["break_evens"]
    assert be["price_key"] == "AmazonEC2/us-east-1/trn3.48xlarge/on_demand"
    assert analysis["decision"]["action"] in {
        "continue_trials",
        "compare_alternatives",
        "pause_migration",
        "ready_to_budget",
    }
    assert analysis["decision"]["reasons"]
    rng = next(
        c for c in analysis["candidates"] if c["estimate"] and c["estimate"]["status"] == "complete"
    )["range"]
    # percentiles where the plan can finish are ordered; draws whose failures outpace the
    # work (4 instance-hours of evidence, no checkpoints measured) are counted, not hidden
    values = [
        float(rng["total_usd"][k]) for k in ("p10", "p50", "p90") if rng["total_usd"][k] is not None
    ]
    assert values == sorted(values) and values
    # percentiles are over the draws that finish: none is null unless none finishes
    assert 0 <= rng["p_infeasible"] <= 1
    assert len(values) == 3 or rng["p_infeasible"] == 1
    if rng["p_infeasible"] > 0:
        assert any("cannot finish" in note for note in rng["notes"])
    # the same request and seed give the same answer: the same stored comparison
    assert api("POST", "/workloads/wl-api/comparisons", body) == (200, stored)
    assert api("GET", f"/comparisons/{stored['comparison_id']}") == (200, stored)


def test_comparison_bad_input_names_the_field(api):
    seed(api)
    status, err = api("POST", "/workloads/wl-api/comparisons", {"candidates": []})
    assert status == 422 and "candidates" in err["fields"]
    status, err = api(
        "POST",
        "/workloads/wl-api/comparisons",
        {
            "candidates": [
                {
                    "candidate": {
                        "instance_type": "trn2.48xlarge",
                        "instance_count": 2,
                        "region": "us-east-1",
                    }
                }
            ],
            "samples": 5,
        },
    )
    assert status == 422 and "samples" in err["fields"]


def test_the_comparison_as_a_report(api):
    seed(api)
    body = {
        "candidates": [
            {
                "candidate": {
                    "instance_type": "trn2.48xlarge",
                    "instance_count": 2,
                    "region": "us-east-1",
                }
            }
        ],
        "samples": 1000,
    }
    status, page = api("POST", "/workloads/wl-api/comparisons/report", body)
    assert status == 200 and page.lstrip().startswith("<!DOCTYPE html>")
    assert "trn2.48xlarge" in page and "Decision" in page


def test_an_aws_dependency_failing_after_retries_is_503_not_500(api, monkeypatch):
    from botocore.exceptions import ClientError

    from trncost.store.records import RecordStore

    def throttled(self, workload_id):
        raise ClientError(
            {
                "Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"},
                "ResponseMetadata": {"HTTPStatusCode": 400},
            },
            "GetItem",
        )

    monkeypatch.setattr(RecordStore, "get_workload", throttled)
    status, err = api("GET", "/workloads/anything")
    assert status == 503 and err["error"] == "upstream_unavailable"
