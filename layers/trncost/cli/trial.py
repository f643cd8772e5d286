"""`trncost trial run --local -- CMD …`: a training command under the trial agent, against the
local runtime (`make run`)."""

from __future__ import annotations

import argparse
import os
import sys

from rich.console import Console

from trncost.cli import trial_import
from trncost.cli.output import SubParsers, fail
from trncost.client import TrncostClient
from trncost.errors import ClientError


def cmd_trial_run(args: argparse.Namespace, console: Console) -> int:
    """Run a training command under the trial agent against the local runtime: its metrics and
    "Trial Run Completed" go to the runtime's embedded AWS, ingest records the trial and the
    workload's estimates are refreshed, as they would be on AWS."""
    import subprocess
    import time
    from datetime import UTC, datetime

    from trncost.local.runtime import read_state, state_path

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return fail("give the training command after --, e.g. -- python examples/train_tiny.py")
    state = read_state()
    if state is None:
        return fail(f"no local runtime found ({state_path()}): start it with `make run`")
    workload = args.workload or state.get("workload_id")
    if not workload:
        return fail("--workload is required (the local runtime seeded none)")
    trial_id = args.trial_id or f"local-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": state["aws_endpoint"],
        "AWS_DEFAULT_REGION": state["region"],
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_SESSION_TOKEN": "local",
    }
    agent = [
        sys.executable, "-m", "trncost.agent",
        "--tag", f"trncost:workload={workload}", "--tag", f"trncost:phase={args.phase}",
        "--tag", f"trncost:trial={trial_id}",
        "--instance-type", args.instance_type, "--instance-count", str(args.instance_count),
        "--region", state["region"], "--bus", state["bus"], "--send-event", "--interval", "2",
        "--", *command,
    ]  # fmt: skip
    console.print(
        f"running under the trial agent as trial {trial_id} of {workload} "
        f"({args.phase}, {args.instance_count}× {args.instance_type})"
    )
    code = subprocess.call(agent, env=env)
    console.print(f"training command exited with {code}; waiting for ingest…")
    client = TrncostClient(state["url"])
    deadline = time.monotonic() + args.wait
    trial = None
    while time.monotonic() < deadline:
        try:
            trial = client.get_json(f"/trials/{trial_id}")["trial"]
            break
        except ClientError:
            time.sleep(0.5)
    if trial is None:
        return fail(
            f"trial {trial_id} was not recorded within {args.wait:g} s: see "
            f"{state['url']}/ingest/rejected"
        )
    work = trial["work"]
    console.print(
        f"[bold]trial {trial_id} recorded[/bold]: {trial['status']}, "
        f"{work['quality_meeting']:,.0f} of {work['done']:,.0f} {work['unit']} "
        f"quality-meeting, steady {trial['wall']['steady_s']:.1f} s"
    )
    for note in trial.get("notes", []):
        console.print(f"  note: {note}")
    time.sleep(min(5.0, args.wait))  # the refresh runs from the "Trial Recorded" event
    for instance_type, estimate_id in (state.get("estimates") or {}).items():
        try:
            versions = client.get_json(f"/estimates/{estimate_id}/versions")["versions"]
        except ClientError:
            continue
        latest = versions[-1]
        console.print(
            f"  estimate {estimate_id} ({instance_type}): version "
            f"{latest['version']} ({latest['reason']})"
        )
    return 0 if code == 0 else code


def add_commands(sub: SubParsers) -> None:
    trial = sub.add_parser("trial", help="trial runs")
    trial_sub = trial.add_subparsers(dest="trial_command", required=True)
    run = trial_sub.add_parser(
        "run",
        help="run a training command under the trial agent against the local runtime",
        description="Run CMD under the trial agent against the local runtime (`make run`): "
        "its metrics and event go to the runtime's embedded AWS, the trial is recorded and "
        "the workload's estimates refresh by themselves. Example: trncost trial run --local "
        "-- python examples/train_tiny.py",
    )
    run.add_argument(
        "--local",
        action="store_true",
        required=True,
        help="against the local runtime (the only target for now; on AWS, start "
        "trial plans: POST /workloads/{id}/trial-plans)",
    )
    run.add_argument("--workload", help="workload id (default: the runtime's example)")
    run.add_argument("--phase", choices=["fit", "baseline", "target"], default="baseline")
    run.add_argument("--instance-type", default="trn3.48xlarge")
    run.add_argument("--instance-count", type=int, default=2)
    run.add_argument("--trial-id", help="default: local-<UTC timestamp>")
    run.add_argument("--wait", type=float, default=60, help="seconds to wait for the record")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD …")
    run.set_defaults(handler=cmd_trial_run)
    trial_import.add_commands(trial_sub)
