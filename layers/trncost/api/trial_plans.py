"""Trial plans over HTTP: a Powertools Router (app.py includes it).

    POST /workloads/{workload_id}/trial-plans   start a plan (Standard state machine execution)
    GET  /trial-plans/{plan_id}                 phase status, trials, spend so far, gate results

Idempotent: the execution is named after the plan id (given, or derived from the request's
content), and the plan is written once. A repeated request with the same plan answers 200 with
the plan as it stands and starts nothing; the same id with a different plan is a 409. If an
earlier request stored the plan but could not start it (Step Functions unavailable: 503), the
repeat starts it. Step Functions' own StartExecution is idempotent for the same name and input.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import BaseModel, Field

from trncost.api.schemas import ErrorBody
from trncost.model.common import Identifier
from trncost.model.trial import Phase
from trncost.workflow.gates import GateResult
from trncost.workflow.plan import PlanId, TrialPlan, derive_plan_id
from trncost.workflow.store import PlanState, PlanStore, RunState

log = logging.getLogger(__name__)
STATE_MACHINE_ARN_ENV = "TRNCOST_TRIAL_PLAN_STATE_MACHINE_ARN"

router = Router()
Id = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")]


# -- errors (own classes: the app's handlers for shared classes are not overridden) -----------
class TrialPlanNotFound(Exception):
    pass


class TrialPlanConflict(Exception):
    pass


class TrialPlanInvalid(Exception):
    def __init__(self, message: str, fields: list[str]) -> None:
        super().__init__(message)
        self.fields = fields


class WorkflowUnavailable(Exception):
    """Step Functions could not start the execution (after retries)."""


def _error(status: int, code: str, message: str, fields: list[str] | None = None) -> Response:
    body = ErrorBody(error=code, message=message, fields=fields or [])
    return Response(
        status_code=status, content_type="application/json", body=body.model_dump_json()
    )


@router.exception_handler(TrialPlanNotFound)
def _not_found(exc: TrialPlanNotFound) -> Response:
    return _error(404, "not_found", str(exc))


@router.exception_handler(TrialPlanConflict)
def _conflict(exc: TrialPlanConflict) -> Response:
    return _error(409, "conflict", str(exc), ["plan_id"])


@router.exception_handler(TrialPlanInvalid)
def _invalid(exc: TrialPlanInvalid) -> Response:
    return _error(422, "validation_error", str(exc), exc.fields)


@router.exception_handler(WorkflowUnavailable)
def _unavailable(exc: WorkflowUnavailable) -> Response:
    return _error(503, "upstream_unavailable", str(exc))


# -- models -----------------------------------------------------------------------------------
class TrialPlanRequest(TrialPlan):
    """A TrialPlan; `workload_id` comes from the path, `plan_id` defaults to a hash of the
    request (so the same request is the same plan)."""

    plan_id: PlanId | None = None  # type: ignore[assignment]
    workload_id: Identifier | None = None  # type: ignore[assignment]


class PhaseView(BaseModel):
    phase: Phase
    candidate_index: int
    instance_type: str
    status: str = Field(description="pending | running | passed | failed | skipped")
    runs_planned: int
    runs_launched: int
    runs_recorded: int
    gate: GateResult | None = None


class TrialPlanView(BaseModel):
    plan_id: str
    workload_id: str
    status: str = Field(
        description="submitted | running | completed | gate_failed | budget_cap | timeout | failed"
    )
    execution_arn: str | None
    execution_status: str | None = Field(default=None, description="as Step Functions says")
    created_at: str
    updated_at: str
    spent_usd: str | None = Field(description="priced spend of the plan's runs so far")
    budget_cap_usd: str
    reasons: list[str]
    phases: list[PhaseView]
    trials: list[RunState]
    gates: list[GateResult]
    plan: TrialPlan


# -- dependencies (lazy, injectable) -------------------------------------------------------
class Deps:
    def __init__(
        self,
        plans: PlanStore,
        records: Any,
        sfn: Any = None,
        state_machine_arn: str | None = None,
    ) -> None:
        self.plans = plans
        self.records = records
        self._sfn = sfn
        self.state_machine_arn = state_machine_arn

    @property
    def sfn(self) -> Any:
        if self._sfn is None:
            from trncost import aws

            self._sfn = aws.client("stepfunctions")
        return self._sfn


_override: Deps | None = None


def configure(deps: Deps | None) -> None:
    """Inject the stores and Step Functions client (tests, local runtime); None resets."""
    global _override
    _override = deps
    _env_deps.cache_clear()


@lru_cache(maxsize=1)
def _env_deps() -> Deps:
    from trncost.settings import Settings
    from trncost.store.records import RecordStore

    settings = Settings.from_env()
    return Deps(
        PlanStore(settings.table_name),
        RecordStore(settings.table_name),
        state_machine_arn=os.environ.get(STATE_MACHINE_ARN_ENV),
    )


def deps() -> Deps:
    return _override or _env_deps()


# -- views ------------------------------------------------------------------------------------
def plan_view(state: PlanState, execution_status: str | None = None) -> TrialPlanView:
    plan = state.plan
    phases = []
    schedule = plan.schedule()
    by_index = {r.index: r for r in state.runs}
    gates = {(g.phase, g.candidate_index): g for g in state.gates}
    for phase in plan.phases:
        for ci, cand in enumerate(plan.candidates):
            specs = [s for s in schedule if s.group == (phase, ci)]
            runs = [by_index[s.index] for s in specs if s.index in by_index]
            gate = gates.get((phase, ci))
            if gate is not None:
                status = "passed" if gate.passed else "failed"
            elif runs:
                status = "running"
            elif ci in state.dropped or state.status not in ("submitted", "running"):
                status = "skipped"
            else:
                status = "pending"
            phases.append(
                PhaseView(
                    phase=phase,
                    candidate_index=ci,
                    instance_type=cand.instance_type,
                    status=status,
                    runs_planned=len(specs),
                    runs_launched=sum(1 for r in runs if r.job_id),
                    runs_recorded=sum(1 for r in runs if r.landed),
                    gate=gate,
                )
            )
    return TrialPlanView(
        plan_id=plan.plan_id,
        workload_id=plan.workload_id,
        status=state.status,
        execution_arn=state.execution_arn,
        execution_status=execution_status,
        created_at=state.created_at,
        updated_at=state.updated_at,
        spent_usd=state.spent_usd,
        budget_cap_usd=str(plan.budget_cap_usd),
        reasons=state.outcome_reasons,
        phases=phases,
        trials=state.runs,
        gates=state.gates,
        plan=plan,
    )


def execution_arn_for(state_machine_arn: str, name: str) -> str:
    """arn:…:stateMachine:<sm> → arn:…:execution:<sm>:<name>."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"


