"""One poison estimate cannot block a refresh (issue 17): a "Price Snapshot Taken" message
refreshes every estimate that follows the latest prices, each on its own. The poison (an
estimate stored by an older version, before its engineering hours had a bound: it no longer
validates) is recorded as a refresh failure of that estimate with its reason, the n − 1 others
get their new version, the message succeeds (no retry, no DLQ), and a new estimate still
answers 201. Only an infrastructure failure fails the message (retried, then the DLQ)."""

from __future__ import annotations

import json

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from botocore.exceptions import ClientError

from tests.support.events import SAVED_PRICE_LIST as SAVED_US_EAST_1
from tests.support.factories import instance_quote, quote, trial, usage_quotes, workload
from tests.support.handlers import load_handler
from tests.support.reliability_kit import figure, sqs_record
from trncost.events import DetailType
from trncost.model.catalog import Catalog
from trncost.model.price import PriceKey, PriceSnapshot, UsageItem
from trncost.services.snapshots import SnapshotService
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    TABLE_NAME_ENV,
)
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore
from trncost.store.schema import ESTIMATE_DEF_SK, estimate_pk
from trncost_client.local.gateway import proxy_event, response_parts

pytestmark = pytest.mark.slow

SECTION = "refresh isolation (a poison estimate, issue 17)"
WL = "wl-iso"
N = 6  # estimates that follow the latest prices, the poison among them
QUEUE = "arn:aws:sqs:us-east-1:123456789012:trncost-refresh"
CATALOG = {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}


def _raised_trn2(saved: dict) -> dict:
    """The saved file with the trn2.48xlarge On-Demand hourly rate 10 % higher."""
    items = []
    for raw in saved["PriceList"]:
        item = json.loads(raw)
        if item["product"]["attributes"].get("instanceType") == "trn2.48xlarge":
            for term in item["terms"]["OnDemand"].values():
                for dim in term["priceDimensions"].values():
                    dim["pricePerUnit"]["USD"] = str(float(dim["pricePerUnit"]["USD"]) * 1.1)
        items.append(json.dumps(item))
    return {**saved, "PriceList": items}


class Ctx:
    function_name = "trncost-refresh"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:trncost-refresh"
    aws_request_id = "isolation"


@pytest.fixture
def world(table, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(CATALOG_ENV, json.dumps(CATALOG))
    monkeypatch.setenv(LIVE_PRICES_ENV, "false")
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "true")  # the seeding uploads ask to be latest
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    api, refresh = load_handler("api"), load_handler("refresh")

    def call(method: str, path: str, body=None) -> tuple[int, dict]:
        raw = None if body is None else json.dumps(body).encode()
        event = proxy_event(method, path, "", {"Content-Type": "application/json"}, raw)
        status, _, out = response_parts(api.handler(event, Ctx()))
        return status, json.loads(out)

    assert call("POST", "/workloads", workload(workload_id=WL).model_dump(mode="json"))[0] == 201
    for i, count in enumerate((2, 4)):
        t = trial(f"t-{i}", count=count, phase="target", workload_id=WL)
        assert call("POST", f"/workloads/{WL}/trials", t.model_dump(mode="json"))[0] == 201
    saved = json.loads(SAVED_US_EAST_1.read_text())
    assert call("POST", "/prices/snapshots", {"saved_price_list": saved, "publish": True})[0] == 201
    ids = []
    for i in range(N):
        body = {
            "candidate": {
                "instance_type": "trn2.48xlarge",
                "instance_count": 2 + i,
                "region": "us-east-1",
            },
            "assumptions": {"engineering_hours": 40 + i, "engineering_hourly_usd": "120"},
        }
        status, made = call("POST", f"/workloads/{WL}/estimates", body)
        assert status == 201, made
        ids.append(made["estimate_id"])
    # The poison: as an older version stored it, before engineering_hours had its bound
    poison = ids[2]
    item = (
        boto3.resource("dynamodb")
        .Table(table)
        .get_item(Key={"pk": estimate_pk(poison), "sk": ESTIMATE_DEF_SK})["Item"]
    )
    definition = json.loads(item["definition"])
    definition["assumptions"]["engineering_hours"]["value"] = 1e30
    item["definition"] = json.dumps(definition)
    boto3.resource("dynamodb").Table(table).put_item(Item=item)
    # A new snapshot with a new trn2.48xlarge rate: every estimate that follows the latest
    # prices has new figures (a version is added only when the figures change)
    snapshots = SnapshotService(
        PriceStore(table), catalog=Catalog.model_validate(CATALOG), accept_uploads=True
    )
    taken = snapshots.take_from_saved(_raised_trn2(saved), Catalog.model_validate(CATALOG),
                                      "new prices", publish=True)  # fmt: skip
    message = {
        "id": "evt-snapshot",
        "source": "trncost",
        "detail-type": DetailType.price_snapshot_taken.value,
        "detail": {
            "snapshot_id": taken.snapshot.snapshot_id,
            "previous_snapshot_id": taken.publication.previous_id,
        },
    }
    yield type(
        "World",
        (),
        {
            "call": call,
            "refresh": refresh,
            "ids": ids,
            "poison": poison,
            "message": message,
            "records": RecordStore(table),
            "snapshot_id": taken.snapshot.snapshot_id,
        },
    )


