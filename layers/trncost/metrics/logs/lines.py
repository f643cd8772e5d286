"""The lines of one file a figure was read from, as a few [first, last] ranges."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_RANGES = 20  # line ranges kept per figure and file; the rest widen the last one


@dataclass
class Lines:
    """The lines of one file a figure was read from: up to MAX_RANGES [first, last] ranges."""

    ranges: list[list[int]] = field(default_factory=list)
    count: int = 0

    def add(self, line: int) -> None:
        self.count += 1
        r = self.ranges
        if r and line < r[0][0]:  # an earlier line counted late (the first step's work)
            if line == r[0][0] - 1:
                r[0][0] = line
            elif len(r) < MAX_RANGES:
                r.insert(0, [line, line])
            else:
                r[0][0] = line
            return
        if r and line <= r[-1][1] + 1:
            r[-1][1] = max(r[-1][1], line)
        elif len(r) < MAX_RANGES:
            r.append([line, line])
        else:
            r[-1][1] = line


def merged(parts: list[Lines]) -> Lines:
    """One Lines of several (ranges sorted and joined, at most MAX_RANGES; counts added)."""
    if len(parts) == 1:
        return parts[0]
    ranges = sorted(list(r) for p in parts for r in p.ranges)
    out: list[list[int]] = []
    for first, last in ranges:
        if out and (first <= out[-1][1] + 1 or len(out) >= MAX_RANGES):
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return Lines(out, sum(p.count for p in parts))
