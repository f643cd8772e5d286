"""neuronx-distributed's training examples (Llama tp/pp pretraining, the Lightning module).

`step 3 step_time 2.4089s throughput 425.0672 seq/s step loss 9.8851 grad norm 2.5107`
(`examples/training/llama/tp_pp_llama_hf_pretrain/logger.py`), and
`step 120 loss is 7.25, lr is 0.0001, throughput 131.2 seq/s, ...` (`.../lightning/
module_llama.py`).

Read: step, step_time (seconds of the logging interval's last step; the clock without
timestamps is Σ step time × steps), throughput in seq/s (global: the examples' `Throughput`
counts batch × data-parallel size, i.e. samples/s), step loss.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import NUMBER, LogFormat, Sink, Step, duration, iso_time, number

_TP_PP = re.compile(
    r"step (?P<step>\d+) step_time (?P<st>"
    + NUMBER
    + r")s throughput (?P<tp>"
    + NUMBER
    + r") seq/s step loss (?P<loss>"
    + NUMBER
    + r")"
)
_LIGHTNING = re.compile(
    r"step (?P<step>\d+) loss is (?P<loss>"
    + NUMBER
    + r"), lr is [^,]*, throughput (?P<tp>"
    + NUMBER
    + r") seq/s"
)


class NxdExamples(LogFormat):
    name = "nxd_examples"
    title = "neuronx-distributed training examples"
    sample = "step 3 step_time 2.4089s throughput 425.0672 seq/s step loss 9.8851 grad norm 2.5107"
    yields = "steps, step time and the clock, samples/s (seq/s), loss"
    keys = (b" step_time ", b" loss is ")
    step_keys = (b" step_time ",)
    priority = 60

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        m = _TP_PP.search(line) or _LIGHTNING.search(line)
        if m is None:
            return False
        groups = m.groupdict()
        sink.step(
            Step(
                line=number_,
                step=float(groups["step"]),
                loss=number(groups["loss"]),
                step_time_s=duration(number(groups.get("st")), "step time", number_, sink),
                samples_per_s=duration(number(groups["tp"]), "throughput", number_, sink),
                at=iso_time(line, 0, 40),
            )
        )
        return True
