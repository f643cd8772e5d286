"""Trial plans: submit one (stored once, then its Standard state machine execution started),
and read one back with what Step Functions says of its execution.

Idempotent: the execution is named after the plan id (given, or derived from the request's
content), and the plan is written once. Submitting the same plan again starts nothing and
answers the plan as it stands; the same id with a different plan is a Conflict. If an earlier
submission stored the plan but could not start it (Step Functions unavailable), the repeat
starts it. Step Functions' own StartExecution is idempotent for the same name and input.
What each step of an execution does is `trncost.services.trial_steps`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from trncost import aws
from trncost.errors import Conflict, InvalidInput, NotFound, Unavailable
from trncost.settings import STATE_MACHINE_ARN_ENV, PlanLimits
from trncost.store.plans import PlanState, PlanStore, RunState
from trncost.store.records import RecordStore
from trncost.workflow.plan import TrialPlan, derive_plan_id

log = logging.getLogger(__name__)
__all__ = ["PlanState", "RunState", "TrialPlanService", "execution_arn_for"]


def _now() -> datetime:
    return datetime.now(UTC)


def execution_arn_for(state_machine_arn: str, name: str) -> str:
    """arn:…:stateMachine:<sm> → arn:…:execution:<sm>:<name>."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"


class TrialPlanService:
    def __init__(
        self,
        plans: PlanStore,
        records: RecordStore,
        sfn: Any = None,
        state_machine_arn: str | None = None,
        clock: Callable[[], datetime] = _now,
        limits: PlanLimits | None = None,
    ) -> None:
        self.plans = plans
        self.records = records
        self._sfn = sfn
        self.state_machine_arn = state_machine_arn
        self.clock = clock
        self.limits = limits or PlanLimits()

    @property
    def sfn(self) -> Any:
        """The Step Functions client, made on first use."""
        if self._sfn is None:
            self._sfn = aws.client("stepfunctions")
        return self._sfn

    def submit(
        self,
        workload_id: str,
        body: Mapping[str, Any],
        plan_id: str | None = None,
        named_workload: str | None = None,
        created_by: str | None = None,
    ) -> tuple[PlanState, bool]:
        """Store the plan and start it: (the plan as it stands, whether it is new).

        `body` is the plan without its ids; `plan_id` defaults to a hash of the workload and
        the body; `named_workload` is the workload the request itself names, if any."""
        if named_workload not in (None, workload_id):
            raise InvalidInput(
                f"workload_id: the plan names {named_workload}, the path {workload_id}",
                ["workload_id"],
            )
        if self.records.get_workload(workload_id) is None:
            raise NotFound(f"workload {workload_id} not found")
        plan_id = plan_id or derive_plan_id({"workload_id": workload_id, **body})
        plan = TrialPlan.model_validate({**body, "plan_id": plan_id, "workload_id": workload_id})
        self._within_limits(plan)
        if self.plans.create(plan, self.clock().isoformat(), created_by):
            self._start(plan)
            state = self.plans.get(plan_id)
            assert state is not None
            return state, True
        existing = self.plans.get(plan_id)
        if existing is None:  # pragma: no cover - written a moment ago
            raise Unavailable(f"trial plan {plan_id} could not be read back")
        if existing.fingerprint != plan.fingerprint():
            raise Conflict(f"trial plan {plan_id} exists with different content", ["plan_id"])
        if existing.execution_arn is None:
            self._start(plan)
            existing = self.plans.get(plan_id) or existing
        return existing, False

    def _within_limits(self, plan: TrialPlan) -> None:
        """The stage's bounds (trial_plans in cdk.json): above them, 422 naming the field."""
        problems, fields = [], []
        cap = self.limits.max_budget_usd
        if cap is not None and plan.budget_cap_usd > cap:
            problems.append(
                f"budget_cap_usd: {plan.budget_cap_usd} is above this stage's limit of {cap} USD"
                " (trial_plans.max_budget_usd)"
            )
            fields.append("budget_cap_usd")
        hours = self.limits.max_run_hours
        if hours is not None and plan.max_run_minutes > hours * 60:
            problems.append(
                f"max_run_minutes: {plan.max_run_minutes} is above this stage's limit of"
                f" {hours * 60} ({hours} h, trial_plans.max_run_hours)"
            )
            fields.append("max_run_minutes")
        if problems:
            raise InvalidInput("; ".join(problems), fields)

    def get(self, plan_id: str) -> tuple[PlanState, str | None]:
        """The plan as stored, and its execution's status as Step Functions says (None when
        it cannot say)."""
        state = self.plans.get(plan_id)
        if state is None:
            raise NotFound(f"trial plan {plan_id} not found")
        status = None
        if state.execution_arn:
            try:
                described = self.sfn.describe_execution(executionArn=state.execution_arn)
                status = str(described["status"])
            except Exception as exc:  # noqa: BLE001 - the plan record still answers
                # deployed, the API may start executions but not describe them (that would need
                # a wildcard over execution names): the plan record is the status that counts
                log.info("describe_execution %s not available: %s", state.execution_arn, exc)
        return state, status

    def _start(self, plan: TrialPlan) -> str:
        """Start the plan's execution (named after the plan) and note it on the plan."""
        if not self.state_machine_arn:
            raise Unavailable(f"no trial plan state machine configured ({STATE_MACHINE_ARN_ENV})")
        try:
            out = self.sfn.start_execution(
                stateMachineArn=self.state_machine_arn,
                name=plan.plan_id,
                input=json.dumps({"plan_id": plan.plan_id, "workload_id": plan.workload_id}),
            )
            arn = str(out["executionArn"])
        except Exception as exc:
            if not aws.is_aws_error(exc):
                raise
            if aws.error_code(exc) != "ExecutionAlreadyExists":
                raise Unavailable(f"Step Functions did not start the plan: {exc}") from None
            arn = execution_arn_for(self.state_machine_arn, plan.plan_id)
        self.plans.set_execution(plan.plan_id, arn, self.clock().isoformat())
        return arn
