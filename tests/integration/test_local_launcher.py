"""The local launcher starts a real process under the trial agent, with the run's environment,
its output in the runs directory, and stops it (its whole process group) on request or at the
plan's max run time. The agent publishes nowhere here (--offline is not used: its endpoint is
unreachable, so what it could not send lands in the run's buffer, never in the training)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from trncost.errors import LaunchRejected
from trncost.launch import local
from trncost.launch.base import LaunchRequest
from trncost.launch.local import LocalLauncher
from trncost.model.trial import Phase
from trncost.settings import LocalRuns

SCRIPT = (
    "import os, time, json; "
    "print('TRNCOST ' + json.dumps({'event': 'step', 'tokens': 10, 'loss': 1.0})); "
    "print('steps=' + os.environ['TRNCOST_STEPS'], 'trial=' + os.environ['TRNCOST_TRIAL_ID']); "
    "time.sleep(float(os.environ.get('SLEEP', '0')))"
)


def request(**over) -> LaunchRequest:
    data = dict(
        plan_id="plan-l",
        workload_id="tiny-demo",
        phase=Phase.fit,
        run=1,
        trial_id="plan-l-fit-c0-n1-r1",
        instance_type="c7i.16xlarge",
        instance_count=1,
        region="us-east-1",
        entry_command=["python", "-c", SCRIPT],
        dataset_uri=None,
        steps=20,
        max_run_seconds=60,
    )
    data.update(over)
    return LaunchRequest(**data)


@pytest.fixture
def launcher(tmp_path, monkeypatch):
    # the agent's AWS calls go to an endpoint that is not there: buffered, never fatal
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    runs = LocalRuns(runs_dir=tmp_path / "runs", region="us-east-1", bus_name="trncost-local")
    yield LocalLauncher(runs, workdir=tmp_path)
    local.stop_all()


def _wait_gone(job_id: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while job_id in local.running():
        assert time.monotonic() < deadline, f"{job_id} still running"
        time.sleep(0.1)


def test_a_run_is_the_command_under_the_agent_with_its_steps_and_trial(launcher) -> None:
    job = launcher.launch(request())
    assert job.job_id.startswith("local-")
    _wait_gone(job.job_id)
    out = launcher.log_path("plan-l-fit-c0-n1-r1").read_text()
    assert "steps=20 trial=plan-l-fit-c0-n1-r1" in out  # `python` is this runtime's Python
    buffered = launcher.log_path("plan-l-fit-c0-n1-r1").with_suffix(".buffer.jsonl")
    assert '"kind": "event"' in buffered.read_text()  # the agent's event, not sent here


def test_stop_ends_the_run_and_its_children(launcher, monkeypatch) -> None:
    monkeypatch.setenv("SLEEP", "120")
    job = launcher.launch(request(trial_id="plan-l-fit-c0-n1-r2"))
    time.sleep(1.0)
    started = time.monotonic()
    launcher.stop(job.job_id, "us-east-1")
    _wait_gone(job.job_id)
    assert time.monotonic() - started < 15
    launcher.stop(job.job_id, "us-east-1")  # stopping a finished run is not an error


def test_a_run_past_its_max_run_time_is_stopped(launcher, monkeypatch) -> None:
    monkeypatch.setenv("SLEEP", "120")
    job = launcher.launch(request(trial_id="plan-l-fit-c0-n1-r3", max_run_seconds=2))
    _wait_gone(job.job_id, timeout=20)


@pytest.mark.parametrize(
    ("runs", "over", "why"),
    [
        (None, {}, "runs only in the local runtime"),
        ("ok", {"instance_count": 2}, "2 instances cannot be measured"),
        ("ok", {"region": "us-west-2"}, "recorded in the runtime's region us-east-1"),
    ],
)
def test_what_the_local_launcher_refuses(tmp_path, runs, over, why) -> None:
    settings = LocalRuns(runs_dir=tmp_path, region="us-east-1", bus_name=None) if runs else None
    with pytest.raises(LaunchRejected, match=why):
        LocalLauncher(settings).launch(request(**over))


def test_the_command_names_this_python_and_the_runtime(tmp_path) -> None:
    runs = LocalRuns(runs_dir=tmp_path, region="us-east-1", bus_name="trncost-local")
    argv = local.command(request(), runs, "/venv/bin/python", Path("/b.jsonl"))
    assert argv[:3] == ["/venv/bin/python", "-m", "trncost_client.agent"]
    assert argv[argv.index("--") + 1] == "/venv/bin/python"
    assert ["--bus", "trncost-local"] == argv[argv.index("--bus") : argv.index("--bus") + 2]
    assert "--send-event" in argv
    assert LocalLauncher(runs).python == sys.executable  # the runtime's own Python
