"""Megatron-LM (and the trainers built on it: Megatron-DeepSpeed, NeMo's Megatron core on
GPU): the per-interval iteration line, checkpoint lines and the arguments dump.

` [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | elapsed
time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | learning rate:
1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | ... | number of nan
iterations:   0 |`

Read: iteration (steps), consumed samples (samples), elapsed time per iteration (the
interval's mean step time: the clock without timestamps is Σ step time × iterations),
global batch size (samples/s = global batch / step time, the maintainers' own formula:
NVIDIA/Megatron-LM#541, #755), lm loss, `number of nan iterations` (non-finite losses), the
timestamp some versions print first; `seq_length ....... 4096` of the arguments dump (tokens);
`saving checkpoint at iteration` / `successfully saved checkpoint` (saves; seconds when both
lines are timed); `loading checkpoint` (a restore: a restart when training had started);
`validation loss at iteration … | lm loss value: …` (an evaluation result named
`validation lm loss`); `[after training is done]`. TFLOP/s/GPU is model FLOPs, not work, and is
not read.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    EventKind,
    LogFormat,
    Sink,
    Step,
    duration,
    iso_time,
    number,
)

_ARG = re.compile(
    r"^\s*(?P<key>seq_length|global_batch_size|encoder_seq_length)\s+\.{3,}\s+(?P<v>\d+)\s*$"
)
_ITERATION = re.compile(r"iteration\s+(?P<it>\d+)\s*/\s*\d+\s*\|(?P<kv>.*)$")
# The fields of an iteration line, each found from its literal label (fast, order-free)
_CONSUMED = re.compile(r"consumed samples: +([^ |]+)")
_ELAPSED_MS = re.compile(r"elapsed time per iteration \(ms\): +([^ |]+)")
_BATCH = re.compile(r"global batch size: +([^ |]+)")
_LOSS = re.compile(r"\| (?:lm )?loss: +([^ |]+)")
_NAN = re.compile(r"number of nan iterations: +([^ |]+)")


# The iteration line as Megatron-LM has printed it since 2021, in one match (the fast path;
# any other order or set of fields falls back to one search per field)
_STANDARD = re.compile(
    r"iteration +(?P<it>\d+)/ *\d+ \| consumed samples: +(?P<cs>[^ |]+) \| elapsed time per "
    r"iteration \(ms\): +(?P<ms>[^ |]+) \|.*? global batch size: +(?P<gbs>[^ |]+) \| lm loss: "
    r"+(?P<loss>[^ |]+) \|.*?number of nan iterations: +(?P<nan>[^ |]+) \|"
)


_BULK = re.compile(
    rb"iteration +(?P<it>\d+)/ *\d+ \| consumed samples: +(?P<cs>[^ |\n]+) \| elapsed time per "
    rb"iteration \(ms\): +(?P<ms>[^ |\n]+) \|[^\n]* global batch size: +(?P<gbs>[^ |\n]+) \| "
    rb"lm loss: +(?P<loss>[^ |\n]+) \|[^\n]*number of nan iterations: +(?P<nan>[^ |\n]+) \|"
)  # greedy [^\n]*: each label is once in a line, and backtracking in C beats a lazy scan


_MINUTES: dict[bytes, float | None] = {}


def _stamp(prefix: bytes) -> float | None:
    """The `[YYYY-MM-DD HH:MM:SS]` Megatron prints before `iteration`: per-minute cache, then
    the seconds (a line's own timestamp in about half a microsecond); else the general reader."""
    i = prefix.find(b"[")
    if i >= 0 and prefix[i + 5 : i + 6] == b"-" and prefix[i + 20 : i + 21] == b"]":
        minute = prefix[i + 1 : i + 17]
        base = _MINUTES.get(minute)
        if base is None and minute not in _MINUTES:
            base = iso_time(minute.decode("ascii", "replace") + ":00", 0, 40)
            if len(_MINUTES) > 100_000:
                _MINUTES.clear()
            _MINUTES[minute] = base
        seconds = prefix[i + 18 : i + 20]
        if base is not None and seconds.isdigit():
            return base + int(seconds)
    return iso_time(prefix.decode("utf-8", "replace"), 0, 40)


def _float(raw: bytes | str | None) -> float | None:
    try:
        return None if raw is None else float(raw)
    except ValueError:
        return None


def _field(pattern: re.Pattern[str], line: str, pos: int) -> float | None:
    m = pattern.search(line, pos)
    return None if m is None else number(m.group(1))


_VALIDATION = re.compile(r"validation loss at iteration\s+\d+[^|]*\|\s*lm loss value:\s*(?P<v>\S+)")


class Megatron(LogFormat):
    name = "megatron"
    title = "Megatron-LM / Megatron-DeepSpeed / Megatron core (GPU or Neuron)"
    sample = (
        " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | "
        "elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | "
        "learning rate: 1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | "
        "loss scale: 1.0 | grad norm: 1.300 | number of skipped iterations:   0 | number of nan "
        "iterations:   0 |"
    )
    yields = (
        "steps (iteration), samples (consumed samples), step time and the clock (elapsed time "
        "per iteration, or the timestamps), samples/s (global batch / step time), tokens with "
        "seq_length, lm loss and nan iterations, checkpoint saves and restores, validation lm "
        "loss, the end of training"
    )
    # " checkpoint" covers saving / saved / loading checkpoint lines; " ....." the arguments
    # dump (`seq_length ........ 4096`): one pass over the buffer each
    keys = (b" iteration ", b" checkpoint", b"after training is done", b" .....")
    step_keys = (b"elapsed time per iteration",)
    bulk = _BULK
    # with the bulk regex reading the standard iteration lines, the keys left to find are the
    # rarer lines' (a non-standard iteration line still holds " iteration " with a "|")
    bulk_keys = (b"iteration |", b" checkpoint", b"after training is done", b" .....")

    def parse_match(self, m: re.Match[bytes], prefix: bytes, number_: int, sink: Sink) -> None:
        it, cs, ms, gbs, loss, nan = m.groups()
        seconds = _float(ms)
        if seconds is not None:
            seconds /= 1000
        sink.step(
            Step(
                line=number_,
                step=float(it),
                loss=float("nan") if _float(nan) else _float(loss),
                consumed_samples=duration(_float(cs), "consumed samples", number_, sink),
                step_time_s=duration(seconds, "step time", number_, sink),
                global_batch=_float(gbs),
                at=_stamp(prefix) if prefix else None,
            )
        )

    priority = 70

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        at = iso_time(line, 0, 40)
        fast = _STANDARD.search(line)
        if fast is not None:
            ms = number(fast.group("ms"))
            loss = number(fast.group("loss"))
            if number(fast.group("nan")):
                loss = float("nan")
            sink.step(
                Step(
                    line=number_,
                    step=float(fast.group("it")),
                    loss=loss,
                    consumed_samples=duration(
                        number(fast.group("cs")), "consumed samples", number_, sink
                    ),
                    step_time_s=duration(
                        None if ms is None else ms / 1000, "step time", number_, sink
                    ),
                    global_batch=number(fast.group("gbs")),
                    at=at,
                )
            )
            return True
        m = _ITERATION.search(line)
        if m is not None and "elapsed time per iteration" in line:
            pos = m.start("kv") - 1
            ms = _field(_ELAPSED_MS, line, pos)
            loss = _field(_LOSS, line, pos)
            if _field(_NAN, line, pos):
                loss = float("nan")
            sink.step(
                Step(
                    line=number_,
                    step=float(m.group("it")),
                    loss=loss,
                    consumed_samples=duration(
                        _field(_CONSUMED, line, pos), "consumed samples", number_, sink
                    ),
                    step_time_s=duration(
                        None if ms is None else ms / 1000, "step time", number_, sink
                    ),
                    global_batch=_field(_BATCH, line, pos),
                    at=at,
                )
            )
            return True
        arg = _ARG.match(line)
        if arg is not None:
            kind = (
                EventKind.global_batch
                if arg.group("key") == "global_batch_size"
                else (EventKind.seq_length)
            )
            sink.event(kind, number_, value=float(arg.group("v")))
            return True
        return self._other(line, number_, at, sink)

    def _other(self, line: str, number_: int, at: float | None, sink: Sink) -> bool:
        if "successfully saved checkpoint" in line:
            sink.event(EventKind.checkpoint_saved, number_, at=at)
        elif "saving checkpoint" in line:
            sink.event(EventKind.checkpoint_save, number_, at=at)
        elif "loading checkpoint" in line:
            sink.event(EventKind.checkpoint_restore, number_, at=at)
        elif "after training is done" in line:
            sink.event(EventKind.end, number_, at=at)
        else:
            v = _VALIDATION.search(line)
            if v is None:
                return False
            value = number(v.group("v"))
            if value is None:
                return False
            sink.event(EventKind.eval, number_, at=at, value=value, text="validation lm loss")
        return True
