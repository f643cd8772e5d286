"""Price snapshots in DynamoDB: immutable, written in batches, with a "latest" pointer that
only a conditional write moves.

A snapshot becomes visible when its META item lands, which is written last and only if no
snapshot of that id exists: a snapshot that could not be written whole is never read, listed
or published. Its basis and origin live on META; its rejected and unmatched lists in chunks
(NOTES# items) so a large saved file's reasons never outgrow an item.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from trncost.errors import Conflict, first_validation_error
from trncost.model.basis import PriceOrigin, basis_of_source
from trncost.model.price import PriceQuote, PriceSnapshot, Rejection, Unmatched
from trncost.model.records import Publication, SnapshotSummary
from trncost.store.base import (
    Repository,
    condition_cancelled,
    conditional_failed,
    decode_cursor,
    encode_cursor,
)
from trncost.store.outbox import OutboxEvent
from trncost.store.schema import (
    LATEST_SK,
    NOTES_SK_PREFIX,
    PRICES_PK,
    QUOTE_SK_PREFIX,
    SNAPSHOT_META_SK,
    SNAPSHOTS_GSI_PK,
    TABLE,
    notes_sk,
    quote_sk,
    snapshot_pk,
)

GSI = TABLE.indexes[0].name
CHUNK_CHARS = 300_000  # a NOTES item's JSON stays well under DynamoDB's 400 KB
_ORIGIN: TypeAdapter[PriceOrigin] = TypeAdapter(PriceOrigin)


def _chunks(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[]]
    size = 0
    for entry in entries:
        n = len(json.dumps(entry))
        if out[-1] and size + n > CHUNK_CHARS:
            out.append([])
            size = 0
        out[-1].append(entry)
        size += n
    return [c for c in out if c]


class PriceStore(Repository):
    def __init__(self, table_name: str, table: Any = None) -> None:
        super().__init__(table_name, table)
        self._snapshots: dict[str, PriceSnapshot] = {}

    # -- write -----------------------------------------------------------------------------
    def put_snapshot(self, snapshot: PriceSnapshot, taken_by: str | None = None) -> None:
        """Store the snapshot whole: its quotes and notes, then its meta item (what lists it
        and makes it readable), so a snapshot is never listed half written."""
        meta = self.put_snapshot_parts(snapshot, taken_by)
        if not self.put_new(meta):
            raise Conflict(f"price snapshot {snapshot.snapshot_id} exists")

    def put_snapshot_parts(
        self, snapshot: PriceSnapshot, taken_by: str | None = None
    ) -> dict[str, Any]:
        """Store the quotes and notes (unlisted, unread until the meta item exists) and return
        the meta item to write: alone, or with the latest pointer (`publish_latest`)."""
        pk = snapshot_pk(snapshot.snapshot_id)
        if self._meta(snapshot.snapshot_id) is not None:
            raise Conflict(f"price snapshot {snapshot.snapshot_id} exists")
        notes = {
            "rejected": [r.model_dump(mode="json") for r in snapshot.rejected],
            "unmatched": [u.model_dump(mode="json") for u in snapshot.unmatched],
        }
        with self.table.batch_writer() as batch:
            for quote in snapshot.quotes:
                batch.put_item(
                    Item={
                        "pk": pk,
                        "sk": quote_sk(str(quote.key)),
                        "quote": quote.model_dump_json(),
                    }
                )
            for kind, entries in notes.items():
                for n, chunk in enumerate(_chunks(entries), start=1):
                    batch.put_item(
                        Item={"pk": pk, "sk": notes_sk(kind, n), "entries": json.dumps(chunk)}
                    )
        meta = {
            "pk": pk,
            "sk": SNAPSHOT_META_SK,
            "gsi1pk": SNAPSHOTS_GSI_PK,
            "gsi1sk": f"{snapshot.taken_at}#{snapshot.snapshot_id}",
            "snapshot_id": snapshot.snapshot_id,
            "taken_at": snapshot.taken_at,
            "source": snapshot.source,
            "basis": snapshot.basis.value,
            "origin": snapshot.origin.model_dump_json() if snapshot.origin else "",
            "publication_dates": json.dumps(snapshot.publication_dates, sort_keys=True),
            "note": snapshot.note or "",
            "quote_count": len(snapshot.quotes),
            "pending_count": sum(q.is_pending for q in snapshot.quotes),
            "rejected_count": len(snapshot.rejected),
            "unmatched_count": len(snapshot.unmatched),
        }
        if taken_by:
            meta["taken_by"] = taken_by
        return meta

    def put_meta(self, meta: dict[str, Any]) -> None:
        if not self.put_new(meta):
            raise Conflict(f"price snapshot {meta['snapshot_id']} exists")

    def publish_latest(
        self,
        snapshot: PriceSnapshot,
        attempts: int = 5,
        events: Callable[[str | None], Sequence[OutboxEvent]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Publication:
        """Point "latest" at `snapshot` unless a newer one is already there.

        Optimistic concurrency: the pointer moves only if it still names the snapshot read a
        moment ago, so of two concurrent snapshots the newer always ends up latest and the
        older stays stored and listed. `events(previous_id)`: the outbox events that announce
        the move, written in the same transaction as the pointer (none: the pointer alone);
        `meta`: the snapshot's meta item (`put_snapshot_parts`), written in it too, so an
        upload that fails before this commit leaves nothing listed. When a newer snapshot is
        latest, `meta` is written alone (stored and listed, not latest).
        """
        from botocore.exceptions import ClientError

        for _ in range(attempts):
            current = self.latest_pointer()
            if current is not None and (current["taken_at"], current["snapshot_id"]) >= (
                snapshot.taken_at,
                snapshot.snapshot_id,
            ):
                if meta is not None:
                    self.put_meta(meta)
                return Publication(False, current["snapshot_id"], current["snapshot_id"])
            if current is None:
                condition, values = "attribute_not_exists(pk)", {}
            else:
                condition = "snapshot_id = :expected"
                values = {":expected": current["snapshot_id"]}
            previous = current["snapshot_id"] if current else None
            pointer = {
                "pk": PRICES_PK,
                "sk": LATEST_SK,
                "snapshot_id": snapshot.snapshot_id,
                "taken_at": snapshot.taken_at,
            }
            announce = list(events(previous)) if events else []
            together = [*([meta] if meta is not None else []), *(e.item() for e in announce)]
            try:
                if together:
                    self._move_with(pointer, condition, values, together)
                else:
                    self.table.put_item(
                        Item=pointer,
                        ConditionExpression=condition,
                        **({"ExpressionAttributeValues": values} if values else {}),
                    )
            except ClientError as exc:
                if conditional_failed(exc) or condition_cancelled(exc):
                    continue
                raise
            return Publication(True, previous, snapshot.snapshot_id)
        raise RuntimeError("the latest price snapshot pointer kept changing; gave up")

    def _move_with(
        self,
        pointer: dict[str, Any],
        condition: str,
        values: dict[str, Any],
        items: Sequence[dict[str, Any]],
    ) -> None:
        """The pointer and `items` (the snapshot's meta, outbox events) in one transaction."""
        self.table.meta.client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": self.table.name,
                        "Item": pointer,
                        "ConditionExpression": condition,
                        **({"ExpressionAttributeValues": values} if values else {}),
                    }
                },
                *({"Put": {"TableName": self.table.name, "Item": item}} for item in items),
            ]
        )

    # -- read ------------------------------------------------------------------------------
    def latest_pointer(self) -> dict[str, str] | None:
        item = self.table.get_item(Key={"pk": PRICES_PK, "sk": LATEST_SK}, ConsistentRead=True).get(
            "Item"
        )
        if not item:
            return None
        return {"snapshot_id": item["snapshot_id"], "taken_at": item["taken_at"]}

    def latest(self) -> PriceSnapshot | None:
        pointer = self.latest_pointer()
        return self.get_snapshot(pointer["snapshot_id"]) if pointer else None

    def _meta(self, snapshot_id: str) -> dict[str, Any] | None:
        return self.item(snapshot_pk(snapshot_id), SNAPSHOT_META_SK)

    def get_snapshot(self, snapshot_id: str) -> PriceSnapshot | None:
        """A stored snapshot. Snapshots never change, so each is read once per process."""
        cache = self._snapshots
        if snapshot_id not in cache:
            snapshot = self._read_snapshot(snapshot_id)
            if snapshot is None:
                return None
            if len(cache) >= 16:
                cache.pop(next(iter(cache)))
            cache[snapshot_id] = snapshot
        return cache[snapshot_id]

    def _read_snapshot(self, snapshot_id: str) -> PriceSnapshot | None:
        from boto3.dynamodb.conditions import Key

        items = self.query_all(
            KeyConditionExpression=Key("pk").eq(snapshot_pk(snapshot_id)), ConsistentRead=True
        )
        meta = next((i for i in items if i["sk"] == SNAPSHOT_META_SK), None)
        if meta is None:
            return None
        basis = meta.get("basis") or basis_of_source(meta["source"])
        quotes, poisoned = _readable_quotes(
            [i for i in items if i["sk"].startswith(QUOTE_SK_PREFIX)], str(basis)
        )
        notes: dict[str, list[Any]] = {"rejected": [], "unmatched": []}
        if "rejected" in meta:  # written before the notes had their own items
            notes["rejected"] = json.loads(meta["rejected"])
        for item in sorted(items, key=lambda i: str(i["sk"])):
            if item["sk"].startswith(NOTES_SK_PREFIX):
                kind = item["sk"].removeprefix(NOTES_SK_PREFIX).split("#")[0]
                notes.setdefault(kind, []).extend(json.loads(item["entries"]))
        origin = meta.get("origin")
        return PriceSnapshot(
            snapshot_id=meta["snapshot_id"],
            taken_at=meta["taken_at"],
            source=meta["source"],
            basis=basis,
            origin=_ORIGIN.validate_json(origin) if origin else None,
            publication_dates=json.loads(meta["publication_dates"]),
            quotes=sorted(quotes, key=lambda q: str(q.key)),
            rejected=[*(Rejection.model_validate(r) for r in notes["rejected"]), *poisoned],
            unmatched=[Unmatched.model_validate(u) for u in notes["unmatched"]],
            note=meta.get("note") or None,
        )

    def list_snapshots(
        self, limit: int = 50, after: str | None = None
    ) -> tuple[list[SnapshotSummary], str | None]:
        """Newest first. `after` is the cursor the previous page returned."""
        from boto3.dynamodb.conditions import Key

        kwargs: dict[str, Any] = {
            "IndexName": GSI,
            "KeyConditionExpression": Key("gsi1pk").eq(SNAPSHOTS_GSI_PK),
            "ScanIndexForward": False,
            "Limit": limit,
        }
        start = decode_cursor(after, gsi1pk=SNAPSHOTS_GSI_PK)
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = self.table.query(**kwargs)
        summaries = [
            SnapshotSummary(
                snapshot_id=i["snapshot_id"],
                taken_at=i["taken_at"],
                source=i["source"],
                quotes=int(i["quote_count"]),
                pending=int(i["pending_count"]),
                rejected=int(i["rejected_count"])
                if "rejected_count" in i
                else len(json.loads(i.get("rejected", "[]"))),
                basis=str(i.get("basis") or basis_of_source(i["source"]).value),
                unmatched=int(i.get("unmatched_count", 0)),
                taken_by=i.get("taken_by"),
            )
            for i in page.get("Items", [])
        ]
        return summaries, encode_cursor(page.get("LastEvaluatedKey"))


def _readable_quotes(
    items: list[dict[str, Any]], basis: str
) -> tuple[list[PriceQuote], list[Rejection]]:
    """The snapshot's quotes that still read as quotes of its basis, and a Rejection (with the
    reason) for each that does not: one poison quote (stored before a bound existed, or of
    another basis) is isolated, and the snapshot stays usable for every other key; an estimate
    needing that key sees it PENDING."""
    quotes: list[PriceQuote] = []
    rejected: list[Rejection] = []
    for item in items:
        key = str(item["sk"]).removeprefix(QUOTE_SK_PREFIX)
        try:
            quote = PriceQuote.model_validate_json(item["quote"])
        except ValidationError as exc:
            rejected.append(
                Rejection(
                    key=key, reason=f"stored quote unreadable: {first_validation_error(exc)[1]}"
                )
            )
            continue
        if str(quote.basis) != basis:
            rejected.append(
                Rejection(
                    key=key,
                    sku=quote.sku,
                    reason=f"basis {quote.basis}, not the snapshot's {basis}",
                )
            )
            continue
        quotes.append(quote)
    return quotes, rejected
