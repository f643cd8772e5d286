"""Typed price overrides: an override must name a price key the estimate uses, in the unit
that key is billed in. Pure: the keys an estimate used in, problems (field, message) out.

A wrong unit or an unknown key is refused (InvalidInput → 422), naming the field and listing
the keys the candidate uses, so a what-if never silently prices nothing, or prices an hourly
rate as a GB-month.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from trncost.errors import InvalidInput
from trncost.model.estimate import LineItem
from trncost.model.price import USAGE_UNIT, PriceOverride, UsageItem, normalise_unit, unit_text

FIELD = "assumptions.price_overrides"


def billing_unit_of(price_key: str) -> str:
    """The billing unit of `price_key`, a price key written as text
    (`service/region/item/option`).

    Returns
    -------
    str
        The Price List's spelling: `GB-Mo`, `GB`, `Metrics` for a usage item, `Hrs` for an
        instance.
    """
    parts = price_key.split("/")
    item = parts[2] if len(parts) > 2 else ""
    try:
        return USAGE_UNIT[UsageItem(item)]
    except ValueError:
        return "Hrs"


def used_prices(lines: Iterable[LineItem]) -> dict[str, str]:
    """Every price key the `lines` charge (priced or PENDING), with its billing unit.

    Returns
    -------
    dict[str, str]
        Price key → billing unit (Price List spelling).
    """
    return {li.price_key: billing_unit_of(li.price_key) for li in lines if li.price_key}


def _keys_text(used: Mapping[str, str]) -> str:
    if not used:
        return "none (nothing is priced)"
    return "; ".join(f"{key} ({unit_text(unit)})" for key, unit in sorted(used.items()))


def override_problems(
    overrides: Sequence[PriceOverride], used: Mapping[str, str], field: str = FIELD
) -> list[tuple[str, str]]:
    """What is wrong with each of `overrides`: a key the estimate does not use, or a unit
    that is not the key's billing unit.

    Parameters
    ----------
    used : Mapping[str, str]
        The price keys the estimate uses → billing unit (Price List spelling): `used_prices`.
    field : str
        The request field the overrides are in (default `assumptions.price_overrides`).

    Returns
    -------
    list[tuple[str, str]]
        (field, message) per problem, e.g. `assumptions.price_overrides.0.unit`; empty when
        every override applies.
    """
    problems: list[tuple[str, str]] = []
    keys = _keys_text(used)
    for i, override in enumerate(overrides):
        key = str(override.key)
        billed = override.key.billing_unit
        if key not in used:
            problems.append(
                (
                    f"{field}.{i}.key",
                    f"{field}.{i}.key: {key} is not a price this estimate uses; "
                    f"the keys it uses: {keys}",
                )
            )
        elif normalise_unit(override.unit) != billed:
            problems.append(
                (
                    f"{field}.{i}.unit",
                    f"{field}.{i}.unit: {key} is billed in {unit_text(billed)}, not "
                    f"{override.unit!r}; the keys it uses: {keys}",
                )
            )
    return problems


def check_overrides(problems: Sequence[tuple[str, str]]) -> None:
    """Raise InvalidInput naming every field at fault, when `problems` (from
    `override_problems`) has any."""
    if problems:
        raise InvalidInput("; ".join(m for _, m in problems), [f for f, _ in problems])
