"""PyTorch Lightning's progress bar (tqdm), without NeMo's fields.

`Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]`

Read: the batch number within the epoch (steps: epoch × batches per epoch + batch), the bar's
elapsed time (it restarts each epoch: the epochs' times are added), tqdm's s/it or it/s (step
time, smoothed by tqdm), `loss=` (or `train_loss=`), `val_loss=`. A bar counts batches: with
gradient accumulation a batch is not an optimizer step, and samples need the global batch
size (--global-batch-size).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from trncost.metrics.logs.base import (
    NUMBER,
    EventKind,
    LogFormat,
    Sink,
    Step,
    clock_text,
    duration,
    first_number,
    iso_time,
    key_values,
    number,
)

_BAR = re.compile(
    r"Epoch (?P<epoch>\d+):\s*\d+%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\s*"
    r"\[(?P<elapsed>[\d:]+)<[^,\]]*,\s*(?P<rate>" + NUMBER + r")(?P<unit>s/it|it/s)"
    r"(?:,(?P<kv>[^\]]*))?\]"
)


class LightningProgress(LogFormat):
    name = "lightning"
    title = "PyTorch Lightning progress bars"
    sample = "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]"
    yields = (
        "steps (batches), the wall clock (elapsed per epoch, summed), step time (tqdm's s/it), "
        "loss, val_loss, restarts (checkpoint restore lines), the end of training"
    )
    keys = (b"it/s", b"s/it", b"Trainer.fit` stopped", b"Restored all states from the checkpoint")
    step_keys = (b"Epoch ",)
    priority = 40

    def __init__(self) -> None:
        self.epoch_offset_s = 0.0
        self.epoch = -1
        self.epoch_max_s = 0.0

    def parse(self, line: str, number: int, sink: Sink) -> bool:
        return parse_lightning_line(line, number, sink, self._one)

    def _one(self, part: str, line_no: int, sink: Sink) -> bool:
        m = _BAR.search(part)
        if m is None:
            return False
        epoch, batch, total = int(m.group("epoch")), int(m.group("n")), int(m.group("total"))
        elapsed = clock_text(m.group("elapsed"))
        if epoch != self.epoch:
            if self.epoch >= 0:
                self.epoch_offset_s += self.epoch_max_s
            self.epoch, self.epoch_max_s = epoch, 0.0
        if elapsed is not None:
            self.epoch_max_s = max(self.epoch_max_s, elapsed)
        rate = number(m.group("rate"))
        step_time = None
        if rate is not None and rate > 0:
            step_time = rate if m.group("unit") == "s/it" else 1 / rate
        values = key_values(m.group("kv") or "")
        sink.step(
            Step(
                line=line_no,
                step=float(epoch * total + batch),
                loss=first_number(values, "loss", "train_loss"),
                step_time_s=duration(step_time, "step time", line_no, sink),
                at=iso_time(part, 0, 40),
                elapsed_s=None if elapsed is None else self.epoch_offset_s + elapsed,
            )
        )
        val = first_number(values, "val_loss")
        if val is not None:
            sink.event(EventKind.eval, line_no, value=val, text="val_loss")
        return True


def parse_lightning_line(
    line: str, number: int, sink: Sink, one: Callable[[str, int, Sink], bool]
) -> bool:
    """A PyTorch Lightning log line (NeMo's too): the fit's end and a checkpoint restore are
    events; otherwise each carriage-return part of a progress bar goes to `one`."""
    if "Trainer.fit` stopped" in line:
        sink.event(EventKind.end, number)
        return True
    if "Restored all states from the checkpoint" in line:
        sink.event(EventKind.checkpoint_restore, number, at=iso_time(line, 0, 40))
        return True
    found = False
    for part in line.split("\r"):
        found = one(part, number, sink) or found
    return found
