"""JSON that is safe to parse: bounded before and while parsing (stdlib only).

Python's json raises RecursionError on nesting ~1,000 deep and ValueError on an integer of more
than 4,300 digits; neither is a JSONDecodeError, so code that catches malformed JSON still
crashes on them. `loads` refuses both first, with a reason: nesting is measured before parsing
(strings skipped) and integers are bounded while parsing (`parse_int`). The API's body precheck
(a 400) and the ingest of queue messages (a rejected ingest) use it.

The deepest document trncost takes (a bulk Price List offer file) nests under 10 levels, and no
bounded field (trncost.model.bounds) needs more than 19 integer digits.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
MAX_INTEGER_DIGITS = 30
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


class UnsafeJson(ValueError):
    """Text that is not JSON trncost parses: too deep, an integer too long, or malformed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _TooLong(ValueError):
    pass


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _TooLong(digits)
    return int(digits)


def depth(text: str) -> int:
    """How deep `text`'s arrays and objects nest (strings skipped), without parsing it."""
    brackets = text.count("[") + text.count("{")
    if brackets <= MAX_JSON_DEPTH:
        return brackets  # it cannot nest deeper than it has brackets: no scan needed
    level = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        level += 1 if match.group() in "[{" else -1
        deepest = max(deepest, level)
    return deepest


def loads(text: str) -> Any:
    """`json.loads(text)`, or UnsafeJson with the reason it cannot be parsed safely."""
    if depth(text) > MAX_JSON_DEPTH:
        raise UnsafeJson(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_bounded_int)
    except _TooLong:
        raise UnsafeJson(f"an integer of more than {MAX_INTEGER_DIGITS} digits") from None
    except json.JSONDecodeError as exc:
        raise UnsafeJson(f"malformed JSON ({exc.msg} at {exc.pos})") from None
    except (RecursionError, ValueError) as exc:  # pragma: no cover - bounded above
        raise UnsafeJson(f"JSON that cannot be parsed ({type(exc).__name__})") from None


def problem(text: str) -> str | None:
    """Why `text` cannot be parsed safely, or None when it can."""
    try:
        loads(text)
    except UnsafeJson as exc:
        return exc.reason
    return None
