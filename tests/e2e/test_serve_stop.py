"""Ctrl-C stops `trncost serve` whichever of its threads the kernel hands the signal to.

A process-directed signal goes to any thread that does not block it; Python runs the handler
on the main thread only, when that thread next wakes. The runtime has a dozen threads (its
HTTP server, pollers, the embedded AWS), so a main thread asleep in an endless wait could miss
Ctrl-C now and then (seen in CI: "trncost serve did not stop on Ctrl-C"). Here the signal is
sent to one of those other threads on purpose (tgkill), every time.
"""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import subprocess

import pytest

from tests.e2e.conftest import STOP_GRACE_S, running_server

SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(platform.machine())

pytestmark = pytest.mark.skipif(
    SYS_TGKILL is None or not os.path.isdir("/proc/self/task"),
    reason="needs Linux's tgkill and /proc (x86_64 or aarch64)",
)


def _tgkill(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill {pid} {tid}")


def test_ctrl_c_delivered_to_a_worker_thread_stops_serve(tmp_path):
    with running_server(tmp_path, "--no-demo") as server:
        pid = server.process.pid
        # Given the runtime's own threads, not its main one
        workers = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
        assert len(workers) >= 3, workers
        # When Ctrl-C reaches one of them (the last started: the runtime's, not Python's own)
        _tgkill(pid, workers[-1], signal.SIGINT)
        # Then serve stops cleanly, as it would for a Ctrl-C the main thread took
        try:
            code = server.process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            server.process.kill()
            pytest.fail("trncost serve missed a Ctrl-C delivered to a worker thread")
        assert code == 0, server.output.read_text()[-4000:]
        assert "stopped." in server.output.read_text()
