"""Hugging Face Trainer's `trainer_state.json` (saved with every checkpoint): `log_history`.

Each entry is what the Trainer logged at a step (`{"loss", "step", "epoch", ...}`), an
evaluation (`eval_*`), or, last, the summary (`train_runtime`, `train_samples_per_second`).
Read as the stdout dicts are (`metrics.logs.hf_trainer`); the "lines" of its provenance are
log_history entry numbers (1-based). `train_batch_size` is per device and is not used as the
global batch size.
"""

from __future__ import annotations

from typing import Any

from trncost.metrics.logs.base import LogFormat, Sink, finite
from trncost.metrics.logs.hf_trainer import entry


class HfTrainerState(LogFormat):
    name = "hf_trainer_state"
    title = "Hugging Face Trainer trainer_state.json"
    sample = '{"log_history": [{"epoch": 0.0069, "loss": 1.9963, "step": 500}, ...]}'
    yields = (
        "steps, loss, eval_* results, the clock and samples/s (the summary entry's "
        "train_runtime and train_samples_per_second)"
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
        return used
