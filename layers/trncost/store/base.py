"""The DynamoDB table behind every repository: created lazily (by `trncost.aws`), injectable
for tests; opaque pagination cursors."""

from __future__ import annotations

import base64
import json
from typing import Any

from trncost import aws
from trncost.errors import BadCursor


def table(table_name: str) -> Any:
    """The boto3 Table resource for `table_name`."""
    return aws.resource("dynamodb").Table(table_name)


def conditional_failed(exc: Exception) -> bool:
    return aws.error_code(exc) == "ConditionalCheckFailedException"


def condition_cancelled(exc: Exception) -> bool:
    """A transaction cancelled because one of its conditions failed (nothing was written)."""
    if aws.error_code(exc) != "TransactionCanceledException":
        return False
    reasons = getattr(exc, "response", {}).get("CancellationReasons") or []
    return any(r.get("Code") == "ConditionalCheckFailed" for r in reasons)


# DynamoDB refuses an item over 400 KB (names and values, UTF-8). trncost refuses one a margin
# below that first, as a 413 naming the record's largest attribute, never a 500.
MAX_ITEM_BYTES = 380_000


def item_bytes(item: dict[str, Any]) -> int:
    """About what DynamoDB counts for `item` (an upper bound for trncost's items: strings and
    numbers at their text's UTF-8 length, containers as their JSON)."""
    return sum(
        len(k.encode()) + len(_text(v).encode("utf-8", "surrogatepass")) for k, v in item.items()
    )


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return "x" * len(value)
    return json.dumps(value, default=str)


def _largest_field(item: dict[str, Any]) -> str:
    """The field that makes `item` large: its largest attribute, or inside a record stored as
    JSON text (a trial, a definition), that record's largest top-level field."""
    attribute = max(item, key=lambda k: len(_text(item[k])))
    value = item[attribute]
    if isinstance(value, str) and value.startswith("{"):
        try:
            inner = json.loads(value)
        except ValueError:
            return attribute
        if isinstance(inner, dict) and inner:
            return str(max(inner, key=lambda k: len(_text(inner[k]))))
    return attribute


def check_sizes(items: Any) -> None:
    """PayloadTooLarge (413) naming the attribute, for an item DynamoDB would refuse."""
    from trncost.errors import PayloadTooLarge

    for item in items:
        size = item_bytes(item)
        if size > MAX_ITEM_BYTES:
            largest = _largest_field(item)
            raise PayloadTooLarge(
                f"{largest}: the record would be {size:,} bytes, over the {MAX_ITEM_BYTES:,} a "
                "stored record may hold (DynamoDB's item limit is 400 KB); shorten its free text",
                fields=[largest],
            )


class Repository:
    def __init__(self, table_name: str, table: Any = None) -> None:
        self.table_name = table_name
        self._table = table

    @property
    def table(self) -> Any:
        if self._table is None:
            self._table = table(self.table_name)
        return self._table

    def put_new(self, item: dict[str, Any]) -> bool:
        """Write `item` only if its key is free. False when it already exists."""
        from botocore.exceptions import ClientError

        check_sizes([item])
        try:
            self.table.put_item(Item=item, ConditionExpression="attribute_not_exists(pk)")
        except ClientError as exc:
            if conditional_failed(exc):
                return False
            raise
        return True

    def put_together(self, puts: list[tuple[dict[str, Any], str | None]]) -> bool:
        """Write every item or none (one TransactWriteItems), each with its condition (None:
        unconditional; "attribute_not_exists(pk)": only if its key is free). False when a
        condition failed (nothing written)."""
        from botocore.exceptions import ClientError

        check_sizes(item for item, _ in puts)
        try:
            self.table.meta.client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self.table.name,
                            "Item": item,
                            **({"ConditionExpression": condition} if condition else {}),
                        }
                    }
                    for item, condition in puts
                ]
            )
        except ClientError as exc:
            if condition_cancelled(exc):
                return False
            raise
        return True

    def item(self, pk: str, sk: str) -> dict[str, Any] | None:
        """One item by its key (a consistent read); None when there is none."""
        found: dict[str, Any] | None = self.table.get_item(
            Key={"pk": pk, "sk": sk}, ConsistentRead=True
        ).get("Item")
        return found

    def query_all(self, **kwargs: Any) -> list[dict[str, Any]]:
        """Every item of a Query, every page. The Table resource has no paginator; its client's
        has, and boto3 hooks the resource's conditions and types into that client, so `kwargs`
        and the items are the resource's own (Key(...).eq(...), Python values)."""
        pages = self.table.meta.client.get_paginator("query").paginate(
            TableName=self.table.name, **kwargs
        )
        return [item for page in pages for item in page.get("Items", [])]

    def query_page(
        self, limit: int, after: dict[str, Any] | None, **kwargs: Any
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        if after:
            kwargs["ExclusiveStartKey"] = after
        page = self.table.query(Limit=limit, **kwargs)
        return page.get("Items", []), page.get("LastEvaluatedKey")


INDEX_CURSOR_KEYS = frozenset({"pk", "sk", "gsi1pk", "gsi1sk"})


def encode_cursor(last_key: dict[str, Any] | None) -> str | None:
    """An opaque cursor for DynamoDB's LastEvaluatedKey (string keys only in this table)."""
    if not last_key:
        return None
    raw = json.dumps(last_key, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(
    cursor: str | None, keys: frozenset[str] = INDEX_CURSOR_KEYS, **expected: str
) -> dict[str, Any] | None:
    """The key a cursor stands for; BadCursor unless it is one this store handed out for
    the same listing (same key names, same partition)."""
    if cursor is None or cursor == "":
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeEncodeError):
        raise BadCursor("cursor: not a cursor this API returned") from None
    if (
        not isinstance(key, dict)
        or set(key) != keys
        or not all(isinstance(v, str) and 0 < len(v) <= 1024 for v in key.values())
        or any(key.get(k) != v for k, v in expected.items())
    ):
        raise BadCursor("cursor: not a cursor this API returned for this list")
    return key
