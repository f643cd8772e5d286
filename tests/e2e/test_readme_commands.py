"""The README's commands run: every command in its code blocks and command spans, against a
local runtime of its own (`trncost serve`, what `make run` starts) where it talks to one, from
a scratch directory that sees the repository's `examples/` and `.venv/` (so nothing is written
into the checkout). A command that cannot run offline is excepted by name with the reason;
a command the README gains is run, or fails this test until it is excepted."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import running_server
from tests.support.examples import ROOT

README = ROOT / "README.md"
FENCE = re.compile(r"^[ \t]*```(?:sh|bash|shell|console)?[ \t]*\n(.*?)^[ \t]*```", re.M | re.S)
SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
# What runs: the venv's trncost, curl, make, npx, aws. A bare `trncost …` in prose names a
# command (a docs table's `trncost trial import`), it is not one to run.
COMMAND = re.compile(r"^(\.venv/bin/trncost|curl|make|npx|aws)(?=\s|$)")
# What the README shows but a test cannot run offline, and why.
EXCEPTED = {
    "make run": "serves until Ctrl-C: the runtime this test starts is the same `trncost serve`",
    "make test": "the whole suite, this test included",
    "make deploy STAGE=dev": "needs an AWS account (the templates are tested by tests/infra)",
    ".venv/bin/trncost actuals import focus-export/": "needs your own billing export of a run "
    "tagged with an estimate id (the worked example: tests/e2e/test_actuals_worked_example.py)",
    ".venv/bin/trncost actuals show est-…": "needs that export imported first (the same worked "
    "example)",
}
EXAMPLE = "llama31-8b-cpt"


def _commands(text: str) -> list[str]:
    """Each command of the README's fenced blocks and command spans, continuation lines joined
    and trailing comments dropped."""
    found: list[str] = []
    for block in FENCE.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and COMMAND.match(line):
                found.append(line)
    prose = FENCE.sub("", text)
    for span in SPAN.findall(prose):
        span = " ".join(span.split())
        if COMMAND.match(span):
            found.append(span)
    return found


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("readme-serve")) as server:
        yield server


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    here = tmp_path_factory.mktemp("readme-cwd")
    for name in ("examples", ".venv"):
        (here / name).symlink_to(ROOT / name)
    return here


def _estimate_id(url: str) -> str:
    with urllib.request.urlopen(f"{url}/workloads/{EXAMPLE}/estimates", timeout=30) as answer:
        page = json.loads(answer.read())
    return str(page["items"][0]["estimate_id"])


def _prepare(command: str, url: str) -> str:
    """The command as it runs against this test's runtime: its URL for localhost:8080, a real
    estimate id for the README's `est-…`."""
    port = url.rsplit(":", 1)[1]
    local = r"\b(?:http://)?(?:localhost|127\.0\.0\.1):8080\b"
    command = re.sub(local, f"127.0.0.1:{port}", command)
    if "est-…" in command:
        command = command.replace("est-…", _estimate_id(url))
    return command


def test_the_readme_has_commands_to_run():
    commands = _commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10
    assert set(EXCEPTED) <= set(commands), "an excepted command is no longer in the README"


def test_every_readme_command_runs(runtime, scratch):
    env = {
        **runtime.env,
        "TRNCOST_URL": runtime.url,
        "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "BROWSER": "true",  # --open "opens" with true(1): nothing is launched
    }
    ran: list[str] = []
    for command in _commands(README.read_text(encoding="utf-8")):
        if command in EXCEPTED:
            continue
        line = _prepare(command, runtime.url)
        done = subprocess.run(
            ["bash", "-c", line], cwd=scratch, env=env, capture_output=True, text=True, timeout=300
        )
        where = f"{command}\n  ran: {line}\n  exit {done.returncode}\n{done.stdout[-2000:]}"
        assert done.returncode == 0, where + done.stderr[-2000:]
        if line.startswith("curl"):
            assert '"error"' not in done.stdout, where
        ran.append(shlex.split(line)[0] + " " + " ".join(shlex.split(line)[1:3]))
    assert (scratch / "analysis.html").read_text().lstrip().startswith("<!DOCTYPE html>")
    print(f"\nREADME commands: {len(ran)} run, {len(EXCEPTED)} excepted (with reasons)")
