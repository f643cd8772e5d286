"""PyTorch Lightning's progress bar (tqdm), without NeMo's fields.

`Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]`, and
its variants (`metrics.logs.text.parse_bar`): without `|` glyphs (Colab), with escaped pipes
and ASCII glyphs (a log viewer's export), Lightning 2.x without `loss=`.

Read: the batch within the epoch, counted from the first epoch the log shows (steps; with a
second epoch in view the bar's total is an epoch's, so the run's total is unknown), the bar's
elapsed time (it restarts each epoch: the epochs' times are added), tqdm's rate (it/s; step
time 1/rate, smoothed by tqdm), the training loss (`train_loss=`, `train_loss_step=`, else
Lightning's running mean `loss=`), `val_loss=`. Bars of another loop (`Validation`,
`Sanity Checking`, `Training:` before the first epoch) and a bar at 0 (a reset) count no work.
A bar counts batches: with gradient accumulation a batch is not an optimizer step, and samples
need the global batch size (--global-batch-size).
"""

from __future__ import annotations

from collections.abc import Callable

from trncost.metrics.logs.base import (
    EventKind,
    LogFormat,
    Sink,
    Step,
    duration,
    first_number,
    iso_time,
)
from trncost.metrics.logs.text import Bar, parse_bar

LOSS_KEYS = ("train_loss_step", "train_loss", "loss_step", "loss")
NAN = float("nan")


class EpochBars:
    """Lightning's per-epoch bar made one count: batches from the first epoch the log shows,
    elapsed seconds likewise; the run's total is the bar's only while one epoch is in view."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.epoch = -1
        self.totals: dict[int, int] = {}
        self.offset_s = 0.0  # elapsed seconds of the epochs before the current one
        self.epoch_max_s = 0.0

    def place(self, bar: Bar, line: int, sink: Sink) -> tuple[int, float | None, float | None]:
        """(batches done, elapsed seconds, the run's total: NaN once unknown) of one bar."""
        epoch = bar.epoch or 0
        if self.first is None:
            self.first = epoch
        if epoch != self.epoch:
            if self.epoch >= 0 and epoch > self.epoch:
                self.offset_s += self.epoch_max_s
            known = len(self.totals) == 1 and epoch not in self.totals
            self.epoch, self.epoch_max_s = epoch, 0.0
            if known:
                sink.event(EventKind.steps_total, line, value=NAN)
        self.totals[epoch] = bar.total
        if bar.elapsed_s is not None:
            self.epoch_max_s = max(self.epoch_max_s, bar.elapsed_s)
        offset = sum(self.totals.get(e, bar.total) for e in range(self.first, epoch))
        elapsed = None if bar.elapsed_s is None else self.offset_s + bar.elapsed_s
        total = float(bar.total) if len(self.totals) == 1 else NAN
        return offset + bar.n, elapsed, total


class LightningProgress(LogFormat):
    name = "lightning"
    title = "PyTorch Lightning progress bars"
    sample = "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]"
    yields = (
        "steps (batches), the wall clock (elapsed per epoch, summed), step time and it/s "
        "(tqdm's rate), loss, val_loss, restarts (checkpoint restore lines), the end of training"
    )
    keys = (b"it/s", b"s/it", b"Trainer.fit` stopped", b"Restored all states from the checkpoint")
    step_keys = (b"Epoch ",)
    priority = 40

    def __init__(self) -> None:
        self.epochs = EpochBars()

    def parse(self, line: str, number: int, sink: Sink) -> bool:
        return parse_lightning_line(line, number, sink, self._one)

    def _one(self, part: str, line_no: int, sink: Sink) -> bool:
        bar = parse_bar(part)
        if bar is None or not bar.iterations:
            return False
        if bar.epoch is None or not bar.training_label:
            sink.skip(line_no, "a progress bar of another loop (validation, sanity check)")
            return True
        done, elapsed, total = self.epochs.place(bar, line_no, sink)
        if bar.n == 0:
            return True  # a bar reset at an epoch's start: no work yet
        sink.step(
            Step(
                line=line_no,
                step=float(done),
                shown=float(done),
                total=total,
                loss=first_number(bar.values, *LOSS_KEYS),
                step_time_s=duration(
                    None if bar.rate is None else 1 / bar.rate, "step time", line_no, sink
                ),
                at=iso_time(part, 0, 40),
                elapsed_s=elapsed,
                rate=bar.rate,
                rate_unit="it/s",
                from_start=True,
                rule="Lightning's epoch progress bar (batches n/N [elapsed, it/s], counted "
                "from the first epoch shown)",
            )
        )
        val = first_number(bar.values, "val_loss")
        if val is not None:
            sink.event(EventKind.eval, line_no, value=val, text="val_loss")
        return True


def parse_lightning_line(
    line: str, number: int, sink: Sink, one: Callable[[str, int, Sink], bool]
) -> bool:
    """A PyTorch Lightning log line (NeMo's too): the fit's end and a checkpoint restore are
    events; otherwise the (already split) bar part goes to `one`."""
    if "Trainer.fit` stopped" in line:
        sink.event(EventKind.end, number, text="Lightning's `Trainer.fit` stopped line")
        return True
    if "Restored all states from the checkpoint" in line:
        sink.event(EventKind.checkpoint_restore, number, at=iso_time(line, 0, 40))
        return True
    return one(line, number, sink)
