"""The torch-neuronx tutorials' `LOG` line (BERT pretraining, NxD tp_zero1 examples).

`LOG Thu Sep 29 22:30:10 2022 - (0, 78) step_loss : 9.1875  learning_rate : 1.56e-05
throughput : 2873.14` (newer scripts add ` seq/s` and `grad-norm : …`).

Read: the asctime timestamp (the clock, to the second), the global step, step_loss,
throughput (sequences per second over all workers: samples/s).
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import NUMBER, LogFormat, Sink, Step, asc_time, duration, number

_LOG = re.compile(
    r"LOG (?P<when>.+?) - \((?P<epoch>\d+), (?P<step>\d+)\) step_loss : (?P<loss>"
    + NUMBER
    + r")\s+learning_rate : \S+\s+throughput : (?P<tp>"
    + NUMBER
    + r")"
)


class NeuronTutorialLog(LogFormat):
    name = "neuron_log"
    title = "torch-neuronx tutorials and NxD tp_zero1 examples (`LOG … step_loss … throughput`)"
    sample = (
        "LOG Thu Sep 29 22:30:10 2022 - (0, 78) step_loss : 9.1875  learning_rate : 1.56e-05  "
        "throughput : 2873.14"
    )
    yields = "steps, the clock (the lines' timestamps), samples/s (seq/s), loss"
    keys = (b") step_loss : ",)
    step_keys = keys
    priority = 60

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        m = _LOG.search(line)
        if m is None:
            return False
        sink.step(
            Step(
                line=number_,
                step=float(m.group("step")),
                loss=number(m.group("loss")),
                samples_per_s=duration(number(m.group("tp")), "throughput", number_, sink),
                at=asc_time(m.group("when")),
            )
        )
        return True
