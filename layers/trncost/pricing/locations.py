"""Regions ↔ Price List location names, from botocore's own endpoint data.

Price List products name their region twice: `regionCode` (us-east-1) and `location` (US East
(N. Virginia)). Records published before 2021, and records other tools trimmed, carry only the
location (transfers: `fromLocation` / `toLocation`). The names come from botocore's
`endpoints.json` region descriptions, not from a table kept here; the Price List writes a few
of them differently, always in the same way, so each difference is one rule:

    Europe (X)        → EU (X)            the Price List calls the European regions "EU (…)"
    … (X)             → … (X-Local)       a Local Region later made a full region keeps its
                                          "-Local" name in older SKUs (Asia Pacific (Osaka-Local))
    AWS GovCloud (US-West) → AWS GovCloud (US)
                                          a partition's first region, named before it had a
                                          sibling (us-gov-west-1 until us-gov-east-1 opened)

Names compare case-insensitively, with runs of whitespace as one space.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# (pattern, replacement) over a botocore description: each yields another spelling of it.
RULES: tuple[tuple[str, str], ...] = (
    (r"^Europe \(", "EU ("),
    (r"\)$", "-Local)"),
    (r"^AWS GovCloud \(US-West\)$", "AWS GovCloud (US)"),
)


def _fold(name: str) -> str:
    return " ".join(name.split()).casefold()


@lru_cache(maxsize=1)
def region_descriptions() -> dict[str, str]:
    """Region code → its description, for every partition botocore knows."""
    from botocore.loaders import create_loader

    data: dict[str, Any] = create_loader().load_data("endpoints")
    out: dict[str, str] = {}
    for partition in data.get("partitions", []):
        for code, region in (partition.get("regions") or {}).items():
            description = region.get("description")
            if isinstance(description, str) and description:
                out[code] = description
    return out


def spellings(description: str) -> frozenset[str]:
    """A region description and the other spellings the rules give it."""
    names = {description}
    for pattern, replacement in RULES:
        variant = re.sub(pattern, replacement, description)
        if variant != description:
            names.add(variant)
    return frozenset(names)


@lru_cache(maxsize=256)
def location_names(region: str) -> frozenset[str]:
    """The Price List location names that mean `region` (empty when botocore does not know
    it)."""
    description = region_descriptions().get(region)
    return spellings(description) if description else frozenset()


@lru_cache(maxsize=1)
def _by_name() -> dict[str, str]:
    out: dict[str, str] = {}
    for code, description in region_descriptions().items():
        for name in spellings(description):
            out.setdefault(_fold(name), code)
    return out


def region_of(location: str) -> str | None:
    """The region a Price List location name means; None when it names none (an edge
    location, "Any", a Local Zone, or a region botocore does not know)."""
    return _by_name().get(_fold(location))


def is_location_of(location: str, region: str) -> bool:
    return _fold(location) in {_fold(n) for n in location_names(region)}
