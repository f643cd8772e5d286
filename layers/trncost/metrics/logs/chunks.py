"""Reading one buffer of a log: the lines a format's keys are in (bytes.find, a pass each,
a key with a rare byte only where that byte is), its bulk regex's matches, each candidate line
cleaned (`text.clean`), another rank's copy skipped, a hard-wrapped record joined back, and
parsed part by part. Used by `scan.Reader`; pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from trncost.metrics.logs.base import LogFormat, Sink
from trncost.metrics.logs.text import clean, split_refreshes

if TYPE_CHECKING:
    from trncost.metrics.logs.scan import Verdict
    from trncost.metrics.logs.timeline import Timeline

NOT_PARSED = "holds the format's keywords but is not one of its lines"
MAX_JOINED = 3  # physical lines joined to a hard-wrapped record
# Bytes most logs seldom hold: a key holding one is looked for only where that byte is (one
# memchr), since a multi-byte search costs a pass over the buffer
_RARE = frozenset(b"{}\t=`#;@~^$\x1b\r")
_RARE_OF: dict[bytes, bytes | None] = {}


def rare_byte(key: bytes) -> bytes | None:
    if key not in _RARE_OF:
        _RARE_OF[key] = next((bytes([c]) for c in key if c in _RARE), None)
    return _RARE_OF[key]


def dirty(buf: bytes) -> bool:
    """The chunk holds a carriage return, an ANSI escape or CloudWatch's #015/#033: it is read
    line by line (cleaned), never by the bulk path (a bulk match whose line starts with a
    launcher prefix is read by its line too)."""
    return b"\r" in buf or b"\x1b" in buf or (b"#" in buf and (b"#015" in buf or b"#033" in buf))


class Ranks:
    """Which launcher rank a file is read in: the first its prefixed lines show."""

    def __init__(self) -> None:
        self.rank: int | None = None

    def other(self, rank: int | None) -> bool:
        if rank is None:
            return False
        if self.rank is None:
            self.rank = rank
        return rank != self.rank


def parse_parts(fmt: LogFormat, text: str, number: int, sink: Sink) -> bool:
    """Each carriage-return part of a cleaned line through `fmt`; True if one was its."""
    found = False
    for part in split_refreshes(text):
        found = fmt.parse(part, number, sink) or found
    return found


def parse_line(fmt: LogFormat, raw: str, number: int, sink: Sink, ranks: Ranks) -> bool:
    """One candidate line through `fmt`: cleaned, another rank's copy skipped, each carriage-
    return part parsed. True when the line was the format's (or another rank's copy of it)."""
    rank, text = clean(raw)
    if ranks.other(rank):
        sink.skip(number, f"rank {rank}'s copy of the output (rank {ranks.rank} is read)")
        return True
    return parse_parts(fmt, text, number, sink)


def line_starts(keys: tuple[bytes, ...], buf: bytes) -> list[int]:
    """The start of every line of `buf` holding one of `keys` (bytes.find: memory speed)."""
    starts: set[int] = set()
    find, rfind = buf.find, buf.rfind
    for key in keys:
        rare = rare_byte(key)
        if rare is not None and rare not in buf:
            continue
        pos = find(key)
        while pos >= 0:
            start = rfind(b"\n", 0, pos) + 1
            starts.add(start)
            end = find(b"\n", pos)
            if end < 0:
                break
            pos = find(key, end + 1)
    return sorted(starts)


def hits(fmt: LogFormat, buf: bytes, first_line: int) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of `buf` that holds one of the format's keys."""
    line, counted_to = first_line, 0
    count, find = buf.count, buf.find
    for start in line_starts(fmt.keys, buf):
        end = find(b"\n", start)
        if end < 0:
            end = len(buf)
        line += count(b"\n", counted_to, start)
        counted_to = start
        yield line, buf[start:end].decode("utf-8", "replace")


def read_chunk(
    fmt: LogFormat, buf: bytes, first_line: int, sink: Timeline, v: Verdict, ranks: Ranks
) -> None:
    """Every line of `buf` that is `fmt`'s, in order: its bulk matches (one regex over the
    buffer, for a chunk with no escaped, coloured, prefixed or refreshed text) merged with the
    other lines holding one of its keys; a hard-wrapped record joined with its continuation."""
    rfind, find, count = buf.rfind, buf.find, buf.count
    items: list[tuple[int, re.Match[bytes] | None]] = []
    handled: set[int] = set()
    bulk = fmt.bulk is not None and not dirty(buf)
    if bulk:
        assert fmt.bulk is not None
        for found in fmt.bulk.finditer(buf):
            start = rfind(b"\n", 0, found.start()) + 1
            if start not in handled:
                handled.add(start)
                items.append((start, found))
    keys = fmt.bulk_keys if bulk and fmt.bulk_keys is not None else fmt.keys
    starts = line_starts(keys, buf)
    if bulk and fmt.bulk_rest is not None:
        rest = {rfind(b"\n", 0, f.start()) + 1 for f in fmt.bulk_rest.finditer(buf)}
        starts = sorted({*starts, *(r for r in rest if r not in handled)})
    items += [(start, None) for start in starts if start not in handled]
    if handled:
        items.sort(key=lambda item: item[0])
    line, counted_to = first_line, 0
    joined_to = -1  # the end of the last continuation line consumed
    for start, m in items:
        if start <= joined_to:
            continue
        line += count(b"\n", counted_to, start)
        counted_to = start
        v.candidate_lines += 1
        if m is not None:
            prefix = buf[start : m.start()]
            if not (b"]<" in prefix or b"]:" in prefix or b"std" in prefix):
                fmt.parse_match(m, prefix, line, sink)
                v.matched_lines += 1
                continue
        end = find(b"\n", start)
        end = end if end >= 0 else len(buf)
        rank, text = clean(buf[start:end].decode("utf-8", "replace"))
        if ranks.other(rank):
            sink.skip(line, f"rank {rank}'s copy of the output (rank {ranks.rank} is read)")
            v.matched_lines += 1
            continue
        if fmt.continued(text):
            text, joined_to = join_wrapped(fmt, buf, end, text, ranks)
        if parse_parts(fmt, text, line, sink):
            v.matched_lines += 1
        else:
            sink.skip(line, NOT_PARSED)


def join_wrapped(fmt: LogFormat, buf: bytes, end: int, text: str, ranks: Ranks) -> tuple[str, int]:
    """`text` (a record cut by a hard wrap) with the lines that carry on with it, and where
    the last of them ends. Another rank's line in between is passed over."""
    find = buf.find
    joined_to = -1
    taken = 0
    pos = end
    while taken < MAX_JOINED and pos < len(buf):
        nxt_start = pos + 1
        nxt_end = find(b"\n", nxt_start)
        nxt_end = nxt_end if nxt_end >= 0 else len(buf)
        rank, nxt = clean(buf[nxt_start:nxt_end].decode("utf-8", "replace"))
        pos = nxt_end
        if rank is not None and ranks.rank is not None and rank != ranks.rank:
            continue
        if not nxt.strip() or fmt.starts_record(nxt):
            break
        text += nxt
        joined_to = nxt_start
        taken += 1
        if not fmt.continued(text):
            break
    return text, joined_to


def holds(keys: tuple[bytes, ...], raw: bytes) -> bool:
    return any(k in raw for k in keys)
