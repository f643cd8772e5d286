"""The workload: a model, its data, and the training target it must reach."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, StrictBool

from trncost.model.bounds import Gigabytes, MetricValue, Parameters, PerUnit, PositiveWorkAmount
from trncost.model.common import DomainModel, Identifier, Name


class WorkUnit(StrEnum):
    tokens = "tokens"
    samples = "samples"
    steps = "steps"


class TimingScope(DomainModel):
    """What a trial's clock includes. Two trials compare only if these match."""

    compile: StrictBool
    data_loading: StrictBool
    checkpoints: StrictBool
    evaluation: StrictBool

    def differences(self, other: TimingScope) -> list[str]:
        return [f for f in type(self).model_fields if getattr(self, f) != getattr(other, f)]


class Target(DomainModel):
    """An amount of work that, done, reaches the quality gate."""

    unit: WorkUnit
    amount: PositiveWorkAmount


class QualityGate(DomainModel):
    """The quality the target must reach, e.g. eval_loss at_most 2.1."""

    metric: Name
    threshold: MetricValue
    direction: Literal["at_least", "at_most"]

    def passes(self, value: float) -> bool:
        if self.direction == "at_least":
            return value >= self.threshold
        return value <= self.threshold


class ModelSpec(DomainModel):
    name: Name
    parameters: Parameters = Field(description="parameter count, e.g. 8.03e9")


class Workload(DomainModel):
    workload_id: Identifier
    name: Name | None = None
    model: ModelSpec
    code_version: Name
    dataset_id: Name
    target: Target
    quality_gate: QualityGate
    tokens_per_sample: PerUnit | None = None
    samples_per_step: PerUnit | None = Field(
        default=None,
        description="global batch size in samples (needed when work is counted in steps)",
    )
    dataset_gb: Gigabytes | None = Field(
        default=None, description="dataset size kept in S3 Standard for the run"
    )
    timing_scope: TimingScope | None = Field(
        default=None,
        description="what the workload's clock includes; trials on another clock are excluded "
        "(None: each candidate takes the clock most of its trials ran on)",
    )

    def units_per(self, unit: WorkUnit) -> float | None:
        """How many target units one `unit` of work is, or None if the workload cannot say."""
        if unit == self.target.unit:
            return 1.0
        pair = {unit, self.target.unit}
        if pair == {WorkUnit.samples, WorkUnit.steps} and self.samples_per_step is not None:
            return self.samples_per_step if unit == WorkUnit.steps else 1 / self.samples_per_step
        tokens = self.tokens_per(unit)
        target_tokens = self.tokens_per(self.target.unit)
        if tokens is None or target_tokens is None:
            return None
        return tokens / target_tokens

    def tokens_per(self, unit: WorkUnit) -> float | None:
        """Tokens in one `unit` of work, or None when the workload does not state it."""
        if unit == WorkUnit.tokens:
            return 1.0
        if self.tokens_per_sample is None:
            return None
        if unit == WorkUnit.samples:
            return self.tokens_per_sample
        if self.samples_per_step is None:
            return None
        return self.tokens_per_sample * self.samples_per_step

    @property
    def target_tokens(self) -> float | None:
        per = self.tokens_per(self.target.unit)
        return None if per is None else per * self.target.amount
