"""A large log read on two cores: the file's tail is scanned and parsed in a forked process
while this one reads its head, then the tail's observations are replayed, in order, into the
same Timeline — so the record is exactly the serial read's (the Timeline sees every step and
event in line order). Used by `Reader.read_path` (the CLI's `trial import`), never in a Lambda
(the API's logs are small).

Only for a file of at least PARALLEL_MIN_BYTES in a format whose lines stand alone
(`LogFormat.splittable`: Megatron, the neuronx-distributed and torch-neuronx lines, DeepSpeed's
timer): a progress bar's epoch count, a Trainer's banner or an MLPerf run's start carry state
from line to line, and those formats are read serially. Where `fork` is not available, or the
machine has one core, the read is serial.

The split: the head's share (HEAD_SHARE) is set so that both processes finish together — the
parent parses its share, then replays the tail's observations as they arrive (the Timeline's part
of the work) while the child still scans and parses. The child sends its observations as marshal
batches through a pipe, which a thread here drains into a queue while this process parses (the
batches, not the parsed objects, wait there: bounded memory), and which the replay empties.
"""

from __future__ import annotations

import marshal
import multiprocessing
import os
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast

from trncost.metrics.logs.base import EventKind, Step

if TYPE_CHECKING:
    from trncost.metrics.logs.scan import FileResult, Reader, Verdict
    from trncost.metrics.logs.timeline import Timeline

PARALLEL_MIN_BYTES = 64 * 2**20
HEAD_SHARE = 0.39
BATCH = 4096  # observations per marshal batch
PIPE_BYTES = 2**20  # the pipe's buffer, and the most one read takes from it
_STEP_FIELDS = tuple(f.name for f in fields(Step))
_pack = attrgetter(*_STEP_FIELDS)
_KINDS = {k.value: k for k in EventKind}


class Recorder:
    """A Sink that records observations (the child's): marshal batches on a pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.ops: list[tuple[Any, ...]] = []
        self.steps_seen = 0

    def _put(self, op: tuple[Any, ...]) -> None:
        self.ops.append(op)
        if len(self.ops) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.ops:
            data = marshal.dumps(self.ops)
            os.write(self.fd, len(data).to_bytes(8, "little"))
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]
            self.ops = []

    def use(self, file: str, fmt: str, companion: bool = False) -> None:
        self._put((4, fmt, companion))

    def step(self, s: Step) -> None:
        self.steps_seen += 1
        self._put((0, _pack(s)))

    def event(
        self,
        kind: EventKind,
        line: int,
        *,
        at: float | None = None,
        value: float | None = None,
        text: str | None = None,
    ) -> None:
        self._put((1, kind.value, line, at, value, text))

    def skip(self, line: int, why: str) -> None:
        self._put((2, line, why))

    def reject(self, line: int, why: str) -> None:
        self._put((3, line, why))


def replay(timeline: Timeline, name: str, batches: Iterable[bytes], offset: int) -> Any:
    """The child's observations into `timeline`, its line numbers moved by `offset`, batch by
    batch as they come; its closing summary (code 9), or None if it never came."""
    summary = None
    for data in batches:
        for op in marshal.loads(data):
            code = op[0]
            if code == 0:
                s = Step(*op[1])
                s.line += offset
                timeline.step(s)
            elif code == 1:
                _, kind, line, at, value, text = op
                timeline.event(_KINDS[kind], line + offset, at=at, value=value, text=text)
            elif code == 2:
                timeline.skip(op[1] + offset, op[2])
            elif code == 3:
                timeline.reject(op[1] + offset, op[2])
            elif code == 9:
                summary = op
            else:
                timeline.use(name, op[1], op[2])
    return summary


def _drain(fd: int, into: queue.SimpleQueue[bytes | None]) -> None:
    """Read length-prefixed batches from `fd` into `into` until it closes, then None (a thread:
    os.read waits without the GIL). Reads take up to PIPE_BYTES at a time: each read waits for
    the GIL once, which the parsing thread holds most of the time."""
    buf = bytearray()
    try:
        while chunk := os.read(fd, PIPE_BYTES):
            buf += chunk
            start = 0
            while len(buf) - start >= 8:
                n = int.from_bytes(buf[start : start + 8], "little")
                if len(buf) - start - 8 < n:
                    break
                into.put(bytes(buf[start + 8 : start + 8 + n]))
                start += 8 + n
            del buf[:start]
    finally:
        os.close(fd)
        into.put(None)


def _widen(fd: int) -> None:
    """The pipe's buffer to PIPE_BYTES where Linux allows it (F_SETPIPE_SZ): the child then
    blocks on a full pipe 16× less often than with the default 64 KiB."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass


