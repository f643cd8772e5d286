"""Time to a first answer: a fresh clone, then `make run`, until the example's report answers.

Clones this repository (a local clone of `--ref`, default HEAD) into a temporary folder, runs
`make run` there as a new user would (the virtualenv built from nothing, with empty pip and uv
caches unless --warm: every package downloaded from the registry), and times until
`GET /estimates/<the example's trn2 estimate>/report` answers 200: the first answer. Then stops
the server (its process group) and deletes the clone.

Goal: ≤ 90 s on 2 cores. Prints the phases; asserts nothing.

    python benchmarks/bench_first_answer.py [--ref REF] [--warm] [--port N] [--timeout S]

A ref whose Makefile predates RUN_ARGS (it serves on 8080 only) is timed the same way: its
`make` builds the virtualenv, then its `trncost serve` is started on --port.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 90.0
REPORT = re.compile(r"example report \(trn2\.48xlarge\): (http://\S+/report)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()
            return bool(response.status == 200)
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="HEAD", help="what to clone (default HEAD)")
    parser.add_argument("--warm", action="store_true", help="keep pip's and uv's caches")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args(argv)
    port = args.port or _free_port()
    work = Path(tempfile.mkdtemp(prefix="trncost-first-answer-"))
    clone = work / "trncost"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_"))}
    if not args.warm:  # a new machine: nothing cached
        env["PIP_CACHE_DIR"] = str(work / "pip-cache")
        env["UV_CACHE_DIR"] = str(work / "uv-cache")
    env["TRNCOST_STATE_DIR"] = str(work / "state")
    log = work / "run.log"
    server: subprocess.Popen[bytes] | None = None
    try:
        start = time.monotonic()
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", args.ref], check=True, capture_output=True,
            text=True,
        ).stdout.strip()  # fmt: skip
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
        cloned = time.monotonic() - start
        makefile = (clone / "Makefile").read_text()
        with log.open("wb") as out:
            if "RUN_ARGS" in makefile:
                command = ["make", "run", f"RUN_ARGS=--port {port}"]
                server = subprocess.Popen(
                    command, cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            else:  # before RUN_ARGS: its make builds the venv, its serve runs on our port
                subprocess.run(["make", ".venv/.trncost.stamp"], cwd=clone, env=env, stdout=out,
                               stderr=subprocess.STDOUT, check=True)  # fmt: skip
                server = subprocess.Popen(
                    [str(clone / ".venv/bin/trncost"), "serve", "--port", str(port)], cwd=clone,
                    env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
        serving = report = None
        url = None
        while time.monotonic() - start < args.timeout:
            text = log.read_text(errors="replace")
            if serving is None and "trncost is serving on" in text:
                serving = time.monotonic() - start
            found = REPORT.search(text)
            if found:
                url = found.group(1)
                if _answers(url):
                    report = time.monotonic() - start
                    break
            if server.poll() is not None:
                print(f"make run stopped ({server.returncode}):\n{text[-3000:]}")
                return 1
            time.sleep(0.25)
        cache = "warm caches" if args.warm else "empty pip and uv caches"
        print(
            f"fresh clone of {args.ref} ({commit[:10]}) → make run, {os.cpu_count()} cores, {cache}"
        )
        print(f"  clone:                      {cloned:6.1f} s")
        up = serving if serving is not None else float("nan")
        print(f"  serving (venv built, seeded): {up:6.1f} s")
        if report is None:
            print(f"  no answer within {args.timeout:g} s")
            return 1
        verdict = "within" if report <= GOAL_S else "over"
        print(f"  first answer (the report):  {report:6.1f} s ({verdict} the {GOAL_S:g} s goal)")
        print(f"  {url}")
        return 0
    finally:
        if server is not None and server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
