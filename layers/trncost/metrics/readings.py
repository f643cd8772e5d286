"""The measured series of one job, by key, cut to a time window. Pure: no boto3, no I/O.

Every figure of a trial record is read through `SeriesReader`: a key (the `MetricSpec.key` of
`metrics.names`) gives its points, total, minimum or maximum, or None when the series is
missing or incomplete (never 0). A new source of the same quantities (series derived from a
job's own logs, say) joins by producing `Series` under the same keys; the record's rules then
apply to it unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from trncost.metrics import names as n

if TYPE_CHECKING:
    from trncost.metrics.cloudwatch import Series

Point = tuple[datetime, float]
# Series whose values may be negative (a loss, an evaluation result); every other key is a
# count, a duration, a rate, bytes or a percentage.
SIGNED_KEYS = frozenset({n.TRAINING_LOSS.key, n.EVAL_METRIC.key})


@dataclass
class Window:
    """[lo, hi) in UTC; None: open on that side."""

    lo: datetime | None
    hi: datetime | None


class SeriesReader:
    """The series by key, cut to a window; a missing or incomplete series reads as None (and an
    incomplete one adds a note, once)."""

    def __init__(self, series: Mapping[str, Series], window: Window, notes: list[str]) -> None:
        self.series = series
        self.window = window
        self.notes = notes
        self._warned: set[str] = set()
        self._excluded: set[str] = set()

    def period(self, key: str) -> int:
        s = self.series.get(key)
        return s.period if s is not None else n.DEFAULT_PERIOD_S

    def points(self, key: str, window: Window | None = None) -> list[Point] | None:
        s = self.series.get(key)
        if s is None:
            return None
        if not s.complete:
            if key not in self._warned:
                self._warned.add(key)
                why = "; ".join(s.messages) or "no message"
                self.notes.append(
                    f"{key}: CloudWatch returned {s.status} ({why}); treated as not measured"
                )
            return None
        w = window or self.window
        after = None if w.lo is None else w.lo - timedelta(seconds=s.period)
        pts = [
            (t, v)
            for t, v in s.points()
            if (after is None or t > after) and (w.hi is None or t < w.hi)
        ]
        return self._admissible(key, pts) or None

    def _admissible(self, key: str, pts: list[Point]) -> list[Point]:
        """Datapoints that can be measurements: a NaN or ±inf (a loss aside: a non-finite loss
        is what divergence looks like) or a negative count, duration or rate is left out, with
        a note (once per key), never an exception."""
        signed = key in SIGNED_KEYS
        keep = [
            (t, v)
            for t, v in pts
            if (math.isfinite(v) or key == n.TRAINING_LOSS.key) and (signed or not v < 0)
        ]
        dropped = len(pts) - len(keep)
        if dropped and key not in self._excluded:
            self._excluded.add(key)
            self.notes.append(
                f"{key}: {dropped} datapoint(s) NaN, infinite or negative excluded "
                "(not a measurement)"
            )
        return keep

    def total(self, key: str) -> float | None:
        pts = self.points(key)
        return None if pts is None else math.fsum(v for _, v in pts)

    def minimum(self, key: str) -> float | None:
        pts = self.points(key)
        return None if pts is None else min(v for _, v in pts)

    def maximum(self, key: str) -> float | None:
        pts = self.points(key)
        return None if pts is None else max(v for _, v in pts)
