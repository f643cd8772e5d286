"""Reading a user's file, safely: every file the CLI reads for a user goes through here.

- Only a regular file is read. `os.stat` (which follows symlinks: a symlink loop is ELOOP, a
  clear error) refuses a directory, a FIFO, a device such as /dev/zero and a socket before
  anything is opened; the file is then opened with O_NONBLOCK (a FIFO swapped in between the
  two cannot block the open) and checked again with `fstat` on what was opened.
- A file is read up to a cap per kind (`REQUEST_FILE_MAX_BYTES`, `PRICE_FILE_MAX_BYTES`): a
  larger one is refused from its size, before it is read, and a file that grows while being
  read is cut at the cap and refused.
- Text is UTF-8 (a byte-order mark is skipped). JSON is parsed with trncost.safejson's bounds:
  nested deeper than `safejson.MAX_JSON_DEPTH` levels, or an integer of more than
  `safejson.MAX_INTEGER_DIGITS` digits, is refused with that reason (Python's json would
  raise RecursionError or ValueError on them); malformed JSON says its line and column.

Every refusal is a `RequestFileError` whose message is "path: why", one line. Trial logs are
not read whole: `open_regular` hands the CLI a stream, which the log reader reads in chunks
(trncost.metrics.logs.scan).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from trncost import safejson
from trncost.errors import RequestFileError

MiB = 2**20
# A request file and its workload and trials parts, a workload file, a trials file, a
# comparison request: hand-written or exported records, far below this.
REQUEST_FILE_MAX_BYTES = 16 * MiB
# A request file's `prices` part and `trncost prices upload`: a price snapshot, or a saved
# Price List file (a GetProducts answer, or one service's offer file for a region).
PRICE_FILE_MAX_BYTES = 128 * MiB

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _why(exc: OSError) -> str:
    """An OSError in words, without the path (the message starts with it)."""
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links (a symlink loop?)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or type(exc).__name__


def shown(path: str | os.PathLike[str]) -> str:
    """A path as a message shows it: a control character in its name (a newline, an escape
    sequence) written as its escape, so the message stays one line and the terminal inert."""
    text = os.fspath(path)
    return text if text.isprintable() else "".join(_printable(c) for c in text)


def _printable(c: str) -> str:
    return c if c.isprintable() else repr(c)[1:-1]


def _refuse(path: str | os.PathLike[str], why: str) -> RequestFileError:
    return RequestFileError(f"{shown(path)}: {why}")


def _size(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} bytes"


def check_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """`path`'s stat if it is a regular file (symlinks followed); RequestFileError otherwise."""
    try:
        found = os.stat(path)
    except OSError as exc:
        raise _refuse(path, _why(exc)) from None
    except ValueError:  # an embedded NUL byte
        raise _refuse(path, "not a file name (it holds a NUL byte)") from None
    if not stat.S_ISREG(found.st_mode):
        raise _refuse(path, f"{_kind(found.st_mode)}, not a regular file")
    return found


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for binary reading, if it is a regular file: checked before the open,
    opened without blocking, and checked again on what was opened."""
    check_regular(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise _refuse(path, _why(exc)) from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):  # swapped after the check
            raise _refuse(path, f"{_kind(opened.st_mode)}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], max_bytes: int, what: str = "file") -> bytes:
    """The whole of regular file `path`, at most `max_bytes` of it (a larger `what` is
    refused)."""
    too_big = f"more than the {_size(max_bytes)} a {what} may be"
    with open_regular(path) as stream:
        try:
            size = os.fstat(stream.fileno()).st_size
            if size > max_bytes:
                raise _refuse(path, f"{size:,} bytes, {too_big}")
            data = stream.read(max_bytes + 1)
        except OSError as exc:
            raise _refuse(path, f"cannot be read ({_why(exc)})") from None
    if len(data) > max_bytes:
        raise _refuse(path, f"grew while it was read to {too_big}")
    return data


def read_text_file(
    path: str | os.PathLike[str], max_bytes: int = REQUEST_FILE_MAX_BYTES, what: str = "file"
) -> str:
    """Regular file `path` as UTF-8 text (a byte-order mark skipped), at most `max_bytes`."""
    data = read_bytes(path, max_bytes, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _refuse(path, f"not UTF-8 text (byte {exc.start}, line {line})") from None


def read_json_file(
    path: str | os.PathLike[str],
    max_bytes: int = REQUEST_FILE_MAX_BYTES,
    what: str = "JSON file",
) -> Any:
    """The JSON document in regular file `path`, at most `max_bytes`, nested at most
    `safejson.MAX_JSON_DEPTH` levels, no integer longer than `safejson.MAX_INTEGER_DIGITS`."""
    return parse_json(read_text_file(path, max_bytes, what), path)


def parse_json(text: str, path: str | os.PathLike[str]) -> Any:
    """`text` (read from `path`) as JSON, within trncost.safejson's bounds."""
    if safejson.depth(text) > safejson.MAX_JSON_DEPTH:
        raise _refuse(path, f"JSON nested deeper than {safejson.MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        what = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        raise _refuse(path, f"not valid JSON: {what} at {where}") from None
    except _TooLong:
        digits = safejson.MAX_INTEGER_DIGITS
        raise _refuse(path, f"an integer of more than {digits} digits") from None
    except (RecursionError, ValueError) as exc:  # bounded above; never a traceback
        raise _refuse(path, f"JSON that cannot be parsed ({type(exc).__name__})") from None


class _TooLong(ValueError):
    pass


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > safejson.MAX_INTEGER_DIGITS:
        raise _TooLong(digits)
    return int(digits)


def part_path(base: str | os.PathLike[str], part: str) -> Path:
    """A request file's part, named by a path relative to the file (`base`)."""
    return Path(base).expanduser().parent / part
