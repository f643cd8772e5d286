"""What a trial's logs say, figure by figure, as printed — and which lines each figure came
from, by which rule — beside the lines that were deliberately not used, and why. Pure.

The Timeline (`metrics.logs.timeline`) feeds a `ReadingState` as it reads; `reading()` gives a
`Reading`: the figures `trncost trial import --explain` prints (and the corpus test scores),
`skipped` lines by reason. The trial record is built from the Timeline's series, by the
record's rules; the reading is what the text states, so the two differ where the record counts
(a mid-run excerpt's work starts at its first line; the reading's steps_done is the counter
as printed). The figures:

- **steps_done / steps_total**: the last step counter printed and the run's planned total
  (`n/N` of a bar, `iteration i/N`, a banner's total, trainer_state's global_step/max_steps);
- **elapsed_s**: the training time the log states: a summary's train_runtime (the first:
  another rank's copy follows it), a `Total time`, an MLPerf run; else the last bar's elapsed;
- **throughput**: the log's own rate in its own unit: a summary's samples/s, else the last
  rate printed on a step line (a bar's it/s, NeMo's 1/train_step_timing, a `samples per
  second`, `tps`, ...);
- **global_batch_size / seq_length**: as the log prints them;
- **compile_s**: per file, a compile phase's wall time (neuron_parallel_compile's) else the
  sum of the file's timed compiles; across files — nodes compile in parallel — the longest
  (the critical path, not the sum);
- **compile_cache**: miss when any graph was compiled, hit when every graph came from the cache;
- **eval_s**: the evaluations' own seconds, each counted once;
- **completed**: true when the log shows the end (a summary, an end line, a bar or counter at
  its total), false when its counter stops short of its total, unknown without a total;
- **final_loss**: the last training loss printed (per step, not a run's mean).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trncost.metrics.logs.lines import Lines

if TYPE_CHECKING:
    from trncost.metrics.logs.base import Step

StepAt = tuple["Step", tuple[str, str]]  # a step line and its (file, format)

FIGURES = (
    "steps_done",
    "steps_total",
    "elapsed_s",
    "throughput",
    "global_batch_size",
    "seq_length",
    "compile_s",
    "compile_cache",
    "eval_s",
    "completed",
    "final_loss",
)


@dataclass
class Figure:
    """One figure as read: its value (and unit), where, and the rule that read it."""

    name: str
    value: Any
    rule: str
    file: str
    format: str
    lines: Lines = field(default_factory=Lines)
    unit: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "figure": self.name,
            "value": self.value,
            "unit": self.unit,
            "file": self.file,
            "format": self.format,
            "lines": [list(r) for r in self.lines.ranges],
            "rule": self.rule,
        }


@dataclass
class Reading:
    figures: dict[str, Figure]
    skipped: list[dict[str, Any]]
    notes: list[str]

    def values(self) -> dict[str, Any]:
        """The figures' values (throughput as {value, unit}); None where the log is silent."""
        out: dict[str, Any] = dict.fromkeys(FIGURES)
        for name, fig in self.figures.items():
            if name == "throughput":
                out[name] = {"value": fig.value, "unit": fig.unit}
            else:
                out[name] = fig.value
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "figures": [self.figures[f].as_dict() for f in FIGURES if f in self.figures],
            "not_stated": [f for f in FIGURES if f not in self.figures],
            "skipped": self.skipped,
            "notes": self.notes,
        }


@dataclass
class _Seen:
    value: Any
    file: str
    format: str
    line: int
    rule: str
    unit: str | None = None

    def figure(self, name: str, *, value: Any = None) -> Figure:
        lines = Lines()
        lines.add(self.line)
        return Figure(
            name, self.value if value is None else value, self.rule, self.file, self.format,
            lines, self.unit,
        )  # fmt: skip


