"""The outbox: events written in the same DynamoDB transaction as the record they announce.

A write that announces itself ("Price Snapshot Taken", "Trial Recorded") puts its record and an
outbox item together (`Repository.put_together`), so the record never commits without its
event. The event is then published right away, best effort, and its item deleted; whatever is
left (EventBridge down, the Lambda stopped between the two) is published by the outbox sweeper
(lambdas/outbox, on a schedule), oldest first, until EventBridge takes it. Consumers are
idempotent (a refresh that finds no figure changed adds no version), so an event published
twice changes nothing.

    outbox event    pk OUTBOX#<event id>  sk EVENT   gsi1 OUTBOX / <created_at>#<event id>

An event's id is derived from what it announces (the same record, the same id): a repeated
write cannot queue a second copy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Key

from trncost.events import DetailType
from trncost.store.base import Repository
from trncost.store.schema import TABLE

OUTBOX_PK_PREFIX = "OUTBOX#"
OUTBOX_SK = "EVENT"
OUTBOX_GSI_PK = "OUTBOX"
GSI = TABLE.indexes[0].name


@dataclass(frozen=True)
class OutboxEvent:
    event_id: str
    detail_type: DetailType
    detail: dict[str, Any]
    created_at: str = ""
    attempts: int = 0

    @classmethod
    def about(
        cls, detail_type: DetailType, subject: str, detail: dict[str, Any], created_at: str
    ) -> OutboxEvent:
        """The event announcing `subject` (e.g. a trial's workload and id): its id is derived
        from both, so the same record always has the same event."""
        digest = hashlib.sha256(f"{detail_type.value}\n{subject}".encode()).hexdigest()[:32]
        return cls(digest, detail_type, detail, created_at)

    def item(self) -> dict[str, Any]:
        return {
            "pk": OUTBOX_PK_PREFIX + self.event_id,
            "sk": OUTBOX_SK,
            "gsi1pk": OUTBOX_GSI_PK,
            "gsi1sk": f"{self.created_at}#{self.event_id}",
            "created_at": self.created_at,
            "detail_type": self.detail_type.value,
            "detail": json.dumps(self.detail, sort_keys=True, default=str),
            "attempts": self.attempts,
        }


def _event(item: dict[str, Any]) -> OutboxEvent:
    return OutboxEvent(
        event_id=str(item["pk"]).removeprefix(OUTBOX_PK_PREFIX),
        detail_type=DetailType(item["detail_type"]),
        detail=json.loads(item["detail"]),
        created_at=str(item.get("created_at", "")),
        attempts=int(item.get("attempts", 0)),
    )


class OutboxStore(Repository):
    def pending(self, limit: int = 100) -> list[OutboxEvent]:
        """The oldest events not yet published, at most `limit`."""
        items, _ = self.query_page(
            limit,
            None,
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(OUTBOX_GSI_PK),
        )
        return [_event(i) for i in items]

    def published(self, event: OutboxEvent) -> None:
        """EventBridge took it: nothing left to send."""
        self.table.delete_item(Key={"pk": OUTBOX_PK_PREFIX + event.event_id, "sk": OUTBOX_SK})

    def attempted(self, event: OutboxEvent, reason: str) -> None:
        """A publish failed: count it and keep why (the item stays for the next sweep)."""
        self.table.update_item(
            Key={"pk": OUTBOX_PK_PREFIX + event.event_id, "sk": OUTBOX_SK},
            UpdateExpression="SET attempts = if_not_exists(attempts, :zero) + :one, "
            "last_error = :why",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues={":zero": 0, ":one": 1, ":why": reason[:1000]},
        )
