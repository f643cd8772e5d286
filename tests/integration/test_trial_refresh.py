"""A new trial refreshes the estimates of its workload whatever way it arrived (the API, an
import, the ingest of a finished job or an agent's event), through the one trial-recording
path that publishes "Trial Recorded"; a version is added only when the figures change, and it
lists what changed. The real API and refresh handlers on moto (EventBridge → SQS → the
refresh handler through the local runtime's event source mapping)."""

from __future__ import annotations

import json

import boto3
import pytest

from tests.support.events import SAVED_PRICE_LIST, load_event
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, load_handler
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    TABLE_NAME_ENV,
    Settings,
)
from trncost.wiring import Wiring
from trncost_client.local.esm import QueuePoller

WL = "wl-refresh"
CATALOG = {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}


class Collector:
    """What CloudWatch would say of the job: a trn2 run twice as fast as the first trial."""

    def collect(self, ctx, wl):
        return trial(ctx.trial_id, count=2, work=1.44e9, workload_id=WL), []


@pytest.fixture
def world(table, bus, monkeypatch):
    for name, value in {
        TABLE_NAME_ENV: table,
        BUS_NAME_ENV: bus.name,
        CATALOG_ENV: json.dumps(CATALOG),
        LIVE_PRICES_ENV: "false",
        ACCEPT_UPLOADS_ENV: "true",  # the seeding upload asks to be latest
        "POWERTOOLS_TRACE_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    api = load_handler("api")
    refresh = QueuePoller(
        boto3.client("sqs"), bus.queue_url, load_handler("refresh").handler, FakeContext()
    )

    def call(method, path, body=None):
        out = api.handler(api_event(method, path, body), FakeContext())
        return out["statusCode"], json.loads(out["body"])

    def post_trial(t):
        return call("POST", f"/workloads/{WL}/trials", t.model_dump(mode="json"))

    assert call("POST", "/workloads", workload(workload_id=WL).model_dump(mode="json"))[0] == 201
    assert post_trial(trial("t-1", count=2, workload_id=WL))[0] == 201
    saved = json.loads(SAVED_PRICE_LIST.read_text())
    assert call("POST", "/prices/snapshots", {"saved_price_list": saved, "publish": True})[0] == 201
    request = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
    }
    status, created = call("POST", f"/workloads/{WL}/estimates", request)
    assert status == 201, created
    refresh.drain()  # t-1's and the snapshot's events: nothing new for the estimate

    def versions():
        return call("GET", f"/estimates/{created['estimate_id']}/versions")[1]["versions"]

    assert [v["version"] for v in versions()] == [1]
    return type(
        "World",
        (),
        {"call": call, "post_trial": post_trial, "refresh": refresh, "versions": versions},
    )


def test_a_trial_posted_to_the_api_refreshes_the_estimate_and_the_version_says_what_moved(world):
    # When a faster trn2 trial arrives through POST /workloads/{id}/trials
    assert world.post_trial(trial("t-2", count=2, work=7.2e8, workload_id=WL))[0] == 201
    world.refresh.drain()
    # Then the estimate has a version 2 made by that trial, listing the figures it moved
    v1, v2 = world.versions()
    assert v2["version"] == 2 and v2["reason"] == "trial t-2 recorded"
    moved = {c["figure"]: c for c in v2["changes"]}
    assert {"total_usd", "time.total_h", "steady_throughput"} <= moved.keys(), sorted(moved)
    assert float(moved["time.total_h"]["after"]) < float(moved["time.total_h"]["before"])
    assert v1["changes"] == []


def test_a_trial_that_moves_no_figure_adds_no_version(world):
    # A trn3 trial of the same workload: the trn2 estimate's inputs change, its figures do not
    assert world.post_trial(trial("t-3", instance_type="trn3.48xlarge", workload_id=WL))[0] == 201
    world.refresh.drain()
    assert [v["version"] for v in world.versions()] == [1]


def test_a_repeated_post_is_a_conflict_and_changes_nothing(world):
    t = trial("t-2", count=2, work=7.2e8, workload_id=WL)
    assert world.post_trial(t)[0] == 201
    assert world.post_trial(t)[0] == 409
    world.refresh.drain()  # two "Trial Recorded" events: one version
    assert [v["version"] for v in world.versions()] == [1, 2]


def test_an_ingested_job_refreshes_through_the_same_path(world, table, bus):
    # Given a finished SageMaker job of the workload, ingested as the ingest Lambda would
    services = Wiring(Settings(table_name=table, bus_name=bus.name))
    services.collector = Collector()
    job = load_event("sagemaker_training_job_completed")
    job["detail"]["Tags"]["trncost:workload"] = WL
    outcome = services.ingest.ingest(job)
    assert outcome.status == "recorded", outcome
    world.refresh.drain()
    # Then the estimate was refreshed by that trial's "Trial Recorded"
    latest = world.versions()[-1]
    assert latest["version"] == 2 and latest["reason"] == f"trial {outcome.trial_id} recorded"
    assert any(c["figure"] == "total_usd" for c in latest["changes"])


def test_a_log_import_is_announced_through_the_same_path(world, bus):
    from pathlib import Path

    logs = Path(__file__).resolve().parents[1] / "events" / "logs"
    request = {
        "files": [
            {"name": n, "text": (logs / n).read_text()} for n in ["megatron_mixtral_h100.log"]
        ],
        "phase": "baseline",
        "instance_type": "trn2.48xlarge",
        "instance_count": 2,
        "status": "completed",
    }
    status, got = world.call("POST", f"/workloads/{WL}/trials/import", request)
    assert status == 201, got
    trial_id = got["trial"]["trial_id"]
    # "Trial Recorded" for that trial, on the bus the refresh listens to
    recorded = [e for e in bus.received() if e["detail-type"] == "Trial Recorded"]
    assert [(e["detail"]["trial_id"], e["detail"]["outcome"]) for e in recorded] == [
        (trial_id, "recorded")
    ]