def test_a_poison_estimate_is_recorded_and_the_others_refresh(world) -> None:
    # When the refresh Lambda gets the "Price Snapshot Taken" message
    out = world.refresh.handler({"Records": [sqs_record(json.dumps(world.message), QUEUE)]}, Ctx())
    # Then the message succeeded: nothing retried, nothing in the DLQ
    assert out["batchItemFailures"] == []
    # and every other estimate has a version on the new snapshot
    refreshed = [
        eid
        for eid in world.ids
        if (v := world.records.get_version(eid)) is not None
        and v.estimate.snapshot_id == world.snapshot_id
    ]
    assert sorted(refreshed) == sorted(set(world.ids) - {world.poison})
    # and the poison's failure is recorded on it, with its reason and what triggered it
    status, versions = world.call("GET", f"/estimates/{world.poison}/versions")
    assert status == 200
    (failure,) = versions["refresh_failures"]
    assert failure["trigger"] == f"price snapshot {world.snapshot_id}"
    assert "engineering_hours" in failure["reason"]
    # and a new estimate still answers 201
    body = {"candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2,
                          "region": "us-east-1"}}  # fmt: skip
    assert world.call("POST", f"/workloads/{WL}/estimates", body)[0] == 201
    figure(SECTION, "estimates following the latest prices", N)
    figure(SECTION, "refreshed", f"{len(refreshed)} of {N} (the poison recorded as a failure)")
    figure(SECTION, "message retried or dead-lettered", 0)


def test_an_infrastructure_failure_still_fails_the_message(world, monkeypatch) -> None:
    # DynamoDB failing after botocore's retries: the message returns to the queue, not lost
    def unavailable(self, estimate_id, version=None):
        raise ClientError(
            {"Error": {"Code": "InternalServerError", "Message": "try again"},
             "ResponseMetadata": {"HTTPStatusCode": 500}},
            "GetItem",
        )  # fmt: skip

    monkeypatch.setattr(RecordStore, "get_version", unavailable)
    record = sqs_record(json.dumps(world.message), QUEUE)
    # the whole batch failed: Powertools raises, and Lambda hands the batch back to the queue
    with pytest.raises(BatchProcessingError):
        world.refresh.handler({"Records": [record]}, Ctx())


# -- a poison quote --------------------------------------------------------------------------
POISON_WL = "wl-poison-quote"


