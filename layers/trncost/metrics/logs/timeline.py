"""The observations of one trial's logs folded, as they arrive, into per-minute series under
the record's own keys (`metrics.names`), with the lines each came from. Pure: no I/O.

Memory is bounded by the trial's length (one bin per minute of its clock, 10,080 for 7 days),
never by the log's size. The rules:

- **Clock.** The lines' own timestamps (or, for CloudWatch Logs, each event's timestamp);
  else the elapsed time a progress bar prints; else the sum of the logged step times. The
  first kind seen is kept for the whole trial. The wall is the first to the last timed line.
- **Work.** Steps are the difference of logged step numbers; samples the difference of
  logged consumed samples, else steps × the global batch size (from the log, else given);
  tokens are samples × the sequence length (from the log, else given). The first logged step
  counts from 0 only when the next line shows the run began in this log (its step number is
  at most the logging interval); otherwise the log starts mid-run and counts from its first
  line. A step number that goes back is a restart: a failure, and the redone steps are not
  quality-meeting work (nor is work after the loss went non-finite).
- **Rates.** A line's own samples/s or tokens/s when its format says what it is in; else
  global batch / step time; else work / time between lines. One value per minute: the mean.
- **Progress bars count from the start**: a bar's `n` and its elapsed time both run from the
  run's (or the epoch's) start, so even a lone final bar (`50/50 [16:26<00:00]`) counts its
  work over its clock. A lone step line with its own step time (one Megatron line) counts its
  one step (× the global batch) over that step time.
- **Duplicates**: a step number that goes back to one already read, within two logging
  intervals, is another rank's copy (torchrun without prefixes), not a restart: skipped.
- **neuron_parallel_compile's trial run**: a training format's output between the start of a
  file that shows a trial run and the parallel compile's own lines is the trial run's (its
  losses and runtimes are meaningless): skipped, never counted.
- **Clock parts**: evaluation seconds (each evaluation once) and compile seconds (per file, the
  phase's wall time else its timed compiles; across files the longest) are parts of the wall.
  Without timestamps, the parts after the training's end (the final evaluation, a compile while
  saving, another file's compile) extend the clock; a compile inside a later evaluation is
  that evaluation's.
- **What the log lacks stays unmeasured**: a key with no observation has no series.

`reading()` gives what the log says figure by figure, with its lines and rules
(`metrics.logs.reading`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from trncost.metrics.cloudwatch import Series
from trncost.metrics.logs import events
from trncost.metrics.logs import series as result
from trncost.metrics.logs.base import EventKind, Step
from trncost.metrics.logs.lines import MAX_RANGES, Lines, merged
from trncost.metrics.logs.reading import Reading, ReadingState
from trncost.metrics.logs.series import (
    K_BAD_LOSS,
    K_LOSS,
    K_SAMPLES,
    K_SPS,
    K_STEP_TIME,
    K_STEPS,
    K_TOKENS,
    K_TPS,
    PERIOD_S,
)

TRIAL_RUN = (
    "neuron_parallel_compile's trial run: its training output (losses, runtimes, steps) is "
    "not training"
)
DUPLICATE = "a step already read, printed again (another rank's copy): not a restart"
INF = math.inf


class _Bin:
    """One minute of the trial: work done in it, and sums for its means."""

    __slots__ = (
        "steps", "samples", "tokens", "q_steps", "q_samples", "q_tokens",
        "sps_sum", "sps_n", "tps_sum", "tps_n", "st_sum", "st_n", "loss_sum", "loss_n", "bad_loss",
    )  # fmt: skip

    def __init__(self) -> None:
        self.steps = self.samples = self.tokens = 0.0
        self.q_steps = self.q_samples = self.q_tokens = 0.0
        self.sps_sum = self.tps_sum = self.st_sum = self.loss_sum = 0.0
        self.sps_n = self.tps_n = self.st_n = self.loss_n = self.bad_loss = 0


@dataclass
class Reject:
    count: int
    first_line: int
    file: str


class Timeline:
    """A Sink (`metrics.logs.base.Sink`) for every file of one trial."""

    def __init__(self, global_batch: float | None = None, seq_length: float | None = None):
        self.given_batch = global_batch
        self.given_seq = seq_length
        self.global_batch = global_batch
        self.seq_length = seq_length
        self.file = ""
        self.format = ""
        self.mode: str | None = None  # timestamps | elapsed | step_time
        self.bins: dict[int, _Bin] = {}
        self._direct: dict[tuple[str, str, str], Lines] = {}  # (key, file, format) → lines
        # the step path marks one Lines per (file, format, keys fed): one update a line
        self._groups: dict[tuple[str, str, tuple[str, ...]], Lines] = {}
        self._by_source: dict[tuple[str, str], dict[str, Lines]] = {}
        self._here: dict[str, Lines] = self._by_source.setdefault(("", ""), {})
        self.t_first: float | None = None
        self.t_last: float | None = None
        self.ev_first: float | None = None  # timed events (compile lines, ...)
        self.ev_last: float | None = None
        self.cum_s = 0.0
        self.prev_t: float | None = None
        self.prev_step: float | None = None
        self.max_step: float | None = None
        self.first_step: tuple[float, int] | None = None  # (number, bin)
        self.first_checked = False
        self.first_line = 0
        self.began_in_log = False  # the first logged step counts from 0
        self.first_step_t: float | None = None
        self.prev_samples: float | None = None
        self.max_samples: float | None = None
        self.first_samples: tuple[float, int] | None = None
        self.steps_seen = 0
        self.diverged = False
        self.failures = 0
        self.restores = 0
        self.errors = 0
        self.error_after_steps = False
        self.compile_hits = 0
        self.compile_misses = 0
        self.compile_s: list[float] = []
        self.compile_failed = 0
        self._compile_open: float | None = None
        self.saves = 0
        self.save_s: list[float] = []
        self._save_open: float | None = None
        self.evals: dict[str, tuple[float, int]] = {}
        self.ended = False
        self.runtime_s: float | None = None
        self.summary_sps: float | None = None
        self.final_loss: float | None = None
        self.rejects: dict[str, Reject] = {}
        self.notes: list[str] = []
        self.matched: dict[tuple[str, str], int] = {}  # (file, format) → lines matched
        self.state = ReadingState()
        self._src = ("", "")
        self.companion = False  # the current format is a companion (compile lines)
        self.trial_runs: dict[str, list[list[float]]] = {}  # file → [first, last] lines
        self.recent: deque[float] = deque(maxlen=16)  # step numbers lately read
        self.interval = 1.0  # the logging interval (steps between step lines)
        self.duplicates = 0
        self.lone: Step | None = None  # the first step line, for the lone-line rule
        self.numbers = 0  # distinct step numbers read
        self.eval_runs: list[tuple[str, int, float]] = []  # (file, line, seconds), each once
        self.training_end: tuple[str, int] | None = None  # (file, line) the training ended
        self.last_step_at: tuple[str, int] | None = None

    # -- bookkeeping -------------------------------------------------------------------------
    def use(self, file: str, fmt: str, companion: bool = False) -> None:
        if (file, fmt) != (self.file, self.format):
            self.file, self.format = file, fmt
            self._src = (file, fmt)
            self._here = self._by_source.setdefault((file, fmt), {})
        self.companion = companion

    def skip(self, line: int, why: str) -> None:
        self.state.skip(self.file, line, why)

    def _in_trial_run(self, line: int) -> bool:
        """The line is neuron_parallel_compile's trial run (a training format's, only)."""
        if self.companion:
            return False
        for first, last in self.trial_runs.get(self.file, ()):
            if first <= line <= last:
                self.skip(line, TRIAL_RUN)
                return True
        return False

    def _mark(self, key: str, line: int) -> None:
        self._marks(line, (key,))

    def _marks(self, line: int, keys: Sequence[str]) -> None:
        """`line` fed each of `keys` (Lines.add inlined for lines that come in order)."""
        here = self._here
        for key in keys:
            found = here.get(key)
            if found is None:
                found = here[key] = self._direct[(key, self.file, self.format)] = Lines()
            r = found.ranges
            if r and line > r[-1][1]:
                found.count += 1
                if line == r[-1][1] + 1 or len(r) >= MAX_RANGES:
                    r[-1][1] = line
                else:
                    r.append([line, line])
            else:
                found.add(line)

    @property
    def lines(self) -> dict[tuple[str, str, str], Lines]:
        """(key, file, format) → the lines that fed the key: events' and steps' merged."""
        parts: dict[tuple[str, str, str], list[Lines]] = {
            where: [found] for where, found in self._direct.items()
        }
        for (file, fmt, keys), found in self._groups.items():
            for key in keys:
                parts.setdefault((key, file, fmt), []).append(found)
        return {where: merged(found) for where, found in parts.items()}

    def reject(self, line: int, why: str) -> None:
        found = self.rejects.get(why)
        if found is None:
            self.rejects[why] = Reject(1, line, self.file)
        else:
            found.count += 1

    def _time(self, t: float | None) -> None:
        if t is None:
            return
        if self.t_first is None or t < self.t_first:
            self.t_first = t
        if self.t_last is None or t > self.t_last:
            self.t_last = t

    # -- steps -------------------------------------------------------------------------------
    def _step_clock(self, s: Step, d_steps: float | None) -> float | None:
        if s.at is not None and self.mode in (None, "timestamps"):
            self.mode = "timestamps"
            return s.at
        if s.elapsed_s is not None and self.mode in (None, "elapsed"):
            self.mode = "elapsed"
            return s.elapsed_s
        if s.step_time_s is not None and self.mode in (None, "step_time"):
            self.mode = "step_time"
            self.cum_s += s.step_time_s * (d_steps if d_steps and d_steps > 0 else 1)
            return self.cum_s
        return None

    def step(self, s: Step) -> None:  # noqa: C901 - the hot path, kept in one function
        line = s.line
        if self.trial_runs and self._in_trial_run(line):
            return
        number_ = s.step
        prev = self.prev_step
        if (
            number_ is not None
            and prev is not None
            and number_ < prev
            and number_ in self.recent
            and prev - number_ <= 2 * self.interval
        ):
            self.duplicates += 1
            self.skip(line, DUPLICATE)
            return
        self._read(s)
        self.steps_seen += 1
        self.last_step_at = (self.file, line)
        if self.lone is None:
            self.lone = s
        if s.global_batch is not None and self.given_batch is None:
            self.global_batch = s.global_batch
        if number_ is not None and prev is None and s.from_start and number_ > 0:
            self._from_zero(s)
            prev = self.prev_step
        d_steps = None
        q_steps = 0.0
        if number_ is not None and number_ != prev:
            self.numbers += 1
            self.recent.append(number_)
        if number_ is not None:
            if prev is not None:
                d_steps = number_ - prev
                if d_steps > 0:
                    self.interval = d_steps
                if d_steps < 0:
                    self.failures += 1
                    self.notes.append(
                        f"{self.file} line {line}: step {number_:g} after step {prev:g}: "
                        "training restarted from an earlier step (a failure)"
                    )
                    d_steps = 0.0
            top = self.max_step
            if top is None:
                self.max_step = number_
            elif number_ > top:
                if not self.diverged:
                    q_steps = number_ - top
                self.max_step = number_
        t = self._step_clock(s, d_steps)
        if t is not None:
            if self.t_first is None or t < self.t_first:
                self.t_first = t
            if self.t_last is None or t > self.t_last:
                self.t_last = t
            index = int(t // PERIOD_S)
        else:
            index = 0
        b = self.bins.get(index)
        if b is None:
            b = self.bins[index] = _Bin()
        if number_ is not None:
            if prev is None:
                self.first_step = (number_, index)
                self.first_line = line
                self.first_step_t = t
            elif not self.first_checked and d_steps:
                self._check_first(d_steps)
            self.prev_step = number_
        fed: list[str] = []
        if d_steps:
            b.steps += d_steps
            b.q_steps += q_steps
            fed.append(K_STEPS)
        d_samples = self._samples(s, b, index, d_steps, q_steps, fed)
        dt = None if t is None or self.prev_t is None else t - self.prev_t
        self.prev_t = t
        self._rates(s, b, d_steps, d_samples, dt, fed)
        loss = s.loss
        if loss is not None:
            if loss == loss and loss not in (INF, -INF):  # finite, without a call
                b.loss_sum += loss
                b.loss_n += 1
                fed.append(K_LOSS)
            else:
                b.bad_loss += 1
                self.diverged = True
                fed.append(K_BAD_LOSS)
        if fed:
            group_key = (self.file, self.format, tuple(fed))
            group = self._groups.get(group_key)
            if group is None:
                group = self._groups[group_key] = Lines()
            r = group.ranges
            if r and line > r[-1][1]:
                group.count += 1
                if line == r[-1][1] + 1 or len(r) >= MAX_RANGES:
                    r[-1][1] = line
                else:
                    r.append([line, line])
            else:
                group.add(line)

    def _from_zero(self, s: Step) -> None:
        """A progress bar's count and clock run from the start: its first line counts its
        work from 0 (a lone final bar included)."""
        self.prev_step = self.max_step = 0.0
        self.first_step = (0.0, 0)
        self.first_line = s.line
        self.first_checked = self.began_in_log = True
        self.first_step_t = 0.0
        if s.consumed_samples is not None:
            self.prev_samples = self.max_samples = 0.0
            self.first_samples = (0.0, 0)
        if s.at is None and s.elapsed_s is not None and self.mode in (None, "elapsed"):
            self.prev_t = 0.0

    def _read(self, s: Step) -> None:
        """The step line, kept for the reading (which takes each figure from the last step
        line that printed it): a reference per figure, no work per line."""
        st, src = self.state, self._src
        if s.step is not None or s.shown is not None:
            st.step_at = (s, src)
        if s.total is not None:
            st.total_at = (s, src)
        if s.rate is not None:
            st.rate_at = (s, src)
        if s.elapsed_s is not None:
            st.elapsed_at = (s, src)
        if s.global_batch is not None:
            st.batch_at = (s, src)
        if s.loss is not None:
            st.loss_at = (s, src)

    def _check_first(self, d_steps: float | None) -> None:
        """Count the first line's work from 0 when the run began in this log."""
        self.first_checked = True
        assert self.first_step is not None
        first, index = self.first_step
        if not (d_steps and 0 < first <= d_steps):
            if first > 0:
                self.notes.append(
                    f"{self.file}: the log starts at step {first:g}, mid-run: the work before "
                    "it is outside its clock and not counted"
                )
            return
        self.began_in_log = True
        for key in (K_STEPS, K_SAMPLES):
            self._mark(key, self.first_line)
        b = self.bins.setdefault(index, _Bin())
        b.steps += first
        b.q_steps += first
        if self.first_samples is not None:
            samples = self.first_samples[0]
        else:
            samples = first * self.global_batch if self.global_batch else 0.0
        b.samples += samples
        b.q_samples += samples
        if self.seq_length:
            b.tokens += samples * self.seq_length
            b.q_tokens += samples * self.seq_length

    def _samples(
        self,
        s: Step,
        b: _Bin,
        index: int,
        d_steps: float | None,
        q_steps: float,
        fed: list[str],
    ) -> float | None:
        d_samples = q_samples = None
        if s.consumed_samples is not None:
            if self.prev_samples is None:
                self.first_samples = (s.consumed_samples, index)
            else:
                d_samples = max(0.0, s.consumed_samples - self.prev_samples)
                top = self.max_samples or 0.0
                q_samples = max(0.0, s.consumed_samples - top) if not self.diverged else 0.0
            self.prev_samples = s.consumed_samples
            self.max_samples = max(self.max_samples or 0.0, s.consumed_samples)
        elif d_steps and self.global_batch:
            d_samples = d_steps * self.global_batch
            q_samples = q_steps * self.global_batch
        if d_samples:
            b.samples += d_samples
            b.q_samples += q_samples or 0.0
            fed.append(K_SAMPLES)
            if self.seq_length:
                b.tokens += d_samples * self.seq_length
                b.q_tokens += (q_samples or 0.0) * self.seq_length
                fed.append(K_TOKENS)
        return d_samples

    def _rates(
        self,
        s: Step,
        b: _Bin,
        d_steps: float | None,
        d_samples: float | None,
        dt: float | None,
        fed: list[str],
    ) -> None:
        step_time = s.step_time_s
        if step_time is None and d_steps and dt and dt > 0 and self.mode != "step_time":
            step_time = dt / d_steps
        if step_time is not None and step_time > 0:
            b.st_sum += step_time
            b.st_n += 1
            fed.append(K_STEP_TIME)
        sps = s.samples_per_s
        if sps is None and step_time and self.global_batch:
            sps = self.global_batch / step_time
        if sps is None and d_samples and dt and dt > 0 and self.mode != "step_time":
            sps = d_samples / dt
        if sps is not None and sps > 0:
            b.sps_sum += sps
            b.sps_n += 1
            fed.append(K_SPS)
        tps = s.tokens_per_s
        if tps is None and sps and self.seq_length:
            tps = sps * self.seq_length
        if tps is not None and tps > 0:
            b.tps_sum += tps
            b.tps_n += 1
            fed.append(K_TPS)

    # -- events (metrics.logs.events) -------------------------------------------------------
    def event(
        self,
        kind: EventKind,
        line: int,
        *,
        at: float | None = None,
        value: float | None = None,
        text: str | None = None,
    ) -> None:
        events.handle(self, kind, line, at=at, value=value, text=text)

    # -- the result (metrics.logs.series) ------------------------------------------------------
    @property
    def window(self) -> tuple[datetime, datetime] | None:
        """The wall clock of the trial (`metrics.logs.series.window`)."""
        return result.window(self)

    def parts(self) -> tuple[float | None, float | None, float]:
        """(compile, evaluation, after-the-end) seconds of the clock (`series.parts`)."""
        return result.parts(self)

    def series(self, eval_metric: str | None = None) -> dict[str, Series]:
        """Every measured key's series (work in the units the log allows)."""
        return result.series(self, eval_metric)

    def reading(self) -> Reading:
        """What the logs say, figure by figure (`metrics.logs.reading`)."""
        notes = []
        if self.duplicates:
            notes.append(
                f"{self.duplicates} step line(s) repeated a step already read (other ranks' "
                "copies): read once"
            )
        return self.state.reading(notes)

    def reject_notes(self) -> list[str]:
        return [
            f"{r.count} line(s) with {why} ignored (first: {r.file} line {r.first_line})"
            for why, r in self.rejects.items()
        ]
