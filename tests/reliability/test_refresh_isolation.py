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
from tests.support.factories import trial, workload
from tests.support.handlers import load_handler
from tests.support.reliability_kit import figure, sqs_record
from trncost.events import DetailType
from trncost.local.gateway import proxy_event, response_parts
from trncost.services.snapshots import SnapshotService
from trncost.settings import CATALOG_ENV, LIVE_PRICES_ENV, TABLE_NAME_ENV, Catalog
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore
from trncost.store.schema import ESTIMATE_DEF_SK, estimate_pk

pytestmark = pytest.mark.slow

SECTION = "refresh isolation (a poison estimate, issue 17)"
WL = "wl-iso"
N = 6  # estimates that follow the latest prices, the poison among them
QUEUE = "arn:aws:sqs:us-east-1:123456789012:trncost-refresh"
CATALOG = {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}


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
    assert call("POST", "/prices/snapshots", {"saved_price_list": saved})[0] == 201
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
    # A new snapshot: every estimate that follows the latest prices is to be refreshed
    snapshots = SnapshotService(PriceStore(table), catalog=Catalog.model_validate(CATALOG))
    taken = snapshots.take_from_saved(saved, Catalog.model_validate(CATALOG), "new prices")
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