def test_a_poison_quote_fails_only_the_estimate_it_cannot_be_held_in(table, monkeypatch):
    """A snapshot whose S3 price is absurd ($1e8 per GB-month, inside the model's bound): the
    one estimate that keeps a 1 EB dataset 100 years past the run cannot hold it in the
    ledger (> $1e18), so its refresh fails, recorded with the reason; the n − 1 others
    refresh; a new estimate like them answers 201, one like the poison 422, never 500."""
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(CATALOG_ENV, json.dumps(CATALOG))
    monkeypatch.setenv(LIVE_PRICES_ENV, "false")
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "true")  # the seeding uploads ask to be latest
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    api, refresh = load_handler("api"), load_handler("refresh")

    def call(method: str, path: str, body=None) -> tuple[int, dict]:
        raw = None if body is None else json.dumps(body).encode()
        event = proxy_event(method, path, "", {"Content-Type": "application/json"}, raw)
        status, _, out = response_parts(api.handler(event, Ctx()))
        return status, json.loads(out)

    wl = workload(workload_id=POISON_WL, dataset_gb=1e9).model_dump(mode="json")
    assert call("POST", "/workloads", wl)[0] == 201
    t = trial("t-pq", count=2, phase="target", workload_id=POISON_WL)
    assert call("POST", f"/workloads/{POISON_WL}/trials", t.model_dump(mode="json"))[0] == 201
    store = PriceStore(table)
    service = SnapshotService(store, catalog=Catalog.model_validate(CATALOG))
    service.commit(_snapshot("ps-20261201T000000Z-sane", "0.023", "2026-12-01T00:00:00+00:00"))

    def body(months: float | None, count: int) -> dict:
        assumptions = {} if months is None else {"storage_months_after_run": months}
        candidate = {"instance_type": "trn2.48xlarge", "instance_count": count,
                     "region": "us-east-1"}  # fmt: skip
        return {"candidate": candidate, "assumptions": assumptions}

    made = []
    for i, months in enumerate([None, 1, None, 1200, None, 2]):
        status, est = call("POST", f"/workloads/{POISON_WL}/estimates", body(months, 2 + i))
        assert status == 201, est
        made.append(est["estimate_id"])
    poison_id = made[3]
    # When the poison snapshot is taken and announced
    poison = _snapshot("ps-20261202T000000Z-poison", "100000000", "2026-12-02T00:00:00+00:00")
    taken = service.commit(poison)
    assert taken.publication.published
    message = {
        "id": "evt-poison",
        "source": "trncost",
        "detail-type": DetailType.price_snapshot_taken.value,
        "detail": {"snapshot_id": poison.snapshot_id, "previous_snapshot_id": None},
    }
    out = refresh.handler({"Records": [sqs_record(json.dumps(message), QUEUE)]}, Ctx())
    # Then the message succeeded, n − 1 estimates refreshed, the poison's failure recorded
    assert out["batchItemFailures"] == []
    records = RecordStore(table)
    refreshed = [
        e for e in made if records.get_version(e).estimate.snapshot_id == poison.snapshot_id
    ]
    assert sorted(refreshed) == sorted(set(made) - {poison_id})
    (failure,) = call("GET", f"/estimates/{poison_id}/versions")[1]["refresh_failures"]
    assert "ledger" in failure["reason"] and "s3:standard-storage" in failure["reason"]
    # and new estimates: like the others 201, like the poison a 422 naming why, never a 500
    assert call("POST", f"/workloads/{POISON_WL}/estimates", body(None, 3))[0] == 201
    status, answer = call("POST", f"/workloads/{POISON_WL}/estimates", body(1200, 3))
    assert status == 422 and "ledger" in answer["message"], answer
    figure(SECTION, "a poison quote ($1e8 per GB-month)", f"{len(refreshed)} of {len(made)} "
           "refreshed; the one it overflows recorded; new estimates 201 or 422")  # fmt: skip


def _snapshot(snapshot_id: str, s3_usd: str, taken_at: str) -> PriceSnapshot:
    quotes = [q for q in usage_quotes() if q.key.item != UsageItem.s3_standard.value]
    s3 = PriceKey.for_usage(UsageItem.s3_standard, "us-east-1")
    quotes += [quote(s3, [(0, None, s3_usd)], "GB-Mo"), instance_quote("trn2.48xlarge", "44.7")]
    quotes = [q.model_copy(update={"snapshot_id": snapshot_id}) for q in quotes]
    return PriceSnapshot(
        snapshot_id=snapshot_id,
        taken_at=taken_at,
        source="query_api",
        quotes=sorted(quotes, key=lambda q: str(q.key)),
    )