def _start(d: Deps, plan: TrialPlan) -> str:
    from botocore.exceptions import BotoCoreError, ClientError

    if not d.state_machine_arn:
        raise WorkflowUnavailable(
            f"no trial plan state machine configured ({STATE_MACHINE_ARN_ENV})"
        )
    try:
        out = d.sfn.start_execution(
            stateMachineArn=d.state_machine_arn,
            name=plan.plan_id,
            input=json.dumps({"plan_id": plan.plan_id, "workload_id": plan.workload_id}),
        )
        arn = out["executionArn"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
            raise WorkflowUnavailable(f"Step Functions did not start the plan: {exc}") from None
        arn = execution_arn_for(d.state_machine_arn, plan.plan_id)
    except BotoCoreError as exc:
        raise WorkflowUnavailable(f"Step Functions did not start the plan: {exc}") from None
    d.plans.set_execution(plan.plan_id, arn, datetime.now(UTC).isoformat())
    return arn


# -- routes -----------------------------------------------------------------------------------
@router.post(
    "/workloads/<workload_id>/trial-plans",
    tags=["trial plans"],
    responses={
        200: {"description": "the same plan was submitted before: nothing new started"},
        201: {"description": "stored and started"},
    },
)
def create_trial_plan(workload_id: Id, request: TrialPlanRequest) -> tuple[TrialPlanView, int]:
    d = deps()
    if request.workload_id not in (None, workload_id):
        raise TrialPlanInvalid(
            f"workload_id: the plan names {request.workload_id}, the path {workload_id}",
            ["workload_id"],
        )
    if d.records.get_workload(workload_id) is None:
        raise TrialPlanNotFound(f"workload {workload_id} not found")
    body = request.model_dump(mode="json", exclude={"plan_id", "workload_id"})
    plan_id = request.plan_id or derive_plan_id({"workload_id": workload_id, **body})
    plan = TrialPlan.model_validate({**body, "plan_id": plan_id, "workload_id": workload_id})
    created = d.plans.create(plan, datetime.now(UTC).isoformat())
    if not created:
        existing = d.plans.get(plan_id)
        if existing is None:  # pragma: no cover - written a moment ago
            raise WorkflowUnavailable(f"trial plan {plan_id} could not be read back")
        if existing.fingerprint != plan.fingerprint():
            raise TrialPlanConflict(f"trial plan {plan_id} exists with different content")
        if existing.execution_arn is None:
            _start(d, plan)
            existing = d.plans.get(plan_id) or existing
        return plan_view(existing), 200
    _start(d, plan)
    state = d.plans.get(plan_id)
    assert state is not None
    return plan_view(state), 201


@router.get("/trial-plans/<plan_id>", tags=["trial plans"])
def get_trial_plan(plan_id: Id) -> TrialPlanView:
    d = deps()
    state = d.plans.get(plan_id)
    if state is None:
        raise TrialPlanNotFound(f"trial plan {plan_id} not found")
    status = None
    if state.execution_arn:
        try:
            status = d.sfn.describe_execution(executionArn=state.execution_arn)["status"]
        except Exception as exc:  # noqa: BLE001 - the plan record still answers
            # deployed, the API may start executions but not describe them (that would need
            # a wildcard over execution names): the plan record is the status that counts
            log.info("describe_execution %s not available: %s", state.execution_arn, exc)
    return plan_view(state, status)
