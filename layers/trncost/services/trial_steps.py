"""What the trial plan state machine's Task states do (lambdas/trial_steps dispatches here on
the event's `action`). Each step reads and writes the plan store, and calls a launcher; the
adapters are injected (`trncost.wiring` builds them for the Lambda), so the tests run these
steps in-process against moto or fakes. The pure parts are `trncost.workflow` (the plan and its
schedule, the gates, the budget).

- start (execution_id) → cursor {index, action, phase, reasons}
- budget_check (index) → budget {ok, spent_usd, next_max_usd, cap_usd, reasons}
- launch (index) → launch {trial_id, job_id, launched_at}
- check_record (index, polls, max_polls) → poll {polls, landed, exhausted, trial_status, reasons}
- gate (index) → cursor {index, action launch|done|stop, phase, reasons}
- record_outcome (outcome, index, reasons), record_failure (error {Error, Cause}): discarded

Every action also takes plan_id; the result lands at the state's ResultPath.

Errors: `TransientError` (named in the ASL's Retry) for what a retry may fix; anything else is
caught by the state machine and recorded on the plan by `record_failure`. An event the steps
cannot act on (a field of the wrong type or out of range) is a StepError naming the field,
never another exception.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from trncost.errors import StepError
from trncost.launch.base import Launcher, LaunchRequest
from trncost.model.launchers import LauncherKind
from trncost.model.plan import RunSpec, RunState, TrialPlan
from trncost.model.price import PriceKey
from trncost.model.trial import Phase, TrialRun
from trncost.settings import TrialStepSettings
from trncost.store.plans import PlanStore
from trncost.store.records import RecordStore
from trncost.workflow import budget as b
from trncost.workflow import gates as g

log = logging.getLogger(__name__)

RECORD_GRACE_S = 3600  # after a run's max time, how long its record may take to be ingested
OUTCOMES = ("completed", "gate_failed", "budget_cap", "timeout")
__all__ = ["PriceLookup", "TrialSteps", "price_lookup_from", "run_region"]


def _now() -> datetime:
    return datetime.now(UTC)


PriceLookup = Callable[[str, str, TrialPlan], b.Rate]


def price_lookup_from(latest_snapshot: Callable[[], Any]) -> PriceLookup:
    """Rates from the latest official price snapshot, for the instance type in the region
    asked (the run's own: a snapshot's quote for another region never prices it); PENDING
    falls back to the plan's assumed rate (user_assumption), else no rate."""

    def lookup(instance_type: str, region: str, plan: TrialPlan) -> b.Rate:
        snap = latest_snapshot()
        why = "no price snapshot taken yet"
        if snap is not None:
            quote = snap.quote_for(
                PriceKey.for_instance(instance_type, region, platform=plan.platform)
            )
            if not quote.is_pending and quote.flat_rate is not None:
                # the quote's own basis: an example or saved-file price never reads as official
                basis = "official_price" if quote.basis == "official" else f"{quote.basis} price"
                return b.Rate(quote.flat_rate, f"{basis} {quote.snapshot_id}/{quote.sku}")
            why = quote.pending_reason or "tiered price"
        assumed = plan.assumed_hourly_usd.get(instance_type)
        if assumed is not None:
            return b.Rate(assumed, f"user_assumption (no official price: {why})")
        return b.Rate(None, f"no official price ({why}) and no assumed_hourly_usd")

    return lookup


