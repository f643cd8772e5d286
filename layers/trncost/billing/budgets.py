"""AWS Budgets from an estimate: the CreateBudget request (pure) and the calls (adapter).

The budget watches the cost of the runs tagged with the estimate: FilterExpression on the tag
`trncost:estimate-id` with the estimate's id and Metrics [UnblendedCost] (AWS recommends
FilterExpression and Metrics over the older CostFilters, whose `TagKeyValue` would be
`user:trncost:estimate-id$<id>`). Its limit is the run's P90; two ACTUAL alerts, at the P50
and at the P90, as absolute amounts. A budget name may not hold `:` or `\\`, nor `/action/`.

Whether FilterExpression's tag key takes the `user:` prefix is not settled by an AWS page: the
raw key is used, as in Cost Explorer's Expression (docs/ingest.md says how to check a budget
sees the spend).
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

from trncost import aws
from trncost.metrics.jobs import ESTIMATE_ID_TAG
from trncost.model.actuals import BudgetSubscriber

BUDGETS_REGION = "us-east-1"  # AWS Budgets' endpoint (budgets.amazonaws.com)
NAME_PREFIX = "trncost-"
METRIC = "UnblendedCost"
MISSING_CODES = frozenset({"NotFoundException"})
CENT = Decimal("0.01")


def budget_name(estimate_id: str) -> str:
    """`trncost-<estimate id>`, with what a budget name may not hold replaced (≤ 100)."""
    name = NAME_PREFIX + re.sub(r"[:\\]", "-", estimate_id).replace("/action/", "-action-")
    return name[:100]


def usd(amount: Decimal) -> str:
    """A limit as Budgets takes it: a plain decimal string, to the cent (never below it)."""
    return str(max(amount, CENT).quantize(CENT))


def create_request(
    *,
    account_id: str,
    estimate_id: str,
    limit: Decimal,
    p50: Decimal,
    start: date,
    end: date,
    subscribers: list[BudgetSubscriber],
) -> dict[str, Any]:
    """CreateBudget's arguments (the module says what they hold)."""
    targets = [{"SubscriptionType": s.type, "Address": s.address} for s in subscribers]
    alerts = [max(p50, CENT), max(limit, CENT)]
    return {
        "AccountId": account_id,
        "Budget": {
            "BudgetName": budget_name(estimate_id),
            "BudgetLimit": {"Amount": usd(limit), "Unit": "USD"},
            "TimeUnit": "CUSTOM",
            "TimePeriod": {"Start": _midnight(start), "End": _midnight(end)},
            "BudgetType": "COST",
            "FilterExpression": {
                "Tags": {
                    "Key": ESTIMATE_ID_TAG,
                    "Values": [estimate_id],
                    "MatchOptions": ["EQUALS"],
                }
            },
            "Metrics": [METRIC],
        },
        "NotificationsWithSubscribers": [
            {
                "Notification": {
                    "NotificationType": "ACTUAL",
                    "ComparisonOperator": "GREATER_THAN",
                    "Threshold": float(amount.quantize(CENT)),
                    "ThresholdType": "ABSOLUTE_VALUE",
                },
                "Subscribers": targets,
            }
            for amount in alerts
        ],
    }


def _midnight(day: date) -> str:
    return f"{day.isoformat()}T00:00:00Z"


def same_budget(existing: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a described budget already is the wanted one (limit, period, filter)."""
    mine = wanted["Budget"]
    limit = existing.get("BudgetLimit") or {}
    try:
        same_limit = Decimal(str(limit.get("Amount"))) == Decimal(mine["BudgetLimit"]["Amount"])
    except ArithmeticError:
        return False
    period = existing.get("TimePeriod") or {}
    starts = str(period.get("Start", ""))[:10] == mine["TimePeriod"]["Start"][:10]
    ends = str(period.get("End", ""))[:10] == mine["TimePeriod"]["End"][:10]
    return (
        same_limit
        and starts
        and ends
        and existing.get("FilterExpression") == mine["FilterExpression"]
    )


class Budgets(aws.RegionalAdapter):
    """`budgets:CreateBudget`, `DescribeBudget`, `DeleteBudget` (the global endpoint's client
    from trncost.aws, made on first use, or injected)."""

    service = "budgets"

    def __init__(self, client: Any = None, region: str = BUDGETS_REGION) -> None:
        super().__init__(region, client)

    def describe(self, account_id: str, name: str) -> dict[str, Any] | None:
        """The budget, or None when there is none of that name."""
        self.calls += 1
        try:
            found: dict[str, Any] = self.client.describe_budget(
                AccountId=account_id, BudgetName=name
            )["Budget"]
        except Exception as exc:
            if aws.error_code(exc) in MISSING_CODES:
                return None
            raise
        return found

    def create(self, request: dict[str, Any]) -> None:
        self.calls += 1
        self.client.create_budget(**request)

    def delete(self, account_id: str, name: str) -> None:
        self.calls += 1
        self.client.delete_budget(AccountId=account_id, BudgetName=name)
