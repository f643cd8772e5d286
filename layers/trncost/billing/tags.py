"""The spellings a trncost tag key takes in AWS billing data, and which one a row used.

A tag key put on a resource as `trncost:estimate-id` may come back, depending on the export and
on how AWS normalises it, as (research: docs/ingest.md, "Which spelling"):

| where                        | spelling                                   |
|------------------------------|--------------------------------------------|
| FOCUS `Tags` (AWS export)    | `trncost:estimate-id` (bare) — or prefixed  |
| cost-allocation data         | `user:trncost:estimate-id`                 |
| CUR 2.0 `tags`               | `resourceTags/user:trncost:estimate-id`,   |
|                              | `resourceTags/trncost:estimate-id`         |
| CUR 2.0 `resource_tags`      | `user_trncost_estimate_id` (normalised)    |

Which one AWS writes is not settled by any AWS page: every plausible spelling is matched, the
first found wins, and each import counts the rows per spelling it matched (`tag_keys_seen`) so
the first real export says which it is. The keys are lower-case ASCII with only `:` and `-`,
so every normalisation of them gives one spelling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from trncost.metrics.jobs import (
    ESTIMATE_ID_TAG,
    TRIAL_ID_TAG,
    TRIAL_TAG,
    WORKLOAD_ID_TAG,
    WORKLOAD_TAG,
)

# What a row's raw text must contain to carry any trncost tag in any spelling (a pre-filter:
# a row without it is not parsed at all).
NEEDLES = ("trncost:", "trncost_")


def normalised(key: str) -> str:
    """`trncost:estimate-id` → `user_trncost_estimate_id` (CUR 2.0 `resource_tags`)."""
    return "user_" + re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


@lru_cache(maxsize=64)
def spellings(key: str) -> tuple[str, ...]:
    """Every spelling of `key` billing data may use, the bare key first."""
    return (
        key,
        f"user:{key}",
        f"resourceTags/{key}",
        f"resourceTags/user:{key}",
        normalised(key),
        f"resource_tags_{normalised(key)}",
    )


ESTIMATE_KEYS = spellings(ESTIMATE_ID_TAG)
WORKLOAD_KEYS = (*spellings(WORKLOAD_ID_TAG), *spellings(WORKLOAD_TAG))
TRIAL_KEYS = (*spellings(TRIAL_ID_TAG), *spellings(TRIAL_TAG))


def find(tags: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(value, the spelling it was found under) of the first of `keys` in `tags` with a
    value; (None, None) when none has one."""
    for key in keys:
        value = tags.get(key)
        if value is not None and value != "":
            return str(value), key
    return None, None


def as_mapping(value: Any) -> Mapping[str, Any]:
    """A tag map as a reader gives it: a dict, DuckDB's {'key': [...], 'value': [...]}, a
    list of (key, value) pairs, or None."""
    if value is None:
        return {}
    if isinstance(value, dict):
        if set(value) == {"key", "value"} and isinstance(value["key"], list):
            return dict(zip(value["key"], value["value"], strict=False))
        return value
    if isinstance(value, list | tuple):
        out: dict[str, Any] = {}
        for pair in value:
            if isinstance(pair, list | tuple) and len(pair) == 2:
                out[str(pair[0])] = pair[1]
            elif isinstance(pair, dict) and "key" in pair:
                out[str(pair["key"])] = pair.get("value")
        return out
    return {}
