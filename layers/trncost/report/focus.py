"""An estimate's run as FOCUS-shaped forecast rows (`GET /estimates/{id}/report?format=focus`),
so forecast and bill sit in one FinOps table.

One row per line of the run (cloud lines less the trials already run; labour is not billed by
AWS), with the FOCUS 1.2 columns a forecast can fill and trncost's own `x_` columns:

| column            | value                                                               |
|-------------------|---------------------------------------------------------------------|
| ChargePeriodStart | the run's start (`start`, UTC midnight)                             |
| ChargePeriodEnd   | start + the held time, whole hours up (exclusive, as FOCUS's end)   |
| ServiceName       | the AWS product name of the price's service                         |
| SkuId             | the SKU of the price (its official provenance), else empty          |
| PricingUnit       | the Price List's unit (Hrs, GB-Mo, GB, Metrics)                     |
| PricingQuantity   | the line's quantity                                                 |
| ListUnitPrice     | the line's rate (amount / quantity for a tiered price)              |
| ListCost          | the line's amount                                                   |
| x_EstimateId      | the estimate                                                        |
| x_Percentile      | `point` (the estimate's figures), `P10`, `P50`, `P90`               |
| x_PriceBasis      | official, saved_file, example or assumed (PENDING: empty)           |

The P10/P50/P90 rows are the point's lines scaled to that percentile of the run's total (the
range is of the total; its split follows the point's). Sum the rows of one x_Percentile, never
across. A PENDING line has no ListUnitPrice or ListCost (never 0).
"""

from __future__ import annotations

import csv
import io
import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from trncost.estimate.actuals import price_skus, run_forecast, run_lines
from trncost.estimate.usage_types import SERVICE_NAMES
from trncost.model import Estimate
from trncost.model.analysis import MoneyPercentiles
from trncost.report.render import CONTENT_TYPES, Rendered

COLUMNS = (
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "BillingCurrency",
    "ChargeCategory",
    "ServiceName",
    "RegionId",
    "SkuId",
    "PricingUnit",
    "PricingQuantity",
    "ListUnitPrice",
    "ListCost",
    "x_EstimateId",
    "x_EstimateVersion",
    "x_Percentile",
    "x_PriceBasis",
    "x_Component",
    "x_LineItem",
)
PRICE_UNITS = {"instance-hour": "Hrs", "GB-month": "GB-Mo", "GB": "GB", "metric-month": "Metrics"}
MICRO = Decimal("0.000001")


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def forecast_csv(
    est: Estimate,
    estimate_id: str,
    version: int,
    run: MoneyPercentiles | None,
    start: date,
) -> Rendered:
    """The rows (see the module) as one CSV file."""
    begin = datetime(start.year, start.month, start.day, tzinfo=UTC)
    held = est.time.held_h if est.time else 0.0
    end = begin + timedelta(hours=max(1, math.ceil(held)))
    skus = price_skus(est)
    point = run_forecast(est)
    scenarios: list[tuple[str, Decimal | None]] = [("point", Decimal(1))]
    if run is not None and point is not None and point > 0:
        for name, value in (("P10", run.p10), ("P50", run.p50), ("P90", run.p90)):
            if value is not None:
                scenarios.append((name, value / point))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for scenario, factor in scenarios:
        for li in run_lines(est):
            service = li.price_key.split("/")[0] if li.price_key else ""
            region = li.price_key.split("/")[1] if li.price_key and "/" in li.price_key else ""
            amount = None if li.amount_usd is None or factor is None else li.amount_usd * factor
            quantity = Decimal(str(li.quantity)) * (factor or Decimal(1))
            rate = li.rate_usd
            if rate is None and li.amount_usd is not None and li.quantity > 0:
                rate = li.amount_usd / Decimal(str(li.quantity))
            writer.writerow(
                (
                    _stamp(begin),
                    _stamp(end),
                    "USD",
                    "Usage",
                    SERVICE_NAMES.get(service, service),
                    region,
                    skus.get(li.price_key or "", ""),
                    PRICE_UNITS.get(li.unit, li.unit),
                    f"{quantity.quantize(MICRO).normalize():f}",
                    "" if rate is None else f"{rate.quantize(MICRO).normalize():f}",
                    "" if amount is None else f"{amount.quantize(MICRO).normalize():f}",
                    estimate_id,
                    version,
                    scenario,
                    li.price_basis.value if li.price_basis else "",
                    li.component.value,
                    li.name,
                )
            )
    name = f"trncost-{estimate_id}-v{version}-focus.csv"
    return Rendered(out.getvalue(), CONTENT_TYPES["csv"], name)
