"""Credits runway: how many completed targets a credit grant pays for before it expires.

Covered lines: the components the credits cover (default: instances, the accelerator compute)
and, by default, the trial runs' instance lines. Trial lines (adaptation & reruns) are spent
once, not per target:

    targets that fit  = floor((credits − covered one-time) / covered per target)
    before expiry     = floor(days from start to expiry / days per target)
                        days per target = held hours / 24 (back to back) or
                                          30.436875 / targets per month (a paced plan)
    on credits        = min(the two); the credits run out on start + fit × days per target.

No clock: the caller passes `as_of`. Dates are ISO YYYY-MM-DD, converted with civil-date
arithmetic (proleptic Gregorian). A PENDING price on a covered line makes the runway unknown;
it is then given as a formula in that price.
"""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal

from trncost.estimate.errors import DomainError
from trncost.estimate.money import usd
from trncost.model.analysis import Credits, Runway, UncoveredLine
from trncost.model.estimate import Component, Estimate, LineItem

DAYS_PER_MONTH = 365.2425 / 12  # the mean Gregorian month, 30.436875 days


def days_from_civil(iso: str) -> int:
    """Days since 1970-01-01 of an ISO date (H. Hinnant's algorithm)."""
    try:
        y, m, d = (int(p) for p in iso.split("-"))
    except ValueError:
        raise DomainError(f"not an ISO date (YYYY-MM-DD): {iso!r}") from None
    if not (1 <= m <= 12 and 1 <= d <= _month_days(y, m)):
        raise DomainError(f"not a calendar date: {iso!r}")
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> str:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    y = yoe + era * 400 + (m <= 2)
    return f"{y:04d}-{m:02d}-{d:02d}"


def _month_days(y: int, m: int) -> int:
    if m == 2:
        return 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28
    return 30 if m in (4, 6, 9, 11) else 31


def _is_trial_line(li: LineItem) -> bool:
    return li.component == Component.adaptation_reruns and any(
        i.startswith("trial:") for i in li.inputs
    )


def credits_runway(  # noqa: C901 - split under issue 11 (remove this when done)
    est: Estimate, credits: Credits, *, as_of: str, candidate_id: str | None = None
) -> Runway:
    cid = candidate_id or est.candidate.label
    today = days_from_civil(as_of)
    expiry = days_from_civil(credits.expires_on)
    start = days_from_civil(credits.start_on) if credits.start_on else today
    base = dict(candidate_id=cid, as_of=as_of, expires_on=credits.expires_on)
    if est.time is None:
        return Runway(
            **base,
            known=False,
            covered_per_target_usd=None,
            one_time_covered_usd=None,
            targets_fit=None,
            targets_before_expiry=None,
            targets_on_credits=None,
            runs_out_on=None,
            limited_by=None,
            pace="",
            notes=[f"the plan is infeasible: {est.infeasible_reason}"],
        )

    def covered(li: LineItem) -> bool:
        return li.component in credits.covers or (
            credits.covers_trial_instance_lines and _is_trial_line(li)
        )

    def one_time(li: LineItem) -> bool:
        return li.component == Component.adaptation_reruns

    per_target, once = Decimal(0), Decimal(0)
    q_per, q_once, pending_keys = 0.0, 0.0, set()
    uncovered: list[UncoveredLine] = []
    for li in est.line_items:
        if not covered(li):
            uncovered.append(
                UncoveredLine(
                    name=li.name,
                    component=li.component,
                    amount_usd=li.amount_usd,
                    one_time=one_time(li),
                )
            )
            continue
        if li.amount_usd is None:
            pending_keys.add(li.price_key)
            if one_time(li):
                q_once += li.quantity
            else:
                q_per += li.quantity
        elif one_time(li):
            once += li.amount_usd
        else:
            per_target += li.amount_usd
    recurring_uncovered = [u for u in uncovered if not u.one_time]
    uncovered_per_target = (
        None
        if any(u.amount_usd is None for u in recurring_uncovered)
        else sum((u.amount_usd for u in recurring_uncovered), Decimal(0))
    )
    held_days = est.time.held_h / 24
    if credits.targets_per_month is not None:
        days_per_target = DAYS_PER_MONTH / credits.targets_per_month
        pace = f"{credits.targets_per_month:g} targets per month from {as_of}"
    else:
        days_per_target = held_days
        pace = (
            f"back to back from {credits.start_on or as_of}, {held_days:.2f} days per target "
            "(held time)"
        )
    if credits.targets_per_month is not None and days_per_target < held_days:
        pace += f" (faster than one target's {held_days:.2f} days: runs overlap)"
    notes: list[str] = []
    available_days = expiry - start
    if available_days < 0:
        notes.append(f"the credits expire ({credits.expires_on}) before the start")
    before_expiry = max(0, math.floor(available_days / days_per_target)) if days_per_target else 0

    if pending_keys:
        key = sorted(pending_keys)[0]
        formula = (
            f"targets = floor((${credits.amount_usd:,.2f} − ${once:,.2f} − {q_once:,.4g} × "
            f"P[{key}]) / (${per_target:,.2f} + {q_per:,.4g} × P[{key}]))"
            if len(pending_keys) == 1
            else "several covered prices are PENDING: " + ", ".join(sorted(pending_keys))
        )
        return Runway(
            **base,
            known=False,
            covered_per_target_usd=None,
            one_time_covered_usd=None,
            targets_fit=None,
            targets_before_expiry=before_expiry,
            targets_on_credits=None,
            runs_out_on=None,
            limited_by="unknown",
            pace=pace,
            formula=formula,
            uncovered=uncovered,
            uncovered_per_target_usd=uncovered_per_target,
            notes=[
                *notes,
                "a covered line's price is PENDING: the runway is unknown until it is "
                "published; it is given as a function of that price",
            ],
        )

    left = credits.amount_usd - once
    if left < 0:
        fit = 0
        notes.append(f"the covered trial lines (${once:,.2f}) already exceed the credits")
    elif per_target == 0:
        fit = None
        notes.append("the covered lines cost nothing per target: the credits never run out")
    else:
        fit = int((left / per_target).to_integral_value(rounding=ROUND_FLOOR))
    on_credits = before_expiry if fit is None else min(fit, before_expiry)
    runs_out_on = None
    limited_by = "expiry"
    if fit is not None and per_target > 0 and left >= 0:
        out_day = start + float(left / per_target) * days_per_target
        if out_day <= expiry:
            runs_out_on = civil_from_days(math.floor(out_day))
            limited_by = "credits"
        else:
            unused = left - per_target * before_expiry
            notes.append(
                f"the credits outlast their expiry at this pace: ${unused:,.2f} unused on "
                f"{credits.expires_on}"
            )
    return Runway(
        **base,
        known=True,
        covered_per_target_usd=per_target,
        one_time_covered_usd=once,
        targets_fit=fit,
        targets_before_expiry=before_expiry,
        targets_on_credits=on_credits,
        runs_out_on=runs_out_on,
        limited_by=limited_by,
        pace=pace,
        uncovered=uncovered,
        uncovered_per_target_usd=None
        if uncovered_per_target is None
        else usd(uncovered_per_target),
        notes=notes,
    )
