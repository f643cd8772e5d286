"""A trial run: what one fit, baseline or target run measured, end to end."""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any

from pydantic import Field, StrictBool, StringConstraints, model_validator

from trncost.model.bounds import (
    Count,
    Gigabytes,
    InstanceSeconds,
    MetricValue,
    Seconds,
    Throughput,
    WorkAmount,
)
from trncost.model.candidate import Candidate
from trncost.model.common import (
    MAX_TEXT_ITEMS,
    DomainModel,
    Fraction,
    Identifier,
    Label,
    Name,
    Note,
)
from trncost.model.provenance import TrialMeasurement
from trncost.model.workload import TimingScope, WorkUnit

__all__ = [
    "Checkpointing",
    "Phase",
    "QualityResult",
    "Reliability",
    "Retraction",
    "TimingScope",
    "TrialRun",
    "TrialStatus",
    "Usage",
    "Utilization",
    "WallTime",
    "Work",
]


MAX_THROUGHPUT_SAMPLES = 10_000


class Phase(StrEnum):
    fit = "fit"
    baseline = "baseline"
    target = "target"


class TrialStatus(StrEnum):
    completed = "completed"
    failed = "failed"
    diverged = "diverged"
    stopped = "stopped"


class WallTime(DomainModel):
    """End-to-end wall time, split. None means not measured (never 0 by default)."""

    compile_s: Seconds | None = None
    compile_cache_hit: StrictBool | None = None
    warmup_s: Seconds | None = None
    steady_s: Seconds
    data_wait_s: Seconds | None = None
    checkpoint_save_s: Seconds | None = None
    checkpoint_restore_s: Seconds | None = None
    evaluation_s: Seconds | None = None
    restart_s: Seconds | None = None
    other_s: Seconds | None = None

    @cached_property
    def total_s(self) -> float:
        parts = (
            self.compile_s,
            self.warmup_s,
            self.steady_s,
            self.data_wait_s,
            self.checkpoint_save_s,
            self.checkpoint_restore_s,
            self.evaluation_s,
            self.restart_s,
            self.other_s,
        )
        return sum(p for p in parts if p is not None)


class Work(DomainModel):
    unit: WorkUnit
    done: WorkAmount
    quality_meeting: WorkAmount = Field(
        description="work that counts toward the target (diverged or discarded work excluded)"
    )
    warmup: WorkAmount | None = Field(
        default=None,
        description="work done during the warm-up (wall.warmup_s), included in done and "
        "quality_meeting; steady throughput leaves it out with the warm-up seconds. None: not "
        "counted apart (the steady clock then includes the warm-up seconds)",
    )

    @model_validator(mode="after")
    def _quality_within_done(self) -> Work:
        if self.quality_meeting > self.done:
            raise ValueError("work.quality_meeting cannot exceed work.done")
        if self.warmup is not None and self.warmup > self.done:
            raise ValueError("work.warmup cannot exceed work.done")
        return self


class Utilization(DomainModel):
    neuroncore: Fraction | None = Field(
        default=None, description="mean NeuronCore utilization, 0..1"
    )
    gpu: Fraction | None = Field(default=None, description="mean GPU utilization, 0..1")
    device_memory_gb: Gigabytes | None = None


class Reliability(DomainModel):
    errors: Count = 0
    failures: Count | None = Field(
        default=0,
        description="interruptions that needed a restart; null: not known (a job read without "
        "the trial agent): the trial then adds no exposure to the failure rate",
    )
    reruns: Count = Field(default=0, description="whole reruns of this trial")
    rerun_s: Seconds = Field(default=0.0, description="wall seconds spent in reruns")
    unsupported_ops: list[Label] = Field(default_factory=list, max_length=MAX_TEXT_ITEMS)


class Checkpointing(DomainModel):
    saves: Count = 0
    size_gb: Gigabytes | None = None
    restore_verified: StrictBool | None = None


class QualityResult(DomainModel):
    metric: Name
    value: MetricValue
    loss_finite: StrictBool | None = Field(
        default=True, description="the loss stayed finite (None: it was not checked)"
    )


class Usage(DomainModel):
    """Supporting-resource usage during the trial. None means not measured."""

    transfer_out_gb: Gigabytes | None = None
    transfer_inter_region_gb: Gigabytes | None = None
    log_ingest_gb: Gigabytes | None = None
    custom_metrics: Count | None = None
    storage_gb: Gigabytes | None = Field(
        default=None, description="GB the run kept in S3 besides checkpoints (artifacts, exports)"
    )


class Retraction(DomainModel):
    """Why a record no longer counts: it stays stored and readable, marked with who retracted
    it, when and why (and the record that corrects it, when one does)."""

    at: str = Field(description="when it was retracted (ISO 8601, UTC)")
    by: str | None = Field(default=None, description="who retracted it (IAM ARN)")
    reason: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    superseded_by: Identifier | None = Field(
        default=None, description="the corrected record that replaces it"
    )


