"""Exactly-once ingest: a claim per (job, terminal status), and rejected ingests kept with
their reason for the API.

A claim is taken by a conditional write; it carries a lease so that a delivery that died
mid-way can be taken over after the lease, while a concurrent duplicate is told to come back
later (its message returns to the queue) and then finds the claim done.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from boto3.dynamodb.conditions import Key

from trncost.model.records import RejectedIngest
from trncost.store.base import Repository, conditional_failed
from trncost.store.schema import CLAIM_SK, REJECTED_INGEST_PK, claim_pk

MAX_RAW_EVENT_CHARS = 20_000


class Claim(StrEnum):
    taken = "taken"  # ours: do the work
    done = "done"  # already ingested: a duplicate, nothing to do
    busy = "busy"  # someone else holds a live lease: try again later


class IngestStore(Repository):
    def claim(self, dedup_key: str, now_epoch: int, lease_s: int) -> Claim:
        from botocore.exceptions import ClientError

        try:
            self.table.put_item(
                Item={
                    "pk": claim_pk(dedup_key),
                    "sk": CLAIM_SK,
                    "state": "in_progress",
                    "lease_until": now_epoch + lease_s,
                },
                ConditionExpression="attribute_not_exists(pk) OR "
                "(#s = :in_progress AND lease_until < :now)",
                ExpressionAttributeNames={"#s": "state"},
                ExpressionAttributeValues={":in_progress": "in_progress", ":now": now_epoch},
            )
            return Claim.taken
        except ClientError as exc:
            if not conditional_failed(exc):
                raise
        item = self.item(claim_pk(dedup_key), CLAIM_SK)
        return Claim.done if item and item.get("state") == "done" else Claim.busy

    def complete(self, dedup_key: str, outcome: dict[str, Any]) -> None:
        self.table.update_item(
            Key={"pk": claim_pk(dedup_key), "sk": CLAIM_SK},
            UpdateExpression="SET #s = :done, outcome = :outcome REMOVE lease_until",
            ExpressionAttributeNames={"#s": "state"},
            ExpressionAttributeValues={":done": "done", ":outcome": json.dumps(outcome)},
        )

    def release(self, dedup_key: str) -> None:
        """Give the claim back after a failure so the retry need not wait for the lease."""
        self.table.delete_item(
            Key={"pk": claim_pk(dedup_key), "sk": CLAIM_SK},
            ConditionExpression="#s = :in_progress",
            ExpressionAttributeNames={"#s": "state"},
            ExpressionAttributeValues={":in_progress": "in_progress"},
        )

    def reject(self, at: str, event_id: str, reason: str, event: Any) -> None:
        """Record an event that cannot become a trial record. Idempotent per event id."""
        source = event.get("source") if isinstance(event, dict) else None
        detail_type = event.get("detail-type") if isinstance(event, dict) else None
        raw = json.dumps(event, default=str)[:MAX_RAW_EVENT_CHARS]
        self.table.put_item(
            Item={
                "pk": REJECTED_INGEST_PK,
                "sk": f"{at}#{event_id}",
                "event_id": event_id,
                "reason": reason,
                "source": source or "",
                "detail_type": detail_type or "",
                "event": raw,
            }
        )

    def rejected(self, limit: int = 50) -> list[RejectedIngest]:
        page = self.table.query(
            KeyConditionExpression=Key("pk").eq(REJECTED_INGEST_PK),
            ScanIndexForward=False,
            Limit=limit,
        )
        return [
            RejectedIngest(
                at=i["sk"].split("#", 1)[0],
                event_id=i["event_id"],
                reason=i["reason"],
                source=i["source"] or None,
                detail_type=i["detail_type"] or None,
            )
            for i in page.get("Items", [])
        ]
