"""What every log format shares: the observations a parser yields, the format's shape, and
the small number readers. Pure: no I/O.

A format is a `LogFormat`: a name, a sample line (for the docs and for "why it did not
match"), the literal `keys` a line must hold to be one of its own (the scanner finds them
with `bytes.find` over whole buffers, at memory speed, so lines that cannot match cost no
Python work; `step_keys` mark its step lines, to count them in files of another format), and
`parse(line, number, sink)` that turns one candidate line into observations. A format whose
files are one JSON document (trainer_state.json, a compile report) sets `whole_file` and
implements `parse_document`.

Observations go to a `Sink` (`metrics.logs.timeline.Timeline`): `step(Step)` for a logged
training step or interval, `event(kind, line, ...)` for everything else (see `EventKind`),
`skip(line, why)` for a line of the format's that is deliberately not used (another rank's
copy, an evaluation's progress bar, ...: `trial import --explain` lists them).

A line reaches `parse` cleaned (`metrics.logs.text.clean`): ANSI colours and CloudWatch's
`#015` / `#033[A` escapes decoded, launcher prefixes (`[1,0]<stdout>:`, `[default7]:`,
`[rank0]:`) removed, carriage-return refreshes split: each part is parsed on its own, with the
line's number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any, ClassVar, Protocol


class EventKind(StrEnum):
    compile_start = "compile_start"  # a graph compile began (cache miss), `at` its time
    compile_end = "compile_end"  # ... and ended
    compile_seconds = "compile_seconds"  # one compile of `value` seconds (a report says so)
    compile_hit = "compile_hit"  # a graph served from the compile cache
    compile_failed = "compile_failed"  # `value` compiles failed
    compiled = "compiled"  # `value` graphs compiled (a summary line, no seconds)
    checkpoint_save = "checkpoint_save"  # a checkpoint save began (`value`: seconds if known)
    checkpoint_saved = "checkpoint_saved"  # ... and ended
    checkpoint_restore = "checkpoint_restore"  # training resumed from a checkpoint
    eval = "eval"  # `text` = metric name, `value` = its value
    error = "error"  # an error the process printed (traceback, runtime error)
    end = "end"  # the log says training finished
    runtime = "runtime"  # the log's own total training seconds (`value`)
    final_loss = "final_loss"  # the run's mean training loss (`value`): finite iff all were
    samples_per_second = "samples_per_second"  # the log's own average over the run
    global_batch = "global_batch"  # global batch size (`value`), from a config line
    seq_length = "seq_length"  # sequence length (`value`), from a config line
    eval_seconds = "eval_seconds"  # one evaluation took `value` s; `text`: what identifies it
    # (two ranks printing the same evaluation give the same text: counted once)
    steps_total = "steps_total"  # the run's planned steps (`value`): a banner, max_steps
    steps_done = "steps_done"  # the run's own step count at its end (`value`: global_step)
    compile_wall = "compile_wall"  # a whole compile phase took `value` s (neuron_parallel_compile)
    trial_run = "trial_run"  # neuron_parallel_compile's trial run begins (`value` 1) / ends (0)
    throughput = "throughput"  # the log's own rate `value` in unit `text`, outside a step line
    loss = "loss"  # a training loss `value` printed outside a step line (a final loss)
    stopped = "stopped"  # the log says training stopped before its end (`text`: why)


@dataclass(slots=True)
class Step:
    """One logged training step (or logging interval). None: the line does not say."""

    line: int
    step: float | None = None  # global step number after this step
    loss: float | None = None
    samples_per_s: float | None = None
    tokens_per_s: float | None = None
    step_time_s: float | None = None  # wall seconds of one step
    consumed_samples: float | None = None  # samples consumed since the run began
    global_batch: float | None = None
    at: float | None = None  # epoch seconds, from the line's own timestamp
    elapsed_s: float | None = None  # seconds since training began, as the line says
    # as the line prints it (the figures `trial import --explain` shows):
    shown: float | None = None  # the step counter as printed (else `step`)
    total: float | None = None  # the run's planned steps, as printed (`n/N`)
    rate: float | None = None  # the log's own rate on this line ...
    rate_unit: str | None = None  # ... in its unit: it/s, samples/s, seq/s or tokens/s
    from_start: bool = False  # `step` and `elapsed_s` count from the run's start (a bar)
    rule: str | None = None  # what read it, for the explanation
    evidence: bool = True  # counts toward detecting the format (False: a shape others print)


class Sink(Protocol):
    def step(self, s: Step) -> None: ...

    def event(
        self,
        kind: EventKind,
        line: int,
        *,
        at: float | None = None,
        value: float | None = None,
        text: str | None = None,
    ) -> None: ...

    def reject(self, line: int, why: str) -> None:
        """A number the line holds that cannot be a measurement (negative time, NaN rate)."""

    def skip(self, line: int, why: str) -> None:
        """A line of the format's not used, and why (for the explanation)."""


