"""JSON that is safe to parse: bounded before and while parsing (stdlib only).

Python's json raises RecursionError on nesting ~1,000 deep and ValueError on an integer of more
than 4,300 digits; neither is a JSONDecodeError, so code that catches malformed JSON still
crashes on them; and json keeps the last of two equal keys in one object without a word, so
`{"a": 1, "a": 2}` means what the last one says. `loads` refuses all three, with a reason:
nesting is measured before parsing (strings skipped, one linear pass: no pattern here can
backtrack, so a hostile body costs time in proportion to its size), integers are bounded while
parsing (`parse_int`) and keys checked as each object is built (`object_pairs_hook`). The API's
body precheck (a 400) and the ingest of queue messages (a rejected ingest) use it.

The deepest document trncost takes (a bulk Price List offer file) nests under 10 levels, and no
bounded field (trncost.model.bounds) needs more than 19 integer digits.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_JSON_DEPTH = 64
MAX_INTEGER_DIGITS = 30
# A string, closed or not, as one match from its opening quote. Possessive quantifiers (`++`,
# `*+`) give back nothing once matched, so the engine never backtracks: an unclosed string runs
# to the end of the text once, and the scan ends there.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class UnsafeJson(ValueError):
    """Text that is not JSON trncost parses: too deep, an integer too long, or malformed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _TooLong(ValueError):
    pass


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _TooLong(digits)
    return int(digits)


def depth(text: str) -> int:
    """How deep `text`'s arrays and objects nest (strings skipped), without parsing it."""
    brackets = text.count("[") + text.count("{")
    if brackets <= MAX_JSON_DEPTH:
        return brackets  # it cannot nest deeper than it has brackets: no scan needed
    brackets_only = _NOT_BRACKET.sub("", _STRING.sub("", text))  # two linear passes
    return max(accumulate(map(_STEP.__getitem__, brackets_only)), default=0)


def loads(text: str) -> Any:
    """`json.loads(text)`, or UnsafeJson with the reason it cannot be parsed safely."""
    if depth(text) > MAX_JSON_DEPTH:
        raise UnsafeJson(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_bounded_int, object_pairs_hook=_unique_keys)
    except _TooLong:
        raise UnsafeJson(f"an integer of more than {MAX_INTEGER_DIGITS} digits") from None
    except _DuplicateKey as exc:
        shown = exc.key[:64].encode("unicode_escape").decode("ascii")
        raise UnsafeJson(f"duplicate key {shown!r} in one object") from None
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
