"""Cost Explorer's GetCostAndUsage, grouped by the `trncost:estimate-id` tag and usage type:
the request (pure), the calls (adapter, through trncost.aws) and the answer as a ParsedBill.

The request asks DAILY UnblendedCost and UsageQuantity of usage records (RECORD_TYPE Usage,
DiscountedUsage, SavingsPlanCoveredUsage: tax, credits and refunds are not the run's usage)
from the first day of a month: each month it covers is then whole (to date), so it replaces
what Cost Explorer said of that month before. A group's keys are `trncost:estimate-id$<id>`
(`trncost:estimate-id$` for spend without the tag) and the usage type. Amounts are strings.

Cost Explorer is not a ledger: a day stays `Estimated` until the month closes, and a month's
figures move for about two weeks after it ends; the daily pull covers the previous month too.
Each request costs USD 0.01 (a page is a request).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from trncost import aws
from trncost.metrics.jobs import ESTIMATE_ID_TAG
from trncost.model.actuals import BilledLine, BillGroup, Delivery, ParsedBill

CE_REGION = "us-east-1"  # Cost Explorer's one endpoint (ce.us-east-1.amazonaws.com)
SOURCE = "cost_explorer"
METRICS = ("UnblendedCost", "UsageQuantity")
RECORD_TYPES = ("Usage", "DiscountedUsage", "SavingsPlanCoveredUsage")
MAX_PAGES = 100  # a guard against a service that never stops paging
# What Cost Explorer answers when the tag is not (yet) an active cost allocation tag, or
# billing data is not there yet: said, not retried (nothing a retry can change today).
NOT_READY_CODES = frozenset({"DataUnavailableException", "BillExpirationException"})


def month_start(day: date) -> date:
    return day.replace(day=1)


def previous_month_start(day: date) -> date:
    first = month_start(day)
    return (first.replace(year=first.year - 1, month=12) if first.month == 1
            else first.replace(month=first.month - 1))  # fmt: skip


def request(start: date, end: date) -> dict[str, Any]:
    """The GetCostAndUsage request for [start, end) (End is exclusive), grouped by the
    estimate tag and usage type."""
    return {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "DAILY",
        "Metrics": list(METRICS),
        "GroupBy": [
            {"Type": "TAG", "Key": ESTIMATE_ID_TAG},
            {"Type": "DIMENSION", "Key": "USAGE_TYPE"},
        ],
        "Filter": {"Dimensions": {"Key": "RECORD_TYPE", "Values": list(RECORD_TYPES)}},
    }


def months(start: date, end: date) -> list[str]:
    """The billing periods (YYYY-MM) [start, end) touches."""
    out, day = [], month_start(start)
    while day < end:
        out.append(f"{day.year:04d}-{day.month:02d}")
        day = (
            day.replace(year=day.year + 1, month=1)
            if day.month == 12
            else day.replace(month=day.month + 1)
        )
    return out


def _amount(metrics: Mapping[str, Any], name: str) -> tuple[Decimal, str | None]:
    value = metrics.get(name) or {}
    try:
        amount = Decimal(str(value.get("Amount", "0")))
    except InvalidOperation:
        amount = Decimal(0)
    return (amount if amount.is_finite() else Decimal(0)), value.get("Unit")


def parse(pages: Iterable[Mapping[str, Any]], start: date, end: date) -> ParsedBill:
    """Cost Explorer's pages for [start, end) as a ParsedBill: per month and estimate, one
    line per usage type (amount and quantity summed over the days). Every month the request
    covers is a delivery, tagged spend or not."""
    prefix = f"{ESTIMATE_ID_TAG}$"
    groups: dict[tuple[str, str], dict[str, list[Any]]] = {}
    estimated: dict[tuple[str, str], bool] = {}
    rows = untagged = 0
    for page in pages:
        for result in page.get("ResultsByTime") or []:
            period = str((result.get("TimePeriod") or {}).get("Start", ""))[:7]
            for group in result.get("Groups") or []:
                rows += 1
                keys = [str(k) for k in group.get("Keys") or []]
                tag = keys[0] if keys else ""
                estimate_id = tag[len(prefix) :] if tag.startswith(prefix) else ""
                if not estimate_id or not period:
                    untagged += 1
                    continue
                usage_type = keys[1] if len(keys) > 1 else None
                metrics = group.get("Metrics") or {}
                cost, _ = _amount(metrics, "UnblendedCost")
                quantity, unit = _amount(metrics, "UsageQuantity")
                lines = groups.setdefault((period, estimate_id), {})
                acc = lines.setdefault(usage_type or "", [Decimal(0), Decimal(0), unit, 0])
                acc[0] += cost
                acc[1] += quantity
                acc[3] += 1
                k = (period, estimate_id)
                estimated[k] = estimated.get(k, False) or bool(result.get("Estimated"))
    bill_groups = [
        BillGroup(
            source=SOURCE,
            period=period,
            estimate_id=estimate_id,
            rows=sum(acc[3] for acc in lines.values()),
            lines=[
                BilledLine(
                    service_name=None,
                    usage_type=usage_type or None,
                    unit=None if acc[2] in (None, "N/A") else acc[2],
                    quantity=acc[1],
                    billed_usd=acc[0],
                    list_usd=None,
                    rows=acc[3],
                )
                for usage_type, acc in sorted(lines.items())
            ],
            estimated=estimated.get((period, estimate_id), False),
            note="Cost Explorer, grouped by the trncost:estimate-id tag and usage type",
        )
        for (period, estimate_id), lines in sorted(groups.items())
    ]
    covered = months(start, end)
    return ParsedBill(
        format="cost_explorer",
        files=[f"GetCostAndUsage {start.isoformat()}..{end.isoformat()}"],
        rows_read=rows,
        untagged_rows=untagged,
        deliveries=[Delivery(source=SOURCE, period=p) for p in covered],
        groups=[g for g in bill_groups if g.period in covered],
        tag_keys_seen={ESTIMATE_ID_TAG: rows - untagged} if rows > untagged else {},
    )


class CostExplorer(aws.RegionalAdapter):
    """`ce:GetCostAndUsage`, every page (its one endpoint's client from trncost.aws, made on
    first use, or injected)."""

    service = "ce"

    def __init__(self, client: Any = None, region: str = CE_REGION) -> None:
        super().__init__(region, client)

    def cost_and_usage(self, query: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every page of the answer to `query`."""
        # botocore has no paginator for GetCostAndUsage (ce's paginators-1.json lists none):
        # the pages are followed by hand, NextPageToken back into the next request.
        pages: list[dict[str, Any]] = []
        token: str | None = None
        for _ in range(MAX_PAGES):
            kwargs = dict(query)
            if token:
                kwargs["NextPageToken"] = token
            self.calls += 1
            page = self.client.get_cost_and_usage(**kwargs)
            pages.append(page)
            token = page.get("NextPageToken")
            if not token:
                return pages
        raise RuntimeError(f"GetCostAndUsage gave more than {MAX_PAGES} pages")
