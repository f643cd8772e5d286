"""NxD Training, NeMo-Megatron on Neuron and NeMo on GPU: NeMo's progress lines.

Two shapes, one set of fields (NeMo's own names):

- the PyTorch Lightning progress bar NeMo fills (NxD Training, neuronx-nemo-megatron, NeMo 1):
  `Epoch 0:   0%|  | 189/301501 [59:12<1573:03:24, 18.79s/it, loss=7.75, v_num=3-16,
  reduced_train_loss=7.560, global_step=188.0, consumed_samples=24064.0]`;
- NeMo 2's text lines: `Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 |
  global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s:
  0.03146 | val_loss: 4.106`.

Read: global_step (steps), consumed_samples (samples), reduced_train_loss (loss), the bar's
elapsed time (clock), `train_step_timing in s` (step time), global_batch_size, val_loss (an
evaluation result named `val_loss`). NxD Training's `throughput=` field is not read: its unit
is not stated in the line (its values do not match consumed_samples over elapsed time), so
samples/s come from consumed_samples and the clock instead.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    EventKind,
    LogFormat,
    Sink,
    Step,
    clock_text,
    duration,
    first_number,
    iso_time,
    key_values,
)
from trncost.metrics.logs.lightning import parse_lightning_line

_BAR = re.compile(
    r"\[(?P<elapsed>[\d:]+(?:\s*days?,\s*[\d:]+)?)<[^,\]]*,\s*[^,\]]*(?:,(?P<kv>[^\]]*))?\]"
)
_NEMO2 = re.compile(r"Training epoch \d+, iteration \d+/\d+ \|(?P<kv>.*)$")


class NeMoProgress(LogFormat):
    name = "nemo"
    title = "NxD Training / NeMo-Megatron on Neuron, NeMo on GPU (NeMo's progress lines)"
    sample = (
        "Epoch 0:   0%|          | 189/301501 [59:12<1573:03:24, 18.79s/it, loss=7.75, "
        "v_num=3-16, reduced_train_loss=7.560, global_step=188.0, consumed_samples=24064.0]"
    )
    yields = (
        "steps (global_step), samples (consumed_samples), loss (reduced_train_loss), the wall "
        "clock (the bar's elapsed time, or the lines' timestamps), step time (NeMo 2's "
        "train_step_timing), samples/s (consumed samples over time), val_loss, restarts "
        "(Lightning's checkpoint restore lines), the end of training"
    )
    keys = (
        b"reduced_train_loss",
        b"Trainer.fit` stopped",
        b"Restored all states from the checkpoint",
    )
    step_keys = (b"reduced_train_loss",)
    priority = 80

    def parse(self, line: str, number: int, sink: Sink) -> bool:
        return parse_lightning_line(line, number, sink, self._one)

    def _one(self, part: str, number: int, sink: Sink) -> bool:
        at = iso_time(part, 0, 40)
        m2 = _NEMO2.search(part)
        if m2 is not None:
            values = key_values(m2.group("kv"), ":", "|")
            elapsed = None
        else:
            m = _BAR.search(part)
            if m is None or "reduced_train_loss" not in part:
                return False
            values = key_values(m.group("kv") or "")
            elapsed = duration(clock_text(m.group("elapsed")), "elapsed time", number, sink)
        step_time = first_number(values, "train_step_timing in s")
        s = Step(
            line=number,
            step=first_number(values, "global_step"),
            loss=first_number(values, "reduced_train_loss"),
            consumed_samples=duration(
                first_number(values, "consumed_samples"), "consumed samples", number, sink
            ),
            step_time_s=duration(step_time, "step time", number, sink),
            global_batch=first_number(values, "global_batch_size"),
            at=at,
            elapsed_s=elapsed,
        )
        sink.step(s)
        val = first_number(values, "val_loss")
        if val is not None:
            sink.event(EventKind.eval, number, value=val, text="val_loss")
        return True
