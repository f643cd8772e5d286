"""A large log read on two cores (metrics/logs/parallel.py) gives exactly the serial read's
record: the same series, lines, reading and file result — the tail's observations replayed
in order into the same Timeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from trncost.metrics.logs import FORMATS, parallel
from trncost.metrics.logs.scan import Reader
from trncost.metrics.logs.timeline import Timeline

LOGS = Path(__file__).resolve().parents[1] / "events" / "logs"
LINE = (LOGS / "megatron_mixtral_h100.log").read_text().splitlines()[0]
NOISE = [
    "ip-10-0-1-12:39810:40233 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
    "[rank3]:[W1101 09:57:13.144 ProcessGroupNCCL.cpp:4115] Warning: barrier() may hang",
]


def megatron_log(path: Path, iterations: int) -> Path:
    """Megatron's real line renumbered, with noise, a compile, a checkpoint save, a restart
    (back to an earlier iteration), a validation line and a prefixed copy in the tail."""
    out = [
        "2026-11-01 09:57:13.000144: INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: …",
        "2026-11-01 09:58:13.000144: INFO ||NEURON_CC_WRAPPER||: Compiler status PASS",
    ]
    for i in range(1, iterations + 1):
        it = i if i < iterations * 3 // 4 else i - 50  # a restart three quarters in
        minute, second = divmod(i, 60)
        stamp = f"2026-11-01 {10 + minute // 60:02d}:{minute % 60:02d}:{second:02d}"
        out.append(
            LINE.replace("2024-04-06 03:02:12", stamp)
            .replace("iteration       71/", f"iteration {it:8d}/")
            .replace("consumed samples:         9088", f"consumed samples: {it * 128:12d}")
        )
        out += NOISE
        if i % 500 == 0:
            out.append(f" saving checkpoint at iteration {it:8d} to /ckpt")
            out.append(f" validation loss at iteration {it} | lm loss value: 1.5 | lm loss PPL:")
    out.append("[1,0]<stdout>:" + out[-5])
    path.write_text("\n".join(out) + "\n")
    return path


def read(path: Path, *, parallel_read: bool, monkeypatch) -> tuple[Timeline, object]:
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 if parallel_read else 10**15)
    tl = Timeline(seq_length=4096)
    return tl, Reader(tl, FORMATS).read_path(str(path))


def test_two_cores_read_what_one_reads(tmp_path, monkeypatch) -> None:
    # Given a Megatron log with compiles, saves, a restart and validations across both halves
    path = megatron_log(tmp_path / "m.log", 4000)
    # When it is read serially and on two cores
    one, r1 = read(path, parallel_read=False, monkeypatch=monkeypatch)
    two, r2 = read(path, parallel_read=True, monkeypatch=monkeypatch)
    # Then every figure, series, line range and count is the same
    assert r1 == r2
    assert one.series("validation lm loss") == two.series("validation lm loss")
    assert {k: v.ranges for k, v in one.lines.items()} == {
        k: v.ranges for k, v in two.lines.items()
    }
    assert one.reading().as_dict() == two.reading().as_dict()
    assert (one.failures, one.saves, one.compile_misses) == (two.failures, two.saves, 1)
    assert one.failures == 1 and one.reading().values()["steps_done"] == 3950


def test_a_format_with_state_from_line_to_line_is_read_serially(tmp_path, monkeypatch) -> None:
    # Given a Lightning log (a bar's epoch count carries from line to line)
    bars = (LOGS / "lightning_progress.log").read_text()
    path = tmp_path / "l.log"
    path.write_text(bars * 50)
    called = []
    monkeypatch.setattr(parallel, "read_path", lambda *a: called.append(a))
    # When read with the parallel threshold below its size; Then it is read serially
    tl, result = read(path, parallel_read=True, monkeypatch=monkeypatch)
    assert called == [] and result.format == "lightning"


@pytest.mark.parametrize("share", [0.2, 0.5, 0.8])
def test_any_split_point_reads_the_same(tmp_path, monkeypatch, share) -> None:
    path = megatron_log(tmp_path / "m.log", 1200)
    one, r1 = read(path, parallel_read=False, monkeypatch=monkeypatch)
    monkeypatch.setattr(parallel, "HEAD_SHARE", share)
    two, r2 = read(path, parallel_read=True, monkeypatch=monkeypatch)
    assert r1 == r2 and one.series() == two.series()
