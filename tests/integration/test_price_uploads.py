"""Uploads never rewrite "official" (issue 12), end to end on moto: the real API and refresh
handlers, the table, the bus.

Given official prices (trncost's own live snapshot) and an estimate that follows them, when
someone uploads a Price List file whose every rate was divided by 1,000, then `latest` does not
move, no estimate gets a new version, and the upload is usable by its id — as `saved_file`,
never as `official`. It becomes latest only when asked on a stage that accepts uploads.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from botocore.stub import Stubber

from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, load_handler
from tests.support.reliability_kit import sqs_record
from tests.support.stubs import expect_catalog, pricing_client, saved_items
from trncost.model.catalog import Catalog
from trncost.pricing.client import PriceListClient
from trncost.services.snapshots import file_sha256
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    TABLE_NAME_ENV,
)

CATALOG = Catalog(instance_types=["trn2.48xlarge", "trn3.48xlarge"], regions=["us-east-1"])
CALLER = "arn:aws:sts::123456789012:assumed-role/ml-platform/alice"
WL = "wl-up"
QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:trncost-refresh"


def forged(items: list[str], divisor: Decimal = Decimal(1000)) -> dict:
    """The saved items with every USD rate divided by `divisor`."""
    out = []
    for raw in items:
        item = json.loads(raw)
        for term in item["terms"]["OnDemand"].values():
            for dim in term["priceDimensions"].values():
                dim["pricePerUnit"]["USD"] = str(Decimal(dim["pricePerUnit"]["USD"]) / divisor)
        out.append(json.dumps(item))
    return {"FormatVersion": "aws_v1", "PriceList": out}


class World:
    def __init__(self, bus) -> None:
        self.api = load_handler("api")
        self.refresh = load_handler("refresh")
        self.bus = bus

    def call(self, method, path, body=None, caller=None, **kw):
        event = api_event(method, path, body, **kw)
        if caller:
            event["requestContext"]["identity"]["userArn"] = caller
        response = self.api.handler(event, FakeContext())
        raw = response["body"]
        multi = response.get("multiValueHeaders") or {}
        ctype = (response.get("headers") or {}).get("Content-Type") or ",".join(
            multi.get("Content-Type", [])
        )
        return response["statusCode"], json.loads(raw) if "json" in ctype and raw else raw

    def live_snapshot(self) -> dict:
        """trncost's own snapshot: the Price List API (stubbed) through POST /prices/snapshots."""
        client = pricing_client()
        with Stubber(client) as stub:
            expect_catalog(stub, CATALOG, saved_items())
            self.api.services.price_list = PriceListClient("us-east-1", client=client)
            status, taken = self.call("POST", "/prices/snapshots", {})
            stub.assert_no_pending_responses()
        assert status == 201, taken
        return taken

    def deliver(self) -> list[dict]:
        """Hand what reached the bus to the refresh Lambda, as its queue would."""
        events = self.bus.received()
        if events:
            records = [sqs_record(json.dumps(e), QUEUE_ARN) for e in events]
            out = self.refresh.handler({"Records": records}, FakeContext())
            assert out == {"batchItemFailures": []}
        return events

    def versions(self, estimate_id: str) -> list[int]:
        status, body = self.call("GET", f"/estimates/{estimate_id}/versions")
        assert status == 200
        return [v["version"] for v in body["versions"]]


@pytest.fixture
def world(table, bus, monkeypatch, request):
    accept = getattr(request, "param", False)
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(BUS_NAME_ENV, bus.name)
    monkeypatch.setenv(CATALOG_ENV, CATALOG.model_dump_json())
    monkeypatch.setenv(LIVE_PRICES_ENV, "true")
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "true" if accept else "false")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    w = World(bus)
    assert (
        w.call(
            "POST", "/workloads", workload(workload_id=WL, dataset_gb=500).model_dump(mode="json")
        )[0]
        == 201
    )
    for tid in ("t-1", "t-2"):
        t = trial(tid, count=2, phase="target", workload_id=WL).model_dump(mode="json")
        assert w.call("POST", f"/workloads/{WL}/trials", t)[0] == 201
    return w


ESTIMATE = {
    "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"},
    "assumptions": {"ebs_gb_per_instance": 200, "checkpoints_retained": 1},
}


