"""What a deployed stage costs to run for a month, at a stated usage, priced like every other
trncost price: Price List items read by trncost's own parser (`trncost.pricing.parser`), each
usage quantity through its item's tiers. The items are constructed in the Price List's format
with the us-east-1 rates of the AWS pricing pages (tests/events/pricelist/
running_cost_us_east_1.json says so): basis `example`, not fetched by trncost; free tiers left
out. docs/deploy.md holds the table this prints (tests/unit/test_docs_running_cost.py checks it
is current).

    python benchmarks/running_cost.py            # the Markdown table
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers")]
ITEMS = ROOT / "tests" / "events" / "pricelist" / "running_cost_us_east_1.json"
CENT = Decimal("0.01")
SECONDS_A_MONTH = 30.436875 * 24 * 3600  # the mean Gregorian month


@dataclass(frozen=True)
class Use:
    service: str  # what the reader knows it as
    what: str  # the usage, in words
    usagetype: str  # the Price List item it is billed by
    quantity: Decimal  # in the item's unit, a month


def _lambda(name: str, invocations: int, seconds: float, memory_mb: int) -> list[Use]:
    gb_s = Decimal(repr(invocations * seconds * memory_mb / 1024))
    what = f"{name}: {invocations:,} invocations × {seconds:g} s × {memory_mb} MB (Arm)"
    return [  # one row in the table: its requests and its GB-seconds
        Use("Lambda", what, "USE1-Request-ARM", Decimal(invocations)),
        Use("Lambda", what, "USE1-Lambda-GB-Second-ARM", gb_s),
    ]


def usage() -> list[Use]:
    """A team's stage for a month: 20,000 API calls (estimates, reports, lists), 2,000 trial
    records and refreshes, 20 trial plans, the daily price and actuals pulls, the outbox sweep
    every minute, the alarms and dashboard the monitoring stack deploys."""
    outbox_runs = round(SECONDS_A_MONTH / 60)
    return [
        *_lambda("api", 20_000, 0.4, 1024),
        *_lambda("refresh", 2_000, 4.0, 1024),
        *_lambda("ingest", 500, 2.0, 1024),
        *_lambda("prices", 30, 60.0, 1024),
        *_lambda("actuals", 30, 10.0, 512),
        *_lambda("trial_steps", 2_000, 0.5, 256),
        *_lambda("outbox", outbox_runs, 0.2, 256),
        Use("API Gateway", "20,000 REST API requests", "USE1-ApiGatewayRequest", Decimal(20_000)),
        Use(
            "DynamoDB",
            "2,000,000 read request units (on-demand)",
            "USE1-ReadRequestUnits",
            Decimal(2_000_000),
        ),  # fmt: skip
        Use(
            "DynamoDB",
            "200,000 write request units (on-demand)",
            "USE1-WriteRequestUnits",
            Decimal(200_000),
        ),  # fmt: skip
        Use("DynamoDB", "5 GB stored", "USE1-TimedStorage-ByteHrs", Decimal(5)),
        Use(
            "Step Functions",
            "20 trial plans × 300 state transitions",
            "USE1-StateTransition",
            Decimal(6_000),
        ),  # fmt: skip
        Use("CloudWatch", "3 GB of logs ingested", "USE1-DataProcessing-Bytes", Decimal(3)),
        Use("CloudWatch", "10 GB of logs stored", "USE1-TimedStorage-ByteHrs#logs", Decimal(10)),
        Use(
            "CloudWatch", "25 custom metrics (trncost/*)", "USE1-CW:MetricMonitorUsage", Decimal(25)
        ),  # fmt: skip
        Use(
            "CloudWatch",
            f"{ALARMS} alarms (standard resolution)",
            "USE1-CW:AlarmMonitorUsage",
            Decimal(ALARMS),
        ),  # fmt: skip
        Use("CloudWatch", "1 dashboard", "USE1-DashboardsUsageHour", Decimal(1)),
        Use(
            "SQS",
            "1,500,000 requests (the event source mappings' long polls, messages)",
            "USE1-Requests-Tier1",
            Decimal(1_500_000),
        ),  # fmt: skip
        Use("EventBridge", "5,000 custom events", "USE1-Event-64K-Chunks", Decimal(5_000)),
        Use(
            "KMS",
            f"{KMS_KEYS} customer-managed keys (the log groups', the alarm and decision topics')",
            "USE1-KMS-Keys",
            Decimal(KMS_KEYS),
        ),  # fmt: skip
        Use("KMS", "50,000 requests", "us-east-1-KMS-Requests", Decimal(50_000)),
        Use("X-Ray", "70,000 traces recorded", "USE1-XRay-TracesStored", Decimal(70_000)),
    ]


# What the dev stage deploys (tests/infra/test_running_cost.py counts them in its templates).
ALARMS = 37
KMS_KEYS = 3


def _amount(dimensions: tuple, quantity: Decimal) -> Decimal:
    """quantity through the tiers: each tier's rate on the part of it inside [begin, end)."""
    total = Decimal(0)
    for d in dimensions:
        end = quantity if d.end is None else min(quantity, d.end)
        if end > d.begin:
            total += (end - d.begin) * d.usd
    return total


def priced() -> list[tuple[Use, str, Decimal]]:
    """Each use with its unit and its monthly amount [USD], by trncost's Price List parser."""
    from trncost.pricing.parser import parse_item

    data = json.loads(ITEMS.read_text(encoding="utf-8"))
    products = {}
    for item in data["items"]:
        product = parse_item(item)
        key = product.attributes["usagetype"]
        if product.service_code == "AmazonCloudWatch" and key == "USE1-TimedStorage-ByteHrs":
            key += "#logs"  # the same usage type as DynamoDB's storage, another service
        products[key] = product
    out = []
    for use in usage():
        product = products[use.usagetype]
        assert product.error is None, (use.usagetype, product.error)
        (term,) = product.terms
        out.append((use, term.dimensions[0].unit, _amount(term.dimensions, use.quantity)))
    return out


def _quantity(q: Decimal, unit: str) -> str:
    return (f"{q:,.0f}" if q >= 100 else f"{q.normalize():,f}") + f" {unit}"


def table() -> str:
    rows = priced()
    lines = ["| service | usage a month | quantity | USD a month |", "|---|---|---|---|"]
    merged: dict[tuple[str, str], tuple[list[str], Decimal]] = {}
    for use, unit, amount in rows:  # a function's two rows (requests, GB-seconds) as one
        parts, before = merged.get((use.service, use.what), ([], Decimal(0)))
        merged[(use.service, use.what)] = ([*parts, _quantity(use.quantity, unit)], before + amount)
    for (service, what), (parts, amount) in merged.items():
        lines.append(
            f"| {service} | {what} | {', '.join(parts)} | "
            f"{amount.quantize(CENT, ROUND_HALF_EVEN):,.2f} |"
        )
    by_service: dict[str, Decimal] = {}
    for use, _, amount in rows:
        by_service[use.service] = by_service.get(use.service, Decimal(0)) + amount
    total = sum(by_service.values(), Decimal(0))
    lines.append(f"| **total** | | | **{total.quantize(CENT, ROUND_HALF_EVEN):,.2f}** |")
    split = ", ".join(
        f"{name} {amount.quantize(CENT, ROUND_HALF_EVEN):,.2f}"
        for name, amount in sorted(by_service.items(), key=lambda kv: -kv[1])
    )
    return "\n".join(lines) + f"\n\nBy service (USD a month): {split}.\n"


if __name__ == "__main__":
    sys.stdout.write(table())
