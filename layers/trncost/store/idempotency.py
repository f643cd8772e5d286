"""Idempotency records: one per (caller, route, Idempotency-Key), so a create sent again with
the same key and body answers what the first one did, and with another body is refused.

    request record   pk IDEMPOTENCY#<sha256 of caller, method, path, key>   sk REQUEST
                     status in_progress (leased) | done (with the response to replay),
                     expires_at (DynamoDB TTL: a key is remembered for a day)
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass

from trncost.store.base import Repository, conditional_failed

IDEMPOTENCY_PK_PREFIX = "IDEMPOTENCY#"
IDEMPOTENCY_SK = "REQUEST"
KEEP_S = 24 * 3600  # how long a key is remembered (and the record kept: TTL)
LEASE_S = 120  # longer than the API Lambda's timeout: a request that died frees its key then
MAX_REPLAY_BYTES = 300_000  # a compressed response larger than this is not kept


@dataclass(frozen=True)
class Remembered:
    body_hash: str
    status: str  # in_progress | done
    leased_until: int
    response_status: int | None = None
    response_body: str | None = None


class IdempotencyStore(Repository):
    def _key(self, request_key: str) -> dict[str, str]:
        return {"pk": IDEMPOTENCY_PK_PREFIX + request_key, "sk": IDEMPOTENCY_SK}

    def claim(self, request_key: str, body_hash: str, now: int) -> Remembered | None:
        """Take the key for this request: None when taken (go on), else what is remembered
        (a request done, or one in progress whose lease has not run out)."""
        from botocore.exceptions import ClientError

        try:
            self.table.put_item(
                Item={
                    **self._key(request_key),
                    "body_hash": body_hash,
                    "status": "in_progress",
                    "leased_until": now + LEASE_S,
                    "expires_at": now + KEEP_S,
                },
                # free, forgotten, or an in-progress claim whose request died
                ConditionExpression="attribute_not_exists(pk) OR expires_at < :now OR "
                "(#s = :progress AND leased_until < :now)",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":now": now, ":progress": "in_progress"},
            )
            return None
        except ClientError as exc:
            if not conditional_failed(exc):
                raise
        item = self.item(self._key(request_key)["pk"], IDEMPOTENCY_SK) or {}
        body = item.get("response_body")
        return Remembered(
            body_hash=str(item.get("body_hash", "")),
            status=str(item.get("status", "in_progress")),
            leased_until=int(item.get("leased_until", 0)),
            response_status=int(item["response_status"]) if "response_status" in item else None,
            response_body=gzip.decompress(
                bytes(body.value if hasattr(body, "value") else body)
            ).decode("utf-8")
            if body is not None
            else None,
        )

    def done(self, request_key: str, status: int, body: str) -> bool:
        """Keep the answer to replay; False when it is too large to keep (the key is freed)."""
        packed = gzip.compress(body.encode("utf-8"))
        if len(packed) > MAX_REPLAY_BYTES:
            self.release(request_key)
            return False
        self.table.update_item(
            Key=self._key(request_key),
            UpdateExpression="SET #s = :done, response_status = :code, response_body = :body",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":done": "done", ":code": status, ":body": packed},
        )
        return True

    def release(self, request_key: str) -> None:
        """Forget the key (the request did not create anything)."""
        self.table.delete_item(Key=self._key(request_key))
