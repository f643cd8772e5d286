"""Trial plans: submit one (stored once, then its Standard state machine execution started),
and read one back with what Step Functions says of its execution.

Idempotent: the execution is named after the plan id (given, or derived from the request's
content), and the plan is written once. Submitting the same plan again starts nothing and
answers the plan as it stands; the same id with a different plan is a Conflict. Step
Functions' own StartExecution is idempotent for the same name and input. What each step of an
execution does is `trncost.services.trial_steps`.

A plan is never left "submitted" silently: with no state machine configured nothing is stored
(Unavailable); when Step Functions does not start a stored plan, the plan says so (status
`not_started`, with the reason) and the repeated request starts it.

A plan that names no launcher gets the deployment's default (`local` under the local runtime;
none on AWS, where the plan must name one). The `local` launcher (a process on the machine of
the local runtime) is refused anywhere else; its plan's command defaults to the bundled tiny
training, and its candidates must be in the runtime's region (where its runs are recorded).

Every candidate of a plan must be in the region trncost is deployed to (`Settings.region`): the
trial steps may launch and stop jobs only there (their IAM policy names the stage's region), and
a job's state-change event, the agent's bus and the ingest are that region's, so a run launched
elsewhere would never be recorded. A candidate in another region is refused at submission (422
naming `candidates.<i>.region`); nothing is stored or started.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from trncost import aws
from trncost.errors import Conflict, InvalidInput, NotFound, Unavailable
from trncost.model.launchers import LauncherKind
from trncost.model.plan import LOCAL_DEFAULT_COMMAND, PlanState, TrialPlan, derive_plan_id
from trncost.settings import STATE_MACHINE_ARN_ENV, LocalRuns, PlanLimits
from trncost.store.plans import PlanStore
from trncost.store.records import RecordStore

log = logging.getLogger(__name__)
__all__ = ["TrialPlanService", "execution_arn_for"]


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
        default_launcher: str | None = None,
        local_runs: LocalRuns | None = None,
        region: str | None = None,
    ) -> None:
        self.plans = plans
        self.records = records
        self._sfn = sfn
        self.state_machine_arn = state_machine_arn
        self.clock = clock
        self.limits = limits or PlanLimits()
        self.default_launcher = default_launcher
        self.local_runs = local_runs
        self.region = region  # the deployed region; None: not checked

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
        if not self.state_machine_arn:  # nothing is stored that could not be started
            raise Unavailable(f"no trial plan state machine configured ({STATE_MACHINE_ARN_ENV})")
        body = self._defaults(body)
        plan_id = plan_id or derive_plan_id({"workload_id": workload_id, **body})
        plan = TrialPlan.model_validate({**body, "plan_id": plan_id, "workload_id": workload_id})
        self._within_limits(plan)
        self._check_local(plan)
        self._check_region(plan)
        at = self.clock().isoformat()
        if self.plans.create(plan, at, created_by):
            # stored: from here nothing answers failure (issue 23). A start Step Functions
            # refuses leaves the plan not_started, with the reason; the same request again
            # starts it (the execution is named after the plan: never twice).
            arn = self._start_stored(plan)
            return self._read_back(plan, at, created_by, arn), True
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
        most = self.limits.max_runs
        runs = len(plan.schedule_specs())
        if most is not None and runs > most:
            problems.append(
                f"candidates: the plan schedules {runs} runs (candidates × fit, baseline repeats"
                f" and target counts); this stage runs at most {most} per plan"
                " (trial_plans.max_runs: the state machine's timeout is made from it)"
            )
            fields.append("candidates")
        if problems:
            raise InvalidInput("; ".join(problems), fields)

    def _defaults(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The deployment's launcher for a plan that names none; the local launcher's
        default command."""
        out = dict(body)
        for key in ("launcher", "entry_command"):  # omitted or null: the defaults below
            if out.get(key) is None:
                out.pop(key, None)
        if "launcher" not in out:
            if not self.default_launcher:
                raise InvalidInput(
                    "launcher: name one (sagemaker, ec2 or batch); this deployment has no "
                    "default launcher",
                    ["launcher"],
                )
            out["launcher"] = self.default_launcher
        if out["launcher"] == LauncherKind.local and "entry_command" not in out:
            out["entry_command"] = list(LOCAL_DEFAULT_COMMAND)
        return out

    def _check_local(self, plan: TrialPlan) -> None:
        if plan.launcher != LauncherKind.local:
            return
        if self.local_runs is None:
            raise InvalidInput(
                "launcher: the local launcher runs trials as processes on the machine of the "
                "local runtime (make run); a deployed stage launches sagemaker, ec2 or batch",
                ["launcher"],
            )
        region = self.local_runs.region
        wrong = [i for i, c in enumerate(plan.candidates) if c.region != region]
        if wrong:
            raise InvalidInput(
                "; ".join(
                    f"candidates.{i}.region: local runs are recorded in the runtime's region "
                    f"{region}"
                    for i in wrong
                ),
                [f"candidates.{i}.region" for i in wrong],
            )

    def _check_region(self, plan: TrialPlan) -> None:
        """Every candidate in the deployed region, else 422 naming each one elsewhere."""
        region = self.region
        if region is None:
            return
        wrong = [(i, c.region) for i, c in enumerate(plan.candidates) if c.region != region]
        if wrong:
            raise InvalidInput(
                "; ".join(
                    f"candidates.{i}.region: {theirs} is not this stage's region ({region}): "
                    "a trial plan launches in the region trncost is deployed to"
                    for i, theirs in wrong
                ),
                [f"candidates.{i}.region" for i, _ in wrong],
            )

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

    def _start_stored(self, plan: TrialPlan) -> str | None:
        """Start a plan just stored; its execution ARN, or None when it did not start (the
        plan says why when it could be noted)."""
        try:
            return self._start(plan)
        except Exception as exc:
            if not (isinstance(exc, Unavailable) or aws.is_aws_error(exc)):
                raise
            log.warning("trial plan %s stored, not started: %s", plan.plan_id, exc)
            return None

    def _read_back(
        self, plan: TrialPlan, at: str, created_by: str | None, arn: str | None
    ) -> PlanState:
        """The plan as stored; if DynamoDB does not answer the read, what this call wrote."""
        for _ in range(3):
            try:
                state = self.plans.get(plan.plan_id)
            except Exception as exc:
                if not aws.is_aws_error(exc):
                    raise
                continue
            if state is not None:
                return state
        return PlanState(
            plan=plan,
            status="submitted" if arn else "not_started",
            created_at=at,
            updated_at=at,
            fingerprint=plan.fingerprint(),
            execution_arn=arn,
            created_by=created_by,
            outcome_reasons=[] if arn else ["submit the same plan again to start it"],
        )

    def _start(self, plan: TrialPlan) -> str:
        """Start the plan's execution (named after the plan) and note it on the plan; when
        Step Functions does not start it, the plan says so (not_started) and Unavailable."""
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
                why = f"Step Functions did not start the plan: {exc}"
                try:
                    self.plans.set_status(
                        plan.plan_id,
                        "not_started",
                        self.clock().isoformat(),
                        [why, "submit the same plan again to start it"],
                    )
                except Exception as noted:  # noqa: BLE001 - the plan stays "submitted"
                    log.warning("could not note that %s did not start: %s", plan.plan_id, noted)
                raise Unavailable(
                    f"trial plan {plan.plan_id} is stored but not started ({why}); submit the "
                    "same plan again to start it"
                ) from None
            arn = execution_arn_for(self.state_machine_arn, plan.plan_id)
        try:
            self.plans.set_execution(plan.plan_id, arn, self.clock().isoformat())
        except Exception as exc:
            if not aws.is_aws_error(exc):
                raise
            # started: the ARN is derived from the plan id, and a repeat of the request notes it
            log.warning("trial plan %s started; its execution not noted yet: %s", plan.plan_id, exc)
        return arn
