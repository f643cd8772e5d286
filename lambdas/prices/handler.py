"""Prices Lambda: take a price snapshot (daily from EventBridge Scheduler, or on demand).

Event: {} (scheduled: query the Price List API for the stage's catalog; basis official), or
{"saved_price_list": <GetProducts response | item list | bulk offer file>, "note": "...",
"publish": false} to store a snapshot of a saved Price List file (basis saved_file; supplied
by this direct invocation, whose caller CloudTrail records). It becomes latest only with
"publish": true on a stage that accepts uploads. Returns the snapshot summary.

Metrics: PriceSnapshotTaken, quotes (official, PENDING, rejected), Price List calls,
PriceSnapshotAgeSeconds: how old the latest snapshot was when this one replaced it, and the
readiness watch's (trncost.services.readiness) ReadinessItemsAppeared and
ReadinessEstimatesRerun: after each snapshot published as latest, what the stage's estimates
wait on that appeared, and the estimates it re-ran (each new version whose decision differs is
announced as "Estimate Decision Changed").
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, ValidationError

from trncost.errors import PriceListItemError, PublishRefused, format_validation_error
from trncost.model.catalog import Catalog
from trncost.observability import NAMESPACE, MetricName
from trncost.services.snapshots import SnapshotService
from trncost.settings import CATALOG_ENV
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
services = Wiring()  # this sandbox's services: imported at init, built on first use


class PricesRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    saved_price_list: Any | None = None
    note: str | None = None
    publish: bool = False


def catalog() -> Catalog:
    found = services.settings.catalog
    if found is None:
        raise RuntimeError(f"{CATALOG_ENV} is not set: the prices Lambda has no catalog")
    return found


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any] | None, context: LambdaContext) -> dict[str, Any]:
    what = catalog()
    svc: SnapshotService = services.snapshots
    calls_before = svc.price_list.calls
    try:
        request = PricesRequest.model_validate(event or {})
        if request.saved_price_list is not None:
            result = svc.take_from_saved(
                request.saved_price_list,
                what,
                request.note,
                f"direct invocation of {context.function_name}",
                publish=request.publish,
            )
        else:
            result = svc.take(what)
    except (ValidationError, PriceListItemError, PublishRefused) as exc:
        # Bad input is answered, not retried: a retry cannot fix it.
        reason = format_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        logger.warning("price snapshot request rejected", extra={"reason": reason})
        metrics.add_metric(MetricName.price_snapshot_rejected_requests, MetricUnit.Count, 1)
        return {"status": "rejected", "reason": reason}
    summary = {**result.summary(), "price_list_calls": svc.price_list.calls - calls_before}
    if result.publication.published:
        # the readiness watch: what the stage's estimates wait on that this snapshot (or
        # botocore's model) now has; the estimates that depend on it re-run
        watch = services.readiness.check(result.snapshot, result.snapshot.taken_at)
        summary["readiness"] = watch.summary()
        metrics.add_metric(
            MetricName.readiness_items_appeared, MetricUnit.Count, len(watch.appeared)
        )
        metrics.add_metric(MetricName.readiness_estimates_rerun, MetricUnit.Count, len(watch.rerun))
    metrics.add_metric(MetricName.price_snapshot_taken, MetricUnit.Count, 1)
    metrics.add_metric(MetricName.price_quotes, MetricUnit.Count, summary["quotes"])
    metrics.add_metric(MetricName.price_quotes_pending, MetricUnit.Count, summary["pending"])
    metrics.add_metric(MetricName.price_quotes_rejected, MetricUnit.Count, summary["rejected"])
    metrics.add_metric(MetricName.price_list_calls, MetricUnit.Count, summary["price_list_calls"])
    age = svc.replaced_age(result)
    if age is not None:
        metrics.add_metric(MetricName.price_snapshot_age, MetricUnit.Seconds, age)
    logger.info("price snapshot taken", extra=summary)
    return {"status": "ok", **summary}