def _arrivals(batches: queue.SimpleQueue[bytes | None]) -> Iterator[bytes]:
    while (data := batches.get()) is not None:
        yield data


def usable(size: int) -> bool:
    return (
        size >= PARALLEL_MIN_BYTES
        and (os.cpu_count() or 1) >= 2
        and "fork" in multiprocessing.get_all_start_methods()
    )


def split_at(path: str, size: int) -> int:
    """The byte offset just after the newline at or past HEAD_SHARE of the file."""
    with open(path, "rb") as f:
        f.seek(int(size * HEAD_SHARE))
        window = f.read(2**20)
        cut = window.find(b"\n")
        return int(size * HEAD_SHARE) + cut + 1 if cut >= 0 else size


def _child(reader: Reader, path: str, start: int, fmt: str, fd: int, name: str) -> None:
    from trncost.metrics.logs.scan import Reader as ReaderClass

    recorder = Recorder(fd)
    tail = ReaderClass(cast("Timeline", recorder), reader.formats, fmt)
    result = tail.read_range(name, path, start, chosen=fmt)
    recorder.flush()
    summary = [(v.format, v.candidate_lines, v.matched_lines, v.steps) for v in result.verdicts]
    data = marshal.dumps([(9, result.lines, summary)])
    os.write(fd, len(data).to_bytes(8, "little"))
    os.write(fd, data)
    os.close(fd)


def read_path(reader: Reader, path: str, fmt: str, size: int) -> FileResult:
    """`path` read on two cores in format `fmt` (detected by the caller on its head)."""
    name = os.path.basename(path)
    start = split_at(path, size)
    read_fd, write_fd = os.pipe()
    _widen(write_fd)
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_child, args=(reader, path, start, fmt, write_fd, name))
    child.start()
    os.close(write_fd)
    batches: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    drain = threading.Thread(target=_drain, args=(read_fd, batches), daemon=True)
    drain.start()
    head = reader.read_range(name, path, 0, end=start, chosen=fmt)
    # the tail's observations replayed as they arrive, while the child still parses: the head's
    # lines are all in the timeline by now, so the order is the serial read's
    closing = replay(reader.timeline, name, _arrivals(batches), head.lines)
    drain.join()
    child.join()
    if child.exitcode != 0 or closing is None:
        raise RuntimeError(f"{name}: the parallel read of its tail failed ({child.exitcode})")
    _, lines, summary = closing
    companions = {f.name for f in reader.formats if not f.training}
    return _merged(head, lines, summary, companions)


def _merged(
    head: FileResult, lines: int, summary: list[tuple[str, int, int, int]], companions: set[str]
) -> FileResult:
    from trncost.metrics.logs.scan import FileResult, Verdict

    tail: dict[str, Verdict] = {f: Verdict(f, c, m, s) for f, c, m, s in summary}
    verdicts = []
    for v in head.verdicts:
        t = tail.get(v.format)
        if t is not None:
            v = Verdict(v.format, v.candidate_lines + t.candidate_lines,
                        v.matched_lines + t.matched_lines, v.steps + t.steps)  # fmt: skip
        verdicts.append(v)
    by = {v.format: v for v in verdicts}
    chosen = by.get(head.format or "")
    matched = chosen.matched_lines if chosen else 0
    comp = {k: by[k].matched_lines for k in companions if k in by and by[k].matched_lines}
    others = {
        k: v.candidate_lines
        for k, v in by.items()
        if k not in companions and k != head.format and v.candidate_lines
    }
    denominator = matched + sum(others.values())
    return FileResult(
        file=head.file,
        format=head.format,
        confidence=round(matched / denominator, 3) if denominator else head.confidence,
        lines=head.lines + lines,
        matched_lines=matched + sum(comp.values()),
        companions=comp,
        other_format_lines=others,
        verdicts=verdicts,
    )
