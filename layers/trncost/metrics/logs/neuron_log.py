"""The torch-neuronx tutorials' lines: the `LOG` line (BERT pretraining, NxD tp_zero1
examples) and the MNIST MLP tutorial's summary.

`LOG Thu Sep 29 22:30:10 2022 - (0, 78) step_loss : 9.1875  learning_rate : 1.56e-05
throughput : 2873.14` (newer scripts add ` seq/s` and `grad-norm : …`); `Train throughput
(iter/sec): 95.06756661972014`, `Final loss is 0.1979`, `----------End Training ---------------`.

Read: the asctime timestamp (the clock, to the second), the global step, step_loss,
throughput (sequences per second over all workers: samples/s; its unit is not printed);
the MLP's iterations per second, final loss and end.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    NUMBER,
    EventKind,
    LogFormat,
    Sink,
    Step,
    asc_time,
    duration,
    number,
)

_LOG = re.compile(
    r"LOG (?P<when>.+?) - \((?P<epoch>\d+), (?P<step>\d+)\) step_loss : (?P<loss>"
    + NUMBER
    + r")\s+learning_rate : \S+\s+throughput : (?P<tp>"
    + NUMBER
    + r")"
)
_MLP_RATE = re.compile(r"Train throughput \(iter/sec\): (?P<v>" + NUMBER + r")")
_MLP_LOSS = re.compile(r"Final loss is (?P<v>" + NUMBER + r")")


class NeuronTutorialLog(LogFormat):
    name = "neuron_log"
    title = "torch-neuronx tutorials and NxD tp_zero1 examples (`LOG … step_loss … throughput`)"
    sample = (
        "LOG Thu Sep 29 22:30:10 2022 - (0, 78) step_loss : 9.1875  learning_rate : 1.56e-05  "
        "throughput : 2873.14"
    )
    yields = (
        "steps, the clock (the lines' timestamps), samples/s (seq/s), loss; the MNIST MLP "
        "tutorial's iterations per second, final loss and end"
    )
    keys = (b") step_loss : ", b"Train throughput (iter/sec)", b"Final loss is ", b"End Training")
    step_keys = (b") step_loss : ",)
    priority = 60
    splittable = True

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        m = _LOG.search(line)
        if m is None:
            return self._summary(line, number_, sink)
        sink.step(
            Step(
                line=number_,
                step=float(m.group("step")),
                loss=number(m.group("loss")),
                samples_per_s=duration(number(m.group("tp")), "throughput", number_, sink),
                at=asc_time(m.group("when")),
                rate=number(m.group("tp")),
                rate_unit="seq/s",
                rule="the torch-neuronx tutorial's `LOG … (epoch, step) step_loss … throughput` "
                "line (throughput in sequences/s, its unit not printed)",
            )
        )
        return True

    @staticmethod
    def _summary(line: str, number_: int, sink: Sink) -> bool:
        if (m := _MLP_RATE.search(line)) is not None:
            sink.event(EventKind.throughput, number_, value=number(m.group("v")), text="it/s")
        elif (m := _MLP_LOSS.search(line)) is not None:
            sink.event(EventKind.loss, number_, value=number(m.group("v")),
                       text="the tutorial's `Final loss is` line")  # fmt: skip
        elif "End Training" in line:
            sink.event(EventKind.end, number_, text="the tutorial's `End Training` line")
        else:
            return False
        return True
