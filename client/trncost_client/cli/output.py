"""What every command group shares: the command type, number formats, JSON and error output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import TypeAlias

from rich.console import Console

from trncost import display
from trncost.model import Provenance

# A command: its parsed arguments and the console to print on → the exit status.
Command: TypeAlias = Callable[[argparse.Namespace, Console], int]
# What `add_subparsers()` returns: each command group adds its commands to it.
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def money(x: Decimal | None) -> str:
    """To the cent; PENDING for an unknown (trncost.display, as the reports show it)."""
    return display.usd(x)


def number(x: object) -> str:
    """A quantity or a value as the reports show it (trncost.display)."""
    return display.number(x)


def provenance_source(p: Provenance) -> str:
    """One line saying where a number comes from."""
    match p.kind:
        case "official_price":
            return f"snapshot {p.snapshot_id} sku {p.sku} rate {p.rate_code}"
        case "trial_measurement":
            return f"{p.metric} ← {', '.join(p.trial_ids)}"
        case "user_assumption":
            return p.name + (f" ({p.note})" if p.note else "")
        case "derived":
            return p.formula
        case "published_reference":
            return p.figure
        case _:
            return p.reason


def print_json(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, indent=2) + "\n")


def fail(message: str) -> int:
    """One line on stderr, exit status 2."""
    line = " ".join(str(message).split())
    sys.stderr.write(f"trncost: error: {line}\n")
    sys.stderr.flush()
    return 2
