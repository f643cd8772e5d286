"""The engine's side of estimate vs actual: the run's forecast, the gap split (hours, rate, not
estimated: they sum to actual − forecast), which source a billing period's actual comes from,
the scorecard, and the forecast as FOCUS rows."""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.examples import example_estimates
from trncost.estimate.actuals import (
    compare,
    run_forecast,
    run_lines,
    run_range,
    scorecard,
    select_actuals,
    trials_usd,
)
from trncost.model.actuals import BilledLine, BillGroup, StoredGroup
from trncost.model.analysis import MoneyPercentiles
from trncost.report.focus import COLUMNS, forecast_csv

ESTIMATES = example_estimates()
TRN2 = ESTIMATES["trn2.48xlarge"]
RUN = MoneyPercentiles(p10=Decimal(13000), p50=Decimal(13500), p90=Decimal(14000))


def billed(usage_type: str, quantity: str, usd: str, unit: str = "Hours", **more) -> BilledLine:
    return BilledLine(
        service_name=more.pop("service_name", "Amazon Elastic Compute Cloud"),
        service_code=more.pop("service_code", "AmazonEC2"),
        usage_type=usage_type,
        unit=unit,
        quantity=Decimal(quantity),
        billed_usd=Decimal(usd),
        rows=1,
        **more,
    )


def compared(lines, run=RUN, est=TRN2):
    return compare(est, lines, run, estimate_id="est-1", version=1, forecast_before_spend=True)


def test_the_run_forecast_is_the_cloud_lines_less_trials_and_labour():
    # Given the example's trn2 estimate: instances, storage, ..., five trials, engineering
    names = {li.name for li in run_lines(TRN2)}
    # Then the run is its cloud lines that are not trials
    assert not any(n.startswith("trial ") or n.startswith("engineering") for n in names)
    assert run_forecast(TRN2) == TRN2.cloud_usd - trials_usd(TRN2)
    # And the run's range is the cloud range shifted by the trials (fixed in every draw)
    cloud = MoneyPercentiles(p10=Decimal(100), p50=Decimal(200), p90=Decimal(300))
    assert run_range(cloud, Decimal(40)) == MoneyPercentiles(
        p10=Decimal(60), p50=Decimal(160), p90=Decimal(260)
    )
    assert run_range(None, Decimal(1)) is None


def test_a_pending_price_leaves_no_forecast_and_no_gap():
    trn3 = ESTIMATES["trn3.48xlarge"]  # waits on a PENDING instance price
    result = compared([billed("USE2-BoxUsage:trn3.48xlarge", "10", "400")], run=None, est=trn3)
    assert run_forecast(trn3) is None
    assert (result.estimate_usd, result.gap, result.inside_range) == (None, None, None)
    assert result.actual_usd == Decimal(400)
    assert any("no priced forecast" in n for n in result.notes)


def test_more_hours_at_a_higher_rate_and_an_unestimated_item_split_the_gap():
    # Given the run billed 400 instance-hours at $36 (the forecast: 371.2 h at $35.76) and an
    # inter-AZ transfer the estimate never had
    hours = next(li for li in run_lines(TRN2) if li.component == "instances")
    lines = [
        billed("USE2-BoxUsage:trn2.48xlarge", "400", "14400"),
        billed("USE2-DataTransfer-Regional-Bytes", "250", "2.50", unit="GB"),
    ]
    # When compared
    result = compared(lines)
    line = next(x for x in result.lines if x.name == hours.name)
    rate = hours.amount_usd / Decimal(str(hours.quantity))
    # Then the instance line's gap is its extra hours at the estimate's rate, and the rest rate
    assert line.matched_by == "usage_type"
    assert line.hours_usd == ((Decimal(400) - Decimal(str(hours.quantity))) * rate).quantize(
        Decimal("0.000001")
    )
    assert line.hours_usd + line.rate_usd == Decimal(14400) - hours.amount_usd
    assert line.rate_usd > 0  # $36 > $35.76
    # And the transfer is not estimated; lines nothing billed are whole negative hours
    assert result.gap.not_estimated == Decimal("2.50")
    unbilled = [x for x in result.lines if x.kind == "not_billed"]
    assert unbilled and all(x.hours_usd == -(x.estimate_usd or 0) for x in unbilled)
    # And the three parts are the gap exactly
    gap = result.gap
    assert gap.hours + gap.rate + gap.not_estimated == result.actual_usd - result.estimate_usd


def test_a_billed_sku_matches_the_price_the_estimate_used():
    # Given a bill whose SKU is the one the estimate's instance price came from
    row = next(r for r in TRN2.inputs if r.id.startswith("price:AmazonEC2/us-east-2/trn2"))
    sku = row.provenance.sku
    result = compared([billed("an-unknown-usage-type", "371", "13266.96", sku_id=sku)])
    (line,) = [x for x in result.lines if x.kind == "matched"]
    assert (line.component, line.matched_by) == ("instances", "sku")


def test_a_billed_unit_that_is_not_the_estimates_is_not_estimated_and_said():
    result = compared([billed("USE2-BoxUsage:trn2.48xlarge", "1", "5", unit="Requests")])
    assert result.gap.not_estimated == Decimal(5)
    assert any("billed in 'Requests'" in n for n in result.notes)


def test_tax_credits_and_corrections_are_kept_apart():
    lines = [
        billed("USE2-BoxUsage:trn2.48xlarge", "371", "13266.96"),
        billed("", "0", "-120", charge_class="Correction"),
        billed("", "0", "50", charge_category="Tax"),
        billed("", "0", "-100", charge_category="Credit"),
    ]
    result = compared(lines)
    assert result.actual_usd == Decimal("13266.96")
    assert result.excluded_usd == Decimal(-170)


