"""`trncost trial run --local -- CMD …`: a training command under the trial agent, against the
local runtime named by --url (default $TRNCOST_URL, else http://127.0.0.1:8080)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from rich.console import Console

from trncost.errors import ClientError
from trncost_client.cli import flags, trial_import, writes
from trncost_client.cli.output import SubParsers, fail
from trncost_client.cli.runtime import add_url_option, local_runtime
from trncost_client.http import TrncostClient

SHOWN_CHANGES = 4
REFRESH_WAIT_S = 5.0  # the refresh runs from the "Trial Recorded" event, a moment later


def _machine(args: argparse.Namespace, state: dict[str, Any], workload: str) -> tuple[str, int]:
    """The instance type and count the run is recorded (and priced) as: explicit, or the demo
    workload's own label for this machine."""
    demo = state.get("demo_candidate") or {}
    if workload == state.get("demo_workload_id") and demo:
        return args.instance_type or demo["instance_type"], args.instance_count or 1
    if not args.instance_type:
        raise ClientError(
            f"--instance-type is required for workload {workload}: the instance type this run "
            "is recorded and priced as (this machine is not one; only the demo workload "
            f"{state.get('demo_workload_id')} has a default)"
        )
    return args.instance_type, args.instance_count or 1


def _wait_for_trial(client: TrncostClient, trial_id: str, wait_s: float) -> dict[str, Any] | None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            trial: dict[str, Any] = client.get_json(f"/trials/{trial_id}")["trial"]
            return trial
        except ClientError:
            time.sleep(0.5)
    return None


def _wait_for_refresh(
    client: TrncostClient, estimates: dict[str, str], trial_id: str, wait_s: float
) -> None:
    """Until every estimate has a version made by this trial, or `wait_s` (a trial that moves
    no figure makes none)."""
    deadline = time.monotonic() + wait_s
    waiting = set(estimates.values())
    while waiting and time.monotonic() < deadline:
        for estimate_id in sorted(waiting):
            try:
                versions = client.get_json(f"/estimates/{estimate_id}/versions")["versions"]
            except ClientError:
                continue
            if trial_id in versions[-1]["reason"]:
                waiting.discard(estimate_id)
        if waiting:
            time.sleep(0.25)


def _print_refreshes(
    console: Console, client: TrncostClient, estimates: dict[str, str], trial_id: str
) -> None:
    """The seeded estimates of the workload: the version this trial made, and what moved."""
    for instance_type, estimate_id in estimates.items():
        try:
            versions = client.get_json(f"/estimates/{estimate_id}/versions")["versions"]
        except ClientError:
            continue
        latest = versions[-1]
        made = trial_id in latest["reason"]
        what = "new version" if made else "unchanged at version"
        console.print(
            f"  estimate {estimate_id} ({instance_type}): {what} {latest['version']} "
            f"({latest['reason']}) {client.base_url}/estimates/{estimate_id}/report"
        )
        for change in latest.get("changes", [])[:SHOWN_CHANGES] if made else []:
            console.print(f"    {change['label']}: {change['before']} → {change['after']}")


def cmd_trial_run(args: argparse.Namespace, console: Console) -> int:
    """Run a training command under the trial agent against the local runtime at --url: its
    metrics and "Trial Run Completed" go to that runtime's embedded AWS, ingest records the
    trial and the workload's estimates are refreshed, as they would be on AWS."""
    import subprocess
    from datetime import UTC, datetime

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return fail("give the training command after --, e.g. -- python examples/train_tiny.py")
    try:
        state = local_runtime(args.url)
        workload = args.workload or state.get("demo_workload_id")
        if not workload:
            return fail("--workload is required (the local runtime seeded no demo workload)")
        instance_type, count = _machine(args, state, workload)
    except ClientError as exc:
        return fail(str(exc))
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
        sys.executable, "-m", "trncost_client.agent",
        "--tag", f"trncost:workload={workload}", "--tag", f"trncost:phase={args.phase}",
        "--tag", f"trncost:trial={trial_id}",
        "--instance-type", instance_type, "--instance-count", str(count),
        "--region", state["region"], "--bus", state["bus"], "--send-event", "--interval", "2",
        "--", *command,
    ]  # fmt: skip
    console.print(
        f"runtime {state['url']} (embedded AWS {state['aws_endpoint']}, {state['region']})"
    )
    console.print(
        f"running under the trial agent as trial {trial_id} of workload {workload} "
        f"({args.phase}, recorded as {count}× {instance_type})"
    )
    code = subprocess.call(agent, env=env)
    console.print(f"training command exited with {code}; waiting for ingest…")
    client = TrncostClient(state["url"])
    trial = _wait_for_trial(client, trial_id, args.wait)
    if trial is None:
        return fail(
            f"trial {trial_id} was not recorded within {args.wait:g} s: see "
            f"{state['url']}/ingest/rejected"
        )
    work = trial["work"]
    console.print(
        f"[bold]trial {trial_id} recorded[/bold] at {state['url']}/trials/{trial_id}: "
        f"{trial['status']}, {work['quality_meeting']:,.0f} of {work['done']:,.0f} "
        f"{work['unit']} quality-meeting, steady {trial['wall']['steady_s']:.1f} s"
    )
    for note in trial.get("notes", []):
        console.print(f"  note: {note}")
    estimates = (state.get("estimates") or {}).get(workload, {})
    _wait_for_refresh(client, estimates, trial_id, min(REFRESH_WAIT_S, args.wait))
    _print_refreshes(console, client, estimates, trial_id)
    return 0 if code == 0 else code


def add_commands(sub: SubParsers) -> None:
    trial = sub.add_parser("trial", help="trial runs")
    trial_sub = trial.add_subparsers(dest="trial_command", required=True)
    run = trial_sub.add_parser(
        "run",
        help="run a training command under the trial agent against the local runtime",
        description="Run CMD under the trial agent against the local runtime at --url (`make "
        "run`): its metrics and event go to that runtime's embedded AWS, the trial is "
        "recorded and the workload's estimates refresh by themselves. By default the trial "
        "belongs to the runtime's demo workload (tiny-demo, recorded as the 1× c7i.16xlarge "
        "it is labelled as); for another workload give --workload and --instance-type. "
        "Example: trncost trial run --local -- python examples/train_tiny.py",
    )
    run.add_argument(
        "--local",
        action="store_true",
        required=True,
        help="against the local runtime (the only target for now; on AWS, start "
        "trial plans: POST /workloads/{id}/trial-plans)",
    )
    add_url_option(run, "the local runtime's URL")
    run.add_argument("--workload", help="workload id (default: the runtime's demo workload)")
    run.add_argument("--phase", choices=["fit", "baseline", "target"], default="baseline")
    run.add_argument(
        "--instance-type",
        help="what the run is recorded and priced as (required unless the workload is the demo)",
    )
    run.add_argument("--instance-count", type=flags.count, help="default 1")
    run.add_argument("--trial-id", help="default: local-<UTC timestamp>")
    run.add_argument(
        "--wait", type=flags.seconds, default=60, help="seconds to wait for the record"
    )
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD …")
    run.set_defaults(handler=cmd_trial_run)
    trial_import.add_commands(trial_sub)
    writes.add_trial_commands(trial_sub)
