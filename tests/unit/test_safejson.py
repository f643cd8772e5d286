"""trncost.safejson: nesting measured in one linear pass (issue 23: a regex that backtracked on an
unclosed string of escaped quotes pinned the API), duplicate keys refused, integers bounded."""

from __future__ import annotations

import time

import pytest

from trncost import safejson

HOSTILE = {
    # 65 brackets, then an unclosed string of escaped quotes: quadratic before issue 23
    "unclosed escapes": lambda n: "[" * 65 + '"' + '\\"' * ((n - 66) // 2),
    "open brackets": lambda n: "[" * n,
    "balanced pairs": lambda n: "[]" * (n // 2),
    "quotes": lambda n: '"' * n,
    "backslashes": lambda n: '"' + "\\" * (n - 1),
    "strings of brackets": lambda n: "[" * 65 + '"' + "[" * (n - 66),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[]", 1),
        ('{"a": [1, {"b": "]]]]"}]}', 3),
        ('["\\"' + "[" * 70 + '"]', 1),  # an escaped quote does not end the string
        ('["\\\\", ' + "[" * 70 + "]" * 70 + "]", 71),  # an escaped backslash does
        ('"[[[[' + "[" * 100, 0),  # an unclosed string holds every bracket after it
        ("[" * 70 + "]" * 70, 70),
    ],
)
def test_depth_skips_strings_and_counts_nesting(text, expected):
    # Given a text  When its depth is measured  Then strings are skipped
    assert safejson.depth(text) == expected


def test_too_deep_and_too_long_integers_are_refused_with_their_reason():
    assert "nested deeper than 64" in str(safejson.problem("[" * 65 + "]" * 65))
    assert safejson.problem("[" * 64 + "]" * 64) is None
    assert "more than 30 digits" in str(safejson.problem("[" + "9" * 31 + "]"))


def test_duplicate_keys_are_refused_naming_the_key():
    # Given an object that says "a" twice, at any depth
    # When it is parsed  Then it is refused, naming the key; distinct keys parse
    assert safejson.problem('{"a": 1, "a": 2}') == "duplicate key 'a' in one object"
    assert "duplicate key 'snapshot_id'" in str(
        safejson.problem('{"x": [{"snapshot_id": "s1", "snapshot_id": "s2"}]}')
    )
    assert safejson.loads('{"a": 1, "b": {"a": 2}}') == {"a": 1, "b": {"a": 2}}


def test_a_hostile_key_is_shown_escaped():
    reason = str(safejson.problem('{"\\u001b[31m": 1, "\\u001b[31m": 2}'))
    assert "\x1b" not in reason and "\\x1b" in reason


def _seconds(make, size: int) -> float:
    text = make(size)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        safejson.problem(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_check_is_linear_in_body_size(name):
    # Given a hostile body at 128 KiB and at 1 MiB (the API's limit)
    make = HOSTILE[name]
    small, large = _seconds(make, 128 * 1024), _seconds(make, 1024 * 1024)
    # Then 1 MiB takes well under a second, and 8x the size takes no more than ~8x the time
    # (a quadratic scan takes 64x; a floor of 5 ms absorbs timer noise on tiny figures)
    assert large < 1.0, f"{name}: {large:.3f} s at 1 MiB"
    assert large <= 16 * max(small, 0.005), f"{name}: {small:.4f} s → {large:.4f} s"
