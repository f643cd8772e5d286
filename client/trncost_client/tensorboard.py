"""TensorBoard event files (`events.out.tfevents.*`), read with TensorBoard's own reader
(`tensorboard.backend.event_processing.event_file_loader.EventFileLoader`, pinned in
requirements.txt; without TensorFlow it uses TensorBoard's bundled protobuf stubs).

Why `tensorboard` and not `tbparse`: tbparse is a thin layer over the same reader that adds
pandas (a heavy dependency trncost has no other use for) and was last released in 2024;
`tensorboard` is Google's maintained package and reads the TFRecord framing (with CRC checks)
itself. It is not in the Lambda layer (it brings grpcio, protobuf, numpy's peers): the CLI
reads event files, the API and the ingest take text logs.

Scalars read, by tag (as the NxD examples, NxD Training, NeMo and HF Trainer write them):
loss (`loss`, `train_loss`, `step loss`, `reduced_train_loss`, `train/loss`), step time
(`iteration_time`, `train_step_timing`, `step_time`, `train_step_timing in s`), samples/s
(`throughput`: the NxD examples' seq/s; `train_samples_per_second`), consumed samples
(`consumed_samples`), evaluation (`val_loss`, `eval_loss`, `eval/loss`). Each event's wall
time is the clock; its step the step number. The "lines" of its provenance are event numbers.
"""

from __future__ import annotations

from typing import Any

from trncost.metrics.logs.base import EventKind, Step, duration
from trncost.metrics.logs.scan import FileResult
from trncost.metrics.logs.timeline import Timeline

NAME = "tensorboard"
LOSS = {"loss", "train_loss", "step loss", "reduced_train_loss", "train/loss"}
STEP_TIME = {"iteration_time", "train_step_timing", "step_time", "train_step_timing in s"}
RATE = {"throughput", "train_samples_per_second", "train/samples_per_second"}
CONSUMED = {"consumed_samples", "train/consumed_samples"}
EVALS = {"val_loss": "val_loss", "eval_loss": "eval_loss", "eval/loss": "eval_loss"}


def is_event_file(name: str) -> bool:
    return "tfevents" in name


def _scalar(event: Any) -> list[tuple[str, float]]:
    out = []
    for value in event.summary.value:
        kind = value.WhichOneof("value")
        if kind == "simple_value":
            out.append((value.tag, float(value.simple_value)))
        elif kind == "tensor" and value.tensor.float_val:
            out.append((value.tag, float(value.tensor.float_val[0])))
        elif kind == "tensor" and value.tensor.double_val:
            out.append((value.tag, float(value.tensor.double_val[0])))
    return out


def read_event_file(path: str, name: str, timeline: Timeline) -> FileResult:
    """One event file into `timeline`; steps grouped by their step number."""
    try:
        from tensorboard.backend.event_processing.event_file_loader import (  # type: ignore[import-untyped]
            EventFileLoader,
        )
    except ImportError:  # `make run` installs only what the runtime needs (requirements-run.txt)
        from trncost.errors import ClientError

        raise ClientError(
            f"{name}: reading TensorBoard event files needs the tensorboard package: "
            ".venv/bin/pip install -r requirements.txt (or make test, which installs it)"
        ) from None

    timeline.use(name, NAME)
    count = matched = 0
    current: Step | None = None
    for count, event in enumerate(EventFileLoader(path).Load(), start=1):
        if not event.HasField("summary"):
            continue
        for tag, value in _scalar(event):
            matched += 1
            if tag in EVALS:
                timeline.event(
                    EventKind.eval, count, at=event.wall_time, value=value, text=EVALS[tag]
                )
                continue
            if current is None or current.step != float(event.step):
                if current is not None:
                    timeline.step(current)
                current = Step(line=count, step=float(event.step), at=event.wall_time)
            if tag in LOSS:
                current.loss = value
            elif tag in STEP_TIME:
                current.step_time_s = duration(value, "step time", count, timeline)
            elif tag in RATE:
                current.samples_per_s = duration(value, "throughput", count, timeline)
            elif tag in CONSUMED:
                current.consumed_samples = duration(value, "consumed samples", count, timeline)
            else:
                matched -= 1
    if current is not None:
        timeline.step(current)
    return FileResult(
        file=name,
        format=NAME if matched else None,
        confidence=1.0 if matched else 0.0,
        lines=count,
        matched_lines=matched,
    )
