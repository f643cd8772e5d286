"""Hugging Face Trainer (transformers, optimum-neuron's NeuronTrainer, torch-neuronx
fine-tuning tutorials): the dicts `Trainer.log` prints, its progress bar, the banner and the
`***** train metrics *****` blocks.

`{'loss': 1.2607, 'learning_rate': 6.3e-06, 'epoch': 0.03}` per logging step (values may be
quoted strings in newer versions); `{'train_runtime': 54713.18, 'train_samples_per_second':
15.743, 'train_steps_per_second': 3.936, 'train_loss': 1.804, 'epoch': 3.0}` at the end (also
inside a printed `TrainOutput(...)`); `{'eval_loss': …, 'eval_runtime': …}` per evaluation;
the bar ` 57%|█████▋    | 500/870 [05:26<02:40,  2.31it/s]` (no label; often glued to the next
line's text, or a whole epoch of refreshes on one line); the banner's `Total train batch size
(w. parallel, distributed & accumulation) = 32` and `Total optimization steps = 1,500`.

Read: the training bar's `n/N` and elapsed time (steps done and planned, the clock: the bar
of the banner's total, else the first unlabeled bar; bars of other totals are evaluation
loops, labelled bars downloads — not training), loss (a `nan` loss is a non-finite loss), the
logging timestamp, train_runtime (the run's clock; the first summary, another rank's copy
follows), train_samples_per_second (the Trainer's own average: one throughput figure, warm-up
included; transformers 4.6 printed steps/s under this name — the record's notes say when the
value is the bar's steps over the runtime), eval_* results and each evaluation's eval_runtime
(evaluation time, each evaluation once: two ranks print the same one), the total train batch
size (global batch), `Continuing training from checkpoint` (a resume), `Saving model
checkpoint to` (a save), the train_runtime summary or `Training completed` (the end).
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    NUMBER,
    EventKind,
    LogFormat,
    Sink,
    Step,
    clock_text,
    duration,
    iso_time,
    number,
)
from trncost.metrics.logs.text import parse_bar

_PAIR = re.compile(r"'(?P<k>[A-Za-z0-9_/]+)':\s*'?(?P<v>" + NUMBER + r")'?")
_BATCH = re.compile(
    r"Total train batch size \(w\. parallel, distributed & accumulation\) = (?P<v>[\d,]+)"
)
_TOTAL = re.compile(r"Total optimization steps = (?P<v>[\d,]+)")
_BLOCK = re.compile(r"^\s*(?P<k>(?:train|eval|predict|test)_\w+)\s+=\s+(?P<v>\S+)\s*$")
RUNTIME_KEYS = ("eval_runtime", "predict_runtime", "test_runtime")
RATE_KEYS = ("_samples_per_second", "_steps_per_second", "_runtime")
BAR_RULE = "the Trainer's training progress bar (n/N [elapsed, it/s])"


class HfTrainer(LogFormat):
    name = "hf_trainer"
    title = "Hugging Face Trainer / optimum-neuron NeuronTrainer (stdout)"
    sample = "{'loss': 1.2607, 'learning_rate': 6.31578947368421e-06, 'epoch': 0.03}"
    yields = (
        "loss, steps and the clock (the training bar's n/N and elapsed, train_runtime, or "
        "logging timestamps), samples/s (train_samples_per_second: the run's average), eval_* "
        "results and evaluation seconds, the global batch size, the planned steps, resumes and "
        "saves, the end of training"
    )
    keys = (
        b"{'",
        b"Total train batch size",
        b"Total optimization steps",
        b"Continuing training from checkpoint",
        b"Saving model checkpoint to",
        b"Training completed",
        b"it/s]",
        b"s/it]",
        b"_runtime ",
        b"_samples_per_second ",
    )
    step_keys = (b"{'",)
    priority = 60

    def __init__(self) -> None:
        self.total: int | None = None  # the training bar's total
        self.trainer = False  # a line only the Trainer prints was read (a bar alone is not)

    def parse(self, line: str, number_: int, sink: Sink) -> bool:  # noqa: C901
        at = iso_time(line, 0, 60)
        if "{'" in line or "Total optimization" in line or "Total train batch" in line:
            self.trainer = True
        if "Total train batch size" in line:
            m = _BATCH.search(line)
            if m is None:
                return False
            value = number(m.group("v"))
            sink.event(EventKind.global_batch, number_, at=at, value=value,
                       text="the Trainer's banner: total train batch size")  # fmt: skip
            return True
        if "Total optimization steps" in line:
            m = _TOTAL.search(line)
            if m is None:
                return False
            self.total = int(number(m.group("v")) or 0) or None
            sink.event(EventKind.steps_total, number_, value=number(m.group("v")),
                       text="the Trainer's banner: total optimization steps")  # fmt: skip
            return True
        if "Continuing training from checkpoint" in line:
            sink.event(EventKind.checkpoint_restore, number_, at=at)
            return True
        if "Saving model checkpoint to" in line:
            sink.event(EventKind.checkpoint_save, number_, at=at)
            return True
        if "Training completed" in line:
            sink.event(EventKind.end, number_, at=at, text="the Trainer's `Training completed`")
        found = self._bar(line, number_, sink)
        if "{'" in line:
            values = {m.group("k"): number(m.group("v")) for m in _PAIR.finditer(line)}
            if values:
                found = entry(values, number_, at, sink) or found
        elif "_runtime " in line or "_samples_per_second " in line:
            found = self._block(line, number_, sink) or found
        return found or "Training completed" in line

    def _bar(self, line: str, number_: int, sink: Sink) -> bool:
        bar = parse_bar(line)
        if bar is None:
            return False
        if bar.label.strip() or not bar.iterations:
            sink.skip(number_, "a progress bar of something else (a download, data loading)")
            return True
        if self.total is None:
            self.total = bar.total
        if bar.total != self.total:
            sink.skip(number_, f"a progress bar of {bar.total}, not the training bar of "
                      f"{self.total} steps (an evaluation loop)")  # fmt: skip
            return True
        if bar.n == 0:
            return True
        sink.step(
            Step(
                line=number_,
                step=float(bar.n),
                shown=float(bar.n),
                total=float(bar.total),
                step_time_s=None if not bar.rate else 1 / bar.rate,
                elapsed_s=duration(bar.elapsed_s, "elapsed time", number_, sink),
                rate=bar.rate,
                rate_unit="it/s",
                from_start=True,
                rule=BAR_RULE,
                evidence=self.trainer,
            )
        )
        return True

    @staticmethod
    def _block(line: str, number_: int, sink: Sink) -> bool:
        """A `***** train metrics *****` block's line: `  train_runtime = 0:08:19.93`."""
        m = _BLOCK.match(line)
        if m is None:
            return False
        key, raw = m.group("k"), m.group("v")
        value = number(raw)
        if value is None and ":" in raw:
            whole, _, frac = raw.partition(".")
            seconds = clock_text(whole)
            value = None if seconds is None else seconds + (number("0." + frac) or 0.0)
        if value is None:
            return False
        if key == "train_runtime":
            sink.event(EventKind.runtime, number_, value=duration(value, "runtime", number_, sink),
                       text="the `***** train metrics *****` block's train_runtime")  # fmt: skip
        elif key == "train_samples_per_second":
            sink.event(EventKind.samples_per_second, number_, value=value,
                       text="the `***** train metrics *****` block")  # fmt: skip
        elif key in RUNTIME_KEYS:
            sink.event(EventKind.eval_seconds, number_, value=value, text=f"block:{value:.2f}")
        return True


