"""`trncost dlq list|redrive|status`: SQS dead-letter queues (trncost_client.dead_letters).

Where they look, said on every run (stderr with --json):

- `--endpoint-url E`: that SQS endpoint (region: --region, else your AWS config);
- else the runtime at --url (default $TRNCOST_URL, else the local runtime at
  http://127.0.0.1:8080), when it is a local one: its embedded AWS endpoint and region, from
  its state file — no flag, no credentials needed;
- `--aws`, or a deployed --url: your AWS account with the default credentials (region:
  --region, else the execute-api URL's, else your AWS config).

`redrive` starts an SQS message move task (--wait follows it); --by-copy receives, re-sends
and deletes instead (the local runtime's embedded AWS has no move tasks). `QueueOps` is looked
up in this module when a command runs (tests replace it here). It needs no settings, and it is
not in the Lambda layer, so it is built here rather than by `trncost.wiring`.
"""

from __future__ import annotations

import argparse
import sys
from urllib.parse import urlsplit

from rich.console import Console, JustifyMethod
from rich.table import Table

from trncost.errors import ClientError, OpsError
from trncost_client.cli import flags
from trncost_client.cli.output import Command, SubParsers, fail, print_json
from trncost_client.cli.runtime import add_url_option, local_port, local_runtime
from trncost_client.dead_letters import MoveTask, QueueOps, arn_name
from trncost_client.http import execute_api_region

LOCAL_KEYS = ("local", "local")  # the embedded AWS takes any keys

DLQ_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("queue", "left"),
    ("messages", "right"),
    ("in flight", "right"),
    ("sources", "left"),
)


def _target(args: argparse.Namespace) -> tuple[QueueOps, str]:
    """The queues this command works on, and a line saying where they are."""
    if args.endpoint_url:
        region = args.region or "from your AWS config"
        where = f"SQS at {args.endpoint_url} (region {region})"
        return QueueOps(region=args.region, endpoint_url=args.endpoint_url), where
    if not args.aws and local_port(args.url) is not None:
        try:
            state = local_runtime(args.url)
        except ClientError as exc:
            raise OpsError(f"{exc}; for your AWS account give --aws") from None
        region = args.region or state["region"]
        where = (
            f"the local runtime {state['url']}: embedded AWS {state['aws_endpoint']}, "
            f"region {region}"
        )
        ops = QueueOps(region=region, endpoint_url=state["aws_endpoint"], access_key=LOCAL_KEYS)
        return ops, where
    host = urlsplit(args.url).hostname or ""
    region = args.region or (None if args.aws else execute_api_region(host))
    where = f"your AWS account (default credentials), region {region or 'from your AWS config'}"
    return QueueOps(region=region), where


def _ops(args: argparse.Namespace, console: Console) -> QueueOps:
    ops, where = _target(args)
    if args.json:
        sys.stderr.write(f"dead-letter queues at {where}\n")
    else:
        console.print(f"dead-letter queues at {where}")
    return ops


def _ops_command(command: Command) -> Command:
    """An SQS command: OpsError and anything unexpected are one line and exit 2."""

    def run(args: argparse.Namespace, console: Console) -> int:
        try:
            return command(args, console)
        except OpsError as exc:
            return fail(str(exc))
        except KeyboardInterrupt:
            return fail("interrupted")
        except Exception as exc:  # a bug: still one line, never a traceback
            return fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in trncost)")

    return run


@_ops_command
def cmd_dlq_list(args: argparse.Namespace, console: Console) -> int:
    found = _ops(args, console).dead_letter_queues(args.prefix)
    if args.json:
        print_json(
            [
                {
                    "name": d.queue.name,
                    "url": d.queue.url,
                    "arn": d.queue.arn,
                    "messages": d.depth.visible,
                    "in_flight": d.depth.in_flight,
                    "delayed": d.depth.delayed,
                    "sources": d.sources,
                }
                for d in found
            ]
        )
        return 0
    if not found:
        console.print("no dead-letter queues (*-dlq, *DeadLetter*) here")
        return 0
    table = Table(title="Dead-letter queues")
    for col, justify in DLQ_COLUMNS:
        table.add_column(col, justify=justify, overflow="fold")
    for d in found:
        table.add_row(
            d.queue.name,
            f"[red]{d.depth.visible}[/red]" if d.depth.visible else "0",
            str(d.depth.in_flight),
            ", ".join(d.sources) or "—",
        )
    console.print(table)
    return 0


def _task_line(task: MoveTask) -> str:
    of = f"/{task.to_move}" if task.to_move is not None else ""
    why = f" ({task.failure_reason})" if task.failure_reason else ""
    return f"{task.status}: {task.moved}{of} moved{why}"


