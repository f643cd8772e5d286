"""The `trncost` argument parser, assembled from the command groups, and `main`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console

from trncost_client.cli import actuals, dlq, offline, remote, serve, trial, writes
from trncost_client.cli.output import Command

# The order of `trncost --help`.
GROUPS = (offline, trial, serve, remote, writes, actuals, dlq)


def build_parser() -> argparse.ArgumentParser:
    from trncost_client import cli  # the package docstring is the help text

    parser = argparse.ArgumentParser(
        prog="trncost",
        description=cli.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "report" and args.version is not None and args.version < 1:
        parser.error("--version must be 1 or more")
    if getattr(args, "timeout", 1) <= 0:
        parser.error("--timeout must be more than 0 seconds")
    if getattr(args, "max_per_second", None) is not None and args.max_per_second < 1:
        parser.error("--max-per-second must be 1 or more")
    console = Console(width=160) if sys.stdout.isatty() else Console(width=160, soft_wrap=False)
    handler: Command = args.handler
    return handler(args, console)