def _evaluation(values: dict[str, float | None]) -> str:
    """What identifies one evaluation: its metrics, not its timing (ranks differ there)."""
    return ",".join(
        f"{k}={v:.6g}"
        for k, v in sorted(values.items())
        if v is not None and not k.endswith(RATE_KEYS)
    )


def entry(values: dict[str, float | None], number_: int, at: float | None, sink: Sink) -> bool:
    """One logged dict (a stdout line or a trainer_state.json log_history entry)."""
    runtime = values.get("train_runtime")
    if runtime is not None:
        sink.event(
            EventKind.runtime, number_, at=at, value=duration(runtime, "runtime", number_, sink),
            text="the Trainer's train_runtime summary",
        )  # fmt: skip
        sps = values.get("train_samples_per_second")
        if sps is not None:
            sink.event(
                EventKind.samples_per_second,
                number_,
                value=duration(sps, "samples per second", number_, sink),
                text="the Trainer's train_samples_per_second (the run's average)",
            )
        if "train_loss" in values and values["train_loss"] is not None:
            sink.event(EventKind.final_loss, number_, at=at, value=values["train_loss"])
        sink.event(EventKind.end, number_, at=at, text="the Trainer's train_runtime summary")
        if values.get("step") is not None:
            sink.step(Step(line=number_, step=values["step"], at=at))
        return True
    found = False
    for key in RUNTIME_KEYS:
        seconds = values.get(key)
        if seconds is not None:
            sink.event(EventKind.eval_seconds, number_, at=at, value=seconds,
                       text=_evaluation(values))  # fmt: skip
            found = True
    for metric, value in values.items():
        if metric.startswith(("eval_", "predict_", "test_")) and value is not None:
            if not metric.endswith(RATE_KEYS):
                sink.event(EventKind.eval, number_, at=at, value=value, text=metric)
                found = True
    if "loss" in values:
        sink.step(
            Step(
                line=number_,
                step=values.get("step"),
                loss=values["loss"],
                at=at,
                rule="the Trainer's logged {'loss': …} dict",
            )  # fmt: skip
        )
        return True
    return found
