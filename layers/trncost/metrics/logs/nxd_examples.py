"""neuronx-distributed's training examples (Llama tp/pp pretraining, the Lightning module).

`step 3 step_time 2.4089s throughput 425.0672 seq/s step loss 9.8851 grad norm 2.5107`
(`examples/training/llama/tp_pp_llama_hf_pretrain/logger.py`; newer releases print `loss`
for `step loss`), and `step 120 loss is 7.25, lr is 0.0001, throughput 131.2 seq/s, ...`
(`.../lightning/module_llama.py`).

Read: step, step_time (seconds of the logging interval's last step; the clock without
timestamps is Σ step time × steps), throughput in seq/s (global: the examples' `Throughput`
counts batch × data-parallel size, i.e. samples/s), the step's loss.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import NUMBER, LogFormat, Sink, Step, duration, iso_time, number

_STEP = re.compile(r"\bstep (?P<step>\d+) (?=step_time |loss is )")
_STEP_TIME = re.compile(r"\bstep_time (?P<v>" + NUMBER + r")s?\b")
_THROUGHPUT = re.compile(r"\bthroughput (?P<v>" + NUMBER + r") seq/s")
_LOSS = re.compile(r"(?:seq/s |\s)(?:step )?loss(?: is)? (?P<v>" + NUMBER + r")")


class NxdExamples(LogFormat):
    name = "nxd_examples"
    title = "neuronx-distributed training examples"
    sample = "step 3 step_time 2.4089s throughput 425.0672 seq/s step loss 9.8851 grad norm 2.5107"
    yields = "steps, step time and the clock, samples/s (seq/s), loss"
    keys = (b" step_time ", b" loss is ")
    step_keys = (b" step_time ",)
    priority = 60
    splittable = True

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        m = _STEP.search(line)
        if m is None:
            return False
        rest = line[m.end() - 1 :]
        st, tp, loss = _STEP_TIME.search(rest), _THROUGHPUT.search(rest), _LOSS.search(rest)
        if tp is None and loss is None:
            return False
        rate = None if tp is None else number(tp.group("v"))
        sink.step(
            Step(
                line=number_,
                step=float(m.group("step")),
                loss=None if loss is None else number(loss.group("v")),
                step_time_s=duration(
                    None if st is None else number(st.group("v")), "step time", number_, sink
                ),
                samples_per_s=duration(rate, "throughput", number_, sink),
                at=iso_time(line, 0, 40),
                rate=rate,
                rate_unit="seq/s",
                rule="neuronx-distributed's example step line (step, step_time, throughput seq/s)",
            )
        )
        return True