def test_a_forged_upload_moves_nothing_and_is_usable_only_by_id_as_a_saved_file(world):
    official = world.live_snapshot()
    assert official["basis"] == "official" and official["published_as_latest"]
    assert official["origin"]["operation"] == "pricing:GetProducts"
    world.deliver()  # the snapshot's event: no estimate yet
    status, created = world.call("POST", f"/workloads/{WL}/estimates", ESTIMATE)
    assert status == 201
    eid, est = created["estimate_id"], created["estimate"]
    assert est["status"] == "complete" and est["price_basis"] == "official"
    official_total = Decimal(est["total_usd"])

    # When: every rate divided by 1,000, uploaded as a saved file
    file = forged(saved_items())
    status, up = world.call(
        "POST",
        "/prices/snapshots",
        {"saved_price_list": file, "note": "our negotiated rates"},
        caller=CALLER,
    )
    assert status == 201, up
    assert up["basis"] == "saved_file" and up["source"] == "saved_price_list_file"
    assert up["published_as_latest"] is False
    origin = up["origin"]
    assert origin["supplied_by"] == CALLER and origin["note"] == "our negotiated rates"
    assert origin["sha256"] == file_sha256(file)

    # Then latest is unchanged, nothing reached the bus, and no estimate got a version
    status, latest = world.call("GET", "/prices/snapshots/latest")
    assert latest["snapshot_id"] == official["snapshot_id"] and latest["basis"] == "official"
    assert world.deliver() == []
    assert world.versions(eid) == [1]
    status, same = world.call("GET", f"/estimates/{eid}")
    assert same["estimate"]["total_usd"] == est["total_usd"]

    # The upload is usable by its id, and says what it is
    pinned = {**ESTIMATE, "snapshot_id": up["snapshot_id"]}
    status, made = world.call("POST", f"/workloads/{WL}/estimates", pinned)
    assert status == 201
    fake = made["estimate"]
    assert fake["price_basis"] == "saved_file" and fake["snapshot_id"] == up["snapshot_id"]
    hours = next(li for li in fake["line_items"] if li["name"] == "2× trn2.48xlarge")
    assert hours["price_basis"] == "saved_file" and Decimal(hours["rate_usd"]) == Decimal("0.0447")
    # the storage rates fell below any plausible GB-month price: refused, so PENDING
    assert fake["status"] == "incomplete" and fake["components"]["storage"] is None
    assert Decimal(fake["total_known_usd"]) < official_total / 100
    status, snap = world.call("GET", f"/prices/snapshots/{up['snapshot_id']}")
    refused = {r["key"]: r["reason"] for r in snap["rejected"]}
    assert "outside the plausible range" in refused["AmazonEC2/us-east-1/ebs:gp3/on_demand"]
    assert (
        "outside the plausible range" in refused["AmazonS3/us-east-1/s3:standard-storage/on_demand"]
    )
    status, html = world.call("GET", f"/estimates/{made['estimate_id']}/report")
    assert "saved-file price: trn2.48xlarge (us-east-1) $0.0447/h" in html
    assert f"a saved Price List file supplied by {CALLER}" in html
    assert any(w["code"] == "saved_file_prices" for w in fake["warnings"])

    # Asking to publish on a stage that does not accept uploads: refused, nothing stored
    status, summaries = world.call("GET", "/prices/snapshots")
    before = [s["snapshot_id"] for s in summaries["items"]]
    body = {"saved_price_list": file, "publish": True}
    status, err = world.call("POST", "/prices/snapshots", body, caller=CALLER)
    assert status == 409 and err["error"] == "publish_refused" and err["fields"] == ["publish"]
    assert "prices.accept_uploads" in err["message"]
    status, summaries = world.call("GET", "/prices/snapshots")
    assert [s["snapshot_id"] for s in summaries["items"]] == before
    assert {s["snapshot_id"]: s["basis"] for s in summaries["items"]} == {
        official["snapshot_id"]: "official",
        up["snapshot_id"]: "saved_file",
    }
    assert (
        world.call("GET", "/prices/snapshots/latest")[1]["snapshot_id"] == official["snapshot_id"]
    )
    assert world.deliver() == [] and world.versions(eid) == [1]


