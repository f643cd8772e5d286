"""End-to-end: `trncost serve` (what `make run` starts) as a real process on a free port,
driven over real HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.examples import ROOT

# How long `trncost serve` may take to stop after Ctrl-C: it drains its pollers (a refresh may be
# mid-analysis) and stops the embedded AWS; on a loaded 2-core machine that took over 20 s once.
# A runtime that hangs still fails, after this.
STOP_GRACE_S = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    output: Path
    env: dict

    def call(
        self, method: str, path: str, body: object = None, content_type: str = "application/json"
    ) -> tuple[int, object]:
        data = (
            None
            if body is None
            else (body if isinstance(body, bytes) else json.dumps(body).encode())
        )
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": content_type}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw, ctype = (
                    response.status,
                    response.read(),
                    response.headers.get("Content-Type", ""),
                )
        except urllib.error.HTTPError as exc:
            status, raw, ctype = exc.code, exc.read(), exc.headers.get("Content-Type", "")
        text = raw.decode("utf-8")
        return status, (json.loads(text) if "json" in ctype else text)


@contextmanager
def running_server(directory: Path, *args: str) -> Iterator[Server]:
    """`trncost serve` (plus `args`) on a free port, its state and log in `directory`, until
    the block ends (Ctrl-C, and it must stop cleanly)."""
    port = free_port()
    out = directory / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", TRNCOST_STATE_DIR=str(out.parent)
    )
    with out.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "trncost_client.cli", "serve", "--port", str(port), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
        )
    server = Server(f"http://127.0.0.1:{port}", process, out, env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"trncost serve exited early:\n{out.read_text()}")
        if "Ctrl-C stops it" in out.read_text():
            break
        time.sleep(0.2)
    else:
        process.kill()
        pytest.fail(f"trncost serve did not start in 60 s:\n{out.read_text()}")
    yield server
    process.send_signal(signal.SIGINT)  # Ctrl-C
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"trncost serve did not stop on Ctrl-C:\n{out.read_text()[-8000:]}")
    assert process.returncode == 0, out.read_text()
    assert "stopped." in out.read_text()


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("serve")) as started:
        yield started
