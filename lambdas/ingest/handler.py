"""Ingest Lambda: SQS batch of job state-change events (from EventBridge rules) → trial
records. Partial batch failures: only the failed messages return to the queue (and reach the
DLQ after its max receive count); unusable events are recorded as rejected ingests."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.bus import EventPublisher
from trncost.observability import NAMESPACE, MetricName
from trncost.services.collect import AwsCollector
from trncost.services.ingest import IngestService
from trncost.settings import Settings
from trncost.store.ingest import IngestStore
from trncost.store.records import RecordStore

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
processor = BatchProcessor(event_type=EventType.SQS)

OUTCOME_METRIC = {
    "recorded": MetricName.trials_ingested,
    "already_recorded": MetricName.ingest_duplicates,
    "duplicate": MetricName.ingest_duplicates,
    "rejected": MetricName.ingests_rejected,
}


@lru_cache(maxsize=1)
def service() -> IngestService:
    settings = Settings.from_env()
    return IngestService(
        records=RecordStore(settings.table_name),
        claims=IngestStore(settings.table_name),
        collector=AwsCollector(),
        publisher=EventPublisher(settings.bus_name) if settings.bus_name else None,
    )


@tracer.capture_method
def record_handler(record: SQSRecord) -> dict[str, Any]:
    try:
        event: Any = json.loads(record.body)
    except json.JSONDecodeError as exc:
        event = {"id": record.message_id, "unparsed_body": record.body[:1000]}
        outcome = service()._reject(event, f"message body is not JSON ({exc.msg})")
    else:
        outcome = service().ingest(event)
    metrics.add_metric(OUTCOME_METRIC[outcome.status], MetricUnit.Count, 1)
    logger.info("ingest outcome", extra=outcome.__dict__)
    return outcome.__dict__


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
