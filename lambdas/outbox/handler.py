"""Outbox Lambda: publish the events written with their records that EventBridge has not yet
taken (trncost.store.outbox), oldest first. Scheduled every minute (stacks/ingest.py); a write
publishes its own event at once, so the sweep finds work only while EventBridge refuses or
after a Lambda stopped between its commit and its publish.

Event: anything (the schedule's). Returns what it sent, what failed and what is left.

Metrics: OutboxEventsSent, OutboxEventsFailed, OutboxOldestEventAgeSeconds (0 when nothing
waits; the stage alarms when events wait for long).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.observability import NAMESPACE, MetricName
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
services = Wiring()  # this sandbox's services: imported at init, built on first use
ROUNDS = 10  # sweeps of up to 100 events per invocation (well inside the timeout)


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: Any, context: LambdaContext) -> dict[str, Any]:
    outbox = services.outbox
    if outbox is None:
        raise RuntimeError("no event bus configured (TRNCOST_BUS): the outbox cannot publish")
    sent = failed = 0
    for _ in range(ROUNDS):
        sweep = outbox.sweep()
        sent, failed = sent + sweep.sent, failed + sweep.failed
        if sweep.failed or not sweep.left:
            break  # EventBridge refusing: try again on the next schedule
    metrics.add_metric(MetricName.outbox_events_sent, MetricUnit.Count, sent)
    metrics.add_metric(MetricName.outbox_events_failed, MetricUnit.Count, failed)
    metrics.add_metric(MetricName.outbox_oldest_age, MetricUnit.Seconds, sweep.oldest_age_s)
    summary = {"sent": sent, "failed": failed, "left": sweep.left,
               "oldest_age_s": sweep.oldest_age_s}  # fmt: skip
    logger.info("outbox swept", extra=summary)
    return summary