class LogFormat:
    """One log format. Subclasses set the class attributes and `parse` (or, for JSON
    documents, `parse_document`)."""

    name: ClassVar[str]
    title: ClassVar[str]  # what produces it, for the docs
    sample: ClassVar[str]  # one real line (or the document's opening), for the docs
    yields: ClassVar[str]  # what it measures, for the docs
    keys: ClassVar[tuple[bytes, ...]] = ()  # a candidate line holds one of these
    step_keys: ClassVar[tuple[bytes, ...]] = ()  # ... and a step line one of these
    whole_file: ClassVar[bool] = False
    training: ClassVar[bool] = True  # False: a companion format (compile lines) only
    priority: ClassVar[int] = 50  # the more specific format wins a tie
    fallback: ClassVar[bool] = False  # chosen only when no other training format matches
    splittable: ClassVar[bool] = False  # its lines stand alone: a file may be read in parts

    def continued(self, text: str) -> bool:
        """True when `text` (a record of this format) was cut by a hard wrap and the next
        physical line carries on with it (Megatron's long iteration line pasted from a
        terminal): the scanner then joins the next lines to it."""
        return False

    def starts_record(self, text: str) -> bool:
        """True when `text` begins a record of its own (a hard-wrapped record stops there)."""
        return True

    def parse(self, line: str, number: int, sink: Sink) -> bool:
        """Observations of one candidate line; False when the line is not this format's."""
        return False

    # A format's most frequent line may also be read in bulk: `bulk` (one compiled regex run
    # over the whole buffer, in C) gives the matches with their line starts; `parse_match`
    # turns one into observations. Lines it matched are not parsed again by `parse`.
    bulk: ClassVar[re.Pattern[bytes] | None] = None
    bulk_keys: ClassVar[tuple[bytes, ...] | None] = None  # the keys left beside `bulk`
    # the format's lines `bulk` may not match (one more C regex over the buffer): those it
    # did not are read line by line
    bulk_rest: ClassVar[re.Pattern[bytes] | None] = None

    def parse_match(self, m: re.Match[bytes], prefix: bytes, number: int, sink: Sink) -> None:
        """Observations of one `bulk` match; `prefix`: its line before the match."""

    def matches_document(self, doc: Any) -> bool:
        return False

    def parse_document(self, doc: Any, sink: Sink) -> int:
        """Observations of a whole JSON document; the number of entries it used."""
        return 0


# -- numbers --------------------------------------------------------------------------------
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)"


def number(text: str | None) -> float | None:
    """A float from a log's text ("1.63e+6", "nan", "-inf", "1,024"); None when it is not one."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(text.strip().rstrip(",").replace(",", ""))
    except ValueError:
        return None


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def duration(value: float | None, what: str, line: int, sink: Sink) -> float | None:
    """A duration or rate that must be finite and ≥ 0 (> 0 for a rate); else rejected."""
    if value is None:
        return None
    if not math.isfinite(value) or value < 0:
        sink.reject(line, f"{what} {value:g} is not a finite, non-negative number")
        return None
    return value


def key_values(text: str, sep: str = "=", delim: str = ",") -> dict[str, str]:
    """`k=v, k2=v2` (or `k: v | k2: v2`) into a dict of stripped strings."""
    out: dict[str, str] = {}
    for part in text.split(delim):
        key, found, value = part.partition(sep)
        if found:
            out[key.strip()] = value.strip()
    return out


def first_number(values: Mapping[str, str], *keys: str) -> float | None:
    for key in keys:
        if key in values:
            found = number(values[key])
            if found is not None:
                return found
    return None


# -- timestamps -----------------------------------------------------------------------------
# ISO-like stamps at a line's start: "2024-04-06 03:02:12", "[2024-11-07 09:57:13.000144",
# "2021-01-15 10:27:59,116" (logging), with an optional "T", fraction and zone.
_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[ T](?P<time>\d{2}:\d{2}:\d{2})(?:[.,](?P<frac>\d{1,9}))?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?"
)
# time.asctime(): "Thu Sep 29 22:30:10 2022"
_ASCTIME = re.compile(
    r"[A-Z][a-z]{2} (?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<t>\d\d:\d\d:\d\d) (?P<y>\d{4})"
)
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}


def iso_time(text: str, start: int = 0, end: int = 80) -> float | None:
    """Epoch seconds of an ISO-like timestamp in text[start:end] (UTC when no zone)."""
    if "-" not in text[start:end]:  # no date in the window: no stamp (a cheap test first)
        return None
    m = _ISO.search(text, start, end)
    if m is None:
        return None
    frac = m.group("frac") or ""
    # Neuron's loggers print microseconds as a 6-digit fraction with leading zeros of a
    # 9-digit field ("09:57:13.000144"): the digits are read as written, a fraction of a second.
    midnight = _midnight(m.group("date"))
    clock = m.group("time")
    hours, minutes, secs = int(clock[0:2]), int(clock[3:5]), int(clock[6:8])
    if midnight is None or hours > 23 or minutes > 59 or secs > 60:
        return None
    tz = m.group("tz")
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        hours, minutes = int(tz[1:3]), int(tz[-2:])
        offset = sign * (hours * 3600 + minutes * 60)
    else:
        offset = 0
    seconds = midnight + hours * 3600 + minutes * 60 + secs - offset
    return seconds + (float(f"0.{frac}") if frac else 0.0)


@lru_cache(maxsize=4096)
def _midnight(date: str) -> float | None:
    """Epoch seconds of a date's midnight (UTC), cached: a log has few distinct dates."""
    try:
        return datetime.fromisoformat(date).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def asc_time(text: str) -> float | None:
    m = _ASCTIME.search(text)
    if m is None:
        return None
    hour, minute, second = (int(x) for x in m.group("t").split(":"))
    try:
        stamp = datetime(
            int(m.group("y")),
            _MONTHS[m.group("mon")],
            int(m.group("day")),
            hour,
            minute,
            second,
            tzinfo=UTC,
        )
    except (KeyError, ValueError):
        return None
    return stamp.timestamp()


def clock_text(text: str) -> float | None:
    """Seconds of "H:MM:SS" / "MM:SS" / "D days, H:MM:SS" (tqdm's elapsed); None if not one."""
    days = 0.0
    if "day" in text:
        head, _, text = text.partition(",")
        days = number(head.split()[0]) or 0.0
    parts = text.strip().split(":")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + int(p)
    return days * 86400 + seconds
