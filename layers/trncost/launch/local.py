"""The `local` launcher: each run of a trial plan as a process on this machine, under the trial
agent. Only the local runtime (`make run`) offers it (`trncost.settings.LocalRuns`); anywhere
else a launch is refused.

The run is `python -m trncost_client.agent --send-event … -- <the plan's entry command>`, started in
the trncost checkout (where `make run` runs) with the runtime's own environment (its embedded
AWS endpoint, region and credentials) plus the run's (`TRNCOST_TRIAL_ID`, `TRNCOST_TAGS`,
`TRNCOST_STEPS`: the phase's steps, which examples/train_tiny.py reads). A `python` or
`python3` first word is this runtime's Python (the one with trncost and numpy). So the agent's
metrics and its "Trial Run Completed" event reach the embedded CloudWatch and EventBridge, and
the ingest records the trial as it would a job's on AWS: nothing here writes a trial record.

Each run writes its output to `<runs dir>/<trial id>.log` (and what the agent could not send
to `<trial id>.buffer.jsonl`). A run still going after the plan's max run time is stopped
(SIGTERM to its process group, SIGKILL 10 s later); so is every run when the runtime stops.
The job id is `local-<pid>`. Launching is not idempotent by itself: the plan store claims each
run before its launch (as for Batch).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import trncost
from trncost.errors import LaunchRejected
from trncost.launch.base import LaunchedJob, LaunchRequest, job_name
from trncost.model.launchers import LOCAL_INSTANCE_COUNT
from trncost.settings import LocalRuns

log = logging.getLogger(__name__)
CHECKOUT = Path(trncost.__file__).resolve().parent.parent.parent
AGENT_INTERVAL_S = 2  # seconds between the agent's metric batches (a local run is short)
KILL_GRACE_S = 10
PYTHON_NAMES = ("python", "python3")

_running: dict[str, subprocess.Popen[bytes]] = {}  # job id → process, every launcher's
_lock = threading.Lock()


def command(request: LaunchRequest, runs: LocalRuns, python: str, buffer: Path) -> list[str]:
    """The agent-wrapped command line of one run."""
    entry = list(request.entry_command)
    if entry and entry[0] in PYTHON_NAMES:
        entry[0] = python
    agent = [
        python,
        "-m",
        "trncost_client.agent",
        "--send-event",
        "--interval",
        str(AGENT_INTERVAL_S),
    ]
    agent += ["--instance-type", request.instance_type]
    agent += ["--instance-count", str(request.instance_count), "--region", runs.region]
    if runs.bus_name:
        agent += ["--bus", runs.bus_name]
    return [*agent, "--buffer", str(buffer), "--", *entry]


class LocalLauncher:
    def __init__(
        self, runs: LocalRuns | None, python: str = sys.executable, workdir: Path = CHECKOUT
    ) -> None:
        self.runs = runs
        self.python = python
        self.workdir = workdir

    def _check(self, r: LaunchRequest) -> LocalRuns:
        if self.runs is None:
            raise LaunchRejected(
                f"{r.trial_id}: the local launcher runs only in the local runtime (make run)"
            )
        if r.instance_count != LOCAL_INSTANCE_COUNT:
            raise LaunchRejected(
                f"{r.trial_id}: a local run is one process: {r.instance_count} instances "
                "cannot be measured on this machine"
            )
        if r.region != self.runs.region:
            raise LaunchRejected(
                f"{r.trial_id}: local runs are recorded in the runtime's region "
                f"{self.runs.region}, not {r.region}"
            )
        return self.runs

    def log_path(self, trial_id: str) -> Path:
        runs = self.runs.runs_dir if self.runs else Path(".")
        return runs / f"{job_name(trial_id, 200)}.log"

    def launch(self, request: LaunchRequest) -> LaunchedJob:
        runs = self._check(request)
        runs.runs_dir.mkdir(parents=True, exist_ok=True)
        out = self.log_path(request.trial_id)
        argv = command(request, runs, self.python, out.with_suffix(".buffer.jsonl"))
        env = os.environ.copy()  # the runtime's: its embedded AWS endpoint and credentials
        env.update(request.environment())
        try:
            with out.open("ab") as sink:
                process = subprocess.Popen(
                    argv,
                    cwd=self.workdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: stopped as one
                )
        except OSError as exc:
            raise LaunchRejected(f"{request.trial_id}: could not start {argv[0]}: {exc}") from None
        job_id = f"local-{process.pid}"
        with _lock:
            _running[job_id] = process
        watch = threading.Thread(
            target=_watch,
            args=(job_id, process, request.max_run_seconds),
            name=f"trncost-{job_id}",
            daemon=True,
        )
        watch.start()
        log.info("local run %s started as %s, output in %s", request.trial_id, job_id, out)
        return LaunchedJob(job_id)

    def stop(self, job_id: str, region: str) -> None:
        """Stop a run this process started (one that ended, or is not ours, is left alone)."""
        with _lock:
            process = _running.get(job_id)
        if process is not None:
            _terminate(process)


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=KILL_GRACE_S)
    except ProcessLookupError:  # ended meanwhile
        pass


def _watch(job_id: str, process: subprocess.Popen[bytes], max_run_seconds: int) -> None:
    """Reap the run when it ends; stop it at the plan's max run time."""
    try:
        process.wait(timeout=max_run_seconds)
    except subprocess.TimeoutExpired:
        log.warning("local run %s passed its max run time (%s s): stopped", job_id, max_run_seconds)
        _terminate(process)
    finally:
        with _lock:
            _running.pop(job_id, None)


def running() -> list[str]:
    with _lock:
        return sorted(_running)


def stop_all() -> None:
    """Stop every local run still going (the local runtime stopping)."""
    with _lock:
        processes = list(_running.values())
    for process in processes:
        _terminate(process)
