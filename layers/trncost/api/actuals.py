"""Billed actuals (POST /actuals), an estimate against them, the scorecard, and a budget from
an estimate. The routes' OpenAPI documentation is here too (`OPERATIONS`, in the form of
trncost.api.docs, which merges it)."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from trncost.api.context import Id, caller, router, services
from trncost.api.docs import ESTIMATE_ID, Operation
from trncost.errors import InvalidInput
from trncost.model.actuals import (
    ActualsComparison,
    ActualsImport,
    BudgetRequest,
    BudgetView,
    Scorecard,
)

routes = router()
HTML = "text/html; charset=utf-8"
WorkloadFilter = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$",
        description="one workload's estimates; omitted: the whole stage",
    ),
]


def _body() -> tuple[bytes, str]:
    """The request body as sent (API Gateway base64-encodes a binary one), and its type."""
    event = routes.current_event.raw_event
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items() if v is not None}
    content_type = headers.get("content-type", "application/json").split(";")[0].strip().lower()
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput("body: not valid base64", fields=["body"]) from None
    else:
        raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    if not raw:
        raise InvalidInput("body: empty: send a FOCUS 1.2 or CUR 2.0 export", fields=["body"])
    return raw, content_type


@routes.post("/actuals", tags=["actuals"])
def import_actuals() -> Response[ActualsImport]:
    raw, content_type = _body()
    result = services().actuals.import_body(raw, content_type, caller(routes))
    return Response(
        status_code=201 if result.changed else 200,
        content_type="application/json",
        body=result,
    )


@routes.get("/actuals/scorecard", tags=["actuals"])
def scorecard(workload_id: WorkloadFilter = None) -> Scorecard:
    return services().actuals.scorecard(workload_id)


@routes.get("/actuals/scorecard/report", tags=["actuals"])
def scorecard_report(workload_id: WorkloadFilter = None):  # HTML: no schema annotation
    from trncost.report.actuals import scorecard_page

    card = services().actuals.scorecard(workload_id)
    return Response(status_code=200, content_type=HTML, body=scorecard_page(card))


@routes.get("/estimates/<estimate_id>/actuals", tags=["actuals"])
def estimate_actuals(estimate_id: Id) -> ActualsComparison:
    return services().actuals.comparison(estimate_id)


@routes.post("/estimates/<estimate_id>/budget", tags=["actuals"])
def create_budget(estimate_id: Id, request: BudgetRequest) -> Response[BudgetView]:
    view = services().actuals.create_budget(estimate_id, request)
    return Response(
        status_code=200 if view.outcome == "unchanged" else 201,
        content_type="application/json",
        body=view,
    )


# -- the OpenAPI documentation of these routes (merged by trncost.api.docs) ---------------------
FOCUS_CSV = (
    "BilledCost,BillingAccountId,BillingCurrency,BillingPeriodStart,ChargeCategory,ChargeClass,"
    "ChargePeriodEnd,ChargePeriodStart,PricingQuantity,PricingUnit,ListCost,RegionId,"
    "ServiceName,SkuId,SkuMeter,Tags,x_ServiceCode\n"
    "960,111122223333,USD,2025-06-01T00:00:00Z,Usage,,2025-06-12T00:00:00Z,"
    "2025-06-11T00:00:00Z,24,Hours,960,us-east-2,Amazon Elastic Compute Cloud,"
    'EXAMPLESKUTRN2A1,USE2-BoxUsage:trn2.48xlarge,"{""trncost:estimate-id"": '
    f'""{ESTIMATE_ID}""}}",AmazonEC2\n'
)
# What `trncost actuals import` sends for that row (a ParsedBill, trncost.model.actuals).
PARSED_EXAMPLE = {
    "format": "focus_1_2",
    "files": ["focus-00001.csv.gz"],
    "rows_read": 2,
    "untagged_rows": 1,
    "deliveries": [{"source": "focus_1_2:111122223333", "period": "2025-06"}],
    "groups": [
        {
            "source": "focus_1_2:111122223333",
            "period": "2025-06",
            "estimate_id": ESTIMATE_ID,
            "rows": 1,
            "lines": [
                {
                    "service_name": "Amazon Elastic Compute Cloud",
                    "service_code": "AmazonEC2",
                    "sku_id": "EXAMPLESKUTRN2A1",
                    "usage_type": "USE2-BoxUsage:trn2.48xlarge",
                    "region": "us-east-2",
                    "charge_category": "Usage",
                    "unit": "Hours",
                    "quantity": "24",
                    "billed_usd": "960",
                    "list_usd": "960",
                    "rows": 1,
                    "first_charge": "2025-06-11T00:00:00Z",
                    "last_charge": "2025-06-12T00:00:00Z",
                }
            ],
        }
    ],
    "tag_keys_seen": {"trncost:estimate-id": 1},
}
BINARY = {"schema": {"type": "string", "format": "binary"}}
IMPORT_413 = "the body is larger than a request takes (6 MB; a Parquet or gzip body, base64-"
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("post", "/actuals"): Operation(
        "Import billed actuals (FOCUS 1.2 or CUR 2.0)",
        "A billing export of AWS Data Exports — FOCUS 1.2 (with AWS columns) or CUR 2.0 — as "
        "`text/csv`, gzip CSV (`application/gzip`) or Parquet "
        "(`application/vnd.apache.parquet`), up to 6 MB as sent (4.5 MB of binary, which API "
        "Gateway base64-encodes). Its rows are matched to estimates by the tag "
        "`trncost:estimate-id` (FOCUS `Tags`, CUR `resource_tags`, every spelling AWS may give "
        "the key; `tag_keys_seen` says which it was). Each (billing account, billing period) "
        "the file holds tagged rows of is replaced whole by it: the same file again changes "
        "nothing (200), a newer delivery of the period replaces the older (201, with the lines "
        "added, removed and changed). A larger export, or one delivered in several files, goes "
        "through `trncost actuals import FILE…`: it reads the files where they are and sends "
        "what they hold for trncost as `application/json` (the same answer).",
        {
            413: IMPORT_413 + "encoded): send it with `trncost actuals import`",
            415: "a content type other than text/csv, application/gzip, "
            "application/vnd.apache.parquet or application/json",
            422: "not a FOCUS 1.2 or CUR 2.0 export (its missing columns named), a legacy CUR, "
            "a row whose cost or date is not one (row and column named), or JSON that is not "
            "what the CLI sends",
        },
        request_content={
            "application/json": {
                "schema": {
                    "type": "object",
                    "description": "what `trncost actuals import` sends: the files' rows "
                    "counted, and each estimate's summed lines per billing period",
                },
                "example": PARSED_EXAMPLE,
            },
            "text/csv": {"schema": {"type": "string"}, "example": FOCUS_CSV},
            "application/gzip": BINARY,
            "application/vnd.apache.parquet": BINARY,
        },
        created="at least one billing period created or replaced",
        repeat="every billing period the file holds was already this delivery: nothing written",
    ),
    ("get", "/actuals/scorecard"): Operation(
        "Forecast scorecard",
        "How often what AWS billed fell inside the estimate's P10–P90 (`inside_p10_p90` of "
        "`estimates_with_actuals`), the median |relative error| and the same per component, "
        "across a workload (`workload_id`) or the whole stage; each estimate's row.",
        {404: "no workload with this id", 422: "a `workload_id` that is not an id"},
        params={"workload_id": "llama31-8b-cpt"},
    ),
    ("get", "/actuals/scorecard/report"): Operation(
        "Forecast scorecard as a page",
        "The scorecard as one self-contained HTML page.",
        {404: "no workload with this id", 422: "a `workload_id` that is not an id"},
        params={"workload_id": "llama31-8b-cpt"},
        html=True,
    ),
    ("get", "/estimates/{estimate_id}/actuals"): Operation(
        "An estimate against what AWS billed",
        "What AWS billed the runs tagged `trncost:estimate-id` = this estimate (usage and "
        "purchases; tax, credits and corrections apart), against the run's forecast (cloud "
        "lines less the trials already run) of the version made before the usage began, and "
        "its P10/P50/P90; `inside_range`, `relative_error`, and the gap split into `hours`, "
        "`rate` and `not_estimated` (they sum to actual − estimate). Per billing period the "
        "strongest source counts: a FOCUS export, a CUR 2.0 export, Cost Explorer, then "
        "SageMaker's same-day figure.",
        {
            404: "no estimate with this id, or it has no actuals yet",
            422: "a path id that is not an id",
        },  # fmt: skip
        params={"estimate_id": ESTIMATE_ID},
    ),
    ("post", "/estimates/{estimate_id}/budget"): Operation(
        "Create an AWS Budget from an estimate",
        "An AWS Budget (cost, USD) filtered by the tag `trncost:estimate-id` = this estimate, "
        "its limit the run's P90, ACTUAL alerts at the P50 and the P90 to the subscribers "
        "given, from `start` (default: the first of this month) to `end` (default: a year "
        "later). Named `trncost-<estimate id>`: the same request again is unchanged (200); "
        "other figures (a newer version's P90) replace it (201). Planner persona.",
        {
            404: "no estimate with this id",
            422: "a subscriber that is not an e-mail address or SNS topic ARN, more than one "
            "SNS topic, `end` before `start`, or an estimate with no P90 (a PENDING price)",
        },
        example={
            "subscribers": [{"type": "EMAIL", "address": "ml-owner@example.com"}],
            "start": "2026-12-01",
        },
        params={"estimate_id": ESTIMATE_ID},
        created="the budget, created (or replaced with the estimate's current figures)",
        repeat="the budget is already this one: nothing changed",
    ),
}