def _count(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


class ReadingState:
    """The reading, kept up to date as observations arrive (bounded memory)."""

    def __init__(self) -> None:
        # the last step line that printed each figure (set by the Timeline, per line)
        self.step_at: StepAt | None = None
        self.total_at: StepAt | None = None
        self.rate_at: StepAt | None = None
        self.elapsed_at: StepAt | None = None
        self.batch_at: StepAt | None = None
        self.loss_at: StepAt | None = None
        self.step: _Seen | None = None  # the last step counter printed
        self.total: _Seen | None = None
        self.total_line: _Seen | None = None  # a banner's planned total
        self.total_reset = False  # a later epoch showed the bar's total is an epoch's
        self.steps_done: _Seen | None = None  # a document's own step count
        self.rate: _Seen | None = None  # the last rate on a step line
        self.summary_rate: _Seen | None = None  # a summary's (first wins)
        self.runtime: _Seen | None = None  # first wins
        self.bar_elapsed: _Seen | None = None
        self.batch: _Seen | None = None
        self.seq: _Seen | None = None
        self.loss: _Seen | None = None
        self.end: _Seen | None = None
        self.stopped: _Seen | None = None
        self.evals: dict[tuple[str, str], _Seen] = {}  # (file, what) → seconds: first wins
        self.compile_spans: dict[str, list[tuple[int, float]]] = {}  # file → (line, s)
        self.compile_walls: dict[str, list[tuple[int, float]]] = {}
        self.cache_hits: Lines = Lines()
        self.cache_misses: Lines = Lines()
        self.cache_file: tuple[str, str] = ("", "")
        self.skipped: dict[tuple[str, str], Lines] = {}

    # -- updates (the Timeline calls these) -----------------------------------------------
    def seen(self, value: Any, file: str, fmt: str, line: int, rule: str, unit: str | None = None):
        return _Seen(value, file, fmt, line, rule, unit)

    def skip(self, file: str, line: int, why: str) -> None:
        found = self.skipped.get((file, why))
        if found is None:
            found = self.skipped[(file, why)] = Lines()
        elif found.ranges and found.ranges[-1][1] == line:
            return  # another part of the same line (a carriage-return refresh)
        found.add(line)

    def compile_span(self, file: str, line: int, seconds: float) -> None:
        spans = self.compile_spans.setdefault(file, [])
        if len(spans) < 100_000:
            spans.append((line, seconds))

    def compile_wall(self, file: str, line: int, seconds: float) -> None:
        self.compile_walls.setdefault(file, []).append((line, seconds))

    def compile_items(self, file: str) -> list[tuple[int, float]]:
        """(line, seconds) of a file's compile time: its phase walls, else its timed compiles."""
        return self.compile_walls.get(file) or self.compile_spans.get(file, [])

    def cache(self, hit: bool, file: str, fmt: str, line: int) -> None:
        (self.cache_hits if hit else self.cache_misses).add(line)
        self.cache_file = (file, fmt)

    def evaluation(self, file: str, fmt: str, line: int, seconds: float, what: str) -> None:
        key = (file, what)
        if key not in self.evals:
            self.evals[key] = _Seen(seconds, file, fmt, line, "the evaluation's own seconds")

    # -- the result ---------------------------------------------------------------------------
    def _resolve(self) -> None:
        """The step lines' figures as _Seen (the last printed wins; an event's value wins
        when its line is later)."""

        def seen(at: StepAt | None, value: Any, unit: str | None = None) -> _Seen | None:
            if at is None or value is None:
                return None
            s, (file, fmt) = at
            return _Seen(value, file, fmt, s.line, s.rule or f"{fmt}'s step line", unit)

        def later(a: _Seen | None, b: _Seen | None) -> _Seen | None:
            if a is None or b is None:
                return a or b
            return b if (b.file, b.line) >= (a.file, a.line) else a

        if self.step_at is not None:
            s = self.step_at[0]
            shown = s.shown if s.shown is not None else s.step
            self.step = seen(self.step_at, None if shown is None else _count(shown))
        if self.total_at is not None:
            total = self.total_at[0].total
            if total is not None and total != total:  # NaN: a later epoch, total unknown
                self.total, self.total_reset = None, True
            else:
                self.total = seen(self.total_at, _count(total) if total is not None else None)
        if self.rate_at is not None:
            rate = self.rate_at[0].rate
            if rate is not None and rate > 0 and math.isfinite(rate):
                self.rate = later(seen(self.rate_at, rate, self.rate_at[0].rate_unit), self.rate)
        if self.elapsed_at is not None:
            self.bar_elapsed = seen(self.elapsed_at, self.elapsed_at[0].elapsed_s)
        if self.batch_at is not None:
            batch = self.batch_at[0].global_batch
            self.batch = later(seen(self.batch_at, _count(batch) if batch else None), self.batch)
        if self.loss_at is not None:
            self.loss = seen(self.loss_at, self.loss_at[0].loss)
        self.step_at = self.total_at = self.rate_at = None
        self.elapsed_at = self.batch_at = self.loss_at = None

    def compile_seconds(self) -> Figure | None:
        """Per file: its compile phase's wall time, else the sum of its timed compiles; across
        files (nodes compiling in parallel) the longest: the critical path."""
        best: tuple[float, str, list[tuple[int, float]], str] | None = None
        for file in {*self.compile_spans, *self.compile_walls}:
            walls = self.compile_walls.get(file)
            items = self.compile_items(file)
            if not items:
                continue
            total = sum(s for _, s in items)
            rule = (
                "neuron_parallel_compile's own wall time (its `real` time, or the parallel "
                "phase's first to last line)"
                if walls
                else "the sum of the compiles timed from their start line (No candidate found, "
                "Call compiler) to their end line (Exiting with a successfully compiled graph)"
            )
            if best is None or total > best[0]:
                best = (total, file, items, rule)
        if best is None:
            return None
        total, file, items, rule = best
        files = len({*self.compile_spans, *self.compile_walls})
        if files > 1:
            rule += f"; the longest of {files} files (nodes compile in parallel: the critical path)"
        lines = Lines()
        for line, _ in items:
            lines.add(line)
        return Figure("compile_s", round(total, 6), rule, file, "neuron_compile", lines)

    def completed(self) -> Figure | None:
        self._resolve()
        if self.end is not None:
            return self.end.figure("completed", value=True)
        step = self.steps_done or self.step
        if step is None or self.stopped is not None:
            if self.stopped is not None:
                return self.stopped.figure("completed", value=False)
            return None
        total = self.total_value()
        if total is None:
            return None
        done = float(step.value)
        if done >= total:
            return _Seen(True, step.file, step.format, step.line, "the step counter reached its "
                         f"total ({done:g} of {total:g})").figure("completed")  # fmt: skip
        return _Seen(False, step.file, step.format, step.line, "the step counter stops short of "
                     f"its total ({done:g} of {total:g})").figure("completed")  # fmt: skip

    def total_value(self) -> float | None:
        seen = self.total or (None if self.total_reset else self.total_line)
        return None if seen is None else float(seen.value)

    def reading(self, notes: list[str]) -> Reading:
        self._resolve()
        figs: dict[str, Figure] = {}

        def put(name: str, seen: _Seen | None) -> None:
            if seen is not None:
                figs[name] = seen.figure(name)

        put("steps_done", self.steps_done or self.step)
        put("steps_total", self.total or (None if self.total_reset else self.total_line))
        put("elapsed_s", self.runtime or self.bar_elapsed)
        put("throughput", self.summary_rate or self.rate)
        put("global_batch_size", self.batch)
        put("seq_length", self.seq)
        compile_s = self.compile_seconds()
        if compile_s is not None:
            figs["compile_s"] = compile_s
        if self.cache_misses.count or self.cache_hits.count:
            miss = bool(self.cache_misses.count)
            file, fmt = self.cache_file
            figs["compile_cache"] = Figure(
                "compile_cache",
                "miss" if miss else "hit",
                "a graph was compiled (a compile started, `Compiler status PASS`, a compile "
                "summary counting compiled graphs)"
                if miss
                else "every graph shown came from the compile cache (`Using a cached neff`, "
                "nothing compiled)",
                file,
                fmt,
                self.cache_misses if miss else self.cache_hits,
            )
        if self.evals:
            first = next(iter(self.evals.values()))
            lines = Lines()
            for seen in self.evals.values():
                lines.add(seen.line)
            figs["eval_s"] = Figure(
                "eval_s",
                round(sum(s.value for s in self.evals.values()), 6),
                f"the sum of {len(self.evals)} evaluation(s)' own seconds (eval_runtime, "
                "val_time, eval_start→eval_stop), each evaluation once",
                first.file,
                first.format,
                lines,
            )
        completed = self.completed()
        if completed is not None:
            figs["completed"] = completed
        put("final_loss", self.loss)
        skipped = [
            {
                "file": file,
                "why": why,
                "lines": [list(r) for r in lines.ranges],
                "count": lines.count,
            }
            for (file, why), lines in self.skipped.items()
        ]
        return Reading(figs, skipped, notes)