@settings(max_examples=60, deadline=None)
@given(
    hours=st.decimals(min_value=0, max_value=2000, places=2),
    price=st.decimals(min_value=0, max_value=100, places=4),
    stray=st.decimals(min_value=-50, max_value=500, places=3),
)
def test_the_gap_always_sums_to_actual_minus_forecast(hours, price, stray):
    lines = [
        billed("USE2-BoxUsage:trn2.48xlarge", str(hours), str(hours * price)),
        billed("USE2-EBS:VolumeUsage.gp3", "250", str(price), unit="GB-Months"),
        billed("USE2-Something-Else", "1", str(stray), unit="GB"),
    ]
    result = compared(lines)
    gap = result.gap
    assert gap.hours + gap.rate + gap.not_estimated == result.actual_usd - result.estimate_usd


@pytest.mark.parametrize(
    ("actual", "inside", "error"),
    # the example's trn2 run forecast (its failure rate the posterior mean since issue 22)
    [("13500", True, "-0.0007"), ("12000", False, "-0.1117"), ("14000", True, "0.0363")],
)
def test_inside_range_and_relative_error(actual, inside, error):
    result = compared([billed("USE2-BoxUsage:trn2.48xlarge", "371", actual)])
    assert result.inside_range is inside
    assert round(result.relative_error, 4) == float(error)


def _stored(source: str, period: str, usd: str, estimated: bool = False) -> StoredGroup:
    group = BillGroup(
        source=source,
        period=period,
        estimate_id="est-1",
        rows=1,
        lines=[billed("USE2-BoxUsage:trn2.48xlarge", "1", usd)],
        estimated=estimated,
    )
    return StoredGroup(group=group, delivery_id="d", imported_at="2026-12-01T00:00:00+00:00")


def test_per_period_the_strongest_source_counts_and_the_others_are_superseded():
    # Given November from an export, Cost Explorer and SageMaker; December from CE and two jobs
    groups = [
        _stored("focus_1_2:111122223333", "2026-11", "100"),
        _stored("cost_explorer", "2026-11", "98", estimated=True),
        _stored("sagemaker:us-east-2:job-a", "2026-11", "90", estimated=True),
        _stored("cost_explorer", "2026-12", "50", estimated=True),
        _stored("sagemaker:us-east-2:job-b", "2026-12", "20", estimated=True),
    ]
    lines, periods, sources = select_actuals(groups)
    # Then the export counts in November, Cost Explorer in December, never added together
    assert [(p.period, p.source, p.actual_usd, p.superseded) for p in periods] == [
        ("2026-11", "focus_1_2", Decimal(100), ["cost_explorer", "sagemaker"]),
        ("2026-12", "cost_explorer", Decimal(50), ["sagemaker"]),
    ]
    assert sum(x.billed_usd for x in lines) == Decimal(150)
    used = {s.source: s.used for s in sources}
    assert used == {
        "cost_explorer": True,
        "focus_1_2:111122223333": True,
        "sagemaker:us-east-2:job-a": False,
        "sagemaker:us-east-2:job-b": False,
    }
    # And two jobs of one period (same kind) add up
    jobs = [_stored("sagemaker:r:a", "2026-12", "20"), _stored("sagemaker:r:b", "2026-12", "5")]
    assert select_actuals(jobs)[1][0].actual_usd == Decimal(25)


def test_the_scorecard_counts_inside_and_takes_the_median_error():
    results = [
        compared([billed("USE2-BoxUsage:trn2.48xlarge", "371", usd)])
        for usd in ("13500", "15000", "13100")
    ]
    pending = compared([billed("USE2-BoxUsage:trn3.48xlarge", "1", "1")], run=None,
                       est=ESTIMATES["trn3.48xlarge"])  # fmt: skip
    card = scorecard([*results, pending], workload_id="llama31-8b-cpt")
    assert (card.scope, card.estimates_with_actuals, card.inside_p10_p90) == ("workload", 4, 2)
    assert card.inside_share == pytest.approx(2 / 3)
    errors = sorted(abs(r.relative_error) for r in results)
    assert card.median_abs_relative_error == pytest.approx(errors[1])
    assert card.by_component["instances"].estimates == 3
    assert any("no range" in n for n in card.notes)


def test_the_forecast_as_focus_rows_sums_to_each_percentile():
    # Given the trn2 estimate's run and its range
    rendered = forecast_csv(TRN2, "est-1", 2, RUN, date(2026, 12, 3))
    rows = list(csv.DictReader(io.StringIO(rendered.body)))
    # Then the FOCUS columns the issue names, and trncost's own
    assert tuple(rows[0]) == COLUMNS
    assert rendered.content_type.startswith("text/csv")

    # And each x_Percentile's rows sum to its figure (the point: the forecast)
    def total(p: str) -> Decimal:
        return sum((Decimal(r["ListCost"]) for r in rows if r["x_Percentile"] == p), Decimal(0))

    assert abs(total("point") - run_forecast(TRN2)) < Decimal("0.0001")
    for name, value in (("P10", RUN.p10), ("P50", RUN.p50), ("P90", RUN.p90)):
        assert abs(total(name) - value) < Decimal("0.001")
    # And the run's hours start on its day and end after its held time
    first = rows[0]
    assert first["ChargePeriodStart"] == "2026-12-03T00:00:00Z"
    assert first["ChargePeriodEnd"] == "2026-12-06T21:00:00Z"  # ceil(92.8 h) later
    assert {r["x_EstimateId"] for r in rows} == {"est-1"}
    assert first["ServiceName"] == "Amazon Elastic Compute Cloud" and first["PricingUnit"] == "Hrs"