@dataclass
class TrialSteps:
    plans: PlanStore
    records: RecordStore
    launchers: Callable[[LauncherKind], Launcher]
    prices: PriceLookup
    clock: Callable[[], datetime] = _now
    defaults: TrialStepSettings = field(default_factory=TrialStepSettings)  # role, profile, bus

    # -- dispatch ------------------------------------------------------------------------------
    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        action = event.get("action")
        method = {
            "start": self.start,
            "budget_check": self.budget_check,
            "launch": self.launch,
            "check_record": self.check_record,
            "gate": self.gate,
            "record_outcome": self.record_outcome,
            "record_failure": self.record_failure,
        }.get(str(action))
        if method is None:
            raise StepError(f"unknown action {_shown(action)}")
        plan_id = event.get("plan_id")
        if not plan_id:
            raise StepError("plan_id is required")
        if not isinstance(plan_id, str) or len(plan_id) > 64:
            raise StepError(f"plan_id {_shown(plan_id)} is not a plan id")
        return method(event)

    def _at(self) -> str:
        return self.clock().isoformat()

    def _plan(self, plan_id: str) -> TrialPlan:
        plan = self.plans.plan(plan_id)
        if plan is None:
            raise StepError(f"trial plan {plan_id} not found")
        return plan

    @staticmethod
    def _spec(plan: TrialPlan, event: Mapping[str, Any]) -> RunSpec:
        schedule = plan.schedule()
        index = event.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(schedule):
            raise StepError(f"index {_shown(index)} is not a run of plan {plan.plan_id}")
        return schedule[index]

    # -- start -------------------------------------------------------------------------------
    def start(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        at = self._at()
        execution_id = event.get("execution_id")
        if execution_id:
            if not isinstance(execution_id, str) or len(execution_id) > 2048:
                raise StepError(f"execution_id {_shown(execution_id)} is not an execution ARN")
            self.plans.set_execution(plan.plan_id, execution_id, at)
        self.plans.set_status(plan.plan_id, "running", at, [])  # a not_started reason is past
        first = plan.schedule()[0]
        return {"index": 0, "action": "launch", "phase": first.phase.value, "reasons": []}

    # -- budget ------------------------------------------------------------------------------
    def _run_costs(self, plan: TrialPlan, runs: list[RunState]) -> list[b.RunCost]:
        out = []
        for run in runs:
            trial = self.records.get_trial(run.trial_id) if run.landed else None
            out.append(
                b.RunCost(
                    trial_id=run.trial_id,
                    instance_type=run.instance_type,
                    instance_count=run.instance_count,
                    recorded=trial is not None,
                    billed_instance_seconds=trial.billed_instance_seconds if trial else None,
                    wall_seconds=trial.wall.total_s if trial else None,
                    max_run_seconds=plan.max_run_minutes * 60,
                    region=run_region(plan, run),
                )
            )
        return out

    def _rates(self, plan: TrialPlan) -> dict[str, b.Rate]:
        """Each candidate's rate, keyed by its instance type in its region (`b.rate_key`):
        a run is priced where it runs."""
        return {
            b.rate_key(c.instance_type, c.region): self.prices(c.instance_type, c.region, plan)
            for c in plan.candidates
        }

    def spend(self, plan: TrialPlan, runs: list[RunState]) -> b.Spend:
        return b.spend(self._run_costs(plan, runs), self._rates(plan))

    def budget_check(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        spec = self._spec(plan, event)
        state = self.plans.get(plan.plan_id)
        runs = [r for r in (state.runs if state else []) if r.index != spec.index]
        rates = self._rates(plan)
        spent = b.spend(self._run_costs(plan, runs), rates)
        nxt = b.RunCost(
            trial_id=spec.trial_id,
            instance_type=spec.instance_type,
            instance_count=spec.instance_count,
            recorded=False,
            max_run_seconds=plan.max_run_minutes * 60,
            region=spec.region,
        )
        check = b.check_next(spent, nxt, rates.get(nxt.priced_as), plan.budget_cap_usd)
        self.plans.set_spend(plan.plan_id, str(spent.usd.quantize(b.CENT)), self._at())
        worst = check.next_max_usd
        return {
            "ok": check.ok,
            "spent_usd": str(check.spent_usd.quantize(b.CENT)),
            "next_max_usd": None if worst is None else str(worst.quantize(b.CENT)),
            "cap_usd": str(check.cap_usd),
            "reasons": check.reasons,
        }

    # -- launch ------------------------------------------------------------------------------
    def request(self, plan: TrialPlan, spec: RunSpec) -> LaunchRequest:
        defaults = self.defaults
        settings: dict[str, Any] = {}
        own = getattr(plan, plan.launcher.value, None)  # the local launcher has no settings
        if own is not None:
            settings = own.model_dump(mode="json")
        if plan.launcher == LauncherKind.ec2:
            settings.setdefault("instance_profile_arn", None)
            settings["instance_profile_arn"] = (
                settings["instance_profile_arn"] or defaults.instance_profile_arn
            )
            settings["agent_bus"] = settings.get("agent_bus") or defaults.agent_bus
        return LaunchRequest(
            plan_id=plan.plan_id,
            workload_id=plan.workload_id,
            phase=spec.phase,
            run=spec.run,
            trial_id=spec.trial_id,
            instance_type=spec.instance_type,
            instance_count=spec.instance_count,
            region=spec.region,
            entry_command=list(plan.entry_command),
            dataset_uri=plan.dataset_uri,
            steps=spec.steps,
            max_run_seconds=plan.max_run_minutes * 60,
            hyperparameters=dict(plan.hyperparameters),
            image=plan.image,
            ami=plan.ami,
            role_arn=plan.role_arn or defaults.training_role_arn,
            settings=settings,
        )

    def launch(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        spec = self._spec(plan, event)
        claim = RunState(
            index=spec.index,
            phase=spec.phase,
            candidate_index=spec.candidate_index,
            run=spec.run,
            instance_type=spec.instance_type,
            instance_count=spec.instance_count,
            trial_id=spec.trial_id,
            launched_at=self._at(),
        )
        existing = self.plans.claim_run(plan.plan_id, claim)
        if existing is not None and existing.job_id:
            log.info("run %s already launched as %s", spec.trial_id, existing.job_id)
            return {
                "trial_id": existing.trial_id,
                "job_id": existing.job_id,
                "launched_at": existing.launched_at,
            }
        run = existing or claim
        job = self.launchers(plan.launcher).launch(self.request(plan, spec))
        run = run.model_copy(update={"job_id": job.job_id})
        self.plans.save_run(plan.plan_id, run)
        return {"trial_id": run.trial_id, "job_id": job.job_id, "launched_at": run.launched_at}

    # -- poll --------------------------------------------------------------------------------
    def check_record(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        spec = self._spec(plan, event)
        polls = _whole(event, "polls", 0) + 1
        max_polls = _whole(event, "max_polls", 1)
        run = self.plans.get_run(plan.plan_id, spec.index)
        if run is None:
            raise StepError(f"run {spec.index} of plan {plan.plan_id} was never launched")
        trial = self.records.get_trial(spec.trial_id)
        if trial is not None:
            self.plans.save_run(
                plan.plan_id,
                run.model_copy(update={"landed": True, "trial_status": trial.status.value}),
            )
            return {
                "polls": polls,
                "landed": True,
                "exhausted": False,
                "trial_status": trial.status.value,
                "reasons": [],
            }
        deadline = datetime.fromisoformat(run.launched_at) + timedelta(
            seconds=plan.max_run_minutes * 60 + RECORD_GRACE_S
        )
        reasons = []
        if polls >= max_polls:
            reasons.append(f"{spec.trial_id}: no trial record after {polls} polls")
        if self.clock() > deadline:
            reasons.append(
                f"{spec.trial_id}: no trial record {plan.max_run_minutes} min (the plan's max "
                f"run time) + {RECORD_GRACE_S // 60} min after its launch"
            )
        return {
            "polls": polls,
            "landed": False,
            "exhausted": bool(reasons),
            "trial_status": None,
            "reasons": reasons,
        }

    # -- gate --------------------------------------------------------------------------------
    def _gate(self, plan: TrialPlan, group: list[RunSpec]) -> g.GateResult:
        trials: list[TrialRun] = [
            t for t in (self.records.get_trial(s.trial_id) for s in group) if t is not None
        ]
        phase, ci = group[0].group
        if phase == Phase.fit and plan.fit:
            result = g.fit_gate(trials, plan.fit.checks)
        elif phase == Phase.baseline and plan.baseline:
            result = g.baseline_gate(trials, plan.baseline.repeats, plan.baseline.cv_limit)
        elif phase == Phase.target and plan.target:
            quality = plan.gates.quality_gate
            if quality is None:
                workload = self.records.get_workload(plan.workload_id)
                if workload is None:
                    raise StepError(f"workload {plan.workload_id} not found")
                quality = workload.quality_gate
            result = g.target_gate(trials, quality, [s.instance_count for s in group])
        else:  # pragma: no cover - the schedule only holds the plan's phases
            raise StepError(f"plan {plan.plan_id} has no {phase} phase")
        return result.model_copy(update={"candidate_index": ci})

    def gate(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        spec = self._spec(plan, event)
        schedule = plan.schedule()
        state = self.plans.get(plan.plan_id)
        dropped = set(state.dropped if state else [])
        group = [s for s in schedule if s.group == spec.group]
        reasons: list[str] = []
        if spec.index == group[-1].index:
            result = self.plans.get_gate(plan.plan_id, spec.phase, spec.candidate_index)
            if result is None:
                result = self._gate(plan, group)
                self.plans.put_gate(plan.plan_id, spec.candidate_index, result)
            label = f"{spec.phase} gate, candidate {spec.candidate_index} ({spec.instance_type})"
            if result.passed:
                reasons.append(f"{label} passed")
            elif spec.phase in plan.gates.advisory:
                reasons.append(
                    f"{label} failed (advisory, continuing): " + "; ".join(result.reasons)
                )
            else:
                reasons.append(f"{label} failed: " + "; ".join(result.reasons))
                dropped.add(spec.candidate_index)
                self.plans.drop_candidate(plan.plan_id, spec.candidate_index, self._at())
        nxt = next(
            (s for s in schedule[spec.index + 1 :] if s.candidate_index not in dropped), None
        )
        if nxt is not None:
            return {
                "index": nxt.index,
                "action": "launch",
                "phase": nxt.phase.value,
                "reasons": reasons,
            }
        all_dropped = len(dropped) == len(plan.candidates)
        if all_dropped and state is not None:
            reasons = self._failed_gate_reasons(plan.plan_id) or reasons
        return {
            "index": spec.index,
            "action": "stop" if all_dropped else "done",
            "phase": spec.phase.value,
            "reasons": reasons,
        }

    def _failed_gate_reasons(self, plan_id: str) -> list[str]:
        state = self.plans.get(plan_id)
        return [
            f"{r.phase} gate, candidate {r.candidate_index}: {reason}"
            for r in (state.gates if state else [])
            if not r.passed
            for reason in r.reasons
        ]

    # -- outcomes ----------------------------------------------------------------------------
    def _stop_unlanded(self, plan: TrialPlan) -> list[str]:
        notes = []
        state = self.plans.get(plan.plan_id)
        for run in state.runs if state else []:
            if run.job_id and not run.landed and not run.stopped:
                try:
                    self.launchers(plan.launcher).stop(run.job_id, run_region(plan, run))
                    notes.append(f"stopped {run.trial_id} ({run.job_id})")
                except Exception as exc:  # noqa: BLE001 - recorded, the outcome still stands
                    notes.append(f"could not stop {run.trial_id} ({run.job_id}): {exc}")
                self.plans.save_run(plan.plan_id, run.model_copy(update={"stopped": True}))
        return notes

    def record_outcome(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        outcome = event.get("outcome")
        if outcome not in OUTCOMES:
            raise StepError(f"unknown outcome {_shown(outcome)}")
        reasons = _reasons(event.get("reasons"))
        if outcome == "timeout":
            reasons += self._stop_unlanded(plan)
        self.plans.set_status(plan.plan_id, str(outcome), self._at(), reasons)
        return {"status": outcome}

    def record_failure(self, event: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(event["plan_id"])
        error = event.get("error") or {}
        if not isinstance(error, dict):  # not Step Functions' {Error, Cause}: keep it as text
            error = {"Error": "Error", "Cause": str(error)[:2000]}
        name = str(error.get("Error") or "Error")[:256]
        cause = error.get("Cause") or ""
        if not isinstance(cause, str):
            cause = json.dumps(cause, default=str)[:2000]
        try:  # a Lambda error's Cause is JSON: {"errorMessage": ..., "errorType": ...}
            parsed = json.loads(cause)
            if isinstance(parsed, dict) and parsed.get("errorMessage"):
                cause = str(parsed["errorMessage"])
        except (TypeError, ValueError):
            pass
        reasons = [f"{name}: {cause}".strip(": ")]
        reasons += self._stop_unlanded(plan)
        self.plans.set_status(plan.plan_id, "failed", self._at(), reasons)
        return {"status": "failed"}


MAX_POLLS = 1_000_000


def _whole(event: Mapping[str, Any], key: str, default: int) -> int:
    """A count the state machine passes (polls): a whole number 0..MAX_POLLS, else StepError."""
    value = event.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POLLS:
        raise StepError(f"{key} {_shown(value)} is not a whole number of polls")
    return value


def _reasons(value: Any) -> list[str]:
    """The reasons a state passes (a list of texts); None is none."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise StepError(f"reasons {_shown(value)} is not a list")
    return [str(r)[:2000] for r in value[:100]]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def run_region(plan: TrialPlan, run: RunState) -> str:
    """Where a run was launched (its candidate's region): it is stopped and priced there."""
    return plan.candidates[run.candidate_index].region
