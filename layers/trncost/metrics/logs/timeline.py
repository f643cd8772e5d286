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
- **What the log lacks stays unmeasured**: a key with no observation has no series.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from trncost.metrics import names as n
from trncost.metrics.cloudwatch import Series
from trncost.metrics.logs.base import EventKind, Step
from trncost.metrics.logs.lines import MAX_RANGES, Lines, merged
from trncost.model.workload import WorkUnit

PERIOD_S = 60
ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)  # where a relative clock (no timestamps) starts
# the keys, looked up once (the step path runs once per logged line)
K_STEPS = n.WORK_DONE[WorkUnit.steps].key
K_SAMPLES = n.WORK_DONE[WorkUnit.samples].key
K_TOKENS = n.WORK_DONE[WorkUnit.tokens].key
K_STEP_TIME = n.STEP_TIME.key
K_SPS = n.SAMPLES_PER_SECOND.key
K_TPS = n.TOKENS_PER_SECOND.key
K_LOSS = n.TRAINING_LOSS.key
K_BAD_LOSS = n.NON_FINITE_LOSS.key
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

    # -- bookkeeping -------------------------------------------------------------------------
    def use(self, file: str, fmt: str) -> None:
        if (file, fmt) != (self.file, self.format):
            self.file, self.format = file, fmt
            self._here = self._by_source.setdefault((file, fmt), {})

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
        self.steps_seen += 1
        if s.global_batch is not None and self.given_batch is None:
            self.global_batch = s.global_batch
        d_steps = None
        q_steps = 0.0
        number_ = s.step
        prev = self.prev_step
        if number_ is not None:
            if prev is not None:
                d_steps = number_ - prev
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

    # -- events ------------------------------------------------------------------------------
    def event(  # noqa: C901 - one branch per event kind
        self,
        kind: EventKind,
        line: int,
        *,
        at: float | None = None,
        value: float | None = None,
        text: str | None = None,
    ) -> None:
        if at is not None:
            self.ev_first = at if self.ev_first is None else min(self.ev_first, at)
            self.ev_last = at if self.ev_last is None else max(self.ev_last, at)
        if kind == EventKind.compile_start:
            self._compile_open = at
        elif kind == EventKind.compile_end:
            self.compile_misses += 1
            opened, self._compile_open = self._compile_open, None
            if opened is not None and at is not None and at >= opened:
                self.compile_s.append(at - opened)
                self._mark(n.COMPILE_SECONDS.key, line)
            self._mark(n.COMPILE_CACHE_HIT.key, line)
        elif kind == EventKind.compile_seconds and value is not None:
            self.compile_misses += 1
            self.compile_s.append(value)
            self._mark(n.COMPILE_SECONDS.key, line)
        elif kind == EventKind.compiled and value:
            self.compile_misses += int(value)
            self._mark(n.COMPILE_CACHE_HIT.key, line)
        elif kind == EventKind.final_loss and value is not None:
            self.final_loss = value
            self._mark(n.TRAINING_LOSS.key if math.isfinite(value) else n.NON_FINITE_LOSS.key, line)
        elif kind == EventKind.compile_hit:
            self.compile_hits += 1
            self._mark(n.COMPILE_CACHE_HIT.key, line)
        elif kind == EventKind.compile_failed and value:
            self.compile_failed += int(value)
            self.errors += int(value)
            self._mark(n.ERRORS.key, line)
        elif kind == EventKind.checkpoint_save:
            self.saves += 1
            self._save_open = at
            if value is not None:
                self.save_s.append(value)
                self._mark(n.CHECKPOINT_SAVE_SECONDS.key, line)
            self._mark(n.CHECKPOINT_SAVES.key, line)
        elif kind == EventKind.checkpoint_saved:
            opened, self._save_open = self._save_open, None
            if opened is not None and at is not None and at >= opened:
                self.save_s.append(at - opened)
                self._mark(n.CHECKPOINT_SAVE_SECONDS.key, line)
        elif kind == EventKind.checkpoint_restore:
            self.restores += 1
            if self.steps_seen:
                self.failures += 1
                self.notes.append(
                    f"{self.file} line {line}: resumed from a checkpoint after training had "
                    "started: counted as a failure and restart"
                )
            self._mark(n.FAILURES.key, line)
        elif kind == EventKind.eval and text is not None and value is not None:
            self.evals[text] = (value, line)
            self._mark(f"eval:{text}", line)
        elif kind == EventKind.error:
            self.errors += 1
            self.error_after_steps = self.steps_seen > 0
            self._mark(n.ERRORS.key, line)
        elif kind == EventKind.end:
            self.ended = True
        elif kind == EventKind.runtime and value is not None:
            self.runtime_s = value
            self._mark("runtime", line)
        elif kind == EventKind.samples_per_second and value is not None:
            self.summary_sps = value
            self._mark(K_SPS, line)
        elif kind == EventKind.global_batch and value and self.given_batch is None:
            self.global_batch = value
        elif kind == EventKind.seq_length and value and self.given_seq is None:
            self.seq_length = value

    # -- the result --------------------------------------------------------------------------
    @property
    def window(self) -> tuple[datetime, datetime] | None:
        """The wall clock of the trial: first to last timed line (absolute with timestamps,
        from ANCHOR otherwise)."""
        if self.mode == "timestamps" and self.t_first is not None and self.t_last is not None:
            lo = min(self.t_first, self.ev_first if self.ev_first is not None else self.t_first)
            hi = max(self.t_last, self.ev_last if self.ev_last is not None else self.t_last)
            if hi > lo:
                return datetime.fromtimestamp(lo, tz=UTC), datetime.fromtimestamp(hi, tz=UTC)
            return None
        start, end = 0.0, None
        if self.mode in ("elapsed", "step_time"):
            end = self.t_last
            if not self.began_in_log and self.first_step_t is not None:
                start = self.first_step_t  # mid-run: the clock starts at the first step line
        if self.runtime_s is not None and (end is None or self.runtime_s > end - start):
            start, end = 0.0, self.runtime_s
        if end is None or end <= start:
            return None
        return ANCHOR + timedelta(seconds=start), ANCHOR + timedelta(seconds=end)

    def _stamp(self, index: int) -> datetime:
        if self.mode == "timestamps":
            return datetime.fromtimestamp(index * PERIOD_S, tz=UTC)
        return ANCHOR + timedelta(seconds=index * PERIOD_S)

    def _series(self, key: str, points: list[tuple[datetime, float]]) -> Series:
        points.sort(key=lambda p: p[0])
        return Series(
            id=key,
            period=PERIOD_S,
            timestamps=tuple(t for t, _ in points),
            values=tuple(v for _, v in points),
            label="log",
        )

    def _binned(self) -> Iterator[tuple[str, list[tuple[datetime, float]]]]:
        per_key: dict[str, list[tuple[datetime, float]]] = {}

        def put(key: str, t: datetime, v: float) -> None:
            per_key.setdefault(key, []).append((t, v))

        for index, b in self.bins.items():
            t = self._stamp(index)
            for unit, done, quality in (
                (WorkUnit.steps, b.steps, b.q_steps),
                (WorkUnit.samples, b.samples, b.q_samples),
                (WorkUnit.tokens, b.tokens, b.q_tokens),
            ):
                if done:
                    put(n.WORK_DONE[unit].key, t, done)
                    put(n.WORK_QUALITY[unit].key, t, quality)
            if b.sps_n:
                put(n.SAMPLES_PER_SECOND.key, t, b.sps_sum / b.sps_n)
            if b.tps_n:
                put(n.TOKENS_PER_SECOND.key, t, b.tps_sum / b.tps_n)
            if b.st_n:
                put(n.STEP_TIME.key, t, b.st_sum / b.st_n)
            if b.loss_n:
                put(n.TRAINING_LOSS.key, t, b.loss_sum / b.loss_n)
            if b.loss_n or b.bad_loss:
                put(n.NON_FINITE_LOSS.key, t, b.bad_loss)
        yield from per_key.items()

    def series(self, eval_metric: str | None = None) -> dict[str, Series]:
        """Every measured key's series (work in the units the log allows)."""
        out = {key: self._series(key, pts) for key, pts in self._binned()}
        window = self.window
        start = window[0] if window else ANCHOR

        def one(key: str, values: list[float]) -> None:
            out[key] = self._series(key, [(start, v) for v in values])

        if self.compile_s:
            one(n.COMPILE_SECONDS.key, self.compile_s)
        if self.compile_hits or self.compile_misses:
            one(n.COMPILE_CACHE_HIT.key, [0.0 if self.compile_misses else 1.0])
        if self.save_s:
            one(n.CHECKPOINT_SAVE_SECONDS.key, self.save_s)
        if self.saves:
            one(n.CHECKPOINT_SAVES.key, [float(self.saves)])
        if self.steps_seen:
            # the formats read recognise restart and resume lines: none seen is a measurement
            one(n.FAILURES.key, [float(self.failures)])
            one(n.ERRORS.key, [float(self.errors)])
            self._mark_all(n.FAILURES.key)
        if self.summary_sps is not None and n.SAMPLES_PER_SECOND.key not in out:
            one(n.SAMPLES_PER_SECOND.key, [self.summary_sps])
            if self.runtime_s and not any(
                n.WORK_DONE[u].key in out for u in (WorkUnit.samples, WorkUnit.steps)
            ):
                samples = self.summary_sps * self.runtime_s
                one(n.WORK_DONE[WorkUnit.samples].key, [samples])
                self.notes.append(
                    f"samples = the log's own average {self.summary_sps:g}/s × its runtime "
                    f"{self.runtime_s:g} s = {samples:,.0f} (no per-step counts in the log)"
                )
        if self.final_loss is not None and n.TRAINING_LOSS.key not in out:
            finite_loss = math.isfinite(self.final_loss)
            if finite_loss:
                one(n.TRAINING_LOSS.key, [self.final_loss])
            one(n.NON_FINITE_LOSS.key, [0.0 if finite_loss else 1.0])
        if eval_metric and eval_metric in self.evals:
            one(n.EVAL_METRIC.key, [self.evals[eval_metric][0]])
        return out

    def _mark_all(self, key: str) -> None:
        """A zero the formats measure by their silence: the lines that were read make it."""
        current = self.lines
        if not any(k == key for k, _, _ in current):
            for (k, file, fmt), lines in current.items():
                if k in (K_STEPS, K_STEP_TIME):
                    copy = Lines([list(r) for r in lines.ranges], 0)
                    self._direct[(key, file, fmt)] = copy
                    self._by_source.setdefault((file, fmt), {})[key] = copy

    def reject_notes(self) -> list[str]:
        return [
            f"{r.count} line(s) with {why} ignored (first: {r.file} line {r.first_line})"
            for why, r in self.rejects.items()
        ]
