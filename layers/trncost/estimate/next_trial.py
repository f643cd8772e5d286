"""The next trial worth running: the trial that would narrow P90 − P10 the most per dollar.

Offered when the decision is `continue_trials` or the range is wide ((P90 − P10) / P50 above
WIDE). The options: a target trial at the planned count when no trial ran there; trials at
the counts between the largest measured one and the planned one (2× the largest measured, the
planned count halved) — the counts a scaling fit needs most; and a repeat at the largest measured
count (a second trial where there is one gives the run-to-run spread).

Each option's expected evidence is one trial like the median usable trial of the candidate (its
wall time, its relative sample spread), moved to the option's count with the throughput the
current estimate expects there, and no failure. The analysis is re-run with that trial added
(same seed, same draws), and the width of the measure — the total cost; the time to target
while a price is PENDING (the known part's width is then mostly stated assumptions, which no
trial narrows) — is compared with the width now.
Its cost is the instance-hours × the on-demand price of the instance (PENDING when that price
is); the best option is the one that narrows the most per dollar (per instance-hour while the
price is PENDING).

References
----------
DESIGN.md, principle 9 (calibrated ranges) and the trial phases; seeds/000 (用敏感性檢查決定是否
擴大試跑; 繼續試跑). A heuristic: each option is scored on one expected outcome (the trial as the
estimate expects it), not averaged over the outcomes it could have.
"""

from __future__ import annotations

from decimal import Decimal

from trncost.errors import DomainError
from trncost.estimate.engine import estimate
from trncost.estimate.evidence import Evidence
from trncost.estimate.ledger import Ledger
from trncost.model.analysis import Action, Decision, NextTrial, Range, TrialOption
from trncost.model.candidate import PurchaseOption
from trncost.model.estimate import Estimate, EstimateInput
from trncost.model.price import PriceKey
from trncost.model.trial import Phase, TrialRun

WIDE = 0.25  # (P90 − P10) / P50 above this is a wide range
SAMPLES = 4000  # draws per re-run (the width now is re-measured with the same draws)
METHOD = (
    "each option's expected trial (the median usable trial moved to that count, with the "
    "throughput the estimate expects there and no failure) is added to the trials and the range "
    f"re-run ({SAMPLES:,} draws, same seed); narrowing = width now − width after"
)


def _width(r: Range) -> tuple[str, str, float | None, float | None]:
    """(measure, unit, P90 − P10, P50) of the range's headline measure."""
    t = r.total_usd
    if t is not None and t.p10 is not None and t.p90 is not None:
        return "total_usd", "USD", float(t.p90 - t.p10), float(t.p50) if t.p50 else None
    # while a price is PENDING the known part's width is mostly stated assumptions, which no
    # trial narrows: the time to target carries the throughput and failure uncertainty
    h = r.time_to_target_h
    if h is not None and h.p10 is not None and h.p90 is not None:
        return "time_to_target_h", "h", h.p90 - h.p10, h.p50
    return "time_to_target_h", "h", None, None


def _measure(r: Range, measure: str) -> float | None:
    pct = {"total_usd": r.total_usd, "known_usd": r.known_usd}.get(measure)
    if measure == "time_to_target_h":
        h = r.time_to_target_h
        return None if h is None or h.p10 is None or h.p90 is None else h.p90 - h.p10
    if pct is None or pct.p10 is None or pct.p90 is None:
        return None
    return float(pct.p90 - pct.p10)


