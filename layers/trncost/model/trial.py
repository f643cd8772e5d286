"""A trial run: what one fit, baseline or target run measured, end to end."""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property

from pydantic import Field, model_validator

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
from trncost.model.common import DomainModel, Fraction, Identifier, Name
from trncost.model.provenance import TrialMeasurement
from trncost.model.workload import WorkUnit


class Phase(StrEnum):
    fit = "fit"
    baseline = "baseline"
    target = "target"


class TrialStatus(StrEnum):
    completed = "completed"
    failed = "failed"
    diverged = "diverged"
    stopped = "stopped"


class TimingScope(DomainModel):
    """What the trial's clock includes. Two trials compare only if these match."""

    compile: bool
    data_loading: bool
    checkpoints: bool
    evaluation: bool

    def differences(self, other: TimingScope) -> list[str]:
        return [f for f in type(self).model_fields if getattr(self, f) != getattr(other, f)]


class WallTime(DomainModel):
    """End-to-end wall time, split. None means not measured (never 0 by default)."""

    compile_s: Seconds | None = None
    compile_cache_hit: bool | None = None
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

    @model_validator(mode="after")
    def _quality_within_done(self) -> Work:
        if self.quality_meeting > self.done:
            raise ValueError("work.quality_meeting cannot exceed work.done")
        return self


class Utilization(DomainModel):
    neuroncore: Fraction | None = Field(
        default=None, description="mean NeuronCore utilization, 0..1"
    )
    gpu: Fraction | None = Field(default=None, description="mean GPU utilization, 0..1")
    device_memory_gb: Gigabytes | None = None


class Reliability(DomainModel):
    errors: Count = 0
    failures: Count = Field(default=0, description="interruptions that needed a restart")
    reruns: Count = Field(default=0, description="whole reruns of this trial")
    rerun_s: Seconds = Field(default=0.0, description="wall seconds spent in reruns")
    unsupported_ops: list[str] = Field(default_factory=list)


class Checkpointing(DomainModel):
    saves: Count = 0
    size_gb: Gigabytes | None = None
    restore_verified: bool | None = None


class QualityResult(DomainModel):
    metric: Name
    value: MetricValue
    loss_finite: bool | None = Field(
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
        default_factory=list, description="work units per second at the trial's instance count"
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
    notes: list[str] = Field(
        default_factory=list, description="what was not measured, and how the record coped"
    )
    billed_instance_seconds: InstanceSeconds | None = Field(
        default=None, description="as billed (e.g. SageMaker BillableTimeInSeconds × InstanceCount)"
    )
    provenance: dict[str, TrialMeasurement] = Field(
        default_factory=dict,
        description="where each measured figure was read, by its dotted field name (e.g. "
        "work.done, wall.compile_s); a figure not listed was not measured, or comes from the "
        "record's rules (see the notes)",
    )

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
