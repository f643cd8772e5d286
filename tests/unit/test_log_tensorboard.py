"""TensorBoard event files through `trncost trial import`'s reader (tensorboard's own
EventFileLoader). The file is written with tensorboard's own event writer, scalar tags as the
neuronx-distributed examples log them (`step loss`, `throughput`, `iteration_time`); a
truncated copy reads what is left (the reader stops at the torn record)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trncost.metrics.logs.timeline import Timeline
from trncost_client import tensorboard as tb

pytest.importorskip("tensorboard")


def write_events(directory: Path, steps: int = 30) -> Path:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(directory))
    for step in range(1, steps + 1):
        values = [
            summary_pb2.Summary.Value(tag="step loss", simple_value=10.0 - step * 0.1),
            summary_pb2.Summary.Value(tag="throughput", simple_value=425.0),
            summary_pb2.Summary.Value(tag="iteration_time", simple_value=2.41),
        ]
        writer.add_event(
            event_pb2.Event(
                wall_time=1_790_000_000.0 + step * 60,
                step=step,
                summary=summary_pb2.Summary(value=values),
            )
        )
    writer.close()
    (path,) = directory.glob("events.out.tfevents.*")
    return path


def test_an_event_file_yields_steps_loss_rate_and_the_clock(tmp_path: Path) -> None:
    path = write_events(tmp_path)
    tl = Timeline(global_batch=1024)
    result = tb.read_event_file(str(path), path.name, tl)
    assert tb.is_event_file(path.name)
    assert result.format == "tensorboard" and result.matched_lines == 90
    assert tl.mode == "timestamps" and tl.steps_seen == 30
    series = tl.series()
    assert sum(series["steps_done"].values) == 30  # began at step 1: counted from 0
    assert set(series["samples_per_second"].values) == {425.0}
    assert min(series["training_loss"].values) == pytest.approx(7.0)


def test_a_truncated_event_file_reads_what_is_left(tmp_path: Path) -> None:
    path = write_events(tmp_path)
    raw = path.read_bytes()
    cut = tmp_path / f"{path.name}.cut"
    cut.write_bytes(raw[: len(raw) // 2])
    tl = Timeline()
    result = tb.read_event_file(str(cut), "events.out.tfevents.cut", tl)
    assert result.format == "tensorboard" and 0 < tl.steps_seen < 30
