"""A job's log as the CloudWatch Logs subscription delivers it (services/job_log_stream.py):
each delivery's lines kept as compressed parts, in event order, with the stream's running
counts. Items expire (the table's TTL) after JOB_LOG_TTL_S: the ingest reads them when the
job ends.

A part: `events` (lines in the delivery), `lines` (the lines kept: those holding a log
format's keyword, each with its offset in the delivery and its time), `data` (zlib-compressed
JSON [[offset, epoch ms, message], ...]). A delivery is written once: its key is its first
event's id, so a redelivery writes the same item and the counts move only with a new part.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Key

from trncost.store.base import Repository
from trncost.store.schema import (
    JOB_LOG_COUNTS_SK,
    JOB_LOG_PART_PREFIX,
    TTL_ATTRIBUTE,
    job_log_part_sk,
    job_log_pk,
)

JOB_LOG_TTL_S = 30 * 86400
PART_MAX_BYTES = 300_000  # compressed data per item (DynamoDB items stay under 400 KB)


@dataclass(frozen=True)
class Part:
    events: int  # lines the delivery held
    lines: list[tuple[int, int, str]]  # (offset in the delivery, epoch ms, message) kept


@dataclass(frozen=True)
class StreamCounts:
    events: int = 0
    kept: int = 0
    parts: int = 0
    first_ms: int | None = None
    last_ms: int | None = None


def _pieces(lines: list[tuple[int, int, str]]) -> Iterator[bytes]:
    """The lines compressed, split so that each piece stays under PART_MAX_BYTES."""
    data = zlib.compress(json.dumps(lines, separators=(",", ":")).encode(), 6)
    if len(data) <= PART_MAX_BYTES or len(lines) < 2:
        yield data
        return
    half = len(lines) // 2
    yield from _pieces(lines[:half])
    yield from _pieces(lines[half:])


class JobLogStore(Repository):
    def put_part(
        self,
        group: str,
        stream: str,
        first_event_id: str,
        part: Part,
        now_epoch: int,
    ) -> bool:
        """Keep one delivery; False when it was already kept (a redelivery)."""
        expires = now_epoch + JOB_LOG_TTL_S
        pk = job_log_pk(group, stream)
        pieces = list(_pieces(part.lines))
        new = self.put_new(
            {
                "pk": pk,
                "sk": job_log_part_sk(first_event_id, 0),
                "events": part.events,
                "kept": len(part.lines),
                "pieces": len(pieces),
                "data": pieces[0],
                TTL_ATTRIBUTE: expires,
            }
        )
        if not new:
            return False
        for n, piece in enumerate(pieces[1:], start=1):
            self.table.put_item(
                Item={
                    "pk": pk,
                    "sk": job_log_part_sk(first_event_id, n),
                    "data": piece,
                    TTL_ATTRIBUTE: expires,
                }  # fmt: skip
            )
        times = [ms for _, ms, _ in part.lines]
        self._count(pk, part, len(part.lines), min(times, default=None),
                    max(times, default=None), expires)  # fmt: skip
        return True

    def _count(
        self, pk: str, part: Part, kept: int, first: int | None, last: int | None, expires: int
    ) -> None:
        names = {"#e": "events", "#k": "kept", "#p": "parts", "#t": TTL_ATTRIBUTE}
        values: dict[str, Any] = {":e": part.events, ":k": kept, ":p": 1, ":t": expires}
        update = "ADD #e :e, #k :k, #p :p SET #t = :t"
        if first is not None and last is not None:
            update += ", first_ms = if_not_exists(first_ms, :f), last_ms = :l"
            values |= {":f": first, ":l": last}
        self.table.update_item(
            Key={"pk": pk, "sk": JOB_LOG_COUNTS_SK},
            UpdateExpression=update,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )

    def counts(self, group: str, stream: str) -> StreamCounts | None:
        item = self.item(job_log_pk(group, stream), JOB_LOG_COUNTS_SK)
        if item is None:
            return None
        return StreamCounts(
            events=int(item.get("events", 0)),
            kept=int(item.get("kept", 0)),
            parts=int(item.get("parts", 0)),
            first_ms=None if item.get("first_ms") is None else int(item["first_ms"]),
            last_ms=None if item.get("last_ms") is None else int(item["last_ms"]),
        )

    def parts(self, group: str, stream: str) -> Iterator[Part]:
        """The stream's deliveries in event order (a page of items at a time)."""
        pages = self.table.meta.client.get_paginator("query").paginate(
            TableName=self.table.name,
            KeyConditionExpression=Key("pk").eq(job_log_pk(group, stream))
            & Key("sk").begins_with(JOB_LOG_PART_PREFIX),
        )
        events = 0  # a delivery split in pieces is gathered whole before it is given
        lines: list[tuple[int, int, str]] = []
        for page in pages:
            for item in page.get("Items", []):
                raw = item["data"]
                piece = json.loads(zlib.decompress(getattr(raw, "value", raw)).decode())
                if "events" in item:  # the first piece of a delivery
                    if events:
                        yield Part(events, lines)
                    events, lines = int(item["events"]), []
                lines.extend((int(o), int(ms), str(m)) for o, ms, m in piece)
        if events:
            yield Part(events, lines)
