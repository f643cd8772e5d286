"""Trial steps Lambda: the Task states of the trial plan state machine. The event names the
step (`action`); trncost.services.trial_steps does it. Errors propagate to Step Functions,
which retries TransientError and records anything else on the plan (record_failure)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.services.trial_steps import TrialSteps
from trncost.wiring import Wiring

logger = Logger()
tracer = Tracer()
services = Wiring()  # this sandbox's services: imported at init, built on first use


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(plan_id=event.get("plan_id"), action=event.get("action"))
    steps: TrialSteps = services.trial_steps
    return steps.handle(event)
