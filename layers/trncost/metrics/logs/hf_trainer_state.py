"""Hugging Face Trainer's `trainer_state.json` (saved with every checkpoint): `log_history`.

Each entry is what the Trainer logged at a step (`{"loss", "step", "epoch", ...}`), an
evaluation (`eval_*`), or, last, the summary (`train_runtime`, `train_samples_per_second`).
Read as the stdout dicts are (`metrics.logs.hf_trainer`): evaluation and prediction entries'
own runtimes are evaluation time (inside train_runtime: the record keeps them out of the steady
clock). The document's `global_step` and `max_steps` are the steps done and planned; the run
completed when they are equal and the Trainer was told to stop (or the summary entry is
there). The "lines" of its provenance are log_history entry numbers (1-based; the document's
own fields are "line" 1). `train_batch_size` is per device and is not used as the global batch
size.
"""

from __future__ import annotations

from typing import Any

from trncost.metrics.logs.base import EventKind, LogFormat, Sink, Step, finite
from trncost.metrics.logs.hf_trainer import entry


class HfTrainerState(LogFormat):
    name = "hf_trainer_state"
    title = "Hugging Face Trainer trainer_state.json"
    sample = '{"log_history": [{"epoch": 0.0069, "loss": 1.9963, "step": 500}, ...]}'
    yields = (
        "steps done and planned (global_step, max_steps: equal and told to stop is the end), "
        "loss, eval_* results and the evaluation and prediction seconds (kept out of the "
        "steady clock), the clock and samples/s (the summary entry's train_runtime and "
        "train_samples_per_second)"
    )
    whole_file = True
    priority = 90

    def matches_document(self, doc: Any) -> bool:
        return isinstance(doc, dict) and isinstance(doc.get("log_history"), list)

    def parse_document(self, doc: Any, sink: Sink) -> int:
        used = 0
        for i, item in enumerate(doc["log_history"], start=1):
            if not isinstance(item, dict):
                continue
            values: dict[str, float | None] = {}
            for key, value in item.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                values[str(key)] = float(value) if key == "loss" else finite(float(value))
            if entry(values, i, None, sink):
                used += 1
        _counts(doc, sink, len(doc["log_history"]))
        return used


def _counts(doc: dict[str, Any], sink: Sink, last: int) -> None:
    """global_step and max_steps: done and planned; equal, and told to stop: the end."""
    done, planned = doc.get("global_step"), doc.get("max_steps")
    if isinstance(planned, int) and not isinstance(planned, bool) and planned > 0:
        sink.event(EventKind.steps_total, 1, value=float(planned),
                   text="trainer_state.json's max_steps")  # fmt: skip
    if not isinstance(done, int) or isinstance(done, bool):
        return
    sink.event(EventKind.steps_done, 1, value=float(done), text="trainer_state.json's global_step")
    if last:  # the steps after the last logged entry were done too (a checkpoint's state)
        sink.step(Step(line=last, step=float(done), rule="trainer_state.json's global_step"))
    control = (doc.get("stateful_callbacks") or {}).get("TrainerControl") or {}
    stop = (control.get("args") or {}).get("should_training_stop")
    if isinstance(planned, int) and done >= planned > 0 and stop is not False:
        sink.event(EventKind.end, 1, text="trainer_state.json: global_step reached max_steps")
