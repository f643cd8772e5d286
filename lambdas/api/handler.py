"""API Lambda: API Gateway (REST, proxy integration) → the routes in trncost.api.app.

Metrics: EstimatesComputed, one per POST /workloads/{id}/estimates answered 201 (an estimate
computed and stored), read from the request and the response so the routes stay metric-free.
"""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.api.app import handle
from trncost.observability import NAMESPACE, MetricName
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
services = Wiring()  # this sandbox's services: imported at init, built on first use

ESTIMATES_PATH = re.compile(r"(?:^|/)workloads/[^/]+/estimates/?$")


def estimate_computed(event: dict[str, Any], response: dict[str, Any]) -> bool:
    return (
        event.get("httpMethod") == "POST"
        and response.get("statusCode") == 201
        and bool(ESTIMATES_PATH.search(str(event.get("path") or "")))
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response = handle(event, context, services)
    if estimate_computed(event, response):
        metrics.add_metric(MetricName.estimates_computed, MetricUnit.Count, 1)
    return response
