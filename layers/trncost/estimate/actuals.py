"""Forecasts keep score: an estimate against what AWS billed the runs tagged with it, the gap
split into hours, rate and items never estimated, and the scorecard over many estimates.

The run's forecast is what the bill of a run executing the estimate should show: the cloud
lines, less the trials already run (billed under their own `trncost:trial-id` tags, before the
estimate) and less labour (not billed by AWS)::

    forecast = Σ amount of the cloud lines that are not trials                         [USD]
    P10/P50/P90 of the run = P10/P50/P90 of the cloud cost − Σ trial lines             [USD]

(the trial lines are fixed amounts in every draw of the range, so the shift is exact).

Each billed line is matched to the estimate line of the same price: by SKU (the SkuId a
price row's official provenance names), else by usage type (trncost.estimate.usage_types),
with units that agree. For an estimate line with estimated quantity Qe and amount Ae (rate
Re = Ae / Qe), and the billed lines matched to it, with quantity Qa and cost Aa::

    hours = (Qa − Qe) × Re                                                             [USD]
    rate  = Aa − Ae − hours = (Aa / Qa − Re) × Qa                                      [USD]

A billed line no estimate line answers is `not_estimated` (its whole cost); an estimate line
nothing was billed for has Qa = 0, so its whole amount is a (negative) `hours`. The three parts
sum to actual − forecast exactly: hours is rounded to the micro-dollar, rate takes the rest.

References
----------
DESIGN.md, principle 12 (forecasts keep score); the FOCUS 1.2 column definitions (BilledCost,
PricingQuantity, SkuId, ChargeCategory); docs/estimates.md, "Estimate vs actual".
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from trncost.estimate.usage_types import is_usage_item, price_item, service_code, unit
from trncost.model.actuals import (
    SOURCE_RANK,
    ActualsComparison,
    BilledLine,
    ComponentActual,
    ComponentScore,
    Gap,
    GapLine,
    PeriodActual,
    Scorecard,
    ScoredEstimate,
    SourceActual,
    StoredGroup,
    source_kind,
)
from trncost.model.analysis import MoneyPercentiles
from trncost.model.estimate import Estimate, LineItem
from trncost.model.provenance import OfficialPrice

MICRO = Decimal("0.000001")
NOT_ESTIMATED = "not_estimated"


def is_trial_line(line: LineItem) -> bool:
    """Whether `line` prices a trial already run (adaptation & reruns, billed under the
    trial's own tags).

    Parameters
    ----------
    line : LineItem
        A line of an estimate.

    Returns
    -------
    bool
        True when one of its input rows is a trial's (`trial:<id>:…`).
    """
    return any(i.startswith("trial:") for i in line.inputs)


def run_lines(est: Estimate) -> list[LineItem]:
    """The lines of a run executing `est`: its cloud lines, trials and labour left out.

    Parameters
    ----------
    est : Estimate
        The estimate.

    Returns
    -------
    list[LineItem]
        Its cloud lines that are not trials, in the estimate's order.
    """
    return [li for li in est.line_items if li.cost == "cloud" and not is_trial_line(li)]


def run_forecast(est: Estimate) -> Decimal | None:
    """What the bill of a run executing `est` should show::

        forecast = Σ amount of the cloud lines that are not trials                     [USD]

    Parameters
    ----------
    est : Estimate
        The estimate.

    Returns
    -------
    Decimal or None
        The forecast [USD]; None while one of those lines is PENDING or the plan is
        infeasible (no lines).
    """
    if est.status == "infeasible" or est.time is None:
        return None
    return _known_sum(run_lines(est))


def trials_usd(est: Estimate) -> Decimal | None:
    """What `est`'s trial lines cost (billed already, under the trials' tags).

    Parameters
    ----------
    est : Estimate
        The estimate.

    Returns
    -------
    Decimal or None
        Σ amount of its trial lines [USD]; None when one of them is PENDING.
    """
    return _known_sum(li for li in est.line_items if li.cost == "cloud" and is_trial_line(li))


def _known_sum(lines: Iterable[LineItem]) -> Decimal | None:
    """Σ amount of `lines` [USD]; None when one of them is PENDING (never counted as 0)."""
    total = Decimal(0)
    for li in lines:
        if li.amount_usd is None:
            return None
        total += li.amount_usd
    return total


def run_range(cloud: MoneyPercentiles | None, trials: Decimal | None) -> MoneyPercentiles | None:
    """The run's P10/P50/P90 from those of the cloud cost (the range of the estimate made
    without labour)::

        P of the run = P of the cloud cost − Σ trial lines                             [USD]

    Parameters
    ----------
    cloud : MoneyPercentiles or None
        P10/P50/P90 of the cloud cost [USD], None while a price is PENDING.
    trials : Decimal or None
        Σ trial lines [USD] (`trials_usd`).

    Returns
    -------
    MoneyPercentiles or None
        The run's percentiles [USD]; None without a range or with a PENDING trial.
    """
    if cloud is None or trials is None or None in (cloud.p10, cloud.p50, cloud.p90):
        return None
    assert cloud.p10 is not None and cloud.p50 is not None and cloud.p90 is not None
    return MoneyPercentiles(p10=cloud.p10 - trials, p50=cloud.p50 - trials, p90=cloud.p90 - trials)


def select_actuals(
    groups: Sequence[StoredGroup],
) -> tuple[list[BilledLine], list[PeriodActual], list[SourceActual]]:
    """Per billing period, the lines of the strongest kind of source that has the period (a
    FOCUS export, then a CUR 2.0 export, then Cost Explorer, then SageMaker's same-day
    figure); the weaker ones are superseded, never added: they count the same spend.

    Parameters
    ----------
    groups : Sequence[StoredGroup]
        The estimate's current groups, every source and period.

    Returns
    -------
    tuple[list[BilledLine], list[PeriodActual], list[SourceActual]]
        The lines chosen (counted and excluded alike), each period's actual [USD] and where
        it comes from, and each source with whether it was used.
    """
    by_period: dict[str, list[StoredGroup]] = {}
    for g in groups:
        by_period.setdefault(g.group.period, []).append(g)
    lines: list[BilledLine] = []
    periods: list[PeriodActual] = []
    used_sources: set[str] = set()
    for period in sorted(by_period):
        found = by_period[period]
        best = max(SOURCE_RANK.get(source_kind(g.group.source), 0) for g in found)
        chosen = [g for g in found if SOURCE_RANK.get(source_kind(g.group.source), 0) == best]
        others = sorted(
            {source_kind(g.group.source) for g in found if g not in chosen}, key=_rank_key
        )
        chosen_lines = [line for g in chosen for line in g.group.lines]
        lines += chosen_lines
        used_sources |= {g.group.source for g in chosen}
        periods.append(
            PeriodActual(
                period=period,
                source=source_kind(chosen[0].group.source),
                actual_usd=sum((x.billed_usd for x in chosen_lines if x.counted), Decimal(0)),
                excluded_usd=sum((x.billed_usd for x in chosen_lines if not x.counted), Decimal(0)),
                rows=sum(g.group.rows for g in chosen),
                estimated=any(g.group.estimated for g in chosen),
                superseded=others,
            )
        )
    sources: dict[str, SourceActual] = {}
    for g in sorted(groups, key=lambda x: (x.group.source, x.group.period)):
        s = g.group.source
        billed = sum((x.billed_usd for x in g.group.lines if x.counted), Decimal(0))
        old = sources.get(s)
        sources[s] = SourceActual(
            source=s,
            kind=source_kind(s),
            periods=[*(old.periods if old else []), g.group.period],
            imported_at=max(g.imported_at, old.imported_at) if old else g.imported_at,
            billed_usd=(old.billed_usd if old else Decimal(0)) + billed,
            used=s in used_sources,
        )
    return lines, periods, list(sources.values())


def _rank_key(kind: str) -> int:
    return -SOURCE_RANK.get(kind, 0)


def price_skus(est: Estimate) -> dict[str, str]:
    """The SKU of each price `est` used, from its price rows' official provenance.

    Parameters
    ----------
    est : Estimate
        The estimate.

    Returns
    -------
    dict[str, str]
        Price key → SKU (prices without an official row, e.g. overrides, are absent).
    """
    out: dict[str, str] = {}
    for row in est.inputs:
        if row.id.startswith("price:") and isinstance(row.provenance, OfficialPrice):
            if row.provenance.sku:
                out[row.id.removeprefix("price:")] = row.provenance.sku
    return out


def _key_parts(price_key: str | None) -> tuple[str, str] | None:
    """(service, item) of `AmazonEC2/us-east-2/trn2.48xlarge/on_demand`."""
    if not price_key:
        return None
    parts = price_key.split("/")
    return (parts[0], parts[2]) if len(parts) == 4 else None


def _match(
    lines: Sequence[LineItem], skus: Mapping[str, str], billed: BilledLine
) -> tuple[int | None, str | None]:
    """(index of the run line `billed` answers, how it was matched)."""
    for i, li in enumerate(lines):
        if li.price_key and billed.sku_id and skus.get(li.price_key) == billed.sku_id:
            return i, "sku"
    found = price_item(service_code(billed.service_code, billed.service_name), billed.usage_type)
    if found is None:
        return None, None
    for i, li in enumerate(lines):
        parts = _key_parts(li.price_key)
        if parts is None:
            continue
        if parts == found or (is_usage_item(found[1]) and parts[1] == found[1]):
            return i, "usage_type"
    return None, None


def compare(
    est: Estimate,
    lines: Sequence[BilledLine],
    run: MoneyPercentiles | None,
    *,
    estimate_id: str,
    version: int,
    forecast_before_spend: bool,
    periods: Sequence[PeriodActual] = (),
    sources: Sequence[SourceActual] = (),
) -> ActualsComparison:
    """`est` against the billed `lines` of the runs tagged with it (the module's formulas).

    Parameters
    ----------
    est : Estimate
        The version compared.
    lines : Sequence[BilledLine]
        The billed lines chosen per period (`select_actuals`).
    run : MoneyPercentiles or None
        The run's P10/P50/P90 [USD] (`run_range`).
    estimate_id : str
        Its id.
    version : int
        Its version number [unitless].
    forecast_before_spend : bool
        Whether that version was made before the billed usage began.
    periods : Sequence[PeriodActual]
        Each period's actual and source.
    sources : Sequence[SourceActual]
        Each source.

    Returns
    -------
    ActualsComparison
        actual [USD] (usage and purchases), forecast [USD], P10/P50/P90 [USD], whether the
        actual is inside P10–P90, (actual − forecast) / forecast [unitless], the gap split
        into hours, rate and not estimated [USD], each line's part, by component.

    References
    ----------
    DESIGN.md, principle 12; docs/estimates.md, "Estimate vs actual".
    """
    counted = [b for b in lines if b.counted]
    actual = sum((b.billed_usd for b in counted), Decimal(0))
    excluded = sum((b.billed_usd for b in lines if not b.counted), Decimal(0))
    forecast = run_forecast(est)
    notes: list[str] = []
    own = run_lines(est)
    skus = price_skus(est)
    matched: dict[int, list[tuple[BilledLine, str]]] = {}
    strays: list[BilledLine] = []
    for b in counted:
        index, how = _match(own, skus, b)
        if index is not None and how is not None and unit(b.unit) != unit(own[index].unit):
            notes.append(
                f"{b.usage_type or b.sku_id or b.service_name}: billed in {b.unit!r}, estimated "
                f"in {own[index].unit!r}: counted as not estimated"
            )
            index = None
        if index is None or how is None:
            strays.append(b)
        else:
            matched.setdefault(index, []).append((b, how))
    gap_lines = [_line_gap(li, matched.get(i, [])) for i, li in enumerate(own)]
    gap_lines += [_stray(b) for b in _merged_strays(strays)]
    gap: Gap | None = None
    if forecast is None:
        notes.append("the estimate has no priced forecast (a PENDING price, or infeasible)")
    else:
        gap = Gap(
            hours=sum((g.hours_usd for g in gap_lines), Decimal(0)),
            rate=sum((g.rate_usd for g in gap_lines), Decimal(0)),
            not_estimated=sum((g.not_estimated_usd for g in gap_lines), Decimal(0)),
        )
    p10, p50, p90 = (run.p10, run.p50, run.p90) if run is not None else (None, None, None)
    inside = None if p10 is None or p90 is None else p10 <= actual <= p90
    error = float((actual - forecast) / forecast) if forecast is not None and forecast > 0 else None
    if not forecast_before_spend:
        notes.append(
            "every version of this estimate was made after the billed usage began: it is "
            "compared, but it was not a forecast"
        )
    return ActualsComparison(
        estimate_id=estimate_id,
        workload_id=est.workload_id,
        estimate_version=version,
        forecast_before_spend=forecast_before_spend,
        actual_usd=actual,
        estimate_usd=forecast,
        p10_usd=p10,
        p50_usd=p50,
        p90_usd=p90,
        inside_range=inside,
        relative_error=error,
        gap=gap,
        periods=list(periods),
        sources=list(sources),
        by_component=_by_component(gap_lines),
        lines=gap_lines,
        excluded_usd=excluded,
        notes=notes,
    )


def _line_gap(li: LineItem, billed: Sequence[tuple[BilledLine, str]]) -> GapLine:
    """One estimate line against the billed lines matched to it."""
    qe = Decimal(str(li.quantity))
    ae = li.amount_usd
    qa = sum((b.quantity for b, _ in billed), Decimal(0))
    aa = sum((b.billed_usd for b, _ in billed), Decimal(0))
    hours = Decimal(0)
    rate = Decimal(0)
    if ae is not None:
        re_ = ae / qe if qe > 0 else li.rate_usd
        if re_ is not None:
            hours = ((qa - qe) * re_).quantize(MICRO)
        rate = aa - ae - hours
    first = billed[0][0] if billed else None
    return GapLine(
        kind="matched" if billed else "not_billed",
        name=li.name,
        component=li.component.value,
        service_name=first.service_name if first else None,
        sku_id=first.sku_id if first else None,
        usage_type=first.usage_type if first else None,
        unit=li.unit,
        estimate_quantity=li.quantity,
        actual_quantity=qa if billed else None,
        estimate_usd=ae,
        actual_usd=aa,
        hours_usd=hours,
        rate_usd=rate,
        matched_by=billed[0][1] if billed else None,
    )


def _merged_strays(strays: Sequence[BilledLine]) -> list[BilledLine]:
    """Billed lines no estimate line answers, one per (service, SKU, usage type, unit)."""
    out: dict[tuple[str | None, ...], BilledLine] = {}
    for b in strays:
        k = (b.service_name, b.sku_id, b.usage_type, b.unit)
        a = out.get(k)
        out[k] = (
            b
            if a is None
            else a.model_copy(
                update={
                    "quantity": a.quantity + b.quantity,
                    "billed_usd": a.billed_usd + b.billed_usd,
                }
            )
        )
    return sorted(out.values(), key=lambda b: -b.billed_usd)


def _stray(b: BilledLine) -> GapLine:
    name = " / ".join(x for x in (b.service_name, b.usage_type or b.sku_id) if x) or "unnamed"
    return GapLine(
        kind="not_estimated",
        name=name,
        component=None,
        service_name=b.service_name,
        sku_id=b.sku_id,
        usage_type=b.usage_type,
        unit=b.unit,
        actual_quantity=b.quantity,
        actual_usd=b.billed_usd,
        not_estimated_usd=b.billed_usd,
    )


def _by_component(lines: Sequence[GapLine]) -> dict[str, ComponentActual]:
    out: dict[str, list[Decimal | None]] = {}
    for g in lines:
        slot = out.setdefault(g.component or NOT_ESTIMATED, [Decimal(0), Decimal(0)])
        if g.kind != "not_estimated":
            slot[0] = (
                None if slot[0] is None or g.estimate_usd is None else slot[0] + g.estimate_usd
            )
        slot[1] = (slot[1] or Decimal(0)) + g.actual_usd
    return {
        k: ComponentActual(estimate_usd=e, actual_usd=a or Decimal(0)) for k, (e, a) in out.items()
    }


def scorecard(
    comparisons: Sequence[ActualsComparison], *, workload_id: str | None = None
) -> Scorecard:
    """How the estimates with actuals scored: how many landed inside their P10–P90, the
    median |relative error|, the same per component::

        relative error = (actual − forecast) / forecast                           [unitless]

    Parameters
    ----------
    comparisons : Sequence[ActualsComparison]
        One per estimate with actuals.
    workload_id : str or None
        The workload they belong to; None: the whole stage.

    Returns
    -------
    Scorecard
        Estimates with actuals, inside P10–P90 (a count, and the share of those with a range
        [unitless]), the median |relative error| [unitless] overall and per component, and
        each estimate's row.

    References
    ----------
    DESIGN.md, principle 12 (a scorecard says how often actuals fell inside).
    """
    ranged = [c for c in comparisons if c.inside_range is not None]
    inside = sum(1 for c in ranged if c.inside_range)
    errors = [abs(c.relative_error) for c in comparisons if c.relative_error is not None]
    components: dict[str, list[tuple[Decimal, Decimal]]] = {}
    for c in comparisons:
        if c.estimate_usd is None:
            continue
        for key, part in c.by_component.items():
            components.setdefault(key, []).append(
                (part.estimate_usd or Decimal(0), part.actual_usd)
            )
    by_component = {
        key: ComponentScore(
            estimates=len(parts),
            estimate_usd=sum((e for e, _ in parts), Decimal(0)),
            actual_usd=sum((a for _, a in parts), Decimal(0)),
            median_abs_relative_error=_median([abs(float((a - e) / e)) for e, a in parts if e > 0]),
        )
        for key, parts in sorted(components.items())
    }
    notes = []
    unscored = len(comparisons) - len(ranged)
    if unscored:
        notes.append(
            f"{unscored} estimate(s) with actuals have no range (a PENDING price or an "
            "infeasible plan): listed, not scored inside or outside"
        )
    return Scorecard(
        scope="workload" if workload_id else "stage",
        workload_id=workload_id,
        estimates_with_actuals=len(comparisons),
        inside_p10_p90=inside,
        inside_share=inside / len(ranged) if ranged else None,
        median_abs_relative_error=_median(errors),
        by_component=by_component,
        estimates=[
            ScoredEstimate(
                estimate_id=c.estimate_id,
                workload_id=c.workload_id,
                estimate_version=c.estimate_version,
                actual_usd=c.actual_usd,
                estimate_usd=c.estimate_usd,
                p10_usd=c.p10_usd,
                p90_usd=c.p90_usd,
                inside_range=c.inside_range,
                relative_error=c.relative_error,
                periods=[p.period for p in c.periods],
            )
            for c in sorted(comparisons, key=lambda x: (x.workload_id, x.estimate_id))
        ],
        notes=notes,
    )


def _median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None
