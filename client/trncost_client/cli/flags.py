"""Flag types: each checks its value while the arguments are parsed, so a bad flag is one line
(`trncost <command>: error: argument --seed: ...`) and exit status 2, before anything runs.

The Monte Carlo bounds are the comparison request's (`trncost.model.requests.ComparisonRequest`:
seed 0..2**32-1, samples 1,000..100,000), so the CLI and the API take the same values.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

SEED_MAX = 2**32 - 1
SAMPLES_MIN, SAMPLES_MAX = 1_000, 100_000
TOP_MAX = 1_000
PORT_MAX = 65_535
TIMEOUT_MAX_S = 86_400.0
_DIGITS_MAX = 20  # longer digit strings are not parsed (Python refuses over 4,300)


def _int_in(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        stripped = text.strip()
        if len(stripped) > _DIGITS_MAX:
            raise argparse.ArgumentTypeError(f"an integer from {low:,} to {high:,}")
        try:
            value = int(stripped)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"an integer from {low:,} to {high:,}, not {stripped[:40]!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"an integer from {low:,} to {high:,}, not {value:,}")
        return value

    parse.__name__ = what  # argparse names the type in its own messages
    return parse


seed = _int_in(0, SEED_MAX, "seed")
samples = _int_in(SAMPLES_MIN, SAMPLES_MAX, "samples")
top = _int_in(0, TOP_MAX, "rows")
port = _int_in(1, PORT_MAX, "port")
count = _int_in(1, 1_000_000, "count")
version = _int_in(1, 2**31 - 1, "version")


def _float_in(low: float, high: float, what: str) -> Callable[[str], float]:
    """A finite number in (low, high]."""

    def parse(text: str) -> float:
        stripped = text.strip()
        try:
            value = float(stripped[:64])
        except ValueError:
            value = math.nan
        if len(stripped) > 64 or not math.isfinite(value) or not low < value <= high:
            raise argparse.ArgumentTypeError(
                f"a number more than {low:g} and at most {high:g}, not {stripped[:40]!r}"
            )
        return value

    parse.__name__ = what
    return parse


seconds = _float_in(0.0, TIMEOUT_MAX_S, "seconds")
positive = _float_in(0.0, 1e18, "number")


def output_file(text: str) -> str:
    """A file to write: its folder must exist and take a new file (tried with a temporary file,
    removed at once: what the user runs as may be root, whom permission bits do not stop), and
    an existing one must be a regular file that opens for writing (left as it is). Nothing is
    left behind here."""
    if not text.strip() or "\0" in text:
        raise argparse.ArgumentTypeError("give a file name")
    path = Path(text).expanduser()
    folder = path.parent
    try:
        found = os.stat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text}: {exc.strerror or exc}") from None
    if found is not None and not stat.S_ISREG(found.st_mode):
        what = "a directory" if stat.S_ISDIR(found.st_mode) else "not a regular file"
        raise argparse.ArgumentTypeError(f"{text}: {what}; give a file to write")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text}: the folder {folder} does not exist (nothing is created: make it first)"
        )
    try:
        if found is not None:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NONBLOCK", 0)))
        else:
            fd, probe = tempfile.mkstemp(prefix=".trncost-write-check-", dir=folder)
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        where = text if found is not None else f"{text}: the folder {folder}"
        raise argparse.ArgumentTypeError(
            f"{where} cannot be written ({exc.strerror or exc})"
        ) from None
    return text


def output_file_or_stdout(text: str) -> str:
    """`-` (stdout), or a file to write (`output_file`)."""
    return text if text == "-" else output_file(text)
