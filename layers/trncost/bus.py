"""EventBridge adapter: publishes trncost's own events (names in trncost.events)."""

from __future__ import annotations

import json
from typing import Any

from trncost import aws
from trncost.errors import PublishFailed
from trncost.events import SOURCE, DetailType


def _client() -> Any:
    return aws.client("events")


class EventPublisher:
    def __init__(self, bus_name: str, client: Any = None) -> None:
        self.bus_name = bus_name
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = _client()
        return self._client

    def publish(
        self, detail_type: DetailType, detail: dict[str, Any], resources: list[str] | None = None
    ) -> str:
        response = self.client.put_events(
            Entries=[
                {
                    "Source": SOURCE,
                    "DetailType": detail_type.value,
                    "Detail": json.dumps(detail, sort_keys=True, default=str),
                    "EventBusName": self.bus_name,
                    "Resources": resources or [],
                }
            ]
        )
        entry = response["Entries"][0]
        if response.get("FailedEntryCount") or "EventId" not in entry:
            raise PublishFailed(f"{entry.get('ErrorCode')}: {entry.get('ErrorMessage')}")
        return str(entry["EventId"])
