"""Ingest Lambda: SQS batch of job state-change events (from EventBridge rules) → trial
records. Partial batch failures: only the failed messages return to the queue (and reach the
DLQ after its max receive count); unusable events are recorded as rejected ingests.

It also takes the CloudWatch Logs subscription's deliveries of the training log groups
(`{"awslogs": {"data": …}}`, invoked asynchronously by CloudWatch Logs; a delivery that keeps
failing goes to the function's own DLQ): each is kept as the job's log parts, read whole when
the job ends (services/job_log_stream.py)."""

from __future__ import annotations

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
from trncost.services.ingest import IngestOutcome
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
processor = BatchProcessor(event_type=EventType.SQS)
services = Wiring()  # this sandbox's services: imported at init, built on first use

OUTCOME_METRIC = {
    "recorded": MetricName.trials_ingested,
    "already_recorded": MetricName.ingest_duplicates,
    "duplicate": MetricName.ingest_duplicates,
    "rejected": MetricName.ingests_rejected,
    "actual_recorded": MetricName.actuals_recorded,  # a SageMaker job of an estimate
}


@tracer.capture_method
def record_handler(record: SQSRecord) -> dict[str, Any]:
    outcome: IngestOutcome = services.ingest.ingest_message(record.body, record.message_id)
    metrics.add_metric(OUTCOME_METRIC[outcome.status], MetricUnit.Count, 1)
    logger.info("ingest outcome", extra=outcome.__dict__)
    return outcome.__dict__


def job_log_delivery(data: str) -> dict[str, Any]:
    delivery = services.job_log_stream.receive(data)
    metrics.add_metric(MetricName.job_log_lines, MetricUnit.Count, delivery.events)
    logger.info("job log delivery", extra=delivery.__dict__)
    return delivery.__dict__


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(
    event: dict[str, Any], context: LambdaContext
) -> PartialItemFailureResponse | dict[str, Any]:
    awslogs = event.get("awslogs")
    if isinstance(awslogs, dict) and isinstance(awslogs.get("data"), str):
        return job_log_delivery(awslogs["data"])
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
