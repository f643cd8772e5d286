"""The figures of an estimate, and what changed between two of them. Pure.

A new version of a stored estimate is added only when its figures change (the refresh rule,
`trncost.services.estimates`): the inputs changing is not enough — a trial of another
instance type, or one that leaves every total where it was, changes no figure. The figures are
what a person reads in the estimate, at the precision it is shown:

- status (and why it is infeasible);
- every money field (totals, cost per target, per 1M tokens, ...), to the cent;
- the known subtotal of each component, to the cent;
- time to target and instance-held time (hours), steady and effective throughput, to 4
  significant digits;
- each line item's quantity and amount (PENDING when its price is);
- each pending term's quantity;
- each warning (by code, with its message).

The price snapshot id is not a figure: a new snapshot with the same prices changes nothing a
reader sees. `changes(before, after)` lists each figure that differs, from what to what.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from trncost.model.changes import FigureChange
from trncost.model.estimate import Estimate

CENT = Decimal("0.01")
SIGNIFICANT = 4
NUMBER_FIELDS = {
    "steady_throughput": "steady throughput",
    "effective_throughput": "effective throughput",
}
TIME_FIELDS = {"total_h": "time to target (h)", "held_h": "instance-held time (h)"}

Figure = tuple[str, str | None]  # label, value as shown


def _holds_decimal(annotation: Any) -> bool:
    if annotation is Decimal:
        return True
    return any(_holds_decimal(a) for a in typing.get_args(annotation))


def _money_fields() -> list[str]:
    """Every top-level money field of Estimate (so new totals are figures too)."""
    return [
        name
        for name, info in Estimate.model_fields.items()
        if _holds_decimal(info.annotation) and name != "components"
    ]


def money(value: Decimal | None) -> str | None:
    """A money figure as shown, to the cent (half-even).

    Parameters
    ----------
    value : Decimal or None
        An amount [USD], or None (PENDING, infeasible).

    Returns
    -------
    str or None
        `"1234.57"`; None for None.
    """
    return None if value is None else str(value.quantize(CENT))


def number(value: float | None) -> str | None:
    """A physical figure as shown, to 4 significant digits.

    Parameters
    ----------
    value : float or None
        Hours, a throughput or a quantity [unit of the figure], or None.

    Returns
    -------
    str or None
        `f"{value:.4g}"`; None for None.
    """
    return None if value is None else f"{value:.{SIGNIFICANT}g}"


def _lines(estimate: Estimate) -> Iterator[tuple[str, Figure]]:
    seen: dict[str, int] = {}
    for line in estimate.line_items:
        key = f"line:{line.component}:{line.name}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key}#{seen[key]}"
        amount = "PENDING" if line.amount_usd is None else money(line.amount_usd)
        yield key, (f"{line.name}: amount (USD)", amount)
        yield f"{key}:quantity", (f"{line.name}: quantity ({line.unit})", number(line.quantity))


def figures(estimate: Estimate) -> dict[str, Figure]:
    """The figures a person reads in `estimate` (the module docstring lists them).

    Returns
    -------
    dict[str, tuple[str, str or None]]
        Figure key (`total_usd`, `time.total_h`, `line:<component>:<name>`, `warning:<code>`,
        …) → (label with its unit, value as shown: money to the cent, other numbers to 4
        significant digits, PENDING for a line whose price is).
    """
    out: dict[str, Figure] = {
        "status": ("status", estimate.status),
        "infeasible_reason": ("why it cannot finish", estimate.infeasible_reason),
    }
    for name in _money_fields():
        label = name.replace("_usd", " (USD)").replace("_", " ")
        out[name] = (label, money(getattr(estimate, name)))
    for component, amount in estimate.components.items():
        out[f"component:{component}"] = (f"{component} subtotal (USD)", money(amount))
    for name, label in NUMBER_FIELDS.items():
        out[name] = (f"{label} ({estimate.target_unit}/s)", number(getattr(estimate, name)))
    for name, label in TIME_FIELDS.items():
        out[f"time.{name}"] = (label, number(getattr(estimate.time, name, None)))
    out.update(_lines(estimate))
    for term in estimate.pending_terms:
        out[f"pending:{term.price_key}"] = (
            f"quantity waiting for {term.price_key} ({term.unit})",
            number(term.quantity),
        )
    messages: dict[str, list[str]] = {}
    for warning in estimate.warnings:
        messages.setdefault(warning.code, []).append(warning.message)
    for code, said in messages.items():
        out[f"warning:{code}"] = (f"warning {code}", " | ".join(sorted(said)))
    return out


def changes(before: Estimate, after: Estimate) -> list[FigureChange]:
    """Each figure whose shown value differs between `before` and `after`.

    Returns
    -------
    list[FigureChange]
        Figure, label, value before and after (None where absent), in the order of `after`'s
        figures, then the figures `after` no longer has. Empty: no new version is due.
    """
    old, new = figures(before), figures(after)
    out = []
    for key in [*new, *(k for k in old if k not in new)]:
        label, was = old.get(key, (None, None))
        label_now, now = new.get(key, (label, None))
        if was != now:
            out.append(
                FigureChange(figure=key, label=label_now or label or key, before=was, after=now)
            )
    return out
