"""What a Timeline does with each event a format reports (`metrics.logs.base.EventKind`):
compile, checkpoint, evaluation, summary and end events, neuron_parallel_compile's trial run.
Pure: no I/O."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from trncost.metrics import names as n
from trncost.metrics.logs.base import EventKind, Step
from trncost.metrics.logs.series import K_SPS

if TYPE_CHECKING:
    from trncost.metrics.logs.timeline import Timeline

INF = math.inf
_COMPILE_KINDS = frozenset(
    {
        EventKind.compile_start,
        EventKind.compile_end,
        EventKind.compile_seconds,
        EventKind.compile_wall,
        EventKind.compiled,
        EventKind.compile_hit,
        EventKind.compile_failed,
    }
)


def _count(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def handle(  # noqa: C901 - one branch per event kind
    tl: Timeline,
    kind: EventKind,
    line: int,
    *,
    at: float | None = None,
    value: float | None = None,
    text: str | None = None,
) -> None:
    if kind == EventKind.trial_run:
        _trial_run(tl, line, bool(value))
        return
    if tl.trial_runs and tl._in_trial_run(line):
        return
    if at is not None:
        tl.ev_first = at if tl.ev_first is None else min(tl.ev_first, at)
        tl.ev_last = at if tl.ev_last is None else max(tl.ev_last, at)
    st, file, fmt = tl.state, tl.file, tl.format
    if kind in _COMPILE_KINDS:
        _compile_event(tl, kind, line, at, value, text)
    elif kind == EventKind.final_loss and value is not None:
        tl.final_loss = value
        tl._mark(n.TRAINING_LOSS.key if math.isfinite(value) else n.NON_FINITE_LOSS.key, line)
    elif kind == EventKind.loss and value is not None:
        tl.step(Step(line=line, loss=value, at=at, rule=text))
    elif kind in (EventKind.checkpoint_save, EventKind.checkpoint_saved):
        _save_event(tl, kind, line, at, value)
    elif kind == EventKind.checkpoint_restore:
        tl.restores += 1
        if tl.steps_seen:
            tl.failures += 1
            tl.notes.append(
                f"{tl.file} line {line}: resumed from a checkpoint after training had "
                "started: counted as a failure and restart"
            )
        tl._mark(n.FAILURES.key, line)
    elif kind == EventKind.eval and text is not None and value is not None:
        tl.evals[text] = (value, line)
        tl._mark(f"eval:{text}", line)
    elif kind == EventKind.eval_seconds and value is not None:
        if (text or "").startswith("block:") and any(
            f == file and abs(v - value) <= 0.01 for f, _, v in tl.eval_runs
        ):
            return  # a metrics block repeating an evaluation's logged dict
        if (file, text or str(line)) not in st.evals:
            tl.eval_runs.append((file, line, value))
            tl._mark(n.EVALUATION_SECONDS.key, line)
        st.evaluation(file, fmt, line, value, text or str(line))
    elif kind == EventKind.error:
        tl.errors += 1
        tl.error_after_steps = tl.steps_seen > 0
        tl._mark(n.ERRORS.key, line)
    elif kind == EventKind.end:
        tl.ended = True
        if st.end is None:
            st.end = st.seen(True, file, fmt, line, text or "the log shows training's end")
    elif kind == EventKind.stopped:
        st.stopped = st.seen(False, file, fmt, line, text or "the log says training stopped")
    elif kind == EventKind.runtime and value is not None:
        if tl.runtime_s is None:  # the first: another rank's copy may follow
            tl.runtime_s = value
            tl.training_end = (file, line)
            tl._mark("runtime", line)
            st.runtime = st.seen(value, file, fmt, line, text or "the run's own train_runtime")
    elif kind == EventKind.samples_per_second and value is not None:
        if tl.summary_sps is None:
            tl.summary_sps = value
            tl._mark(K_SPS, line)
            st.summary_rate = st.seen(
                value, file, fmt, line, text or "the run's own average (a summary)",
                "samples/s",
            )  # fmt: skip
    elif kind == EventKind.throughput and value is not None and value > 0:
        st.rate = st.seen(value, file, fmt, line, "the log's own throughput line", text)
    elif kind == EventKind.global_batch and value:
        st.batch = st.seen(_count(value), file, fmt, line, text or f"{fmt}'s batch size")
        if tl.given_batch is None:
            tl.global_batch = value
    elif kind == EventKind.seq_length and value:
        st.seq = st.seen(_count(value), file, fmt, line, text or f"{fmt}'s sequence length")
        if tl.given_seq is None:
            tl.seq_length = value
    elif kind == EventKind.steps_total and value is not None and value != value:
        st.total = st.total_at = None  # NaN: a later epoch began, the total is unknown
        st.total_reset = True
    elif kind == EventKind.steps_total and value:
        st.total_line = st.seen(_count(value), file, fmt, line, text or "the planned steps")
    elif kind == EventKind.steps_done and value is not None:
        st.steps_done = st.seen(_count(value), file, fmt, line, text or "the run's step count")


def _trial_run(tl: Timeline, line: int, begins: bool) -> None:
    runs = tl.trial_runs.setdefault(tl.file, [])
    if begins:
        if not runs or runs[-1][1] != INF:
            first = runs[-1][1] + 1 if runs else 1
            runs.append([first, INF])
    elif runs and runs[-1][1] == INF:
        runs[-1][1] = line


def _compile_event(
    tl: Timeline,
    kind: EventKind,
    line: int,
    at: float | None,
    value: float | None,
    text: str | None,
) -> None:
    st, file, fmt = tl.state, tl.file, tl.format
    if kind == EventKind.compile_start:
        tl._compile_open = at
        st.cache(False, file, fmt, line)
    elif kind == EventKind.compile_end:
        tl.compile_misses += 1
        opened, tl._compile_open = tl._compile_open, None
        if opened is not None and at is not None and at >= opened:
            tl.compile_s.append(at - opened)
            st.compile_span(file, line, at - opened)
            tl._mark(n.COMPILE_SECONDS.key, line)
        st.cache(False, file, fmt, line)
        tl._mark(n.COMPILE_CACHE_HIT.key, line)
    elif kind in (EventKind.compile_seconds, EventKind.compile_wall) and value is not None:
        tl.compile_s.append(value)
        if text == "whole":  # the whole command's time: it holds the phases read so far
            st.compile_walls.pop(file, None)
        st.compile_wall(file, line, value)
        tl._mark(n.COMPILE_SECONDS.key, line)
        if kind == EventKind.compile_seconds:
            tl.compile_misses += 1
            st.cache(False, file, fmt, line)
    elif kind == EventKind.compiled and value:
        tl.compile_misses += int(value)
        st.cache(False, file, fmt, line)
        tl._mark(n.COMPILE_CACHE_HIT.key, line)
    elif kind == EventKind.compile_hit:
        tl.compile_hits += 1
        st.cache(True, file, fmt, line)
        tl._mark(n.COMPILE_CACHE_HIT.key, line)
    elif kind == EventKind.compile_failed and value:
        tl.compile_failed += int(value)
        tl.errors += int(value)
        tl._mark(n.ERRORS.key, line)


def _save_event(
    tl: Timeline, kind: EventKind, line: int, at: float | None, value: float | None
) -> None:
    if kind == EventKind.checkpoint_save:
        tl.saves += 1
        tl._save_open = at
        if value is not None:
            tl.save_s.append(value)
            tl._mark(n.CHECKPOINT_SAVE_SECONDS.key, line)
        tl._mark(n.CHECKPOINT_SAVES.key, line)
    else:
        opened, tl._save_open = tl._save_open, None
        if opened is not None and at is not None and at >= opened:
            tl.save_s.append(at - opened)
            tl._mark(n.CHECKPOINT_SAVE_SECONDS.key, line)
