"""A Timeline's result: its wall clock, the clock's parts and the series under the record's
keys (`metrics.logs.timeline` for the rules). Pure: no I/O."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from trncost.metrics import names as n
from trncost.metrics.cloudwatch import Series
from trncost.metrics.logs.base import Step
from trncost.metrics.logs.lines import Lines
from trncost.model.workload import WorkUnit

if TYPE_CHECKING:
    from trncost.metrics.logs.timeline import Timeline

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


def window(tl: Timeline) -> tuple[datetime, datetime] | None:
    """The wall clock of the trial: first to last timed line (absolute with timestamps,
    from ANCHOR otherwise, extended by the parts that came after the training's end)."""
    if tl.mode == "timestamps" and tl.t_first is not None and tl.t_last is not None:
        lo = min(tl.t_first, tl.ev_first if tl.ev_first is not None else tl.t_first)
        hi = max(tl.t_last, tl.ev_last if tl.ev_last is not None else tl.t_last)
        if hi > lo:
            return datetime.fromtimestamp(lo, tz=UTC), datetime.fromtimestamp(hi, tz=UTC)
        lone = lone_line(tl)
        if lone is None:
            return None
        return ANCHOR, ANCHOR + timedelta(seconds=lone)
    start, end = 0.0, None
    if tl.mode in ("elapsed", "step_time"):
        end = tl.t_last
        if not tl.began_in_log and tl.first_step_t is not None:
            start = tl.first_step_t  # mid-run: the clock starts at the first step line
    # the log's own runtime is the clock when it covers the work counted: the work runs from
    # the start (or there is no other clock); a mid-run excerpt keeps its own lines' clock
    if tl.runtime_s is not None and (
        end is None or (tl.began_in_log and tl.runtime_s > end - start)
    ):
        start, end = 0.0, tl.runtime_s
    if end is None or end <= start:
        lone = lone_line(tl)
        if lone is None:
            return None
        start, end = 0.0, lone
    end += parts(tl)[2]
    return ANCHOR + timedelta(seconds=start), ANCHOR + timedelta(seconds=end)


def lone_line(tl: Timeline) -> float | None:
    """The step time of a log whose only step line counts no work by itself (one Megatron
    or NeMo 2 line): its own step stands for the work (None when the rule does not apply)."""
    s = tl.lone
    if (
        s is None
        or tl.numbers > 1
        or tl.runtime_s is not None
        or s.step_time_s is None
        or s.step_time_s <= 0
        or any(b.steps or b.samples for b in tl.bins.values())
    ):
        return None
    return s.step_time_s


def parts(tl: Timeline) -> tuple[float | None, float | None, float]:
    """(compile seconds, evaluation seconds, seconds after the training's end) of the
    clock: each evaluation once; compile per file (its phase's wall time, else its timed
    compiles) and across files the longest; without timestamps the parts after the
    training's end (or in another file) lie outside the training clock and extend it, and
    a compile inside a later evaluation is that evaluation's."""
    fig = tl.state.compile_seconds()
    compile_total = float(fig.value) if fig is not None else None
    eval_total = math.fsum(v for _, _, v in tl.eval_runs) if tl.eval_runs else None
    if tl.mode == "timestamps":
        return compile_total, eval_total, 0.0
    end = tl.training_end or tl.last_step_at
    if end is None:
        return compile_total, eval_total, 0.0

    def after(file: str, line: int) -> bool:
        return file != end[0] or line > end[1]

    outside_evals = [(f, li, v) for f, li, v in tl.eval_runs if after(f, li)]
    last_eval = max((li for f, li, _ in outside_evals if f == end[0]), default=0)
    outside_compile = in_eval = 0.0
    if fig is not None and compile_total:
        if fig.file != end[0]:
            outside_compile = compile_total
        else:
            for line, seconds in tl.state.compile_items(fig.file):
                if line > end[1]:
                    if line < last_eval:
                        in_eval += seconds
                    else:
                        outside_compile += seconds
    outside_eval = math.fsum(v for _, _, v in outside_evals)
    in_eval = min(in_eval, outside_eval)
    if eval_total is not None:
        eval_total = max(eval_total - in_eval, 0.0)
    return compile_total, eval_total, outside_eval + outside_compile  # in_eval: inside the eval


def _stamp(tl: Timeline, index: int) -> datetime:
    if lone_line(tl) is not None:
        return ANCHOR
    if tl.mode == "timestamps":
        return datetime.fromtimestamp(index * PERIOD_S, tz=UTC)
    return ANCHOR + timedelta(seconds=index * PERIOD_S)


def _series(key: str, points: list[tuple[datetime, float]]) -> Series:
    points.sort(key=lambda p: p[0])
    return Series(
        id=key,
        period=PERIOD_S,
        timestamps=tuple(t for t, _ in points),
        values=tuple(v for _, v in points),
        label="log",
    )


def _binned(tl: Timeline) -> Iterator[tuple[str, list[tuple[datetime, float]]]]:
    per_key: dict[str, list[tuple[datetime, float]]] = {}

    def put(key: str, t: datetime, v: float) -> None:
        per_key.setdefault(key, []).append((t, v))

    for index, b in tl.bins.items():
        t = _stamp(tl, index)
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


def series(tl: Timeline, eval_metric: str | None = None) -> dict[str, Series]:
    """Every measured key's series (work in the units the log allows)."""
    out = {key: _series(key, pts) for key, pts in _binned(tl)}
    clock = window(tl)
    start = clock[0] if clock else ANCHOR

    def one(key: str, values: list[float]) -> None:
        out[key] = _series(key, [(start, v) for v in values])

    compile_total, eval_total, _ = parts(tl)
    if compile_total is not None:
        one(n.COMPILE_SECONDS.key, [compile_total])
    if eval_total is not None:
        one(n.EVALUATION_SECONDS.key, [eval_total])
    lone = lone_line(tl)
    if lone is not None and tl.lone is not None:
        _lone_series(tl, tl.lone, lone, one)
    if tl.compile_hits or tl.compile_misses:
        one(n.COMPILE_CACHE_HIT.key, [0.0 if tl.compile_misses else 1.0])
    if tl.save_s:
        one(n.CHECKPOINT_SAVE_SECONDS.key, tl.save_s)
    if tl.saves:
        one(n.CHECKPOINT_SAVES.key, [float(tl.saves)])
    if tl.steps_seen:
        # the formats read recognise restart and resume lines: none seen is a measurement
        one(n.FAILURES.key, [float(tl.failures)])
        one(n.ERRORS.key, [float(tl.errors)])
        _mark_all(tl, n.FAILURES.key)
    if tl.summary_sps is not None and _steps_per_second(tl):
        pass  # transformers 4.6's steps/s under the samples/s name: the steps carry the work
    elif tl.summary_sps is not None and n.SAMPLES_PER_SECOND.key not in out:
        one(n.SAMPLES_PER_SECOND.key, [tl.summary_sps])
        if tl.runtime_s and not any(
            n.WORK_DONE[u].key in out for u in (WorkUnit.samples, WorkUnit.steps)
        ):
            samples = tl.summary_sps * tl.runtime_s
            one(n.WORK_DONE[WorkUnit.samples].key, [samples])
            tl.notes.append(
                f"samples = the log's own average {tl.summary_sps:g}/s × its runtime "
                f"{tl.runtime_s:g} s = {samples:,.0f} (no per-step counts in the log)"
            )
    if tl.final_loss is not None and n.TRAINING_LOSS.key not in out:
        finite_loss = math.isfinite(tl.final_loss)
        if finite_loss:
            one(n.TRAINING_LOSS.key, [tl.final_loss])
        one(n.NON_FINITE_LOSS.key, [0.0 if finite_loss else 1.0])
    if eval_metric and eval_metric in tl.evals:
        one(n.EVAL_METRIC.key, [tl.evals[eval_metric][0]])
    return out


def _steps_per_second(tl: Timeline) -> bool:
    """The summary's "samples per second" is the run's steps over its runtime (transformers
    4.6 printed steps/s under train_samples_per_second): a note says so, it is not samples."""
    sps, runtime, steps = tl.summary_sps, tl.runtime_s, tl.max_step
    if not (sps and runtime and steps) or abs(steps / runtime - sps) > 0.005 * sps:
        return False
    if tl.global_batch != 1:
        note = (
            f"train_samples_per_second {sps:g} is the run's {steps:g} steps / its "
            f"{runtime:g} s runtime: steps per second (transformers 4.6 printed them under "
            "that name), not samples"
        )
        if note not in tl.notes:
            tl.notes.append(note)
    return True


def _lone_series(
    tl: Timeline, s: Step, step_time: float, one: Callable[[str, list[float]], None]
) -> None:
    batch = s.global_batch or tl.global_batch
    one(K_STEPS, [1.0])
    one(n.WORK_QUALITY[WorkUnit.steps].key, [1.0])
    one(K_STEP_TIME, [step_time])
    fed = [K_STEPS, K_STEP_TIME]
    if batch:
        one(K_SAMPLES, [batch])
        one(n.WORK_QUALITY[WorkUnit.samples].key, [batch])
        one(K_SPS, [batch / step_time])
        fed += [K_SAMPLES, K_SPS]
        if tl.seq_length:
            one(K_TOKENS, [batch * tl.seq_length])
            one(n.WORK_QUALITY[WorkUnit.tokens].key, [batch * tl.seq_length])
            one(K_TPS, [batch * tl.seq_length / step_time])
            fed += [K_TOKENS, K_TPS]
    group = tl._groups.setdefault((tl.file, tl.format, tuple(fed)), Lines())
    if not group.ranges:
        group.add(s.line)
    note = (
        "one step line counts its own step"
        + (f" ({batch:g} samples)" if batch else "")
        + f" over its own step time ({step_time:g} s): the log shows no other"
    )
    if note not in tl.notes:
        tl.notes.append(note)


def _mark_all(tl: Timeline, key: str) -> None:
    """A zero the formats measure by their silence: the lines that were read make it."""
    current = tl.lines
    if not any(k == key for k, _, _ in current):
        for (k, file, fmt), lines in current.items():
            if k in (K_STEPS, K_STEP_TIME):
                copy = Lines([list(r) for r in lines.ranges], 0)
                tl._direct[(key, file, fmt)] = copy
                tl._by_source.setdefault((file, fmt), {})[key] = copy
