"""A trial plan: what to run, where, in which phases, under which gates and budget.

The plan is validated whole at submission so that an impossible plan is a 4xx naming the field,
never a stuck or failed execution: no phase, an instance type no launcher offers, a launcher
without what it needs (image, AMI, queue), fewer than 3 baseline repeats.

The runs of a plan are a fixed, ordered schedule (`TrialPlan.schedule()`), phase-major:

    fit:      one run per candidate, at the candidate's instance count
    baseline: `repeats` runs per candidate, at the candidate's instance count
    target:   one run per candidate and instance count in `target.instance_counts`

The state machine walks it by index; each run's trial id is derived from the plan id and its
place in the schedule, so a retried launch names the same job and the same trial record.

What a plan's execution records is here too (trncost.store.plans keeps it): the plan's state
(`PlanState`, one of `PLAN_STATUSES`), each run's (`RunState`) and each gate's verdict
(`GateResult`, computed by the pure rules of trncost.workflow.gates).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, StringConstraints, field_validator, model_validator

from trncost.model.bounds import PositiveHourlyUsd
from trncost.model.candidate import Candidate, Platform
from trncost.model.common import DomainModel, Identifier, InstanceType, Name
from trncost.model.launchers import LOCAL_INSTANCE_COUNT, LauncherKind, unsupported_reason
from trncost.model.trial import Phase
from trncost.model.workload import QualityGate

# Step Functions execution names: 1..80 of letters, digits, - and _ (the plan id is one).
PlanId = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
]
RoleArn = Annotated[
    str, StringConstraints(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")
]
ProfileArn = Annotated[
    str, StringConstraints(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:instance-profile/[\w+=,.@/-]+$")
]
S3Uri = Annotated[str, StringConstraints(pattern=r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$")]
PHASE_ORDER = (Phase.fit, Phase.baseline, Phase.target)
MAX_RUNS = 200
# What each launcher needs in the plan.
LAUNCHER_NEEDS: dict[LauncherKind, tuple[str, ...]] = {
    LauncherKind.sagemaker: ("image", "dataset_uri", "sagemaker"),
    LauncherKind.ec2: ("ami", "ec2"),
    LauncherKind.batch: ("image", "batch"),
    LauncherKind.local: (),
}
# The local launcher's command when the plan gives none: the bundled tiny training (numpy),
# started in the trncost checkout; it reads the phase's steps from TRNCOST_STEPS.
LOCAL_DEFAULT_COMMAND = ("python", "examples/train_tiny.py")


class FitCheck(StrEnum):
    ran = "ran"
    compiled = "compiled"
    loss_finite = "loss_finite"
    checkpoint_saved = "checkpoint_saved"
    checkpoint_restored = "checkpoint_restored"
    no_unsupported_ops = "no_unsupported_ops"


class FitSettings(DomainModel):
    steps: int = Field(ge=1, le=10_000_000, description="training steps of the fit run")
    checks: list[FitCheck] = Field(default_factory=lambda: list(FitCheck), min_length=1)

    @field_validator("checks")
    @classmethod
    def _unique(cls, v: list[FitCheck]) -> list[FitCheck]:
        if len(set(v)) != len(v):
            raise ValueError("list each check once")
        return v


class BaselineSettings(DomainModel):
    steps: int = Field(ge=1, le=100_000_000)
    repeats: int = Field(default=3, ge=3, le=20, description="runs in a fixed environment (≥ 3)")
    cv_limit: float = Field(
        default=0.05, gt=0, le=1, description="throughput coefficient of variation must be below"
    )


class TargetSettings(DomainModel):
    steps: int = Field(ge=1, le=1_000_000_000)
    instance_counts: list[int] = Field(
        min_length=1, max_length=16, description="instance counts for the scaling fit"
    )

    @field_validator("instance_counts")
    @classmethod
    def _counts(cls, v: list[int]) -> list[int]:
        if any(c < 1 or c > 100_000 for c in v):
            raise ValueError("each instance count must be in 1..100000")
        if len(set(v)) != len(v):
            raise ValueError("list each instance count once")
        return sorted(v)


class GateSettings(DomainModel):
    quality_gate: QualityGate | None = Field(
        default=None, description="the target gate's quality; None: the workload's quality gate"
    )
    advisory: list[Phase] = Field(
        default_factory=list,
        description="phases whose failed gate is recorded but does not stop the candidate",
    )


class SageMakerSettings(DomainModel):
    output_uri: S3Uri = Field(description="S3 prefix for the job's model artifacts")
    volume_gb: int = Field(default=100, ge=1, le=16384)


class Ec2Settings(DomainModel):
    subnet_id: Annotated[str, StringConstraints(pattern=r"^subnet-[0-9a-f]{8,17}$")]
    security_group_ids: list[Annotated[str, StringConstraints(pattern=r"^sg-[0-9a-f]{8,17}$")]] = (
        Field(min_length=1, max_length=5)
    )
    instance_profile_arn: ProfileArn | None = Field(
        default=None, description="None: the deployment's training instance profile"
    )
    # The root volume is the AMI's: size it in the AMI (a mapping here would need the AMI's
    # root device name, i.e. DescribeImages, to resize rather than add a volume).
    agent_bus: Name | None = Field(
        default=None, description="EventBridge bus for the agent's event; None: the deployment's"
    )


class BatchSettings(DomainModel):
    job_queue: Name
    job_definition: Name


class TrialPlan(DomainModel):
    plan_id: PlanId
    workload_id: Identifier
    candidates: list[Candidate] = Field(min_length=1, max_length=8)
    launcher: LauncherKind
    image: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = Field(
        default=None, description="training container image (sagemaker, batch)"
    )
    ami: Annotated[str, StringConstraints(pattern=r"^ami-[0-9a-f]{8,17}$")] | None = Field(
        default=None, description="machine image with the trncost agent installed (ec2)"
    )
    entry_command: list[Annotated[str, StringConstraints(min_length=1, max_length=4096)]] = Field(
        min_length=1, max_length=64, description="the training command and its arguments"
    )
    dataset_uri: S3Uri | None = Field(
        default=None, description="the training data (sagemaker: its input channel)"
    )
    hyperparameters: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=256)],
        Annotated[str, StringConstraints(max_length=2500)],
    ] = Field(default_factory=dict, max_length=100)
    fit: FitSettings | None = None
    baseline: BaselineSettings | None = None
    target: TargetSettings | None = None
    gates: GateSettings = Field(default_factory=GateSettings)
    budget_cap_usd: Decimal = Field(gt=0, le=Decimal(10_000_000), allow_inf_nan=False)
    assumed_hourly_usd: dict[InstanceType, PositiveHourlyUsd] = Field(
        default_factory=dict,
        description="user_assumption rates used only where no official price exists (PENDING)",
    )
    role_arn: RoleArn | None = Field(
        default=None, description="training role; None: the deployment's training role"
    )
    max_run_minutes: int = Field(
        default=240, ge=5, le=28 * 24 * 60, description="each run is stopped after this"
    )
    sagemaker: SageMakerSettings | None = None
    ec2: Ec2Settings | None = None
    batch: BatchSettings | None = None

    @field_validator("assumed_hourly_usd")
    @classmethod
    def _rates(cls, v: dict[str, Decimal]) -> dict[str, Decimal]:
        for itype, rate in v.items():
            if not rate.is_finite() or rate <= 0:
                raise ValueError(f"{itype}: a rate must be a positive number")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> TrialPlan:
        problems: list[str] = []
        if not (self.fit or self.baseline or self.target):
            problems.append("fit, baseline, target: the plan has no phase; give at least one")
        if self.launcher is not None:  # None only in a request: the deployment's default
            problems += self._launcher_problems(LauncherKind(self.launcher))
        labels = [f"{c.instance_type}@{c.region}#{c.instance_count}" for c in self.candidates]
        if len(set(labels)) != len(labels):
            problems.append("candidates: the same candidate is listed twice")
        for phase in self.gates.advisory:
            if getattr(self, phase.value) is None:
                problems.append(f"gates.advisory: the plan has no {phase} phase")
        if len(self.schedule_specs()) > MAX_RUNS:
            problems.append(f"the plan has more than {MAX_RUNS} runs: split it")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _launcher_problems(self, launcher: LauncherKind) -> list[str]:
        problems: list[str] = []
        for i, c in enumerate(self.candidates):
            why = unsupported_reason(launcher, c.instance_type)
            if why:
                problems.append(f"candidates.{i}.instance_type: {why}")
        for field in LAUNCHER_NEEDS[launcher]:
            if getattr(self, field) is None:
                problems.append(f"{field}: the {launcher} launcher needs it")
        if launcher == LauncherKind.batch and self.image is not None:
            problems.append("image: the batch launcher runs the job definition's image; omit it")
        for field in ("sagemaker", "ec2", "batch"):
            if field != launcher.value and getattr(self, field) is not None:
                problems.append(f"{field}: settings for a launcher the plan does not use")
        if launcher == LauncherKind.local:
            problems += self._local_problems()
        return problems

    def _local_problems(self) -> list[str]:
        """A local run is one process on this machine: one instance is all it can measure."""
        why = f"a local run is one process: only {LOCAL_INSTANCE_COUNT} instance can be measured"
        problems = [
            f"candidates.{i}.instance_count: {why}"
            for i, c in enumerate(self.candidates)
            if c.instance_count != LOCAL_INSTANCE_COUNT
        ]
        if self.target and self.target.instance_counts != [LOCAL_INSTANCE_COUNT]:
            problems.append(f"target.instance_counts: {why}")
        for field in ("image", "ami", "role_arn"):
            if getattr(self, field) is not None:
                problems.append(f"{field}: the local launcher runs the command on this machine")
        return problems

    @property
    def phases(self) -> list[Phase]:
        return [p for p in PHASE_ORDER if getattr(self, p.value) is not None]

    @property
    def platform(self) -> Platform:
        return Platform.sagemaker if self.launcher == LauncherKind.sagemaker else Platform.ec2

    def steps_of(self, phase: Phase) -> int:
        steps: int = getattr(self, phase.value).steps
        return steps

    def schedule_specs(self) -> list[tuple[Phase, int, int, int]]:
        """(phase, candidate index, run number (1-based), instance count) in run order."""
        out: list[tuple[Phase, int, int, int]] = []
        for phase in PHASE_ORDER:
            for ci, cand in enumerate(self.candidates):
                if phase == Phase.fit and self.fit:
                    out.append((phase, ci, 1, cand.instance_count))
                elif phase == Phase.baseline and self.baseline:
                    out.extend(
                        (phase, ci, r, cand.instance_count)
                        for r in range(1, self.baseline.repeats + 1)
                    )
                elif phase == Phase.target and self.target:
                    out.extend(
                        (phase, ci, r, n)
                        for r, n in enumerate(self.target.instance_counts, start=1)
                    )
        return out

    def schedule(self) -> list[RunSpec]:
        return [
            RunSpec(
                index=i,
                phase=phase,
                candidate_index=ci,
                run=run,
                instance_count=count,
                instance_type=self.candidates[ci].instance_type,
                region=self.candidates[ci].region,
                steps=self.steps_of(phase),
                trial_id=trial_id(self.plan_id, phase, ci, count, run),
            )
            for i, (phase, ci, run, count) in enumerate(self.schedule_specs())
        ]

    def fingerprint(self) -> str:
        """Hash of the plan's content: the same plan id must mean the same plan."""
        raw = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class RunSpec:
    index: int
    phase: Phase
    candidate_index: int
    run: int
    instance_count: int
    instance_type: str
    region: str
    steps: int
    trial_id: str

    @property
    def group(self) -> tuple[Phase, int]:
        """The runs one gate decides on: a phase of one candidate."""
        return (self.phase, self.candidate_index)


