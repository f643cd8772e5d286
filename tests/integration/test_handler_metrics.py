"""The metrics the API and prices Lambdas emit (EMF on stdout, names from trncost.observability):
EstimatesComputed per estimate made, PriceSnapshotAgeSeconds for the snapshot a new one
replaced."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.events import saved_price_list
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from trncost.observability import MetricName
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    BUS_NAME_ENV,
    LIVE_PRICES_ENV,
    PRICE_LIST_REGION_ENV,
)


def emitted(out: str) -> list[dict]:
    """(metric name, values, unit) of every EMF document printed."""
    found = []
    for line in out.splitlines():
        if not (line.startswith("{") and '"_aws"' in line):
            continue
        doc = json.loads(line)
        for directive in doc["_aws"]["CloudWatchMetrics"]:
            for m in directive["Metrics"]:
                value = doc[m["Name"]]
                found.append(
                    {
                        "name": m["Name"],
                        "unit": m.get("Unit"),
                        "values": value if isinstance(value, list) else [value],
                        "namespace": directive["Namespace"],
                    }
                )
    return found


@pytest.fixture
def env(table, monkeypatch):
    lambda_env(
        monkeypatch,
        table,
        **{
            LIVE_PRICES_ENV: "false",
            PRICE_LIST_REGION_ENV: "us-east-1",
            ACCEPT_UPLOADS_ENV: "true",  # this stage publishes uploads that ask
        },
        POWERTOOLS_SERVICE_NAME="trncost-test",
    )
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    yield


def test_the_api_counts_estimates_computed_and_nothing_else(env, capsys):
    api = load_handler("api")

    def call(method, path, body=None):
        return api.handler(api_event(method, path, body), FakeContext())["statusCode"]

    assert call("POST", "/workloads", workload(workload_id="wl-m").model_dump(mode="json")) == 201
    t = trial("t-1", count=2, workload_id="wl-m").model_dump(mode="json")
    assert call("POST", "/workloads/wl-m/trials", t) == 201
    saved = saved_price_list()
    assert call("POST", "/prices/snapshots", {"saved_price_list": saved, "publish": True}) == 201
    capsys.readouterr()

    body = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
    }
    assert call("POST", "/workloads/wl-m/estimates", body) == 201
    (computed,) = emitted(capsys.readouterr().out)
    assert computed == {
        "name": MetricName.estimates_computed,
        "unit": "Count",
        "values": [1.0],
        "namespace": "trncost",
    }
    # a refused estimate, a read and an unknown workload: no metric
    assert call("POST", "/workloads/wl-m/estimates", {"candidate": {}}) == 422
    assert call("POST", "/workloads/nope/estimates", body) == 404
    assert call("GET", "/workloads/wl-m") == 200
    assert emitted(capsys.readouterr().out) == []


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def test_prices_reports_the_age_of_the_snapshot_it_replaced(env, bus, monkeypatch, capsys):
    monkeypatch.setenv(BUS_NAME_ENV, bus.name)
    prices = load_handler("prices")
    svc = prices.services.snapshots
    clock = Clock(datetime(2026, 12, 1, 6, 0, tzinfo=UTC))
    svc.clock = clock
    saved = {"saved_price_list": saved_price_list(), "publish": True}

    # the first snapshot replaces none: no age
    assert prices.handler(saved, FakeContext())["status"] == "ok"
    names = {m["name"] for m in emitted(capsys.readouterr().out)}
    assert MetricName.price_snapshot_taken in names
    assert MetricName.price_snapshot_age not in names

    # a day and an hour later, the next one replaces it: the age is 25 h
    clock.now += timedelta(hours=25)
    out = prices.handler(saved, FakeContext())
    assert out["status"] == "ok" and out["published_as_latest"]
    (age,) = [m for m in emitted(capsys.readouterr().out) if m["name"] == "PriceSnapshotAgeSeconds"]
    assert age["unit"] == "Seconds" and age["values"] == [25 * 3600.0]
    assert [e["detail"]["previous_snapshot_id"] is not None for e in bus.received()] == [
        False,
        True,
    ]
