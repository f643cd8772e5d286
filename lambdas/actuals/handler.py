"""Actuals Lambda: ask Cost Explorer for the spend tagged `trncost:estimate-id`, daily (from
EventBridge Scheduler), and keep it as each estimate's actuals (trncost.services.actuals).

Event: {} (scheduled: from the first of last month to tomorrow), or {"start": "YYYY-MM-01",
"end": "YYYY-MM-DD"} on a direct invocation (a backfill once the tags are active). Each month
the answer covers replaces what Cost Explorer said of it before. Cost Explorer saying the tag
or its data is not there yet is answered ({"status": "not_ready"}), not retried; a throttle or
5xx raises (the Scheduler retries, then its dead-letter queue).

Metrics: ActualsImported (a pull that changed a month), ActualsRowsMatched, ActualsNotReady.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, ValidationError

from trncost.errors import InvalidInput, format_validation_error
from trncost.observability import NAMESPACE, MetricName
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
services = Wiring()  # this sandbox's services: imported at init, built on first use


class PullRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    start: date | None = None
    end: date | None = None


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any] | None, context: LambdaContext) -> dict[str, Any]:
    try:
        request = PullRequest.model_validate(event or {})
        result = services.actuals.pull_cost_explorer(request.start, request.end)
    except (ValidationError, InvalidInput) as exc:
        # Bad input is answered, not retried: a retry cannot fix it.
        reason = format_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        logger.warning("actuals request rejected", extra={"reason": reason})
        return {"status": "rejected", "reason": reason}
    if result["status"] == "not_ready":
        metrics.add_metric(MetricName.actuals_not_ready, MetricUnit.Count, 1)
    else:
        changed = any(p["outcome"] != "unchanged" for p in result["periods"])
        metrics.add_metric(MetricName.actuals_imported, MetricUnit.Count, 1 if changed else 0)
        metrics.add_metric(MetricName.actuals_rows_matched, MetricUnit.Count, result["matched"])
    logger.info("cost explorer actuals", extra={k: v for k, v in result.items() if k != "periods"})
    return result
