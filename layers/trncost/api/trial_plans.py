"""Trial plans over HTTP (the use case is `trncost.services.trial_plans`).

    POST /workloads/{workload_id}/trial-plans   start a plan (Standard state machine execution)
    GET  /trial-plans/{plan_id}                 phase status, trials, spend so far, gate results

A repeated request with the same plan answers 200 with the plan as it stands and starts
nothing; the same id with a different plan is a 409; Step Functions unavailable is a 503 (the
repeat starts the stored plan).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from trncost.api.context import Id, caller, router, services
from trncost.api.schemas import Schema
from trncost.model.common import Identifier
from trncost.model.launchers import LauncherKind
from trncost.model.plan import GateResult, PlanId, PlanState, RunState, TrialPlan
from trncost.model.trial import Phase

Argument = Annotated[str, StringConstraints(min_length=1, max_length=4096)]

routes = router()


# -- models -----------------------------------------------------------------------------------
class TrialPlanRequest(TrialPlan):
    """A TrialPlan; `workload_id` comes from the path, `plan_id` defaults to a hash of the
    request (so the same request is the same plan), `launcher` to the deployment's default
    (`local` under the local runtime, `make run`: each run a process on that machine; none on
    AWS), and a local plan's `entry_command` to the bundled tiny training
    (`python examples/train_tiny.py`)."""

    plan_id: PlanId | None = None  # type: ignore[assignment]
    workload_id: Identifier | None = None  # type: ignore[assignment]
    launcher: LauncherKind | None = None  # type: ignore[assignment]
    entry_command: list[Argument] | None = Field(  # type: ignore[assignment]
        default=None,
        min_length=1,
        max_length=64,
        description="the training command and its arguments (local: default the tiny training)",
    )


class PhaseView(Schema):
    phase: Phase
    candidate_index: int
    instance_type: str
    status: str = Field(description="pending | running | passed | failed | skipped")
    runs_planned: int
    runs_launched: int
    runs_recorded: int
    trial_ids: list[str] = Field(
        default_factory=list, description="the trials of this phase's runs launched so far"
    )
    gate: GateResult | None = None


class TrialPlanView(Schema):
    plan_id: str
    workload_id: str
    status: str = Field(
        description="submitted | not_started (Step Functions did not start it: see reasons; "
        "submitting it again starts it) | running | completed | gate_failed | budget_cap | "
        "timeout | failed"
    )
    execution_arn: str | None
    execution_status: str | None = Field(default=None, description="as Step Functions says")
    submitted_by: str | None = Field(
        default=None,
        description="who submitted it: the IAM ARN the request was signed by (`local` in the"
        " local runtime)",
    )
    created_at: str
    updated_at: str
    spent_usd: str | None = Field(description="priced spend of the plan's runs so far")
    budget_cap_usd: str
    reasons: list[str]
    phases: list[PhaseView]
    trials: list[RunState]
    gates: list[GateResult]
    plan: TrialPlan


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
            elif ci in state.dropped or state.status not in ("submitted", "not_started", "running"):
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
                    trial_ids=[r.trial_id for r in runs],
                    gate=gate,
                )
            )
    return TrialPlanView(
        plan_id=plan.plan_id,
        workload_id=plan.workload_id,
        status=state.status,
        execution_arn=state.execution_arn,
        execution_status=execution_status,
        submitted_by=state.created_by,
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


# -- routes -----------------------------------------------------------------------------------
@routes.post(
    "/workloads/<workload_id>/trial-plans",
    tags=["trial plans"],
    responses={
        200: {"description": "the same plan was submitted before: nothing new started"},
        201: {"description": "stored and started"},
        202: {
            "description": "stored, not started: Step Functions refused the start (the plan "
            "says why, status not_started); the same request again starts it"
        },
    },
)
def create_trial_plan(workload_id: Id, request: TrialPlanRequest) -> tuple[TrialPlanView, int]:
    body = request.model_dump(mode="json", exclude={"plan_id", "workload_id"})
    state, created = services().trial_plans.submit(
        workload_id,
        body,
        plan_id=request.plan_id,
        named_workload=request.workload_id,
        created_by=caller(routes),
    )
    if not created:
        return plan_view(state), 200
    return plan_view(state), 201 if state.execution_arn else 202


@routes.get("/trial-plans/<plan_id>", tags=["trial plans"])
def get_trial_plan(plan_id: Id) -> TrialPlanView:
    state, execution_status = services().trial_plans.get(plan_id)
    return plan_view(state, execution_status)
