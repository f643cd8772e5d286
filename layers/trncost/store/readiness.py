"""The readiness watch's memory (services/readiness.py) in the trncost table: which instance
types the stage's estimates wait on were still unknown to botocore's model at the last check.

Key builders (the only place these keys are spelled; they extend trncost.store.schema's design):

    readiness watch   pk WATCH  sk READINESS

One item, replaced at each check: a type that was unknown then and is known now has appeared.
"""

from __future__ import annotations

from typing import Any

from trncost.store.base import Repository

WATCH_PK, READINESS_SK = "WATCH", "READINESS"


class WatchStore(Repository):
    def unknown_types(self) -> set[str]:
        """The instance types unknown to botocore's model at the last check (empty: none, or
        no check yet)."""
        item = self.item(WATCH_PK, READINESS_SK)
        return set(item.get("unknown_types", [])) if item else set()

    def put(self, unknown_types: set[str], checked_at: str, snapshot_id: str) -> None:
        """Remember this check's unknown types."""
        item: dict[str, Any] = {
            "pk": WATCH_PK,
            "sk": READINESS_SK,
            "unknown_types": sorted(unknown_types),
            "checked_at": checked_at,
            "snapshot_id": snapshot_id,
        }
        self.table.put_item(Item=item)
