"""A candidate: where and how the training would run."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, StrictBool, model_validator

from trncost.model.bounds import MAX_COUNT, Numeric
from trncost.model.common import DomainModel, InstanceType, Name, Region


class PurchaseOption(StrEnum):
    on_demand = "on_demand"
    capacity_block = "capacity_block"
    savings_plan = "savings_plan"


class Precision(StrEnum):
    """The number format of the training's matrix math (what the chip's peak is quoted at)."""

    bf16 = "bf16"
    fp16 = "fp16"
    tf32 = "tf32"
    fp32 = "fp32"
    fp8 = "fp8"
    mxfp8 = "mxfp8"
    mxfp4 = "mxfp4"


class Platform(StrEnum):
    ec2 = "ec2"
    sagemaker = "sagemaker"


class Parallelism(DomainModel):
    tensor: int = Field(default=1, ge=1, le=MAX_COUNT)
    pipeline: int = Field(default=1, ge=1, le=MAX_COUNT)
    data: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    expert: int = Field(default=1, ge=1, le=MAX_COUNT)
    sequence: StrictBool = False


class Candidate(DomainModel):
    instance_type: InstanceType
    instance_count: Annotated[int, Numeric] = Field(ge=1, le=100_000)
    region: Region
    purchase_option: PurchaseOption = PurchaseOption.on_demand
    platform: Platform = Platform.ec2
    parallelism: Parallelism = Field(default_factory=Parallelism)
    framework: Name | None = None
    framework_version: Name | None = None
    neuron_sdk_version: Name | None = None
    precision: Precision | None = Field(
        default=None,
        description="the matrix-math precision (bf16, fp16, tf32, fp32, fp8, mxfp8, mxfp4): the "
        "MFU check reads the chip's peak at it; None: not stated",
    )

    @model_validator(mode="before")
    @classmethod
    def _ml_types_run_on_sagemaker(cls, data: Any) -> Any:
        """An `ml.` type exists only on SageMaker: its platform is sagemaker, so that its
        trials (recorded as SageMaker runs) and its prices (AmazonSageMaker) are its own."""
        if isinstance(data, dict) and str(data.get("instance_type", "")).startswith("ml."):
            return {**data, "platform": Platform.sagemaker.value}
        return data

    @property
    def on_sagemaker(self) -> bool:
        """Billed by SageMaker (the platform says so, or the type is an `ml.` type):
        billable seconds, AmazonSageMaker prices."""
        return self.platform == Platform.sagemaker or self.instance_type.startswith("ml.")

    @property
    def accelerator(self) -> str:
        """`neuron` for Trainium/Inferentia families, `gpu` otherwise."""
        family = self.instance_type.removeprefix("ml.").split(".")[0]
        return "neuron" if family.startswith(("trn", "inf")) else "gpu"

    @property
    def label(self) -> str:
        return (
            f"{self.instance_count}× {self.instance_type} ({self.region}, {self.purchase_option})"
        )
