"""Credits runway: how many completed targets a credit grant pays for before it expires.

Covered lines: the components the credits cover (default: instances, the accelerator compute)
and, by default, the trial runs' instance lines. Credits pay AWS bills only: a labour line
(user-assumed engineering time, `cost: labour`) is never covered, whatever `covers` says. Trial
lines (adaptation & reruns) are spent once, not per target:

    targets that fit  = floor((credits − covered one-time) / covered per target)
    target i (0, 1, …) starts on start + i × days between starts and ends held days later;
                        days between starts = held hours / 24 (back to back) or
                                              30.436875 / targets per month (a paced plan)
    before expiry     = the targets that end by the expiry, each counted from its own start:
                        floor((days to expiry − held days) / days between starts) + 1
    unused at expiry  = credits − one-time − what every target spends by the expiry, a target
                        under way then counted for the share of its held days it has run
    on credits        = min(the two); the credits run out during the target that spends the
                        last dollar: on its start + (what is left for it / per target) × held
                        days (a target spends while it runs, not while the plan waits).

No clock: the caller passes `as_of`. Dates are ISO YYYY-MM-DD, converted with civil-date
arithmetic (proleptic Gregorian). A PENDING price on a covered line makes the runway unknown;
it is then given as a formula in that price.

References
----------
DESIGN.md, "Analysis on top" (credits runway: how many completed targets fit in a credit grant
before it expires, and which bill lines it does not cover); seeds/003 (credits and how cost
behaves at scale); H. Hinnant, "chrono-Compatible Low-Level Date Algorithms",
https://howardhinnant.github.io/date_algorithms.html (days_from_civil, civil_from_days).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from typing import Literal, TypedDict

from trncost.errors import DomainError
from trncost.estimate.money import usd
from trncost.model.analysis import Credits, Runway, UncoveredLine
from trncost.model.estimate import Component, Estimate, LineItem

DAYS_PER_MONTH = 365.2425 / 12  # the mean Gregorian month, 30.436875 days


def days_from_civil(iso: str) -> int:
    """The day number of an ISO date `iso` (YYYY-MM-DD, proleptic Gregorian); DomainError for
    anything that is not a calendar date.

    Returns
    -------
    int
        Days since 1970-01-01 [days] (negative before it).

    References
    ----------
    H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", days_from_civil:
    https://howardhinnant.github.io/date_algorithms.html
    """
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
    """The ISO date of a day number (the inverse of `days_from_civil`; Hinnant's
    civil_from_days).

    Parameters
    ----------
    z : int
        Days since 1970-01-01 [days].

    Returns
    -------
    str
        YYYY-MM-DD.
    """
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


class _Head(TypedDict):
    """The fields every runway starts with."""

    candidate_id: str
    as_of: str
    expires_on: str


@dataclass
class _Covered:
    """The estimate's lines as the credits see them: covered per target or once, PENDING
    quantities by price, and the lines they do not cover."""

    per_target: Decimal = Decimal(0)
    once: Decimal = Decimal(0)
    q_per: float = 0.0
    q_once: float = 0.0
    pending_keys: set[str] = field(default_factory=set)
    uncovered: list[UncoveredLine] = field(default_factory=list)

    @property
    def uncovered_per_target(self) -> Decimal | None:
        """What the credits leave to pay per target; None while such a line is PENDING."""
        recurring = [u.amount_usd for u in self.uncovered if not u.one_time]
        known = [a for a in recurring if a is not None]
        return sum(known, Decimal(0)) if len(known) == len(recurring) else None


def _covered(est: Estimate, credits: Credits) -> _Covered:
    def covers(li: LineItem) -> bool:
        if li.cost == "labour":  # credits pay AWS bills, never salaries
            return False
        return li.component in credits.covers or (
            credits.covers_trial_instance_lines and _is_trial_line(li)
        )

    out = _Covered()
    for li in est.line_items:
        one_time = li.component == Component.adaptation_reruns
        if not covers(li):
            out.uncovered.append(
                UncoveredLine(
                    name=li.name,
                    component=li.component,
                    amount_usd=li.amount_usd,
                    one_time=one_time,
                )
            )
        elif li.amount_usd is None:
            # a line without an amount is PENDING and names its price (Ledger.charge)
            out.pending_keys.add(str(li.price_key))
            if one_time:
                out.q_once += li.quantity
            else:
                out.q_per += li.quantity
        elif one_time:
            out.once += li.amount_usd
        else:
            out.per_target += li.amount_usd
    return out


@dataclass(frozen=True)
class _Schedule:
    """When targets run: from `start` (day number), one every `days_per_target` (between
    starts), each `held_days` long, until `expiry`."""

    start: int
    expiry: int
    days_per_target: float
    held_days: float
    before_expiry: int  # targets that start and end before the credits expire
    pace: str

    def spent_by(self, day: float, per_target: Decimal) -> Decimal:
        """What the targets spend by `day` [USD]: each target i (starting on start + i × days
        between starts) spends `per_target` evenly over its held days, so a target under way
        on `day` has spent its share so far::

            Σᵢ per_target × clamp((day − startᵢ) / held days, 0, 1)
        """
        if day <= self.start or per_target <= 0:
            return Decimal(0)
        spent = Decimal(0)
        i = 0
        while (s_i := self.start + i * self.days_per_target) < day:
            share = 1.0 if self.held_days <= 0 else min(1.0, (day - s_i) / self.held_days)
            spent += per_target * Decimal(repr(share))
            i += 1
            if self.days_per_target <= 0:
                break
        return spent

    def runs_out(self, left: Decimal, per_target: Decimal) -> float:
        """The day (a fraction) the balance `left` reaches zero, `per_target` spent evenly
        over each target's held days."""
        full = int((left / per_target).to_integral_value(rounding=ROUND_FLOOR))
        rest = float((left - full * per_target) / per_target)
        return self.start + full * self.days_per_target + rest * self.held_days


