"""Price snapshots end to end: stubbed Price List API → snapshot → moto DynamoDB → latest
pointer → "Price Snapshot Taken" on the bus (delivered to SQS)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from botocore.stub import Stubber

from tests.support.stubs import (
    HttpStub,
    expect_catalog,
    paginator_over,
    pricing_client,
    record_backoff,
    saved_items,
)
from trncost import aws
from trncost.bus import EventPublisher
from trncost.errors import Conflict
from trncost.events import SOURCE, DetailType
from trncost.model.catalog import Catalog
from trncost.pricing.client import PriceListClient
from trncost.services.snapshots import SnapshotService
from trncost.store.prices import PriceStore

CATALOG = Catalog(
    instance_types=["trn1.32xlarge", "trn3.48xlarge", "p5.48xlarge"], regions=["us-east-1"]
)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def service(table, bus=None, client=None, clock=None, accept_uploads=False):
    return SnapshotService(
        store=PriceStore(table),
        price_list=PriceListClient("us-east-1", client=client),
        publisher=EventPublisher(bus.name) if bus else None,
        clock=clock or Clock(),
        accept_uploads=accept_uploads,
    )


def test_a_live_snapshot_lands_whole_and_becomes_latest(table, bus):
    client = pricing_client()
    with Stubber(client) as stub:
        expected_calls = expect_catalog(stub, CATALOG, saved_items())
        svc = service(table, bus, client)
        result = svc.take(CATALOG)
        stub.assert_no_pending_responses()
    # one call per key: 3 instance types + 7 usage prices in one region
    assert svc.price_list.calls == expected_calls == 10
    snap = result.snapshot
    assert snap.source == "query_api" and len(snap.quotes) == 10
    assert snap.publication_dates == {
        s: "2026-11-20T18:32:09Z"
        for s in ("AmazonEC2", "AmazonS3", "AmazonCloudWatch", "AWSDataTransfer")
    }
    by_key = {str(q.key): q for q in snap.quotes}
    assert by_key["AmazonEC2/us-east-1/trn1.32xlarge/on_demand"].flat_rate == Decimal("21.5")
    trn3 = by_key["AmazonEC2/us-east-1/trn3.48xlarge/on_demand"]
    assert trn3.status == "pending" and trn3.pending_reason == (
        "no Price List product for trn3.48xlarge (on_demand) in us-east-1 "
        "as of 2026-11-20T18:32:09Z"
    )
    # the $0.00 Capacity Block SKU was never the p5 on-demand price
    assert by_key["AmazonEC2/us-east-1/p5.48xlarge/on_demand"].flat_rate == Decimal("55.04")
    # basis official: each quote names the request it came from (time, endpoint, filters)
    trn1 = by_key["AmazonEC2/us-east-1/trn1.32xlarge/on_demand"]
    assert trn1.basis == "official" and trn1.origin is not None
    assert trn1.origin.operation == "pricing:GetProducts"
    assert trn1.origin.requested_at == snap.taken_at
    assert trn1.origin.endpoint == "https://api.pricing.us-east-1.amazonaws.com"
    assert trn1.origin.service_code == "AmazonEC2"
    sent = {(f.field, f.value) for f in trn1.origin.filters}
    assert {("instanceType", "trn1.32xlarge"), ("regionCode", "us-east-1")} <= sent
    assert by_key["AmazonS3/us-east-1/s3:standard-storage/on_demand"].origin.service_code == (
        "AmazonS3"
    )

    store = PriceStore(table)
    assert store.get_snapshot(snap.snapshot_id) == snap
    assert store.latest() == snap
    assert result.publication.published and result.publication.previous_id is None
    (event,) = bus.received()
    assert event["source"] == SOURCE and event["detail-type"] == DetailType.price_snapshot_taken
    assert event["detail"]["snapshot_id"] == snap.snapshot_id
    assert len(event["detail"]["changed_keys"]) == 10  # all added
    assert event["detail"]["pending_keys"] == ["AmazonEC2/us-east-1/trn3.48xlarge/on_demand"]


def test_a_second_snapshot_announces_only_what_changed(table, bus):
    clock = Clock()
    items = saved_items()
    # Issue 12: an upload moves latest only when it asks and the stage accepts uploads.
    svc = service(table, bus, clock=clock, accept_uploads=True)
    first = svc.take_from_saved({"PriceList": items}, CATALOG, publish=True)
    bus.received()
    cheaper = [i.replace('"21.5000000000"', '"19.9000000000"') for i in items]
    second = svc.take_from_saved({"PriceList": cheaper}, CATALOG, publish=True)
    assert second.publication.previous_id == first.snapshot.snapshot_id
    key = "AmazonEC2/us-east-1/trn1.32xlarge/on_demand"
    assert second.diff.changed_keys == [key]
    (change,) = second.diff.changed
    assert change.before == "0-inf:21.5/Hrs" and change.after == "0-inf:19.9/Hrs"
    (event,) = bus.received()
    assert event["detail"]["changed_keys"] == [key]
    assert event["detail"]["previous_snapshot_id"] == first.snapshot.snapshot_id
    # both stay readable and listed, newest first
    summaries, cursor = PriceStore(table).list_snapshots()
    assert [s.snapshot_id for s in summaries] == [
        second.snapshot.snapshot_id,
        first.snapshot.snapshot_id,
    ]
    assert cursor is None
    assert summaries[0].pending == 1 and summaries[0].quotes == 10


def test_pagination_follows_next_token(table):
    client = pricing_client()
    with Stubber(client) as stub:
        calls = expect_catalog(stub, CATALOG, saved_items() * 3, page_size=1)
        svc = service(table, client=client)
        snapshot = svc.build_live(CATALOG)
        stub.assert_no_pending_responses()
    assert svc.price_list.calls == calls > 10
    # three copies of each product: every key is now ambiguous, none is guessed
    assert all(
        q.status == "pending"
        for q in snapshot.quotes
        if str(q.key) != "AWSDataTransfer/us-east-1/transfer:inter-region/on_demand"
    )


def test_throttling_is_retried_with_backoff(table, monkeypatch):
    backoff = record_backoff(monkeypatch)  # botocore's delays at their ceiling, not slept
    client = pricing_client()
    with HttpStub(client) as stub:
        stub.add_client_error(
            "get_products", service_error_code="ThrottlingException", http_status_code=400
        )
        stub.add_client_error(
            "get_products", service_error_code="ThrottlingException", http_status_code=400
        )
        expected_calls = expect_catalog(stub, CATALOG, saved_items())
        svc = SnapshotService(
            store=PriceStore(table), price_list=PriceListClient(client=client), clock=Clock()
        )
        result = svc.take(CATALOG)
        stub.assert_no_pending_responses()
    # exponential backoff (full jitter at its ceiling): 1 s, then 2 s, inside the first call
    assert backoff == [1.0, 2.0]
    assert stub.attempts == expected_calls + 2 and svc.price_list.calls == expected_calls
    assert result.publication.published


def test_a_snapshot_that_cannot_finish_is_never_published(table, monkeypatch):
    backoff = record_backoff(monkeypatch)
    svc = service(table, clock=Clock(), accept_uploads=True)
    svc.take_from_saved({"PriceList": saved_items()}, CATALOG, publish=True)
    before = PriceStore(table).latest_pointer()
    assert before is not None
    client = pricing_client()
    with HttpStub(client) as stub:
        for _ in range(aws.MAX_ATTEMPTS):
            stub.add_client_error(
                "get_products", service_error_code="ThrottlingException", http_status_code=400
            )
        with pytest.raises(Exception, match="ThrottlingException"):
            service(table, client=client).take(CATALOG)
        stub.assert_no_pending_responses()  # every attempt of the one policy was made
    assert len(backoff) == aws.MAX_ATTEMPTS - 1
    assert PriceStore(table).latest_pointer() == before
    assert len(PriceStore(table).list_snapshots()[0]) == 1


def test_snapshots_are_immutable(table):
    svc = service(table, clock=Clock())
    snapshot = svc.build_from_saved({"PriceList": saved_items()}, CATALOG)
    svc.store.put_snapshot(snapshot)
    with pytest.raises(Conflict):
        svc.store.put_snapshot(snapshot)


def test_concurrent_snapshots_never_lose_one_and_the_newest_is_latest(table):
    clock = Clock()
    svc = service(table, clock=clock)
    older = svc.build_from_saved({"PriceList": saved_items()}, CATALOG)
    newer = svc.build_from_saved({"PriceList": saved_items()}, CATALOG)
    barrier = threading.Barrier(2)
    results = {}

    def commit(name, snap):
        own = service(table, clock=clock)  # its own clients, as a separate invocation has
        barrier.wait()
        results[name] = own.commit(snap)

    threads = [
        threading.Thread(target=commit, args=(n, s))
        for n, s in (("older", older), ("newer", newer))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store = PriceStore(table)
    assert store.latest_pointer()["snapshot_id"] == newer.snapshot_id
    assert {s.snapshot_id for s in store.list_snapshots()[0]} == {
        older.snapshot_id,
        newer.snapshot_id,
    }
    assert results["newer"].publication.published
    # and the older, committed last, does not move the pointer back
    late = service(table, clock=clock).store.publish_latest(older)
    assert not late.published and late.latest_id == newer.snapshot_id


def test_capacity_blocks_are_quoted_when_the_catalog_asks(table):
    catalog = Catalog(
        instance_types=["p5.48xlarge"], regions=["us-east-1"], capacity_block_hours=24
    )

    class FakeBlocks:
        calls = 0

        def offerings(self, instance_type, count, hours, start, end):
            FakeBlocks.calls += 1
            assert (instance_type, count, hours) == ("p5.48xlarge", 1, 24)
            assert end - start == timedelta(days=56)
            yield {
                "CapacityBlockOfferingId": "cb-0a1b2c3d4e5f60718",
                "InstanceType": "p5.48xlarge",
                "AvailabilityZone": "us-east-1a",
                "InstanceCount": 1,
                "CapacityBlockDurationHours": 24,
                "UpfrontFee": "943.92",
                "CurrencyCode": "USD",
                "StartDate": datetime(2026, 12, 7, 11, 30, tzinfo=UTC),
            }

    svc = SnapshotService(
        store=PriceStore(table),
        capacity_blocks=lambda region: FakeBlocks(),
        price_list=PriceListClient(client=_empty_pricing()),
        clock=Clock(),
    )
    snap = svc.build_live(catalog)
    block = next(q for q in snap.quotes if q.key.purchase_option == "capacity_block")
    assert block.flat_rate == Decimal("943.92") and block.capacity_block.instance_count == 1
    assert block.capacity_block.start_date == "2026-12-07T11:30:00+00:00"
    on_demand = next(q for q in snap.quotes if str(q.key).endswith("p5.48xlarge/on_demand"))
    assert on_demand.status == "pending"  # the stub answered nothing: never the block fee
    # basis official: the DescribeCapacityBlockOfferings request it came from
    assert block.basis == "official" and block.origin is not None
    assert block.origin.operation == "ec2:DescribeCapacityBlockOfferings"
    assert block.origin.endpoint == "ec2.us-east-1.amazonaws.com"
    assert block.origin.requested_at == snap.taken_at
    params = {f.field: f.value for f in block.origin.filters}
    assert params["InstanceType"] == "p5.48xlarge" and params["CapacityDurationHours"] == "24"
    assert params["InstanceCount"] == "1" and params["StartDateRange"] == snap.taken_at


def _empty_pricing():
    class Empty:
        def get_products(self, **kwargs):
            return {"FormatVersion": "aws_v1", "PriceList": []}

        def get_paginator(self, operation):
            return paginator_over(self, "pricing", operation)

    return Empty()


def test_rejected_items_are_counted_and_the_snapshot_still_lands(table):
    items = saved_items()
    bad_currency = items[0].replace('"USD"', '"CNY"')
    snap = (
        service(table, clock=Clock())
        .take_from_saved({"PriceList": ["{broken", bad_currency, *items[1:]]}, CATALOG)
        .snapshot
    )
    reasons = [r.reason for r in snap.rejected]
    assert any("not JSON" in r for r in reasons)
    assert any("price is not in USD (currencies: CNY)" in r for r in reasons)
    trn1 = next(q for q in snap.quotes if str(q.key).endswith("trn1.32xlarge/on_demand"))
    assert trn1.status == "pending" and "price is not in USD" in trn1.pending_reason
    stored = PriceStore(table).get_snapshot(snap.snapshot_id)
    assert stored.rejected == snap.rejected
    assert json.loads(stored.model_dump_json())["rejected"]
