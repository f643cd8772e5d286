"""What every command group shares: the command type, number formats, JSON and error output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, TypeAlias

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from trncost import display
from trncost.model import Provenance
from trncost.model.common import unprintable

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


def one_line(message: object) -> str:
    """`message` on one line: whitespace runs (newlines too) become one space, and any other
    control character is written as its escape, so a file's content cannot break the line or
    drive the terminal."""
    text = " ".join(str(message).split())
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def fail(message: str) -> int:
    """One line on stderr, exit status 2."""
    sys.stderr.write(f"trncost: error: {one_line(message)}\n")
    sys.stderr.flush()
    return 2


def terminal_safe(text: str) -> str:
    """`text` with every control character but a line break or tab (ESC, BEL, C1 codes, ...),
    lone surrogates and bidirectional overrides written as escapes: a name stored by anyone
    cannot drive the terminal it is printed on (issue 23)."""
    if text.isprintable():
        return text
    return "".join(
        c if c in "\n\t" or unprintable(c) is None else repr(c)[1:-1].replace("'", "") for c in text
    )


class SafeConsole(Console):
    """The CLI's console: every text it renders (a printed line, a table cell, a Text) is
    terminal-safe, whatever a server or a file put in it. Strings are made safe before layout;
    anything else (a Text built by a command) as its segments are rendered."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), **kwargs)

    def render(self, renderable: Any, options: Any = None) -> Iterator[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and not segment.text.isprintable():
                yield Segment(terminal_safe(segment.text), segment.style)
            else:
                yield segment