def targets_before(available_days: float, days_between: float, held_days: float) -> int:
    """Targets that end by the expiry, target i (0, 1, …) starting on day i × days between::

        floor((days to expiry − held days) / days between starts) + 1     (0 if none fits)

    Parameters
    ----------
    available_days : float
        From the first start to the expiry [days].
    days_between : float
        Between two starts [days] (held days back to back, 30.436875 / pace when paced).
    held_days : float
        One target's instance-held time [days].

    Returns
    -------
    int
        Targets that start and end before the credits expire [targets].
    """
    if available_days < held_days or days_between <= 0:
        return 0
    return math.floor((available_days - held_days) / days_between + 1e-9) + 1


def _pace(credits: Credits, as_of: str, held_days: float) -> tuple[float, str]:
    """(days per target, the pace in words): paced per month, or back to back, from
    `start_on` (else `as_of`)."""
    start = credits.start_on or as_of
    if credits.targets_per_month is None:
        return held_days, (
            f"back to back from {start}, {held_days:.2f} days per target (held time)"
        )
    days_per_target = DAYS_PER_MONTH / credits.targets_per_month
    per = "target" if credits.targets_per_month == 1 else "targets"
    pace = f"{credits.targets_per_month:g} {per} per month from {start}"
    if days_per_target < held_days:
        pace += f" (faster than one target's {held_days:.2f} days: runs overlap)"
    return days_per_target, pace


