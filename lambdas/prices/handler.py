"""Prices Lambda: take a price snapshot (daily from EventBridge Scheduler, or on demand).

Event: {} (scheduled: query the Price List API for the stage's catalog), or
{"saved_price_list": <GetProducts response | item list | bulk offer file>, "note": "..."}
to build the snapshot from a saved Price List file. Returns the snapshot summary.

Metrics: PriceSnapshotTaken, quotes (official, PENDING, rejected), Price List calls, and
PriceSnapshotAgeSeconds: how old the latest snapshot was when this one replaced it.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, ValidationError

from trncost.bus import EventPublisher
from trncost.observability import NAMESPACE, MetricName
from trncost.pricing.client import PriceListClient
from trncost.pricing.parser import PriceListItemError
from trncost.pricing.snapshot import SnapshotResult, SnapshotService
from trncost.requestfile import format_validation_error
from trncost.settings import Settings
from trncost.store.prices import PriceStore

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)


class PricesRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    saved_price_list: Any | None = None
    note: str | None = None


@lru_cache(maxsize=1)
def service() -> tuple[SnapshotService, Settings]:
    settings = Settings.from_env()
    if settings.catalog is None:
        raise RuntimeError("TRNCOST_CATALOG is not set: the prices Lambda has no catalog")
    svc = SnapshotService(
        store=PriceStore(settings.table_name),
        price_list=PriceListClient(settings.price_list_region),
        publisher=EventPublisher(settings.bus_name) if settings.bus_name else None,
    )
    return svc, settings


def replaced_snapshot_age(svc: SnapshotService, result: SnapshotResult) -> float | None:
    """How old the latest snapshot was when this one replaced it (its taken_at → this one's);
    None when nothing was replaced (the first snapshot, or a newer one stays latest)."""
    previous_id = result.publication.previous_id
    if not result.publication.published or not previous_id:
        return None
    previous = svc.store.get_snapshot(previous_id)  # read once already, for the diff
    if previous is None:
        return None
    try:
        then = datetime.fromisoformat(previous.taken_at)
        now = datetime.fromisoformat(result.snapshot.taken_at)
        if then.tzinfo is None or now.tzinfo is None:
            return None
    except ValueError:
        return None
    return max(0.0, (now - then).total_seconds())


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any] | None, context: LambdaContext) -> dict[str, Any]:
    svc, settings = service()
    assert settings.catalog is not None
    calls_before = svc.price_list.calls
    try:
        request = PricesRequest.model_validate(event or {})
        if request.saved_price_list is not None:
            result = svc.take_from_saved(request.saved_price_list, settings.catalog, request.note)
        else:
            result = svc.take(settings.catalog)
    except (ValidationError, PriceListItemError) as exc:
        # Bad input is answered, not retried: a retry cannot fix it.
        reason = format_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        logger.warning("price snapshot request rejected", extra={"reason": reason})
        metrics.add_metric(MetricName.price_snapshot_rejected_requests, MetricUnit.Count, 1)
        return {"status": "rejected", "reason": reason}
    summary = {**result.summary(), "price_list_calls": svc.price_list.calls - calls_before}
    metrics.add_metric(MetricName.price_snapshot_taken, MetricUnit.Count, 1)
    metrics.add_metric(MetricName.price_quotes, MetricUnit.Count, summary["quotes"])
    metrics.add_metric(MetricName.price_quotes_pending, MetricUnit.Count, summary["pending"])
    metrics.add_metric(MetricName.price_quotes_rejected, MetricUnit.Count, summary["rejected"])
    metrics.add_metric(MetricName.price_list_calls, MetricUnit.Count, summary["price_list_calls"])
    age = replaced_snapshot_age(svc, result)
    if age is not None:
        metrics.add_metric(MetricName.price_snapshot_age, MetricUnit.Seconds, age)
    logger.info("price snapshot taken", extra=summary)
    return {"status": "ok", **summary}
