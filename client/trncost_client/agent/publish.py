"""Where the agent's measurements go: CloudWatch PutMetricData (≤ 1000 values a call) and one
EventBridge "Trial Run Completed" event. A failure never reaches the training: what could not
be sent is appended to a local JSONL buffer (one JSON object a line: {"kind": "metrics" |
"event", "error": ..., "payload": ...}) and the agent says so on stderr, once per kind."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from trncost import aws
from trncost.events import AGENT_SOURCE, DetailType
from trncost.metrics.names import AGENT_NAMESPACE

MAX_VALUES_PER_CALL = 1000  # PutMetricData: at most 1000 metric data in one request
DEFAULT_BUFFER = "trncost-agent-buffer.jsonl"


def _client(service: str, region: str | None) -> Any:
    return aws.client(service, region)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON: {type(value).__name__}")


class Publisher:
    def __init__(
        self,
        region: str | None = None,
        *,
        cloudwatch: Any = None,
        events: Any = None,
        bus_name: str | None = None,
        buffer_path: str | Path = DEFAULT_BUFFER,
        stderr: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.region = region
        self._cloudwatch = cloudwatch
        self._events = events
        self.bus_name = bus_name
        self.buffer_path = Path(buffer_path)
        self.stderr = stderr or sys.stderr
        self.enabled = enabled
        self.calls = 0
        self.buffered = 0
        self._warned: set[str] = set()

    @property
    def cloudwatch(self) -> Any:
        if self._cloudwatch is None:
            self._cloudwatch = _client("cloudwatch", self.region)
        return self._cloudwatch

    @property
    def events(self) -> Any:
        if self._events is None:
            self._events = _client("events", self.region)
        return self._events

    def _buffer(self, kind: str, payload: Any, error: str) -> None:
        try:
            with self.buffer_path.open("a", encoding="utf-8") as fh:
                fh.write(
                    json.dumps(
                        {"kind": kind, "error": error, "payload": payload}, default=_jsonable
                    )
                    + "\n"
                )
            self.buffered += len(payload) if isinstance(payload, list) else 1
            where = f"buffered to {self.buffer_path}"
        except OSError as exc:  # even the buffer failed: say so, never raise
            where = f"and could not be buffered ({exc})"
        if kind not in self._warned:
            self._warned.add(kind)
            print(
                f"trncost agent: could not publish {kind} ({error}); {where}",
                file=self.stderr,
                flush=True,
            )

    def put_metrics(self, data: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(data), MAX_VALUES_PER_CALL):
            chunk = list(data[start : start + MAX_VALUES_PER_CALL])
            if not self.enabled:
                self._buffer("metrics", chunk, "publishing is off")
                continue
            try:
                self.calls += 1
                self.cloudwatch.put_metric_data(Namespace=AGENT_NAMESPACE, MetricData=chunk)
            except Exception as exc:  # noqa: BLE001 - never crash the training
                self._buffer("metrics", chunk, f"{type(exc).__name__}: {exc}")

    def put_event(self, detail: dict[str, Any]) -> str | None:
        entry: dict[str, Any] = {
            "Source": AGENT_SOURCE,
            "DetailType": DetailType.trial_run_completed.value,
            "Detail": json.dumps(detail, sort_keys=True, default=_jsonable),
        }
        if self.bus_name:
            entry["EventBusName"] = self.bus_name
        if not self.enabled:
            self._buffer("event", entry, "publishing is off")
            return None
        try:
            self.calls += 1
            out = self.events.put_events(Entries=[entry])
            first = out["Entries"][0]
            if out.get("FailedEntryCount") or "EventId" not in first:
                raise RuntimeError(f"{first.get('ErrorCode')}: {first.get('ErrorMessage')}")
            return str(first["EventId"])
        except Exception as exc:  # noqa: BLE001 - never crash the training
            self._buffer("event", entry, f"{type(exc).__name__}: {exc}")
            return None