def _options(ev: Evidence, planned: int) -> list[tuple[Phase, int, str]]:
    if ev.projected:
        return _projected_options(ev, planned)
    counts = ev.measured_counts()
    top = max(counts)
    out: list[tuple[Phase, int, str]] = []
    if planned not in counts:
        out.append((Phase.target, planned, "a target trial at the planned count"))
    for c, why in (
        (2 * top, f"twice the largest measured count ({top}): scaling evidence toward the plan"),
        (planned // 2, "half the planned count: scaling evidence nearer the plan"),
    ):
        if top < c < planned and c not in {o[1] for o in out}:
            out.append((Phase.target, c, why))
    at_top = [t for t in ev.usable if t.candidate.instance_count == top]
    phase = Phase.target if any(t.phase == Phase.target for t in at_top) else Phase.baseline
    out.append((phase, top, f"a repeat at {top} instances (the largest measured count)"))
    return out


def _projected_options(ev: Evidence, planned: int) -> list[tuple[Phase, int, str]]:
    """A projected candidate (estimate/projection.py): its fit trial first (does it compile
    and run, and its first throughput, which updates the per-chip ratio), then a baseline at
    the planned count (its own throughput: no longer projected)."""
    from trncost.estimate.projected import ProjectedEvidence

    assert isinstance(ev, ProjectedEvidence)
    it = ev.candidate.instance_type
    at = ev.fit_count()
    fit = (
        Phase.fit,
        at,
        f"the fit trial of {it}: does it compile and run, and its first throughput (it "
        "measures the per-chip ratio the projection rests on"
        + (
            f"; at {at} instances, matched to the smallest count the "
            f"{ev.source.candidate.instance_type} trials measured)"
            if at > 1
            else ")"
        ),
    )
    baseline = (
        Phase.baseline,
        planned,
        f"a baseline of {it} at the planned {planned} instances: its own throughput (no longer "
        "projected)",
    )
    return [baseline, fit] if ev.fit_observations() else [fit, baseline]


def _fit_first(ev: Evidence) -> bool:
    """Whether the fit trial must come first: a projected candidate none of whose fit trials
    has passed (a baseline before the fit may pay for a run that does not compile)."""
    from trncost.estimate.projected import ProjectedEvidence

    return isinstance(ev, ProjectedEvidence) and not ev.fit_observations()


def _template(ev: Evidence, phase: Phase = Phase.baseline) -> TrialRun:
    """The median trial (by steady seconds) the expected one is made from: of a projected
    candidate, its source's (a fit trial for a fit, when the source ran one)."""
    pool = ev.usable
    if phase == Phase.fit and ev.projected:
        fits = [t for t in ev.trials if t.phase == Phase.fit and t.steady_work > 0]
        pool = fits or pool
    return sorted(pool, key=lambda t: t.wall.steady_s)[len(pool) // 2]


def _expected_trial(
    ev: Evidence, inp: EstimateInput, phase: Phase, count: int, i: int
) -> TrialRun | None:
    base = _template(ev, phase)
    at = inp.model_copy(
        update={"candidate": inp.candidate.model_copy(update={"instance_count": count})}
    )
    try:
        rate = estimate(at).steady_throughput
    except DomainError:
        return None
    if not rate:
        return None
    factor = ev.workload.units_per(base.work.unit) or 1.0
    clock = base.steady_clock_s  # the window of the steady work (warm-up in or out of both)
    warmup = base.work.warmup or 0.0
    work = rate * clock / factor + warmup  # in the template's own unit
    old_rate = base.steady_work / clock if clock else 0.0
    scale = ((work - warmup) / clock) / old_rate if old_rate else 1.0
    data = base.model_dump()  # re-validated, so no cached figure of the template survives
    # a projected candidate's expected trial runs on its own instance type, not the source's
    cand = inp.candidate.model_dump() if ev.projected else data["candidate"]
    data.update(
        trial_id=f"next-trial-{i}",
        phase=phase,
        candidate={**cand, "instance_count": count},
        work={**data["work"], "done": work, "quality_meeting": work},
        steady_throughput_samples=[s * scale for s in base.steady_throughput_samples],
        reliability={**data["reliability"], "failures": 0, "reruns": 0, "rerun_s": 0},
        billed_instance_seconds=None,
    )
    return TrialRun.model_validate(data)


def _price(inp: EstimateInput) -> tuple[Decimal | None, str]:
    c = inp.candidate
    key = PriceKey.for_instance(c.instance_type, c.region, PurchaseOption.on_demand, c.platform)
    rate = Ledger(inp.prices, inp.assumptions.price_overrides).rate(key)
    return rate.flat, str(key)


def next_trial(
    inp: EstimateInput,
    est: Estimate,
    rng_range: Range,
    decision: Decision | None,
    *,
    seed: int = 0,
) -> NextTrial | None:
    """The next trial worth running for `inp`'s candidate (the module docstring says how it
    is found)::

        narrowing = (P90 − P10 now) − (P90 − P10 with the expected trial)
        per dollar = narrowing / (expected instance-hours × on-demand hourly rate)

    Parameters
    ----------
    est : Estimate
        `inp`'s estimate (an infeasible one gets no next trial).
    rng_range : Range
        Its range: the width it shows decides whether a range is wide ((P90 − P10) / P50
        above WIDE, 25 %).
    decision : Decision or None
        Its decision: `continue_trials` for an evidence gap (not a price that is not
        official) calls for a trial.
    seed : int
        The Monte Carlo's seed [unitless]; the widths are re-measured with SAMPLES draws.

    Returns
    -------
    NextTrial or None
        The measure (total cost [USD], or time to target [h] while a price is PENDING), its
        width now, every option (phase, instance count [instances], expected instance-hours
        [instance-hours], expected cost [USD] or the PENDING price key, width after, relative
        narrowing, narrowing per USD) and the best one (None when no option narrows). None
        when no trial is called for.

    References
    ----------
    DESIGN.md, principle 9; seeds/000 (繼續試跑; 用敏感性檢查決定是否擴大試跑).
    """
    from trncost.estimate.uncertainty import monte_carlo

    measure, unit, width, p50 = _width(rng_range)
    wide = width is not None and p50 is not None and p50 > 0 and width / p50 > WIDE
    # a trial answers the evidence gaps, not a price that is not official
    continuing = (
        decision is not None
        and decision.action == Action.continue_trials
        and any(
            r.action == Action.continue_trials and r.code != "prices_not_official"
            for r in decision.reasons
        )
    )
    if not (continuing or wide) or est.time is None:
        return None
    if continuing:
        reason = "the decision is continue_trials"
    else:
        assert width is not None and p50 is not None
        reason = f"the range is wide ((P90 − P10) / P50 = {width / p50:.0%} > {WIDE:.0%})"
    ev = Evidence.of(inp, Ledger(inp.prices))
    now = _measure(monte_carlo(inp, samples=SAMPLES, seed=seed, est=est), measure)
    if now is None:
        return None
    price, key = _price(inp)
    options: list[TrialOption] = []
    notes: list[str] = []
    for i, (phase, count, why) in enumerate(_options(ev, inp.candidate.instance_count)):
        trial = _expected_trial(ev, inp, phase, count, i)
        if trial is None:
            notes.append(f"no expected throughput at {count} instances: option left out")
            continue
        after_inp = inp.model_copy(update={"trials": [*inp.trials, trial]})
        try:
            after = _measure(monte_carlo(after_inp, samples=SAMPLES, seed=seed), measure)
        except DomainError as exc:
            notes.append(f"{count} instances: {exc}")
            continue
        if after is None:
            continue
        hours = trial.instance_hours
        cost = None if price is None else (price * Decimal(repr(hours))).quantize(Decimal("0.01"))
        narrowed = now - after
        options.append(
            TrialOption(
                phase=phase.value,
                instance_count=count,
                why=why,
                expected_instance_hours=hours,
                expected_cost_usd=cost,
                pending_price_key=None if price is not None else key,
                width_after=after,
                narrower_by=narrowed / now if now > 0 else 0.0,
                narrowing_per_usd=(narrowed / float(cost)) if cost else None,
            )
        )
    if not options:
        return NextTrial(
            reason=reason,
            measure=measure,
            unit=unit,
            width_now=now,
            best=None,
            method=METHOD,
            notes=[*notes, "no option could be evaluated"],
        )

    def per(o: TrialOption) -> float:
        if price is not None:
            return o.narrowing_per_usd or 0.0
        return (now - o.width_after) / max(o.expected_instance_hours, 1e-9)

    options.sort(key=lambda o: -per(o))
    best = options[0] if now - options[0].width_after > 0 else None
    if _fit_first(ev):
        fit = next((o for o in options if o.phase == Phase.fit.value), None)
        best = fit if fit is not None and now - fit.width_after > 0 else best
        notes.append(
            f"no trial of {ev.candidate.instance_type} has passed a fit: the fit trial comes "
            "first (a baseline before it may pay for a run that does not compile)"
        )
    if best is None:
        notes.append("no option narrows the range: more of the same evidence would not help")
    if price is None:
        notes.append(
            f"the instance price is PENDING ({key}): options ranked by narrowing per instance-hour"
        )
    return NextTrial(
        reason=reason,
        measure=measure,
        unit=unit,
        width_now=now,
        best=best,
        options=options,
        method=METHOD,
        notes=notes,
    )
