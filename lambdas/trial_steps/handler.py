"""Trial steps Lambda: the Task states of the trial plan state machine. The event names the
step (`action`); trncost.services.trial_steps does it. Errors propagate to Step Functions,
which retries TransientError and records anything else on the plan (record_failure).

Metrics: when a plan ends (record_outcome, record_failure), TrialPlansSucceeded (completed) or
TrialPlansFailed (failed, gate_failed, budget_cap, timeout: every ending whose execution
fails), Count 1, with the outcome as metadata; the stage alarms on TrialPlansFailed
(stacks/monitoring/alarms.py, service dimension trial_steps).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.observability import NAMESPACE, MetricName, plan_ending_metric
from trncost.services.trial_steps import TrialSteps
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace=NAMESPACE)
services = Wiring()  # this sandbox's services: imported at init, built on first use


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(plan_id=event.get("plan_id"), action=event.get("action"))
    steps: TrialSteps = services.trial_steps
    result = steps.handle(event)
    ended: MetricName | None = plan_ending_metric(event.get("action"), result.get("status"))
    if ended is not None:
        metrics.add_metadata(key="outcome", value=str(result.get("status")))
        metrics.add_metadata(key="plan_id", value=str(event.get("plan_id")))
        metrics.add_metric(ended, MetricUnit.Count, 1)
    return result
