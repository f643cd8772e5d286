"""Trial steps Lambda: the Task states of the trial plan state machine. The event names the
step (`action`); trncost.workflow.steps does it. Errors propagate to Step Functions, which
retries TransientError and records anything else on the plan (record_failure)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from trncost.settings import Settings
from trncost.workflow.steps import TrialSteps

logger = Logger()
tracer = Tracer()


@lru_cache(maxsize=1)
def steps() -> TrialSteps:
    return TrialSteps.from_env(Settings.from_env().table_name)


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(plan_id=event.get("plan_id"), action=event.get("action"))
    return steps().handle(event)
