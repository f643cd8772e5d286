"""API Lambda: API Gateway (REST, proxy integration) → the routes in trncost.api.app.

Metrics: EstimatesComputed, one per POST /workloads/{id}/estimates answered 201 (an estimate
computed and stored), read from the request and the response so the routes stay metric-free.

Cold start: the Tracer (X-Ray SDK, botocore patches) and the docs route are made on first use,
so importing this module stays cheap (`make bench`). Under SnapStart (stacks/api.py) the
before-snapshot hook makes them ahead instead, and warms the routes; nothing made before the
snapshot holds credentials, a client or a connection (every client is made by the Wiring on
first use), and the after-restore hook gives each restored sandbox its own random state and a
fresh Wiring.
"""

from __future__ import annotations

import random
import re
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.api.app import handle, warm_up
from trncost.lambda_tracing import LazyTracer
from trncost.observability import NAMESPACE, MetricName
from trncost.wiring import Wiring

logger = Logger()
tracer = LazyTracer()
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


# -- SnapStart (Lambda's Python runtimes ship snapshot_restore_py; elsewhere there is none) ----
def before_snapshot() -> None:
    """At publish time, what the first cold start would do: the Tracer, the docs, the routes."""
    _ = tracer.tracer
    warm_up(services)


def after_restore() -> None:
    """A restored sandbox is one of many copies of the snapshot: its own random state, and
    services made afresh (nothing built before the snapshot is reused)."""
    global services
    random.seed()
    services = Wiring()


try:
    from snapshot_restore_py import (  # type: ignore[import-not-found]
        register_after_restore,
        register_before_snapshot,
    )
except ImportError:  # not in a Lambda Python runtime: no snapshot to hook into
    pass
else:  # pragma: no cover - runs in Lambda only
    register_before_snapshot(before_snapshot)
    register_after_restore(after_restore)
