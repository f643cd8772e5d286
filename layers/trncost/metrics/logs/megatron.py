"""Megatron-LM (and the trainers built on it: Megatron-DeepSpeed, NeMo's Megatron core on
GPU, Neuron's reference Megatron-LM): the per-interval iteration line, checkpoint lines and the
arguments dump.

` [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | elapsed
time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | learning rate:
1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | ... | number of nan
iterations:   0 |`, and its variants: `lm-loss` with a hyphen, elapsed time in seconds
(`(s): 105.16`, BLOOM), no `lm loss` (an interval whose every step loss scaling skipped, or a
NaN), no skipped/nan counters, extra loss keys (`mtp_1 loss`, `load_balancing_loss`, `dummy
loss`), `samples per second:` and `actual seqlen:` (Megatron-DeepSpeed), Neuron's trailing
`throughput: 7.340` (sequences/s) in backticks, `iteration        2/250000000`, a launcher
prefix (`[default7]:`), and lines a terminal hard-wrapped mid-label (`number of sk` /
`ipped iterations`): joined back before they are read.

Read: iteration i/N (steps done and planned), consumed samples (samples), elapsed time per
iteration (the interval's mean step time: the clock without timestamps is Σ step time ×
iterations), global batch size (samples/s = global batch / step time, the maintainers' own
formula: NVIDIA/Megatron-LM#541, #755, unless the line prints its own), lm loss, `number of nan
iterations` (non-finite losses), the timestamp some versions print first; `seq_length .......
4096` of the arguments dump or `actual seqlen` (tokens); `saving checkpoint at iteration` /
`successfully saved checkpoint` (saves; seconds when both lines are timed); `loading
checkpoint` (a restore: a restart when training had started); `validation loss at iteration …
| lm loss value: …` (an evaluation result named `validation lm loss`); `[after training is
done]`. TFLOP/s/GPU is model FLOPs, not work, and is not read.
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
_ITERATION = re.compile(r"iteration\s*(?P<it>\d+)\s*/\s*(?P<total>\d+)\s*\|(?P<kv>.*)$", re.S)
# The fields of an iteration line, each found from its literal label (order-free; `\s*` between
# words: a hard wrap joined back may have split a label anywhere)
_CONSUMED = re.compile(r"consumed\s*samples:\s*([^ |]+)")
_ELAPSED = re.compile(r"elapsed\s*time\s*per\s*iteration\s*\((?P<unit>ms|s)\)\s*:\s*([^ |]+)")
_BATCH = re.compile(r"global\s*batch\s*size:\s*([^ |]+)")
_LOSS = re.compile(r"\|\s*(?:lm[\s-]*)?loss:\s*([^ |`]+)")
_NAN = re.compile(r"number\s*of\s*nan\s*iterations:\s*([^ |]+)")
_SPS = re.compile(r"samples\s*per\s*second:\s*([^ |`]+)")
_THROUGHPUT = re.compile(r"\|\s*throughput:\s*([^ |`]+)")  # Neuron's reference: sequences/s
_SEQLEN = re.compile(r"actual\s*seqlen:\s*(\d+)")
_TAIL = re.compile(r":\s*[-+]?[\d.]+(?:[eE][-+]?\d+)?\s*`?\s*$")  # ends with `key: value`
INF = float("inf")
RULE = "Megatron's iteration line (iteration i/N, its interval's step time)"


# The iteration line as Megatron-LM has printed it since 2021, in one match (the fast path;
# any other order or set of fields falls back to one search per field)
_STANDARD = re.compile(
    r"iteration +(?P<it>\d+)/ *(?P<total>\d+) \| consumed samples: +(?P<cs>[^ |]+) \| elapsed "
    r"time per iteration \(ms\): +(?P<ms>[^ |]+) \|[^\r\n]*? global batch size: +(?P<gbs>[^ |]+) \|"
    r" lm loss: +(?P<loss>[^ |]+) \|[^\r\n]*?number of nan iterations: +(?P<nan>[^ |]+) \|"
)


_BULK = re.compile(
    rb"iteration +(?P<it>\d+)/ *(?P<total>\d+) \| consumed samples: +(?P<cs>[^ |\n]+) \| "
    rb"elapsed time per iteration \(ms\): +(?P<ms>[^ |\n]+) \|[^\n]* global batch size: "
    rb"+(?P<gbs>[^ |\n]+) \| lm loss: +(?P<loss>[^ |\n]+) \|[^\n]*number of nan iterations: "
    rb"+(?P<nan>[^ |\n]+) \|(?: samples per second: +(?P<sps>[^ |\n]+))?"
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
        "steps (iteration i/N), samples (consumed samples), step time and the clock (elapsed "
        "time per iteration, in ms or s, or the timestamps), samples/s (its own `samples per "
        "second` or Neuron's `throughput:`, else global batch / step time), tokens with "
        "seq_length, lm loss and nan iterations, checkpoint saves and restores, validation lm "
        "loss, the end of training"
    )
    # "iteration " covers every iteration line (and validation lines), " checkpoint" the
    # saving / saved / loading checkpoint lines, " ....." the arguments dump
    keys = (b"iteration ", b" checkpoint", b"after training is done", b" .....")
    step_keys = (b"elapsed time per iteration",)
    bulk = _BULK
    # beside the bulk regex: the rarer lines' keys, and any iteration line it did not match
    bulk_keys = (b"validation loss at", b" checkpoint", b"after training is done", b" .....")
    bulk_rest = re.compile(rb"iteration\s*\d+\s*/\s*\d+\s*\|")
    priority = 70
    splittable = True

    def parse_match(self, m: re.Match[bytes], prefix: bytes, number_: int, sink: Sink) -> None:
        it, total, cs, ms, gbs, loss, nan, sps = m.groups()
        consumed: float | None
        seconds: float | None
        batch: float | None
        value: float | None
        rate: float | None
        try:  # the common line: every number well formed, none negative
            consumed, seconds, batch = float(cs), float(ms) / 1000, float(gbs)
            value = float(loss) if nan == b"0" else float("nan") if float(nan) else float(loss)
            rate = None if sps is None else float(sps)
        except ValueError:
            consumed = seconds = batch = value = rate = None
        if consumed is None or seconds is None or consumed < 0 or not 0 <= seconds < INF:
            raw = _float(ms)
            consumed = duration(_float(cs), "consumed samples", number_, sink)
            seconds = duration(None if raw is None else raw / 1000, "step time", number_, sink)
            batch, rate = _float(gbs), _float(sps)
            value = float("nan") if _float(nan) else _float(loss)
        sink.step(
            Step(
                number_,
                float(it),
                value,
                rate,
                None,
                seconds,
                consumed,
                batch,
                _stamp(prefix) if prefix else None,
                None,
                None,
                float(total),
                rate,
                "samples/s" if rate is not None else None,
                False,
                RULE,
            )
        )

    def continued(self, text: str) -> bool:
        """An iteration line a terminal wrapped: no closing `|`, and its last field is cut
        (`… | learning`, `… (s)`, `… number of sk`)."""
        tail = text.rstrip()
        return (
            not tail.endswith(("|", "`"))
            and _ITERATION.search(text) is not None
            and _TAIL.search(tail) is None
        )

    def starts_record(self, text: str) -> bool:
        head = text.lstrip()
        return head.startswith(("[", "`")) or _ITERATION.search(text) is not None

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        at = iso_time(line, 0, 40)
        fast = _STANDARD.search(line)
        if fast is not None and "samples per second" not in line and "throughput:" not in line:
            ms = number(fast.group("ms"))
            loss = number(fast.group("loss"))
            if number(fast.group("nan")):
                loss = float("nan")
            sink.step(
                Step(
                    line=number_,
                    step=float(fast.group("it")),
                    total=float(fast.group("total")),
                    loss=loss,
                    consumed_samples=duration(
                        number(fast.group("cs")), "consumed samples", number_, sink
                    ),
                    step_time_s=duration(
                        None if ms is None else ms / 1000, "step time", number_, sink
                    ),
                    global_batch=number(fast.group("gbs")),
                    at=at,
                    rule=RULE,
                )
            )
            return True
        m = _ITERATION.search(line)
        if m is not None and "elapsed" in line:
            return self._fields(line, m, number_, at, sink)
        arg = _ARG.match(line)
        if arg is not None:
            kind = (
                EventKind.global_batch
                if arg.group("key") == "global_batch_size"
                else (EventKind.seq_length)
            )
            sink.event(kind, number_, value=float(arg.group("v")),
                       text=f"Megatron's arguments dump ({arg.group('key')})")  # fmt: skip
            return True
        return self._other(line, number_, at, sink)

    def _fields(
        self, line: str, m: re.Match[str], number_: int, at: float | None, sink: Sink
    ) -> bool:
        """Any other iteration line: each field by its label (a line without lm loss — loss
        scaling skipped the interval, or the line was cut — still counts its steps)."""
        pos = m.start("kv") - 1
        elapsed = _ELAPSED.search(line, pos)
        seconds = None if elapsed is None else number(elapsed.group(2))
        if seconds is not None and elapsed is not None and elapsed.group("unit") == "ms":
            seconds /= 1000
        loss = _field(_LOSS, line, pos)
        if _field(_NAN, line, pos):
            loss = float("nan")
        rate, unit = _field(_SPS, line, pos), "samples/s"
        if rate is None:
            rate, unit = _field(_THROUGHPUT, line, pos), "seq/s"
        seqlen = _field(_SEQLEN, line, pos)
        if seqlen:
            sink.event(EventKind.seq_length, number_, value=seqlen,
                       text="Megatron-DeepSpeed's `actual seqlen`")  # fmt: skip
        sink.step(
            Step(
                line=number_,
                step=float(m.group("it")),
                total=float(m.group("total")),
                loss=loss,
                consumed_samples=duration(
                    _field(_CONSUMED, line, pos), "consumed samples", number_, sink
                ),
                step_time_s=duration(seconds, "step time", number_, sink),
                global_batch=_field(_BATCH, line, pos),
                samples_per_s=duration(rate, "samples per second", number_, sink),
                at=at,
                rate=rate,
                rate_unit=unit if rate is not None else None,
                rule=RULE,
            )
        )
        return True

    def _other(self, line: str, number_: int, at: float | None, sink: Sink) -> bool:
        if "successfully saved checkpoint" in line:
            sink.event(EventKind.checkpoint_saved, number_, at=at)
        elif "saving checkpoint" in line:
            sink.event(EventKind.checkpoint_save, number_, at=at)
        elif "loading checkpoint" in line:
            sink.event(EventKind.checkpoint_restore, number_, at=at)
        elif "after training is done" in line:
            sink.event(EventKind.end, number_, at=at, text="Megatron's `after training is done`")
        else:
            v = _VALIDATION.search(line)
            if v is None:
                return False
            value = number(v.group("v"))
            if value is None:
                return False
            sink.event(EventKind.eval, number_, at=at, value=value, text="validation lm loss")
        return True
