"""NxD Training, NeMo-Megatron on Neuron and NeMo on GPU: NeMo's progress lines.

Two shapes, one set of fields (NeMo's own names):

- the PyTorch Lightning progress bar NeMo fills (NxD Training, neuronx-nemo-megatron, NeMo 1):
  `Epoch 0:   0%|  | 189/301501 [59:12<1573:03:24, 18.79s/it, loss=7.75, v_num=3-16,
  reduced_train_loss=7.560, global_step=188.0, consumed_samples=24064.0]`, also without a rate
  (`Epoch 0: : 100%|…| 50/50 [16:26<00:00, v_num=gjbq, …, train_step_timing in s=12.80]`),
  printed twice per step (NxD Training), with mis-encoded glyphs;
- NeMo 2's text lines: `Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 |
  global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s:
  0.03146 | val_loss: 4.106` — the iteration counter is 0-based (`49/49` is the 50th and last).

Read: the bar's count `n/N` (steps done and planned: `global_step` is the count or the count
minus one depending on the version, so it is not used) and elapsed time (the clock, from the
run's start: a lone final bar counts its work), NeMo 2's iteration (+1: steps done),
consumed_samples (samples), reduced_train_loss (the loss; Lightning's `loss=` is a running
mean), `train_step_timing in s` (step time), global_batch_size, val_loss (an evaluation
result named `val_loss`). The rate shown: NxD Training's `throughput=` (sequences/s, its unit
not printed), else the bar's it/s, else 1 / train_step_timing. NxD Training's throughput is
not used for work: its values do not match consumed_samples over elapsed time, so samples/s
come from consumed_samples and the clock instead.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    EventKind,
    LogFormat,
    Sink,
    Step,
    duration,
    first_number,
    iso_time,
    key_values,
)
from trncost.metrics.logs.lightning import EpochBars, parse_lightning_line
from trncost.metrics.logs.text import parse_bar

_NEMO2 = re.compile(r"Training epoch \d+, iteration (?P<i>\d+)/(?P<total>\d+) \|(?P<kv>.*)$")


class NeMoProgress(LogFormat):
    name = "nemo"
    title = "NxD Training / NeMo-Megatron on Neuron, NeMo on GPU (NeMo's progress lines)"
    sample = (
        "Epoch 0:   0%|          | 189/301501 [59:12<1573:03:24, 18.79s/it, loss=7.75, "
        "v_num=3-16, reduced_train_loss=7.560, global_step=188.0, consumed_samples=24064.0]"
    )
    yields = (
        "steps (the bar's n/N, NeMo 2's iteration), samples (consumed_samples), loss "
        "(reduced_train_loss), the wall clock (the bar's elapsed time, or the lines' "
        "timestamps), step time (train_step_timing), it/s or NxD Training's throughput, "
        "val_loss, restarts (Lightning's checkpoint restore lines), the end of training"
    )
    keys = (
        b"reduced_train_loss",
        b"Trainer.fit` stopped",
        b"Restored all states from the checkpoint",
    )
    step_keys = (b"reduced_train_loss",)
    priority = 80

    def __init__(self) -> None:
        self.epochs = EpochBars()

    def parse(self, line: str, number: int, sink: Sink) -> bool:
        return parse_lightning_line(line, number, sink, self._one)

    def _one(self, part: str, number: int, sink: Sink) -> bool:
        at = iso_time(part, 0, 40)
        m2 = _NEMO2.search(part)
        if m2 is not None:
            return self._nemo2(m2, number, at, sink)
        if "reduced_train_loss" not in part:
            return False
        bar = parse_bar(part)
        if bar is None:
            return False
        values = bar.values
        done, elapsed, total = self.epochs.place(bar, number, sink)
        if bar.n == 0:
            return True
        step_time = first_number(values, "train_step_timing in s")
        rate, unit = first_number(values, "throughput"), "seq/s"
        if rate is None:
            rate, unit = bar.rate, "it/s"
        if rate is None and step_time:
            rate = 1 / step_time
        if step_time is None and bar.rate:
            step_time = 1 / bar.rate
        sink.step(
            Step(
                line=number,
                step=float(done),
                shown=float(done),
                total=total,
                loss=first_number(values, "reduced_train_loss"),
                consumed_samples=duration(
                    first_number(values, "consumed_samples"), "consumed samples", number, sink
                ),
                step_time_s=duration(step_time, "step time", number, sink),
                at=at,
                elapsed_s=duration(elapsed, "elapsed time", number, sink),
                rate=rate,
                rate_unit=unit,
                from_start=True,
                rule="NeMo's progress bar (n/N [elapsed], reduced_train_loss, "
                + ("throughput=" if unit == "seq/s" else "it/s or 1/train_step_timing")
                + ")",
            )
        )
        self._val(values, number, sink)
        return True

    def _nemo2(self, m: re.Match[str], number: int, at: float | None, sink: Sink) -> bool:
        values = key_values(m.group("kv"), ":", "|")
        step_time = first_number(values, "train_step_timing in s")
        iteration = float(m.group("i"))
        sink.step(
            Step(
                line=number,
                step=iteration + 1,  # 0-based: iteration i ends the (i+1)-th step
                shown=iteration,
                total=float(m.group("total")),
                loss=first_number(values, "reduced_train_loss"),
                consumed_samples=duration(
                    first_number(values, "consumed_samples"), "consumed samples", number, sink
                ),
                step_time_s=duration(step_time, "step time", number, sink),
                global_batch=first_number(values, "global_batch_size"),
                at=at,
                rate=1 / step_time if step_time else None,
                rate_unit="it/s",
                rule="NeMo 2's `Training epoch E, iteration i/N` line (0-based i; "
                "rate 1/train_step_timing)",
            )
        )
        self._val(values, number, sink)
        return True

    @staticmethod
    def _val(values: dict[str, str], number: int, sink: Sink) -> None:
        val = first_number(values, "val_loss")
        if val is not None:
            sink.event(EventKind.eval, number, value=val, text="val_loss")
