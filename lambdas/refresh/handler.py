"""Refresh Lambda: SQS batch of trncost's own events → new estimate versions.

"Trial Recorded" recomputes the estimates of that workload; "Price Snapshot Taken" those that
follow the latest prices. A version is added only when the figures change (and lists what
changed: trncost.estimate.changes), so a redelivered event changes nothing. Each estimate
refreshes on its own: one that cannot be recomputed is recorded as its refresh failure
(EstimateRefreshFailures) and the others go on; only an AWS service failing after its retries
fails the message (retried, then the DLQ)."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.observability import NAMESPACE, MetricName
from trncost.services.estimates import route_refresh
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
processor = BatchProcessor(event_type=EventType.SQS)
services = Wiring()  # this sandbox's services: imported at init, built on first use


@tracer.capture_method
def record_handler(record: SQSRecord) -> list[dict[str, Any]]:
    try:
        event = json.loads(record.body)
    except json.JSONDecodeError:
        logger.warning("refresh message is not JSON; dropped", extra={"id": record.message_id})
        return []
    results = route_refresh(services.estimates, event)
    for r in results:
        if r.failed:  # recorded on the estimate with its reason; the others went on
            name = MetricName.estimate_refresh_failures
        elif r.version:
            name = MetricName.estimates_refreshed
        else:
            name = MetricName.estimates_unchanged
        metrics.add_metric(name, MetricUnit.Count, 1)
    logger.info("refreshed", extra={"results": [r.__dict__ for r in results]})
    return [r.__dict__ for r in results]


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