def credits_runway(
    est: Estimate, credits: Credits, *, as_of: str, candidate_id: str | None = None
) -> Runway:
    """How many completed targets `credits` pay for, from `as_of`, before they expire (the
    module docstring gives the formulas).

    Parameters
    ----------
    est : Estimate
        One completed target's estimate: its line items and instance-held time [h].
    credits : Credits
        The grant: `amount_usd` [USD], `expires_on`, the components it `covers` (default:
        instances) and whether it covers the trial runs' instance lines; the pace
        (`targets_per_month` [targets/month], else back to back), from `start_on` or `as_of`.
    as_of : str
        Today, as an ISO date (the engine has no clock).
    candidate_id : str or None
        The candidate's name in the runway (default: its label).

    Returns
    -------
    Runway
        Known: the covered cost per target [USD] and once [USD], the targets that fit the
        credits, that end before the expiry and that run on credits (the smaller), the day the
        credits run out (None when the expiry comes first), what limits the runway, and the
        lines the credits do not cover (labour always). A covered PENDING price: unknown, the
        runway as a formula in that price. An infeasible plan: unknown, with the reason.

    References
    ----------
    DESIGN.md, "Analysis on top" (credits runway); seeds/003 (credits).
    """
    today = days_from_civil(as_of)
    expiry = days_from_civil(credits.expires_on)
    start = days_from_civil(credits.start_on) if credits.start_on else today
    head = _Head(
        candidate_id=candidate_id or est.candidate.label,
        as_of=as_of,
        expires_on=credits.expires_on,
    )
    if est.time is None:
        return Runway(
            **head,
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
    covered = _covered(est, credits)
    days_per_target, pace = _pace(credits, as_of, est.time.held_h / 24)
    notes: list[str] = []
    available_days = expiry - start
    if available_days < 0:
        notes.append(f"the credits expire ({credits.expires_on}) before the start")
    held_days = est.time.held_h / 24
    before_expiry = targets_before(available_days, days_per_target, held_days)
    schedule = _Schedule(start, expiry, days_per_target, held_days, before_expiry, pace)
    if covered.pending_keys:
        return _pending_runway(head, credits, covered, schedule, notes)
    return _known_runway(head, credits, covered, schedule, notes)


def _pending_runway(
    head: _Head, credits: Credits, covered: _Covered, schedule: _Schedule, notes: list[str]
) -> Runway:
    """A covered line's price is PENDING: the runway as a formula in that price."""
    keys = sorted(covered.pending_keys)
    key = keys[0]
    formula = (
        f"targets = floor((${credits.amount_usd:,.2f} − ${covered.once:,.2f} − "
        f"{covered.q_once:,.4g} × P[{key}]) / (${covered.per_target:,.2f} + "
        f"{covered.q_per:,.4g} × P[{key}]))"
        if len(keys) == 1
        else "several covered prices are PENDING: " + ", ".join(keys)
    )
    return Runway(
        **head,
        known=False,
        covered_per_target_usd=None,
        one_time_covered_usd=None,
        targets_fit=None,
        targets_before_expiry=schedule.before_expiry,
        targets_on_credits=None,
        runs_out_on=None,
        limited_by="unknown",
        pace=schedule.pace,
        formula=formula,
        uncovered=covered.uncovered,
        uncovered_per_target_usd=covered.uncovered_per_target,
        notes=[
            *notes,
            "a covered line's price is PENDING: the runway is unknown until it is "
            "published; it is given as a function of that price",
        ],
    )


def _known_runway(
    head: _Head, credits: Credits, covered: _Covered, schedule: _Schedule, notes: list[str]
) -> Runway:
    """Every covered line is priced: targets that fit, and the day the credits run out."""
    per_target, once = covered.per_target, covered.once
    before_expiry = schedule.before_expiry
    left = credits.amount_usd - once
    fit: int | None
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
    limited_by: Literal["credits", "expiry"] = "expiry"
    if fit is not None and per_target > 0 and left >= 0:
        out_day = schedule.runs_out(left, per_target)
        if out_day <= schedule.expiry:
            runs_out_on = civil_from_days(math.floor(out_day))
            limited_by = "credits"
        else:
            # what every target spends by the expiry, the one under way on that day included
            unused = usd(left - schedule.spent_by(schedule.expiry, per_target))
            notes.append(
                f"the credits outlast their expiry at this pace: ${unused:,.2f} unused on "
                f"{credits.expires_on} (the target under way then has spent its share so far)"
            )
    uncovered_per_target = covered.uncovered_per_target
    return Runway(
        **head,
        known=True,
        covered_per_target_usd=per_target,
        one_time_covered_usd=once,
        targets_fit=fit,
        targets_before_expiry=before_expiry,
        targets_on_credits=on_credits,
        runs_out_on=runs_out_on,
        limited_by=limited_by,
        pace=schedule.pace,
        uncovered=covered.uncovered,
        uncovered_per_target_usd=None
        if uncovered_per_target is None
        else usd(uncovered_per_target),
        notes=notes,
    )
