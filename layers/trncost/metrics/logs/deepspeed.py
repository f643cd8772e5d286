"""DeepSpeed's own lines (its engine's throughput timer and `log_dist` step line), in any
trainer that runs on it (Megatron-DeepSpeed, the HF Trainer with `--deepspeed`, a custom loop).

`[2022-12-20 08:26:27,159] [INFO] [timer.py:197:stop] 0/22, RunningAvgSamplesPerSec=157.08,
CurrSamplesPerSec=155.14, MemAllocated=1.75GB, MaxMemAllocated=2.62GB` — older releases print
`0/50, SamplesPerSec=83.7` (`[INFO 2020-06-08 05:26:19] 0/2650, SamplesPerSec=13.19`), newer
`epoch=0/micro_step=4500/global_step=4500, RunningAvgSamplesPerSec=…`; `[Rank 0] step=60,
skipped=2, lr=[5e-05], mom=[[0.9, 0.999]]`.

Read: the step (the timer's `epoch/step` or `global_step=`, `step=` of log_dist), samples/s
(the running average, else the timer's SamplesPerSec: DeepSpeed's own measure over the steps
it timed), the timestamp, and a training loss the script prints beside it (`loss - 3.36`,
`loss: …`, `loss = …`).
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    NUMBER,
    EventKind,
    LogFormat,
    Sink,
    Step,
    duration,
    iso_time,
    number,
)

_TIMER = re.compile(
    r"(?:epoch=\d+/micro_step=\d+/global_step=(?P<gs>\d+)|\b\d+/(?P<step>\d+)),\s*"
    r"(?:RunningAvgSamplesPerSec=(?P<avg>" + NUMBER + r"),\s*CurrSamplesPerSec=(?P<cur>"
    + NUMBER + r")|SamplesPerSec=(?P<sps>" + NUMBER + r"))"
)  # fmt: skip
_LOG_DIST = re.compile(r"\bstep=(?P<step>\d+), skipped=(?P<skipped>\d+)")
_LOSS = re.compile(r"(?<![\w-])loss\s*(?:[:=]|\s-\s)\s*(?P<v>" + NUMBER + r")")
RULE = "DeepSpeed's throughput timer line (step, RunningAvgSamplesPerSec / SamplesPerSec)"


class DeepSpeed(LogFormat):
    name = "deepspeed"
    title = "DeepSpeed's throughput timer and log_dist step lines"
    sample = (
        "[2022-12-20 08:26:27,159] [INFO] [timer.py:197:stop] 0/22, RunningAvgSamplesPerSec="
        "157.0806611496739, CurrSamplesPerSec=155.14401867030702, MemAllocated=1.75GB"
    )
    yields = "steps, samples/s (DeepSpeed's own timer), the clock (timestamps), a printed loss"
    keys = (b"SamplesPerSec=", b"skipped=", b"loss")
    step_keys = (b"SamplesPerSec=",)
    priority = 55
    splittable = True

    def __init__(self) -> None:
        self.seen = False  # a DeepSpeed line was read: a loss line beside it is the script's

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        at = iso_time(line, 0, 60)
        m = _TIMER.search(line)
        if m is not None:
            self.seen = True
            rate = number(m.group("avg") or m.group("sps"))
            current = number(m.group("cur") or m.group("sps"))
            sink.step(
                Step(
                    line=number_,
                    step=float(m.group("gs") or m.group("step")),
                    samples_per_s=duration(current, "samples per second", number_, sink),
                    at=at,
                    rate=rate,
                    rate_unit="samples/s",
                    rule=RULE,
                )
            )
            return True
        m = _LOG_DIST.search(line)
        if m is not None:
            self.seen = True
            sink.step(Step(line=number_, step=float(m.group("step")), at=at,
                           rule="DeepSpeed's log_dist line (step=N, skipped=K)"))  # fmt: skip
            return True
        loss = _LOSS.search(line) if self.seen else None
        if loss is None:
            return False
        sink.event(EventKind.loss, number_, at=at, value=number(loss.group("v")),
                   text="a training loss the script prints beside DeepSpeed's lines")  # fmt: skip
        return True
