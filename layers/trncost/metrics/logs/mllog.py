"""MLPerf Training's result log (`mlperf_logging`'s MLLOG lines, every MLPerf submission):
`0: :::MLLOG {"namespace": "", "time_ms": 1728263980497, "event_type": "POINT_IN_TIME",
"key": "train_loss", "value": 1.3233, "metadata": {"samples_count": 3040, ...}}`.

Read: `run_start` → `run_stop` (the run's clock: MLPerf's own time to train; `status`
success is the end, anything else a stop), `global_batch_size`, `train_loss` with its
`samples_count` (samples, the loss, each line's own time), `tracked_stats` throughput (samples
per second by MLPerf's convention; its unit is not printed), `eval_start` → `eval_stop` (each
evaluation's seconds), `eval_accuracy` (an evaluation result).
"""

from __future__ import annotations

import json
import math
from typing import Any

from trncost.metrics.logs.base import EventKind, LogFormat, Sink, Step, duration, finite

MARK = ":::MLLOG "


def _value(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    return finite(float(raw))


class MlLog(LogFormat):
    name = "mllog"
    title = "MLPerf Training result logs (:::MLLOG lines)"
    sample = (
        '0: :::MLLOG {"namespace": "", "time_ms": 1728263980497, "event_type": "POINT_IN_TIME", '
        '"key": "train_loss", "value": 1.3233754634857178, "metadata": {"samples_count": 3040}}'
    )
    yields = (
        "the run's clock (run_start → run_stop) and end, samples (samples_count), loss, "
        "samples/s (tracked_stats), evaluation seconds and accuracy, the global batch size"
    )
    keys = (MARK.encode(),)
    step_keys = keys
    priority = 85

    def __init__(self) -> None:
        self.run_start: float | None = None
        self.eval_start: float | None = None

    def parse(self, line: str, number_: int, sink: Sink) -> bool:  # noqa: C901 - one per key
        i = line.find(MARK)
        if i < 0:
            return False
        try:
            doc = json.loads(line[i + len(MARK) :])
        except (ValueError, RecursionError):
            return False
        if not isinstance(doc, dict) or not isinstance(doc.get("key"), str):
            return False
        key, meta = doc["key"], doc.get("metadata") or {}
        at = _value(doc.get("time_ms"))
        at = None if at is None else at / 1000
        value = doc.get("value")
        if key == "run_start":
            self.run_start = at
        elif key == "run_stop":
            if at is not None and self.run_start is not None:
                sink.event(EventKind.runtime, number_, at=at,
                           value=duration(at - self.run_start, "run time", number_, sink),
                           text="MLPerf's run_start → run_stop")  # fmt: skip
            if meta.get("status") == "success":
                sink.event(EventKind.end, number_, at=at, text="MLPerf's run_stop: success")
            else:
                sink.event(
                    EventKind.stopped, number_, text=f"MLPerf's run_stop: {meta.get('status')}"
                )
        elif key == "global_batch_size" and _value(value):
            sink.event(EventKind.global_batch, number_, value=_value(value),
                       text="MLPerf's global_batch_size")  # fmt: skip
        elif key == "train_loss" and isinstance(value, int | float):
            sink.step(
                Step(
                    line=number_,
                    loss=float(value),
                    consumed_samples=_value(meta.get("samples_count")),
                    at=at,
                    rule="MLPerf's train_loss line (its samples_count and time)",
                )
            )
        elif key == "tracked_stats" and isinstance(value, dict):
            rate = _value(value.get("throughput"))
            if rate is not None and rate > 0 and math.isfinite(rate):
                sink.event(EventKind.throughput, number_, at=at, value=rate, text="samples/s")
        elif key == "eval_start":
            self.eval_start = at
        elif key == "eval_stop":
            if at is not None and self.eval_start is not None and at >= self.eval_start:
                sink.event(EventKind.eval_seconds, number_, at=at, value=at - self.eval_start,
                           text=f"mllog eval at {meta.get('samples_count')}")  # fmt: skip
            self.eval_start = None
        elif key == "eval_accuracy" and _value(value) is not None:
            sink.event(EventKind.eval, number_, at=at, value=_value(value), text="eval_accuracy")
        else:
            return True
        return True