class TrialRun(DomainModel):
    trial_id: Identifier
    workload_id: Identifier
    phase: Phase
    status: TrialStatus
    candidate: Candidate
    timing_scope: TimingScope
    work: Work
    wall: WallTime
    steady_throughput_samples: list[Throughput] = Field(
        default_factory=list,
        max_length=MAX_THROUGHPUT_SAMPLES,
        description="work units per second at the trial's instance count",
    )
    utilization: Utilization = Field(default_factory=Utilization)
    reliability: Reliability = Field(default_factory=Reliability)
    checkpointing: Checkpointing = Field(default_factory=Checkpointing)
    quality: QualityResult | None = None
    usage: Usage = Field(default_factory=Usage)
    code_version: Name
    dataset_id: Name
    framework_version: Name | None = None
    neuron_sdk_version: Name | None = None
    notes: list[Note] = Field(
        default_factory=list,
        max_length=MAX_TEXT_ITEMS,
        description="what was not measured, and how the record coped",
    )
    billed_instance_seconds: InstanceSeconds | None = Field(
        default=None, description="as billed (e.g. SageMaker BillableTimeInSeconds × InstanceCount)"
    )
    provenance: dict[Label, TrialMeasurement] = Field(
        default_factory=dict,
        max_length=MAX_TEXT_ITEMS,
        description="where each measured figure was read, by its dotted field name (e.g. "
        "work.done, wall.compile_s); a figure not listed was not measured, or comes from the "
        "record's rules (see the notes)",
    )
    supersedes: Identifier | None = Field(
        default=None,
        description="the trial id (same workload) this record corrects: recording it retracts "
        "that one, which then names this record as superseded_by",
    )
    retracted: Retraction | None = Field(
        default=None,
        description="set by trncost when the record is retracted (POST "
        "/workloads/{id}/trials/{trial_id}/retract, or superseded): it then counts in no "
        "estimate, neither as evidence nor as cost; never part of a request",
    )

    @model_validator(mode="before")
    @classmethod
    def _precision_and_divergence(cls, data: Any) -> Any:
        """`precision` at the top level goes to the candidate (where it lives); a completed run
        whose loss went non-finite is `diverged`, with a note."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "precision" in data:
            cand = data.get("candidate")
            precision = data.pop("precision")
            if isinstance(cand, dict):
                if cand.get("precision") not in (None, precision):
                    raise ValueError(
                        f"precision {precision!r} differs from candidate.precision "
                        f"{cand['precision']!r}: give it once"
                    )
                data["candidate"] = {**cand, "precision": precision}
        quality = data.get("quality")
        finite = quality.get("loss_finite") if isinstance(quality, dict) else None
        if isinstance(quality, QualityResult):
            finite = quality.loss_finite
        if data.get("status") in ("completed", TrialStatus.completed) and finite is False:
            data["status"] = TrialStatus.diverged.value
            data["notes"] = [
                *data.get("notes", []),
                "recorded as completed, but the loss went non-finite: diverged",
            ]
        return data

    @model_validator(mode="after")
    def _scope_matches_split(self) -> TrialRun:
        scoped = {
            "compile": self.wall.compile_s,
            "data_loading": self.wall.data_wait_s,
            "checkpoints": self.wall.checkpoint_save_s,
            "evaluation": self.wall.evaluation_s,
        }
        for flag, seconds in scoped.items():
            if not getattr(self.timing_scope, flag) and seconds:
                raise ValueError(
                    f"timing_scope.{flag} is false but the wall time records {seconds} s for it"
                )
        return self

    @property
    def precision(self) -> str | None:
        """The run's matrix-math precision (candidate.precision), None when not stated."""
        return None if self.candidate.precision is None else self.candidate.precision.value

    @property
    def steady_work(self) -> float:
        """Quality-meeting work on the steady clock: without the warm-up's work when it was
        counted apart (`work.warmup`), else all of it (the clock then holds the warm-up)."""
        if self.work.warmup is None:
            return self.work.quality_meeting
        return max(self.work.quality_meeting - self.work.warmup, 0.0)

    @property
    def steady_clock_s(self) -> float:
        """The seconds `steady_work` was done in: steady + data-wait, + the warm-up when its
        work was not counted apart (work and time cover the same window)."""
        clock = self.wall.steady_s + (self.wall.data_wait_s or 0.0)
        if self.work.warmup is None:
            clock += self.wall.warmup_s or 0.0
        return clock

    @cached_property
    def instance_hours(self) -> float:
        return self.candidate.instance_count * (self.wall.total_s + self.reliability.rerun_s) / 3600

    @property
    def usable_for_throughput(self) -> bool:
        return (
            self.phase != Phase.fit
            and self.status == TrialStatus.completed
            and self.work.quality_meeting > 0
            and self.wall.steady_s > 0
        )
