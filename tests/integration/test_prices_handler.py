"""The prices Lambda handler, run as the runtime would, on moto (pricing stubbed)."""

from __future__ import annotations

import json

import pytest
from botocore.stub import Stubber

from tests.support.events import saved_price_list
from tests.support.handlers import CATALOG, FakeContext, lambda_env, load_handler
from tests.support.stubs import expect_catalog, pricing_client, saved_items
from trncost.model.catalog import Catalog
from trncost.pricing.client import PriceListClient
from trncost.settings import (
    BUS_NAME_ENV,
    PRICE_LIST_REGION_ENV,
)
from trncost.store.prices import PriceStore


@pytest.fixture
def prices(table, bus, monkeypatch):
    lambda_env(
        monkeypatch,
        table,
        **{BUS_NAME_ENV: bus.name, PRICE_LIST_REGION_ENV: "us-east-1"},
        POWERTOOLS_SERVICE_NAME="trncost-prices",
    )
    return load_handler("prices")


def test_the_scheduled_run_takes_a_live_snapshot(prices, table, bus, capsys):
    client = pricing_client()
    prices.services.price_list = PriceListClient("us-east-1", client=client)
    with Stubber(client) as stub:
        expect_catalog(stub, Catalog.model_validate(CATALOG), saved_items())
        out = prices.handler({"source": "aws.scheduler"}, FakeContext())
    assert out["status"] == "ok" and out["source"] == "query_api"
    assert out["quotes"] == 9 and out["pending"] == 1 and out["published_as_latest"]
    assert out["price_list_calls"] == 9  # one per key
    assert PriceStore(table).latest().snapshot_id == out["snapshot_id"]
    assert [e["detail"]["snapshot_id"] for e in bus.received()] == [out["snapshot_id"]]
    emf = [
        json.loads(line)
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("{") and "_aws" in line
    ]
    metrics = {
        m["Name"] for doc in emf for d in doc["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]
    }
    assert {"PriceSnapshotTaken", "PriceQuotesPending", "PriceListCalls"} <= metrics
    # the readiness watch ran after the published snapshot (no estimate waits on anything yet)
    assert out["readiness"]["snapshot_id"] == out["snapshot_id"]
    assert out["readiness"]["appeared"] == [] and out["readiness"]["rerun"] == []
    assert {"ReadinessItemsAppeared", "ReadinessEstimatesRerun"} <= metrics


def test_an_on_demand_run_from_a_saved_price_list(prices, table):
    saved = saved_price_list()
    out = prices.handler({"saved_price_list": saved, "note": "air-gapped copy"}, FakeContext())
    assert out["status"] == "ok" and out["source"] == "saved_price_list_file"
    snap = PriceStore(table).get_snapshot(out["snapshot_id"])
    assert snap.note == "air-gapped copy"
    trn2 = next(q for q in snap.quotes if q.key.item == "trn2.48xlarge")
    assert trn2.status == "official" and trn2.source == "saved_price_list_file"


def test_a_bad_saved_file_is_answered_not_retried(prices, table):
    out = prices.handler({"saved_price_list": {"hello": "world"}}, FakeContext())
    assert out["status"] == "rejected" and "not a saved Price List" in out["reason"]
    assert PriceStore(table).latest_pointer() is None
