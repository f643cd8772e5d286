"""Listing and sharing through the real API handler on moto: a workload's estimates, paged
like every list (limit, next_cursor, 404 for an unknown workload), each with its latest
version and headline figures; comparisons stored as immutable records (201 with the id and a
Location, a repeat 200 with the same record), read again and reported by id, unchanged by
later evidence (which makes a new comparison)."""

from __future__ import annotations

import json

import pytest

from tests.support.events import saved_price_list
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from trncost.settings import ACCEPT_UPLOADS_ENV, LIVE_PRICES_ENV

WL = "wl-share"
TRN2 = {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
TRN3 = {**TRN2, "instance_type": "trn3.48xlarge"}


@pytest.fixture
def api(table, monkeypatch):
    lambda_env(monkeypatch, table, **{LIVE_PRICES_ENV: "false", ACCEPT_UPLOADS_ENV: "true"})
    module = load_handler("api")

    def call(method, path, body=None, query=None):
        response = module.handler(api_event(method, path, body, query=query), FakeContext())
        headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            headers.setdefault(name, ",".join(values))
        ctype = headers.get("Content-Type", "")
        raw = response["body"]
        payload = json.loads(raw) if "json" in ctype and raw else raw
        return response["statusCode"], payload, headers

    status, *_ = call("POST", "/workloads", workload(workload_id=WL).model_dump(mode="json"))
    assert status == 201
    trials = (("t-2a", "trn2.48xlarge"), ("t-2b", "trn2.48xlarge"), ("t-3a", "trn3.48xlarge"))
    for tid, it in trials:
        body = trial(tid, instance_type=it, count=2, phase="target", workload_id=WL)
        assert call("POST", f"/workloads/{WL}/trials", body.model_dump(mode="json"))[0] == 201
    snap = {"saved_price_list": saved_price_list(), "publish": True}
    assert call("POST", "/prices/snapshots", snap)[0] == 201
    return call


def test_a_workloads_estimates_are_listed_a_page_at_a_time(api):
    made = {}
    for cand in (TRN2, TRN3, {**TRN2, "instance_count": 4}):
        status, created, _ = api("POST", f"/workloads/{WL}/estimates", {"candidate": cand})
        assert status == 201, created
        made[created["estimate_id"]] = created
    status, first, _ = api("GET", f"/workloads/{WL}/estimates", query={"limit": "2"})
    assert status == 200 and len(first["items"]) == 2 and first["next_cursor"]
    status, rest, _ = api(
        "GET", f"/workloads/{WL}/estimates", query={"limit": "2", "cursor": first["next_cursor"]}
    )
    assert status == 200 and len(rest["items"]) == 1 and rest["next_cursor"] is None
    items = {i["estimate_id"]: i for i in first["items"] + rest["items"]}
    assert set(items) == set(made)
    for eid, item in items.items():
        est = made[eid]["estimate"]
        assert item["candidate"] == made[eid]["estimate"]["candidate"]
        assert item["version"] == 1 and item["reason"] == "created"
        assert item["status"] == est["status"]
        assert item["total_usd"] == est["total_usd"]
        assert item["total_known_usd"] == est["total_known_usd"]
        assert (item["cloud_usd"], item["labour_usd"]) == (est["cloud_usd"], est["labour_usd"])
        assert item["price_basis"] == est["price_basis"]
        assert item["cost_per_target_usd"] == est["cost_per_target_usd"]
        assert item["time_to_target_h"] == est["time"]["total_h"]
        assert item["report_url"] == f"/estimates/{eid}/report"
        assert item["problem"] is None
    (trn3,) = [i for i in items.values() if i["candidate"]["instance_type"] == "trn3.48xlarge"]
    trn2 = [i for i in items.values() if i["candidate"]["instance_type"] == "trn2.48xlarge"]
    assert {i["price_basis"] for i in trn2} == {"saved_file"}  # an uploaded file's prices
    # trn3 has no price in the saved file: PENDING, never $0
    assert trn3["status"] == "incomplete" and trn3["total_usd"] is None
    assert trn3["pending_prices"] == ["AmazonEC2/us-east-1/trn3.48xlarge/on_demand"]


def test_listing_an_unknown_workload_or_a_foreign_cursor(api):
    status, err, _ = api("GET", "/workloads/nope/estimates")
    assert status == 404 and err["error"] == "not_found" and "nope" in err["message"]
    status, page, _ = api("GET", "/workloads", query={"limit": "1"})
    other = page["next_cursor"] or "eyJ4IjoiMSJ9"
    status, err, _ = api("GET", f"/workloads/{WL}/estimates", query={"cursor": other})
    assert status == 422 and err["fields"] == ["cursor"]
    status, err, _ = api("GET", f"/workloads/{WL}/estimates", query={"limit": "0"})
    assert status == 422 and "limit" in err["fields"]
    status, page, _ = api("GET", f"/workloads/{WL}/estimates")
    assert status == 200 and page == {"items": [], "next_cursor": None}


def _comparison(samples=1000):
    return {"candidates": [{"candidate": TRN2}, {"candidate": TRN3}], "seed": 3, "samples": samples}


def test_a_comparison_is_stored_read_and_shared_by_id(api):
    status, made, headers = api("POST", f"/workloads/{WL}/comparisons", _comparison())
    assert status == 201, made
    cid = made["comparison_id"]
    assert cid.startswith("cmp-") and made["workload_id"] == WL
    assert headers["Location"] == f"/dev/comparisons/{cid}"  # the stage's path first
    assert made["url"] == f"/comparisons/{cid}"
    assert made["report_url"] == f"/comparisons/{cid}/report"
    assert made["created_by"] == "local" and made["snapshot_id"].startswith("ps-")
    assert made["request"]["snapshot_id"] == made["snapshot_id"]  # resolved, not "latest"
    assert {c["instance_type"] for c in made["analysis"]["comparison"]["by_cost"]} == {
        "trn2.48xlarge",
        "trn3.48xlarge",
    }
    # read again: the same record
    assert api("GET", f"/comparisons/{cid}")[:2] == (200, made)
    # the same request on the same evidence: the same comparison, nothing new stored
    status, again, headers = api("POST", f"/workloads/{WL}/comparisons", _comparison())
    assert (status, again) == (200, made) and headers["Location"].endswith(cid)
    # its report: the comparison report page of the stored analysis
    status, page, headers = api("GET", f"/comparisons/{cid}/report")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert page.lstrip().startswith("<!DOCTYPE html>") and "trn3.48xlarge" in page
    assert "Decision" in page
    # new evidence: a new comparison; the stored one is unchanged
    t = trial("t-3b", instance_type="trn3.48xlarge", count=2, phase="target", workload_id=WL)
    assert api("POST", f"/workloads/{WL}/trials", t.model_dump(mode="json"))[0] == 201
    status, newer, _ = api("POST", f"/workloads/{WL}/comparisons", _comparison())
    assert status == 201 and newer["comparison_id"] != cid
    assert api("GET", f"/comparisons/{cid}")[:2] == (200, made)
    # another seed or sample count: another comparison
    status, other, _ = api("POST", f"/workloads/{WL}/comparisons", _comparison(samples=2000))
    assert status == 201 and other["comparison_id"] not in (cid, newer["comparison_id"])


def test_unknown_comparisons_and_workloads(api):
    for path in ("/comparisons/cmp-0000000000000000", "/comparisons/cmp-0000000000000000/report"):
        status, err, _ = api("GET", path)
        assert status == 404 and err["error"] == "not_found"
    status, err, _ = api("POST", "/workloads/nope/comparisons", _comparison())
    assert status == 404 and "nope" in err["message"]
    status, err, _ = api("GET", "/comparisons/bad id")
    assert status == 422