def trial_id(plan_id: str, phase: Phase, candidate_index: int, count: int, run: int) -> str:
    return f"{plan_id}-{phase.value}-c{candidate_index}-n{count}-r{run}"


def derive_plan_id(body: Mapping[str, Any]) -> str:
    """A plan id from the request's content: the same request names the same plan."""
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return "plan-" + hashlib.sha256(raw.encode()).hexdigest()[:20]


# -- what a plan's execution records (trncost.store.plans keeps them) ------------------------
PLAN_STATUSES = (
    "submitted",
    "not_started",
    "running",
    "completed",
    "gate_failed",
    "budget_cap",
    "timeout",
    "failed",
)


class GateResult(DomainModel):
    phase: Phase
    passed: bool
    candidate_index: int = 0
    reasons: list[str] = Field(default_factory=list, description="why it failed (or notes)")
    trial_ids: list[str] = Field(default_factory=list)
    measures: dict[str, float] = Field(default_factory=dict)


class RunState(DomainModel):
    index: int
    phase: Phase
    candidate_index: int
    run: int
    instance_type: str
    instance_count: int
    trial_id: str
    launched_at: str
    job_id: str | None = None
    landed: bool = False
    trial_status: str | None = None
    stopped: bool = False


class PlanState(DomainModel):
    plan: TrialPlan
    status: str
    created_at: str
    updated_at: str
    fingerprint: str
    execution_arn: str | None = None
    created_by: str | None = Field(default=None, description="who submitted it (IAM ARN)")
    spent_usd: str | None = None
    outcome_reasons: list[str] = Field(default_factory=list)
    dropped: list[int] = Field(default_factory=list, description="candidates a gate stopped")
    runs: list[RunState] = Field(default_factory=list)
    gates: list[GateResult] = Field(default_factory=list)
