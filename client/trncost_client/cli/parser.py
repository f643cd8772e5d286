"""The `trncost` argument parser, assembled from the command groups, and `main`.

`main` keeps the CLI's promise whatever a command does: an error is one line on stderr and exit
status 2, never a traceback (a bad flag: `trncost <command>: error: ...`, from the parser; a bad
file or anything a command lets escape: `trncost: error: ...`), and with --json stdout holds
only JSON: the console commands print on is stderr then.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError
from rich.console import Console

from trncost.errors import TrncostError, format_validation_error
from trncost_client.cli import actuals, capacity, dlq, offline, remote, serve, trial, writes
from trncost_client.cli.output import Command, SafeConsole, fail, one_line

# The order of `trncost --help`.
GROUPS = (offline, trial, serve, remote, writes, capacity, actuals, dlq)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (no usage block), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    from trncost_client import cli  # the package docstring is the help text

    parser = Parser(
        prog="trncost",
        description=cli.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)  # subparsers are Parsers too
    for group in GROUPS:
        group.add_commands(sub)
    return parser


def _console(args: argparse.Namespace) -> Console:
    """Where a command prints: stdout, or stderr with --json (stdout is the JSON's alone)."""
    if getattr(args, "json", False):
        return SafeConsole(stderr=True, width=160, soft_wrap=True)
    if sys.stdout.isatty():
        return SafeConsole(width=160)
    return SafeConsole(width=160, soft_wrap=False)


def _no_stray_log_lines() -> None:
    """The layer's warnings (a Price List item rejected, ...) are for the service's logs; a
    command reports what matters itself (a rejected item is in the snapshot it prints). With
    no handler, Python would print them on stderr as bare lines beside the one error line."""
    for name in ("trncost", "trncost_client"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(logging.NullHandler())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "max_per_second", None) is not None and args.max_per_second < 1:
        parser.error("--max-per-second must be 1 or more")
    if args.command != "serve":
        _no_stray_log_lines()
    handler: Command = args.handler
    try:
        return handler(args, _console(args))
    except KeyboardInterrupt:
        return fail("interrupted")
    except TrncostError as exc:
        return fail(str(exc))
    except ValidationError as exc:  # a file's content a command validated without naming it
        where = f"{args.file}: " if getattr(args, "file", None) else ""
        return fail(where + format_validation_error(exc))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return fail(f"{where}{exc.strerror or exc}")
    except Exception as exc:  # a bug: still one line, never a traceback
        return fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in trncost)")
