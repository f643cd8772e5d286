"""A job's CloudWatch Logs as they are written: the subscription filter on the training log
groups delivers each batch of log events to the ingest Lambda, which keeps them as the job's
log parts (store/joblogs.py) with the stream's running counts — so that when the job ends its
record rests on every line, however long it ran (GetLogEvents, 1 MB a call, would need 794
calls for a 7-day job). Deliveries may come twice or out of order: a part is keyed by its first
event's id (a redelivery writes nothing new) and parts are read back in event order.

Kept: the leader's streams (SageMaker's `<job>/algo-1-…`; every stream of another group), and
of each delivery the lines holding a log format's keyword (with their offset, so line numbers
stay the stream's); every line is counted. A CONTROL_MESSAGE (the filter's own check) is not
a delivery.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trncost.errors import DomainError
from trncost.metrics.joblogs import SAGEMAKER_LOG_GROUP, leader_stream
from trncost.metrics.logs import FORMATS
from trncost.store.joblogs import JobLogStore, Part

# every keyword a format reads a line by: a line holding none is noise to every format
KEYS = tuple(
    sorted({k.decode() for f in FORMATS for k in (*f.keys, *f.step_keys, *(f.bulk_keys or ()))})
)


@dataclass(frozen=True)
class Delivery:
    group: str
    stream: str
    status: str  # kept | redelivered | not_leader | control
    events: int = 0
    kept: int = 0


def decode(data: str) -> dict[str, Any]:
    """A subscription payload: base64 of gzip of JSON (`awslogs.data`)."""
    try:
        doc = json.loads(gzip.decompress(base64.b64decode(data)))
    except (ValueError, OSError) as exc:
        raise DomainError(
            f"awslogs.data: not a CloudWatch Logs subscription payload ({exc})"
        ) from None
    if not isinstance(doc, dict):
        raise DomainError("awslogs.data: not a CloudWatch Logs subscription payload")
    return doc


def kept_lines(events: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    """(offset, epoch ms, message) of the events a format could read, in event order."""
    out = []
    for offset, e in enumerate(events):
        message = str(e.get("message", "")).rstrip("\n")
        if any(k in message for k in KEYS):
            out.append((offset, int(e.get("timestamp", 0)), message))
    return out


def _now() -> int:
    return int(datetime.now(UTC).timestamp())


class JobLogStreamService:
    def __init__(self, store: JobLogStore, clock: Callable[[], int] = _now) -> None:
        self.store = store
        self.clock = clock

    def receive(self, data: str) -> Delivery:
        doc = decode(data)
        group, stream = str(doc.get("logGroup", "")), str(doc.get("logStream", ""))
        if doc.get("messageType") != "DATA_MESSAGE":
            return Delivery(group, stream, "control")
        events = sorted(doc.get("logEvents") or [], key=lambda e: str(e.get("id", "")))
        if group == SAGEMAKER_LOG_GROUP and not leader_stream(stream):
            return Delivery(group, stream, "not_leader", len(events))
        if not events:
            return Delivery(group, stream, "kept")
        lines = kept_lines(events)
        new = self.store.put_part(
            group, stream, str(events[0].get("id")), Part(len(events), lines), self.clock()
        )
        return Delivery(group, stream, "kept" if new else "redelivered", len(events), len(lines))
