"""Reading a log: detect its format, then stream it through that format into a Timeline.

Streaming, in bounded memory: the file is read in CHUNK_BYTES chunks; each format's literal
`keys` are found in the whole chunk with `bytes.find` (C, memory speed), and only the lines
holding one are decoded and parsed in Python. Line numbers come from counting newlines between hits
(`bytes.count`, also in C).

Detection: until a training format has yielded a step, every format parses the candidate
lines into a scratch counter; the first chunk where one does decides (the most steps, then
the more specific format; a `fallback` format only when no other has a step), and that chunk
is parsed again for real. Companion formats (the Neuron compiler's lines) are always read
beside the chosen one. From then on the other training formats' step lines (their
`step_keys`) are only counted: a file with mixed formats is read in its main format, the rest
reported as lines of other formats (each such format is looked for in every chunk when the
first chunk shows it: a search costs a pass over the buffer).

Every candidate line is cleaned first (`metrics.logs.text.clean`: ANSI colours, CloudWatch's
`#015`/`#033` escapes, launcher prefixes) and split at carriage returns; a file whose lines
carry rank prefixes is read in the first rank it shows (the other ranks' copies are skipped,
with the reason). A record a terminal hard-wrapped (`LogFormat.continued`) is joined with the
lines that carry on with it. The bulk path (one regex over the buffer) is taken only for a
chunk with none of these shapes in it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from trncost.errors import LogFormatError
from trncost.metrics.logs.base import EventKind, LogFormat, Step
from trncost.metrics.logs.chunks import Ranks, hits, holds, line_starts, parse_line, read_chunk
from trncost.metrics.logs.timeline import Timeline

CHUNK_BYTES = 8 * 2**20
MAX_DOCUMENT_BYTES = 64 * 2**20  # a JSON document larger than this is read as lines
MAX_PENDING = 50_000  # log events kept until the format is known
DETECT_LINES = 20_000  # candidate lines a format parses, at most, to be detected
DETECT_BYTES = 2**20  # a chunk's head the formats are first detected in
# events that show a training run (a summary, a final loss or rate) count like steps
_TRAINING_EVENTS = frozenset(
    {
        EventKind.runtime,
        EventKind.samples_per_second,
        EventKind.loss,
        EventKind.throughput,
        EventKind.steps_done,
    }
)


@dataclass
class Verdict:
    """How one format fared on a file."""

    format: str
    candidate_lines: int = 0  # lines holding one of its keys
    matched_lines: int = 0  # lines it parsed
    steps: int = 0  # training steps among them

    def why_not(self, sample: str) -> str:
        if self.candidate_lines == 0:
            return f"no line looks like its lines (e.g. {sample[:90]!r})"
        if self.matched_lines == 0:
            return f"{self.candidate_lines} line(s) had its keywords but none parsed"
        return f"{self.matched_lines} line(s) parsed but no training step among them"


@dataclass
class FileResult:
    """What reading one file found."""

    file: str
    format: str | None  # the training format, None when only companion lines matched
    confidence: float  # 0..1: its steps over every training format's candidate lines
    lines: int  # lines in the file (entries, for a JSON document)
    matched_lines: int  # lines of the chosen format and its companions that were read
    companions: dict[str, int] = field(default_factory=dict)  # companion format → lines
    other_format_lines: dict[str, int] = field(default_factory=dict)  # counted, not read
    verdicts: list[Verdict] = field(default_factory=list)


class _Counter:
    """A Sink that only counts (detection)."""

    def __init__(self) -> None:
        self.steps = 0  # steps, and run summaries (a Trainer's train_runtime line)

    def step(self, s: Step) -> None:
        if s.evidence:
            self.steps += 1

    def event(self, kind: EventKind, line: int, **_: Any) -> None:
        if kind in _TRAINING_EVENTS:
            self.steps += 1

    def reject(self, line: int, why: str) -> None:
        return None

    def skip(self, line: int, why: str) -> None:
        return None


class _Timed:
    """A Sink that gives every observation without a time the time of its log event."""

    def __init__(self, inner: Timeline) -> None:
        self.inner = inner
        self.at: float | None = None

    def step(self, s: Step) -> None:
        if s.at is None:
            s.at = self.at
        self.inner.step(s)

    def event(self, kind: EventKind, line: int, *, at: float | None = None, **kw: Any) -> None:
        self.inner.event(kind, line, at=self.at if at is None else at, **kw)

    def reject(self, line: int, why: str) -> None:
        self.inner.reject(line, why)

    def skip(self, line: int, why: str) -> None:
        self.inner.skip(line, why)


class Reader:
    """Reads the files of one trial into `timeline`, each in its own format."""

    def __init__(
        self,
        timeline: Timeline,
        formats: Iterable[type[LogFormat]],
        forced: str | None = None,
    ) -> None:
        self.timeline = timeline
        self.formats = tuple(formats)
        self.forced = forced
        if forced is not None and forced not in {f.name for f in self.formats}:
            raise LogFormatError(
                f"format: unknown log format {forced!r}; one of "
                f"{', '.join(f.name for f in self.formats)} or auto",
                tried=[],
                fields=["format"],
            )

    # -- whole documents ---------------------------------------------------------------------
    def _document(self, name: str, raw: bytes) -> FileResult | None:
        if len(raw) > MAX_DOCUMENT_BYTES or not raw.lstrip()[:1] == b"{":
            return None
        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return None
        for cls in self.formats:
            if not cls.whole_file or (self.forced and cls.name != self.forced):
                continue
            fmt = cls()
            if fmt.matches_document(doc):
                self.timeline.use(name, fmt.name, companion=not fmt.training)
                used = fmt.parse_document(doc, self.timeline)
                return FileResult(
                    file=name,
                    format=fmt.name if fmt.training else None,
                    confidence=1.0,
                    lines=used,
                    matched_lines=used,
                    companions={} if fmt.training else {fmt.name: used},
                )
        return None

    # -- line files --------------------------------------------------------------------------
    def read_stream(self, name: str, stream: IO[bytes], size_hint: int | None = None) -> FileResult:
        head = stream.read(min(CHUNK_BYTES, MAX_DOCUMENT_BYTES + 1))
        if head.lstrip()[:1] == b"{" and (size_hint is None or size_hint <= MAX_DOCUMENT_BYTES):
            rest = (
                stream.read(MAX_DOCUMENT_BYTES + 1 - len(head))
                if len(head) <= MAX_DOCUMENT_BYTES
                else b""
            )
            found = self._document(name, head + rest)
            if found is not None:
                return found
            head += rest

        def chunks() -> Iterator[bytes]:
            carry = head
            while True:
                more = stream.read(CHUNK_BYTES)
                if not more:
                    if carry:
                        yield carry
                    return
                buf = carry + more
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    carry = buf
                    continue
                yield buf[:cut]
                carry = buf[cut:]

        return self._lines(name, chunks())

    def read_bytes(self, name: str, data: bytes) -> FileResult:
        import io

        return self.read_stream(name, io.BytesIO(data), len(data))

    def read_path(self, path: str) -> FileResult:
        """A file: a large one in a format whose lines stand alone on two cores
        (`metrics.logs.parallel`), the same record as read serially."""
        from trncost.metrics.logs import parallel

        name, size = os.path.basename(path), os.path.getsize(path)
        if parallel.usable(size):
            with open(path, "rb") as stream:
                head = stream.read(CHUNK_BYTES)
            head = head[: head.rfind(b"\n") + 1]
            if head.lstrip()[:1] != b"{":
                training, _ = self._candidates()
                verdicts = {f.name: Verdict(f.name) for f in training}
                chosen = self._detect(training, verdicts, head, 1)
                if chosen is not None and chosen.splittable:
                    return parallel.read_path(self, path, chosen.name, size)
        with open(path, "rb") as stream:
            return self.read_stream(name, stream, size)

    def read_range(
        self, name: str, path: str, start: int, end: int | None = None, chosen: str | None = None
    ) -> FileResult:
        """Lines of `path` from byte `start` (a line's start) to `end`, in format `chosen`."""
        with open(path, "rb") as stream:
            stream.seek(start)
            left = None if end is None else end - start

            def chunks() -> Iterator[bytes]:
                nonlocal left
                carry = b""
                while left is None or left > 0:
                    more = stream.read(CHUNK_BYTES if left is None else min(CHUNK_BYTES, left))
                    if not more:
                        break
                    if left is not None:
                        left -= len(more)
                    buf = carry + more
                    cut = buf.rfind(b"\n") + 1
                    yield buf[:cut]
                    carry = buf[cut:]
                if carry:
                    yield carry

            return self._lines(name, chunks(), chosen)

    def _candidates(self) -> tuple[list[LogFormat], list[LogFormat]]:
        line_formats = [f for f in self.formats if not f.whole_file]
        if self.forced:
            chosen = [f for f in line_formats if f.name == self.forced]
            companions = [f() for f in line_formats if not f.training and f.name != self.forced]
            return [c() for c in chosen], companions
        return (
            [f() for f in line_formats if f.training],
            [f() for f in line_formats if not f.training],
        )

    def _lines(  # noqa: C901
        self, name: str, chunks: Iterable[bytes], chosen_name: str | None = None
    ) -> FileResult:
        tl = self.timeline
        training, companions = self._candidates()
        verdicts = {f.name: Verdict(f.name) for f in (*training, *companions)}
        chosen = next((f for f in training if f.name == chosen_name), None)
        # the other formats whose step lines the first chunk read shows: counted in every chunk
        # (a pass over the buffer per format; a format absent from the first is not looked for)
        others: list[LogFormat] | None = None
        ranks = Ranks()
        lines = 0
        for buf in chunks:
            first_line = lines + 1
            for comp in companions:
                tl.use(name, comp.name, companion=True)
                for number_, text in hits(comp, buf, first_line):
                    v = verdicts[comp.name]
                    v.candidate_lines += 1
                    if parse_line(comp, text, number_, tl, ranks):
                        v.matched_lines += 1
            if chosen is None:
                head = buf[: buf.rfind(b"\n", 0, DETECT_BYTES) + 1]
                big = len(buf) > DETECT_BYTES and head
                chosen = self._detect(training, verdicts, head, first_line) if big else None
                if chosen is None:
                    chosen = self._detect(training, verdicts, buf, first_line)
                if chosen is not None:
                    verdicts = {
                        k: (Verdict(k) if k in {t.name for t in training} else v)
                        for k, v in verdicts.items()
                    }
                    others = self._count_others(training, chosen, verdicts, buf, first_line)
            elif others is None:
                others = self._count_others(training, chosen, verdicts, buf, first_line)
            else:
                self._count_others(others, chosen, verdicts, buf, first_line)
            if chosen is not None:
                tl.use(name, chosen.name)
                v = verdicts[chosen.name]
                before = tl.steps_seen
                read_chunk(chosen, buf, first_line, tl, v, ranks)
                v.steps += tl.steps_seen - before
            lines += buf.count(b"\n")
        return self._result(name, chosen, training, companions, verdicts, lines)

    def _detect(
        self,
        training: list[LogFormat],
        verdicts: dict[str, Verdict],
        buf: bytes,
        first_line: int,
    ) -> LogFormat | None:
        """The format of the most steps in `buf` (the more specific on a tie), each parsing at
        most DETECT_LINES candidates; a fallback format only when no other has a step."""
        best: tuple[bool, int, int, LogFormat] | None = None
        for fmt in sorted(training, key=lambda f: f.fallback):
            if fmt.fallback and best is not None:
                break
            scratch = type(fmt)()
            counter = _Counter()
            ranks = Ranks()
            v = verdicts[fmt.name]
            for number_, text in hits(scratch, buf, first_line):
                v.candidate_lines += 1
                if parse_line(scratch, text, number_, counter, ranks):
                    v.matched_lines += 1
                if v.candidate_lines >= DETECT_LINES:
                    break
            v.steps += counter.steps
            score = (not fmt.fallback, counter.steps, fmt.priority)
            if counter.steps and (best is None or score > best[:3]):
                best = (*score, fmt)
        return best[3] if best else None

    @staticmethod
    def _count_others(
        training: list[LogFormat],
        chosen: LogFormat,
        verdicts: dict[str, Verdict],
        buf: bytes,
        first_line: int,
    ) -> list[LogFormat]:
        """Step lines of the other training formats that the chosen one does not read; the
        formats that had some."""
        find = buf.find
        seen = []
        for fmt in training:
            if fmt is chosen or not fmt.step_keys:
                continue
            v = verdicts[fmt.name]
            starts = line_starts(fmt.step_keys, buf)
            if starts:
                seen.append(fmt)
            for start in starts:
                end = find(b"\n", start)
                if not holds(chosen.keys, buf[start : end if end >= 0 else len(buf)]):
                    v.candidate_lines += 1
        return seen

    def _result(
        self,
        name: str,
        chosen: LogFormat | None,
        training: list[LogFormat],
        companions: list[LogFormat],
        verdicts: dict[str, Verdict],
        lines: int,
    ) -> FileResult:
        comp = {c.name: verdicts[c.name].matched_lines for c in companions}
        comp = {k: v for k, v in comp.items() if v}
        if chosen is None and not comp:
            samples = {f.name: f.sample for f in self.formats}
            tried = [f"{v.format}: {v.why_not(samples[v.format])}" for v in verdicts.values()] + [
                f"{f.name}: not one JSON document of its kind" for f in self.formats if f.whole_file
            ]
            raise LogFormatError(
                f"{name}: not a log trncost can read ({lines} lines); formats tried: "
                + "; ".join(tried),
                tried=tried,
            )
        others = {}
        if chosen is not None:
            for fmt in training:
                if fmt is not chosen and verdicts[fmt.name].candidate_lines:
                    others[fmt.name] = verdicts[fmt.name].candidate_lines
        matched = verdicts[chosen.name].matched_lines if chosen else 0
        confidence = 0.0
        if chosen is not None:
            denominator = matched + sum(others.values())
            confidence = round(matched / denominator, 3) if denominator else 0.0
        return FileResult(
            file=name,
            format=chosen.name if chosen else None,
            confidence=confidence,
            lines=lines,
            matched_lines=matched + sum(comp.values()),
            companions=comp,
            other_format_lines=others,
            verdicts=list(verdicts.values()),
        )

    # -- CloudWatch Logs events --------------------------------------------------------------
    def read_events(self, name: str, events: Iterable[tuple[int, str]]) -> FileResult:
        """Log events (epoch milliseconds, message), in order: each event's time stands for
        a line that prints none. Line numbers are event numbers in the stream (1-based).
        Events before the format is known are kept (up to MAX_PENDING) and read once it is."""
        reading = EventReading(self, name)
        for ms, message in events:
            reading.add(ms, message)
        return reading.result()


class EventReading:
    """One stream's log events read as they come (`Reader.read_events`, and the ingest's
    running aggregate, which feeds it a batch at a time): bounded memory."""

    def __init__(self, reader: Reader, name: str, first_number: int = 1) -> None:
        self.reader = reader
        self.name = name
        self.timed = _Timed(reader.timeline)
        self.training, self.companions = reader._candidates()
        self.verdicts = {f.name: Verdict(f.name) for f in (*self.training, *self.companions)}
        self.scratch = {f.name: type(f)() for f in self.training}
        self.counters = {f.name: _Counter() for f in self.training}
        self.chosen: LogFormat | None = None
        self.pending: list[tuple[int, int, str]] = []
        self.count = first_number - 1
        self.ranks = Ranks()

    def add(self, ms: int, message: str, number: int | None = None) -> None:
        """One event; `number` its line number when events between were left out."""
        self.count = self.count + 1 if number is None else number
        count = self.count
        tl = self.reader.timeline
        self.timed.at = ms / 1000
        raw = message.encode("utf-8", "replace")
        for comp in self.companions:
            if holds(comp.keys, raw):
                tl.use(self.name, comp.name, companion=True)
                self.verdicts[comp.name].candidate_lines += 1
                if parse_line(comp, message, count, self.timed, self.ranks):
                    self.verdicts[comp.name].matched_lines += 1
        if self.chosen is None:
            self.chosen = self._detect(raw, message, count)
            if self.chosen is None:
                if len(self.pending) < MAX_PENDING:
                    self.pending.append((count, ms, message))
                return
            self.verdicts[self.chosen.name] = Verdict(self.chosen.name)
            for number_, at_ms, text in self.pending:
                self.timed.at = at_ms / 1000
                self._event(number_, text, text.encode())
            self.pending.clear()
            self.timed.at = ms / 1000
        self._event(count, message, raw)

    def _event(self, number_: int, message: str, raw: bytes) -> None:
        chosen = self.chosen
        assert chosen is not None
        if not holds(chosen.keys, raw):
            return
        tl = self.reader.timeline
        tl.use(self.name, chosen.name)
        v = self.verdicts[chosen.name]
        v.candidate_lines += 1
        before = tl.steps_seen
        if parse_line(chosen, message, number_, self.timed, self.ranks):
            v.matched_lines += 1
        v.steps += tl.steps_seen - before

    def _detect(self, raw: bytes, message: str, count: int) -> LogFormat | None:
        """The first training format whose step this event is (a fallback format only when
        no other format's keys are in the event)."""
        found: LogFormat | None = None
        for fmt in sorted(self.training, key=lambda f: (f.fallback, -f.priority)):
            s = self.scratch[fmt.name]
            if found is not None or not holds(s.keys, raw):
                continue
            if parse_line(s, message, count, self.counters[fmt.name], Ranks()):
                self.verdicts[fmt.name].candidate_lines += 1
                self.verdicts[fmt.name].matched_lines += 1
                if self.counters[fmt.name].steps:
                    found = fmt
        return found

    def result(self, lines: int | None = None) -> FileResult:
        return self.reader._result(
            self.name,
            self.chosen,
            self.training,
            self.companions,
            self.verdicts,
            self.count if lines is None else lines,
        )
