"""A snapshot's basis, origin and every rejected and unmatched product survive the table, however
many there are (their lists are stored in chunks, never in one oversized item)."""

from __future__ import annotations

import boto3

from trncost.model import PriceSnapshot
from trncost.model.basis import SavedFileOrigin
from trncost.model.price import Rejection, Unmatched
from trncost.store import prices as prices_store
from trncost.store.prices import PriceStore
from trncost.store.schema import NOTES_SK_PREFIX, snapshot_pk


def test_a_saved_file_snapshot_round_trips_with_all_its_reasons(table, monkeypatch):
    monkeypatch.setattr(prices_store, "CHUNK_CHARS", 2_000)  # force several chunks
    origin = SavedFileOrigin(
        sha256="ab" * 32,
        supplied_by="arn:aws:iam::123456789012:user/alice",
        supplied_at="2026-11-30T09:00:00+00:00",
        note="copy from the air-gapped account",
    )
    snap = PriceSnapshot(
        snapshot_id="ps-notes",
        taken_at="2026-11-30T09:00:00+00:00",
        source="saved_price_list_file",
        basis="saved_file",
        origin=origin,
        rejected=[Rejection(key="k", sku=f"R{i:05d}", reason="zero price") for i in range(120)],
        unmatched=[
            Unmatched(sku=f"U{i:05d}", service="AmazonEC2", closest_key="k", reason="x" * 40)
            for i in range(300)
        ],
    )
    store = PriceStore(table)
    store.put_snapshot(snap)
    items = (
        boto3.resource("dynamodb")
        .Table(table)
        .query(
            KeyConditionExpression=boto3.dynamodb.conditions.Key("pk").eq(snapshot_pk("ps-notes"))
        )["Items"]
    )
    chunks = [i for i in items if i["sk"].startswith(NOTES_SK_PREFIX)]
    assert len(chunks) > 4 and all(len(i["entries"]) <= 2_200 for i in chunks)
    read = PriceStore(table).get_snapshot("ps-notes")
    assert read == snap
    (summary,), _ = store.list_snapshots()
    assert (summary.basis, summary.rejected, summary.unmatched) == ("saved_file", 120, 300)


def test_a_snapshot_stored_before_bases_reads_as_its_source_says(table):
    """Items written by an earlier version (no basis, rejected on META) still read."""
    import json

    t = boto3.resource("dynamodb").Table(table)
    t.put_item(
        Item={
            "pk": snapshot_pk("ps-old"),
            "sk": "META",
            "gsi1pk": "SNAPSHOTS",
            "gsi1sk": "2026-01-01T00:00:00+00:00#ps-old",
            "snapshot_id": "ps-old",
            "taken_at": "2026-01-01T00:00:00+00:00",
            "source": "query_api",
            "publication_dates": "{}",
            "rejected": json.dumps([{"key": None, "sku": "S1", "reason": "not JSON"}]),
            "note": "",
            "quote_count": 0,
            "pending_count": 0,
        }
    )
    snap = PriceStore(table).get_snapshot("ps-old")
    assert snap.basis == "official" and snap.origin is None
    assert [r.sku for r in snap.rejected] == ["S1"] and snap.unmatched == []
    (summary,), _ = PriceStore(table).list_snapshots()
    assert summary.basis == "official" and summary.rejected == 1 and summary.unmatched == 0