@_ops_command
def cmd_dlq_redrive(args: argparse.Namespace, console: Console) -> int:
    ops = _ops(args, console)
    dlq = ops.resolve(args.queue)
    to = ops.resolve(args.to) if args.to else None
    depth = ops.depth(dlq)
    where = to.name if to else "its original source queue"
    out: dict[str, object] = {"dlq": dlq.name, "destination": to.name if to else None}
    if not args.json:
        console.print(
            f"{dlq.name}: {depth.visible} messages ({depth.in_flight} in flight) → {where}"
        )
    if depth.total == 0:
        if args.json:
            print_json({**out, "moved": 0, "status": "EMPTY"})
        else:
            console.print("nothing to redrive")
        return 0
    if args.by_copy:
        copied = ops.redrive_by_copy(dlq, to, args.max_per_second)
        if args.json:
            print_json(
                {**out, "mode": "copy", "moved": copied.moved, "duplicates": copied.duplicates}
            )
        else:
            console.print(
                f"moved {copied.moved} messages by copy"
                + (f" ({copied.duplicates} seen twice, sent once)" if copied.duplicates else "")
            )
        return 0
    started = ops.start_redrive(dlq, to, args.max_per_second)
    if not args.wait:
        if args.json:
            print_json({**out, "mode": "move_task", "task_handle": started.task_handle})
        else:
            console.print(f"move task started: {started.task_handle}")
            console.print(f"follow it with: trncost dlq status {dlq.name}")
        return 0

    def progress(task: MoveTask) -> None:
        if not args.json:
            console.print(f"  {_task_line(task)}")

    task = ops.wait(started, poll_s=args.poll_seconds, progress=progress)
    if args.json:
        print_json(
            {
                **out,
                "mode": "move_task",
                "task_handle": started.task_handle,
                "status": task.status,
                "moved": task.moved,
                "failure_reason": task.failure_reason,
            }
        )
    return 0 if task.status == "COMPLETED" else 1


@_ops_command
def cmd_dlq_status(args: argparse.Namespace, console: Console) -> int:
    ops = _ops(args, console)
    dlq = ops.resolve(args.queue)
    depth = ops.depth(dlq)
    tasks = ops.move_tasks(dlq)
    if args.json:
        print_json(
            {
                "dlq": dlq.name,
                "messages": depth.visible,
                "in_flight": depth.in_flight,
                "tasks": [t.__dict__ for t in tasks],
            }
        )
        return 0
    console.print(f"{dlq.name}: {depth.visible} messages ({depth.in_flight} in flight)")
    if not tasks:
        console.print("no message move task")
    for t in tasks:
        dest = arn_name(t.destination_arn) if t.destination_arn else "original sources"
        console.print(f"  → {dest}: {_task_line(t)}")
    return 0


def _add_sqs_options(parser: argparse.ArgumentParser) -> None:
    add_url_option(parser, "the runtime whose queues these are (a local one: its embedded AWS)")
    parser.add_argument(
        "--aws", action="store_true", help="your AWS account (default credentials), not --url"
    )
    parser.add_argument(
        "--region", help="the queues' AWS region (default: the runtime's, else your AWS config)"
    )
    parser.add_argument("--endpoint-url", help="an SQS endpoint (overrides --url and --aws)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def add_commands(sub: SubParsers) -> None:
    dlq = sub.add_parser("dlq", help="dead-letter queues: list them, redrive one")
    dlq_sub = dlq.add_subparsers(dest="dlq_command", required=True)
    listing = dlq_sub.add_parser(
        "list", help="queues named *-dlq or *DeadLetter*, with their depth and sources"
    )
    listing.add_argument("--prefix", help="only queues whose name starts with this")
    _add_sqs_options(listing)
    listing.set_defaults(handler=cmd_dlq_list)
    redrive = dlq_sub.add_parser(
        "redrive",
        help="move a DLQ's messages back to their source queue",
        description="Move a dead-letter queue's messages back to a queue whose consumer "
        "processes them again: an SQS message move task (StartMessageMoveTask) to --to, or "
        "to each message's original source queue. --by-copy receives, re-sends and deletes "
        "them instead (endpoints without move tasks; idempotent per message id).",
    )
    redrive.add_argument("queue", metavar="QUEUE", help="the DLQ: name, URL or ARN")
    redrive.add_argument("--to", metavar="SOURCE", help="the destination queue (name, URL, ARN)")
    redrive.add_argument(
        "--max-per-second", type=int, metavar="N", help="move at most N messages a second"
    )
    redrive.add_argument("--wait", action="store_true", help="follow the move task to its end")
    redrive.add_argument(
        "--by-copy", action="store_true", help="receive, re-send and delete, without a move task"
    )
    redrive.add_argument("--poll-seconds", type=flags.seconds, default=5.0, help=argparse.SUPPRESS)
    _add_sqs_options(redrive)
    redrive.set_defaults(handler=cmd_dlq_redrive)
    status = dlq_sub.add_parser("status", help="a DLQ's depth and its message move tasks")
    status.add_argument("queue", metavar="QUEUE", help="the DLQ: name, URL or ARN")
    _add_sqs_options(status)
    status.set_defaults(handler=cmd_dlq_status)