@pytest.mark.parametrize("world", [True], indirect=True)
def test_where_the_stage_accepts_uploads_a_published_file_is_latest_and_says_so(world):
    world.live_snapshot()
    world.deliver()
    status, created = world.call("POST", f"/workloads/{WL}/estimates", ESTIMATE)
    eid = created["estimate_id"]
    # an upload without publish still moves nothing
    cheaper = forged(saved_items(), Decimal(2))
    status, quiet = world.call("POST", "/prices/snapshots", {"saved_price_list": cheaper})
    assert status == 201 and not quiet["published_as_latest"] and world.deliver() == []

    status, up = world.call(
        "POST", "/prices/snapshots", {"saved_price_list": cheaper, "publish": True}, caller=CALLER
    )
    assert status == 201 and up["published_as_latest"] and up["basis"] == "saved_file"
    (event,) = world.deliver()
    assert event["detail"]["snapshot_id"] == up["snapshot_id"]
    assert event["detail"]["basis"] == "saved_file"
    assert world.versions(eid) == [1, 2]
    status, v2 = world.call("GET", f"/estimates/{eid}")
    est = v2["estimate"]
    # the new version is visibly not official
    assert est["snapshot_id"] == up["snapshot_id"] and est["price_basis"] == "saved_file"
    assert created["estimate"]["price_basis"] == "official"
    # a redelivered event changes nothing
    world.bus  # noqa: B018 - the queue is empty; a repeat of the event is a no-op
    again = world.refresh.handler(
        {"Records": [sqs_record(json.dumps(event), QUEUE_ARN)]}, FakeContext()
    )
    assert again == {"batchItemFailures": []} and world.versions(eid) == [1, 2]


# -- typed overrides through the API ---------------------------------------------------------------
def test_an_override_in_the_wrong_unit_or_of_an_unused_key_is_a_422_naming_the_field(world):
    world.live_snapshot()
    key = {"service": "AmazonEC2", "region": "us-east-1", "item": "trn2.48xlarge"}
    body = {
        **ESTIMATE,
        "assumptions": {"price_overrides": [{"key": key, "usd": "45", "unit": "USD/h"}]},
    }
    status, err = world.call("POST", f"/workloads/{WL}/estimates", body)
    assert status == 422 and err["error"] == "validation_error"
    assert err["fields"] == ["assumptions.price_overrides.0.unit"]
    assert "billed in Hrs (instance-hour), not 'USD/h'" in err["message"]
    assert "AmazonEC2/us-east-1/trn2.48xlarge/on_demand (Hrs (instance-hour))" in err["message"]
    other = {**key, "item": "p5.48xlarge"}
    body["assumptions"]["price_overrides"] = [{"key": other, "usd": "45", "unit": "Hrs"}]
    status, err = world.call("POST", f"/workloads/{WL}/estimates", body)
    assert status == 422 and err["fields"] == ["assumptions.price_overrides.0.key"]
    # nothing was stored for either
    assert world.api.services.records.estimate_definitions(WL) == []
    # the right unit, in either spelling: an assumed price, said so
    body["assumptions"]["price_overrides"] = [{"key": key, "usd": "45", "unit": "instance-hour"}]
    status, made = world.call("POST", f"/workloads/{WL}/estimates", body)
    assert status == 201 and made["estimate"]["price_basis"] == "assumed"


# -- the prices Lambda follows the same rules ------------------------------------------------------
@pytest.fixture
def prices_lambda(table, bus, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(BUS_NAME_ENV, bus.name)
    monkeypatch.setenv(CATALOG_ENV, CATALOG.model_dump_json())
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "false")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    return load_handler("prices")


def test_a_file_given_to_the_prices_lambda_is_stored_not_published(prices_lambda, table, bus):
    from trncost.store.prices import PriceStore

    out = prices_lambda.handler({"saved_price_list": forged(saved_items())}, FakeContext())
    assert out["status"] == "ok" and out["basis"] == "saved_file"
    assert not out["published_as_latest"] and bus.received() == []
    assert out["origin"]["supplied_by"] == "direct invocation of trncost-test"
    store = PriceStore(table)
    assert store.latest() is None and store.get_snapshot(out["snapshot_id"]).basis == "saved_file"
    asked = prices_lambda.handler(
        {"saved_price_list": forged(saved_items()), "publish": True}, FakeContext()
    )
    assert asked["status"] == "rejected" and "prices.accept_uploads is false" in asked["reason"]
    assert len(store.list_snapshots()[0]) == 1
