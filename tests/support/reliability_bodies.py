"""Hypothesis strategies for request bodies, guided by the API's own JSON schemas.

Mostly valid bodies with a few things wrong, because that is what reaches the deep code (the
estimate engine) rather than stopping at validation: every value follows its schema (types,
bounds, enums, patterns, anyOf, $ref), except that now and then one is replaced by something
hostile (a wrong type, an extreme or non-finite number, a numeric-looking string, a huge or
odd string, an unknown key, a missing required key). `overrides` pins a dotted path to a
strategy of its own (say, instance types that have trials and prices).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

MISSING = object()  # a sentinel: drop this key

NUMERIC_STRINGS = st.sampled_from(
    ["0", "-0", "1e400", "-1", "NaN", "Infinity", "-Infinity", "0.000000001", "1e-400", " 7 ", ""]
)
JUNK: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1e308, -1e308, 5e-324, 2**53 + 1, 10**30]),
    NUMERIC_STRINGS,
    st.text(max_size=12),
    st.text(alphabet="\x00\ud7ff\ufeff\u202e<>'\"%{}", max_size=8),
    st.just("x" * 5000),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.just(MISSING),
)


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _number(schema: dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    if integer:
        lo_i = None if lo is None else int(lo) + (1 if "exclusiveMinimum" in schema else 0)
        hi_i = None if hi is None else int(hi) - (1 if "exclusiveMaximum" in schema else 0)
        return st.integers(min_value=lo_i, max_value=hi_i)
    return st.floats(
        min_value=lo,
        max_value=hi,
        exclude_min="exclusiveMinimum" in schema,
        exclude_max="exclusiveMaximum" in schema,
        allow_nan=False,
        allow_infinity=False,
    )


def _string(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    lo, hi = schema.get("minLength", 0), min(schema.get("maxLength", 64), 300)
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).map(lambda s: s[:hi])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    return st.one_of(st.text(min_size=lo, max_size=min(hi, 40)), NUMERIC_STRINGS)


def from_schema(
    schema: dict[str, Any],
    defs: dict[str, Any] | None = None,
    *,
    wild: float = 0.05,
    overrides: dict[str, st.SearchStrategy[Any]] | None = None,
    path: str = "",
) -> st.SearchStrategy[Any]:
    """Values for `schema`, each replaced by JUNK with probability `wild`."""
    defs = {**(defs or {}), **schema.get("$defs", {})}
    overrides = overrides or {}
    valid = _valid(_resolve(schema, defs), defs, wild, overrides, path)
    if path in overrides:
        valid = overrides[path]
    if not path or wild <= 0:
        return valid
    per_mille = int(wild * 1000)
    return st.integers(0, 999).flatmap(lambda n: JUNK if n < per_mille else valid)


def _valid(
    schema: dict[str, Any],
    defs: dict[str, Any],
    wild: float,
    overrides: dict[str, st.SearchStrategy[Any]],
    path: str,
) -> st.SearchStrategy[Any]:
    def sub(s: dict[str, Any], key: str) -> st.SearchStrategy[Any]:
        return from_schema(
            s, defs, wild=wild, overrides=overrides, path=f"{path}.{key}" if path else key
        )

    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema["oneOf"]
        return st.one_of([_valid(_resolve(o, defs), defs, wild, overrides, path) for o in options])
    if "allOf" in schema:
        return _valid(_resolve(schema["allOf"][0], defs), defs, wild, overrides, path)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = [k for k in props if k in schema.get("required", [])]
        optional = [k for k in props if k not in required]
        base = st.fixed_dictionaries(
            {k: sub(props[k], k) for k in required},
            optional={k: sub(props[k], k) for k in optional},
        )
        extra = st.dictionaries(
            st.sampled_from(["colour", "__proto__", "unknown", ""]), JUNK, max_size=1
        )
        per_mille = int(wild * 1000)
        return st.tuples(base, st.integers(0, 999), extra).map(
            lambda t: _clean({**t[0], **(t[2] if t[1] < per_mille else {})})
        )
    if kind == "array":
        items = schema.get("items", {})
        # MISSING drops a key: in a list it is no item at all (never a value to send)
        return st.lists(sub(items, "[]"), max_size=min(schema.get("maxItems", 4), 4)).map(
            lambda xs: [x for x in xs if x is not MISSING]
        )
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        return _number(schema, integer=True)
    if kind == "number":
        return st.one_of(_number(schema, integer=False), _number(schema, integer=True))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return JUNK


def _clean(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not MISSING}
