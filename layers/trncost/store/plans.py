"""Trial plans in the trncost table: the plan, its runs, its gate results.

Key builders (the only place these keys are spelled; they extend trncost.store.schema's design):

    plan         pk PLAN#<plan id>  sk PLAN              gsi1 WORKLOAD#<wid>#PLANS / <at>#<id>
    plan run     pk PLAN#<plan id>  sk RUN#<index 0000>
    gate result  pk PLAN#<plan id>  sk GATE#<phase>#<candidate index>

A plan is written once (conditional); a run is claimed once before its launch (conditional), so
a retried launch finds the claim and re-uses its job; a gate result is written once per phase
and candidate. `GET /trial-plans/{id}` reads them all with one query on the partition.
"""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Key

from trncost.model.plan import PLAN_STATUSES, GateResult, PlanState, RunState, TrialPlan
from trncost.model.trial import Phase
from trncost.store.base import Repository

PLAN_SK = "PLAN"
RUN_SK_PREFIX = "RUN#"
GATE_SK_PREFIX = "GATE#"


def plan_pk(plan_id: str) -> str:
    return f"PLAN#{plan_id}"


def run_sk(index: int) -> str:
    return f"{RUN_SK_PREFIX}{index:04d}"


def gate_sk(phase: Phase, candidate_index: int) -> str:
    return f"{GATE_SK_PREFIX}{Phase(phase).value}#{candidate_index}"


def workload_plans_gsi_pk(workload_id: str) -> str:
    return f"WORKLOAD#{workload_id}#PLANS"


class PlanStore(Repository):
    def create(self, plan: TrialPlan, created_at: str, created_by: str | None = None) -> bool:
        """Write the plan once, with who submitted it. False when the plan id is taken."""
        return self.put_new(
            {
                **({"created_by": created_by} if created_by else {}),
                "pk": plan_pk(plan.plan_id),
                "sk": PLAN_SK,
                "gsi1pk": workload_plans_gsi_pk(plan.workload_id),
                "gsi1sk": f"{created_at}#{plan.plan_id}",
                "plan": plan.model_dump_json(),
                "fingerprint": plan.fingerprint(),
                "status": "submitted",
                "created_at": created_at,
                "updated_at": created_at,
                "dropped": [],
                "outcome_reasons": [],
            }
        )

    def get(self, plan_id: str) -> PlanState | None:
        items = self.query_all(
            KeyConditionExpression=Key("pk").eq(plan_pk(plan_id)), ConsistentRead=True
        )
        meta = next((i for i in items if i["sk"] == PLAN_SK), None)
        if meta is None:
            return None
        runs = [RunState.model_validate_json(i["run"]) for i in items if i["sk"].startswith("RUN#")]
        gates = [
            GateResult.model_validate_json(i["gate"]) for i in items if i["sk"].startswith("GATE#")
        ]
        return PlanState(
            plan=TrialPlan.model_validate_json(meta["plan"]),
            status=meta["status"],
            created_at=meta["created_at"],
            updated_at=meta["updated_at"],
            fingerprint=meta["fingerprint"],
            execution_arn=meta.get("execution_arn"),
            created_by=meta.get("created_by"),
            spent_usd=meta.get("spent_usd"),
            outcome_reasons=list(meta.get("outcome_reasons") or []),
            dropped=[int(d) for d in meta.get("dropped") or []],
            runs=sorted(runs, key=lambda r: r.index),
            gates=gates,
        )

    def plan(self, plan_id: str) -> TrialPlan | None:
        item = self.item(plan_pk(plan_id), PLAN_SK)
        return TrialPlan.model_validate_json(item["plan"]) if item else None

    def _update(self, plan_id: str, at: str, **values: Any) -> None:
        names = {f"#{k}": k for k in values}
        names["#updated_at"] = "updated_at"
        expr = ", ".join(f"#{k} = :{k}" for k in values)
        self.table.update_item(
            Key={"pk": plan_pk(plan_id), "sk": PLAN_SK},
            UpdateExpression=f"SET {expr}, #updated_at = :updated_at",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={
                **{f":{k}": v for k, v in values.items()},
                ":updated_at": at,
            },
        )

    def set_execution(self, plan_id: str, execution_arn: str, at: str) -> None:
        self._update(plan_id, at, execution_arn=execution_arn)

    def set_status(
        self, plan_id: str, status: str, at: str, reasons: list[str] | None = None
    ) -> None:
        if status not in PLAN_STATUSES:
            raise ValueError(f"unknown plan status {status!r}")
        values: dict[str, Any] = {"status": status}
        if reasons is not None:
            values["outcome_reasons"] = list(reasons)
        self._update(plan_id, at, **values)

    def set_spend(self, plan_id: str, spent_usd: str, at: str) -> None:
        self._update(plan_id, at, spent_usd=spent_usd)

    def drop_candidate(self, plan_id: str, candidate_index: int, at: str) -> None:
        state = self.get(plan_id)
        dropped = sorted(set((state.dropped if state else []) + [candidate_index]))
        self._update(plan_id, at, dropped=dropped)

    # -- runs --------------------------------------------------------------------------------
    def claim_run(self, plan_id: str, run: RunState) -> RunState | None:
        """Claim a run before launching it. The existing run when it was claimed before."""
        if self.put_new(
            {"pk": plan_pk(plan_id), "sk": run_sk(run.index), "run": run.model_dump_json()}
        ):
            return None
        return self.get_run(plan_id, run.index)

    def get_run(self, plan_id: str, index: int) -> RunState | None:
        item = self.item(plan_pk(plan_id), run_sk(index))
        return RunState.model_validate_json(item["run"]) if item else None

    def save_run(self, plan_id: str, run: RunState) -> None:
        self.table.put_item(
            Item={"pk": plan_pk(plan_id), "sk": run_sk(run.index), "run": run.model_dump_json()}
        )

    # -- gates -------------------------------------------------------------------------------
    def put_gate(self, plan_id: str, candidate_index: int, result: GateResult) -> None:
        """Written once per phase and candidate: a repeated gate step changes nothing."""
        self.put_new(
            {
                "pk": plan_pk(plan_id),
                "sk": gate_sk(result.phase, candidate_index),
                "gate": result.model_dump_json(),
                "candidate_index": candidate_index,
            }
        )

    def get_gate(self, plan_id: str, phase: Phase, candidate_index: int) -> GateResult | None:
        item = self.item(plan_pk(plan_id), gate_sk(phase, candidate_index))
        return GateResult.model_validate_json(item["gate"]) if item else None
