"""Delivering the outbox: every event written with its record reaches EventBridge.

`Outbox.deliver` publishes the events a write just committed, right away and best effort: a
failure is logged and left to the sweeper, never raised (the write has committed; its caller
is answered with success). `Outbox.sweep` (the outbox Lambda, on a schedule) publishes what
is left, oldest first, and says how many were sent, failed and remain, and how old the oldest
is (an alarm watches that age: events held back for long mean EventBridge keeps refusing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trncost.bus import EventPublisher
from trncost.events import DetailType
from trncost.store.base import Repository
from trncost.store.outbox import OutboxEvent, OutboxStore

log = logging.getLogger(__name__)

__all__ = ["Outbox", "Sweep"]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Sweep:
    sent: int
    failed: int
    left: int
    oldest_age_s: float  # of the events still waiting after the sweep (0: none)


class Outbox:
    @classmethod
    def beside(
        cls,
        store: Repository,
        publisher: EventPublisher | None,
        clock: Callable[[], datetime] = _now,
    ) -> Outbox | None:
        """The outbox in the same table as `store` (a record store), publishing with
        `publisher`; None without a publisher (no bus: nothing to announce)."""
        if publisher is None:
            return None
        return cls(OutboxStore(store.table_name, store._table), publisher, clock)

    def __init__(
        self,
        store: OutboxStore,
        publisher: EventPublisher,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.store = store
        self.publisher = publisher
        self.clock = clock

    def event(self, detail_type: DetailType, subject: str, detail: dict[str, Any]) -> OutboxEvent:
        """The outbox event for one record (write its `item()` in the record's transaction)."""
        return OutboxEvent.about(detail_type, subject, detail, self.clock().isoformat())

    def _send(self, event: OutboxEvent) -> bool:
        try:
            self.publisher.publish(event.detail_type, event.detail)
        except Exception as exc:  # noqa: BLE001 - whatever EventBridge says, the sweeper retries
            log.warning("event %s (%s) not published yet: %s", event.event_id,
                        event.detail_type.value, exc)  # fmt: skip
            try:
                self.store.attempted(event, f"{type(exc).__name__}: {exc}")
            except Exception:  # noqa: BLE001 - the count is a courtesy; the item stays anyway
                log.warning("could not count the failed publish of %s", event.event_id)
            return False
        try:
            self.store.published(event)
        except Exception as exc:  # noqa: BLE001 - left in the outbox: sent again, harmlessly
            log.warning("event %s published; its outbox item stays (%s)", event.event_id, exc)
        return True

    def deliver(self, events: Iterable[OutboxEvent]) -> int:
        """Publish events a write just committed; never raises. How many were published."""
        return sum(self._send(e) for e in events)

    def sweep(self, limit: int = 100) -> Sweep:
        """Publish the oldest waiting events (up to `limit`)."""
        pending = self.store.pending(limit)
        sent = sum(self._send(e) for e in pending)
        failed = len(pending) - sent
        left = self.store.pending(limit)
        oldest = 0.0
        if left and left[0].created_at:
            started = datetime.fromisoformat(left[0].created_at)
            oldest = max((self.clock() - started).total_seconds(), 0.0)
        if pending or left:
            log.info("outbox sweep: %d sent, %d failed, %d waiting", sent, failed, len(left))
        return Sweep(sent, failed, len(left), oldest)
