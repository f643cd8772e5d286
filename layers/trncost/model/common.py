"""Shared field types and the base model every domain model uses."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# Money is Decimal end to end: never a float, never NaN or infinite.
Money = Annotated[Decimal, Field(allow_inf_nan=False)]

# Physical quantities may be float, but never NaN or infinite.
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]

Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/+-]*$")
]
Name = Annotated[str, StringConstraints(min_length=1, max_length=256, strip_whitespace=True)]
Region = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$")]
InstanceType = Annotated[
    str, StringConstraints(pattern=r"^(ml\.)?[a-z][a-z0-9-]*\.[a-z0-9-]+$", max_length=64)
]


class DomainModel(BaseModel):
    """Strict about unknown fields so a typo never silently drops an input."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, str_strip_whitespace=True, defer_build=True
    )
