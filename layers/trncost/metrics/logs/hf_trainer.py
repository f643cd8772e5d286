"""Hugging Face Trainer (transformers, optimum-neuron's NeuronTrainer, torch-neuronx
fine-tuning tutorials): the dicts `Trainer.log` prints, and the training banner.

`{'loss': 1.2607, 'learning_rate': 6.3e-06, 'epoch': 0.03}` per logging step;
`{'train_runtime': 54713.18, 'train_samples_per_second': 15.743, 'train_steps_per_second':
3.936, 'train_loss': 1.804, 'epoch': 3.0}` at the end; `{'eval_loss': …}` per evaluation;
`Total train batch size (w. parallel, distributed & accumulation) = 32` in the banner.

Read: loss (a `nan` loss is a non-finite loss), `step` when the line has it, the timestamp of
a `transformers.logging` prefix, train_runtime (the run's clock when lines are not timed),
train_samples_per_second (the Trainer's own average: one throughput figure, warm-up included),
eval_* (evaluation results by name), the total train batch size (global batch),
`Continuing training from checkpoint` (a resume), `Saving model checkpoint to` (a save).
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

_PAIR = re.compile(r"'(?P<k>[A-Za-z0-9_/]+)':\s*(?P<v>" + NUMBER + r")")
_BATCH = re.compile(
    r"Total train batch size \(w\. parallel, distributed & accumulation\) = (?P<v>\d+)"
)


class HfTrainer(LogFormat):
    name = "hf_trainer"
    title = "Hugging Face Trainer / optimum-neuron NeuronTrainer (stdout)"
    sample = "{'loss': 1.2607, 'learning_rate': 6.31578947368421e-06, 'epoch': 0.03}"
    yields = (
        "loss, steps (when logged), the clock (train_runtime, or logging timestamps), "
        "samples/s (train_samples_per_second: the run's average), eval_* results, the global "
        "batch size, resumes and saves, the end of training"
    )
    keys = (
        b"{'",
        b"Total train batch size",
        b"Continuing training from checkpoint",
        b"Saving model checkpoint to",
    )
    step_keys = (b"{'",)
    priority = 60

    def parse(self, line: str, number_: int, sink: Sink) -> bool:
        at = iso_time(line, 0, 60)
        if "Total train batch size" in line:
            m = _BATCH.search(line)
            if m is None:
                return False
            sink.event(EventKind.global_batch, number_, at=at, value=float(m.group("v")))
            return True
        if "Continuing training from checkpoint" in line:
            sink.event(EventKind.checkpoint_restore, number_, at=at)
            return True
        if "Saving model checkpoint to" in line:
            sink.event(EventKind.checkpoint_save, number_, at=at)
            return True
        values = {m.group("k"): number(m.group("v")) for m in _PAIR.finditer(line)}
        if not values:
            return False
        return entry(values, number_, at, sink)


def entry(values: dict[str, float | None], number_: int, at: float | None, sink: Sink) -> bool:
    """One logged dict (a stdout line or a trainer_state.json log_history entry)."""
    runtime = values.get("train_runtime")
    if runtime is not None:
        sink.event(
            EventKind.runtime, number_, at=at, value=duration(runtime, "runtime", number_, sink)
        )
        sps = values.get("train_samples_per_second")
        if sps is not None:
            sink.event(
                EventKind.samples_per_second,
                number_,
                value=duration(sps, "samples per second", number_, sink),
            )
        if "train_loss" in values and values["train_loss"] is not None:
            sink.event(EventKind.final_loss, number_, at=at, value=values["train_loss"])
        sink.event(EventKind.end, number_, at=at)
        if values.get("step") is not None:
            sink.step(Step(line=number_, step=values["step"], at=at))
        return True
    evals = {k: v for k, v in values.items() if k.startswith("eval_") and v is not None}
    for metric, value in evals.items():
        if metric not in ("eval_runtime", "eval_samples_per_second", "eval_steps_per_second"):
            sink.event(EventKind.eval, number_, at=at, value=value, text=metric)
    if "loss" in values:
        sink.step(Step(line=number_, step=values.get("step"), loss=values["loss"], at=at))
        return True
    return bool(evals)
