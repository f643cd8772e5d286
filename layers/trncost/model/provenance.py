"""Where a number comes from. Every input row and every line item carries one."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from trncost.model.basis import PriceBasis, PriceOrigin, basis_of_source
from trncost.model.common import DomainModel

# A name, id or path a trial figure was read from: bounded (a CloudWatch Logs group and stream
# together are at most 1,024 characters).
Text = Annotated[str, StringConstraints(max_length=2048)]


class ProvenanceKind(StrEnum):
    official_price = "official_price"
    trial_measurement = "trial_measurement"
    user_assumption = "user_assumption"
    published_reference = "published_reference"
    derived = "derived"
    pending = "pending"


class OfficialPrice(DomainModel):
    """A rate in the AWS Price List's format, read from a price snapshot. Whether trncost
    fetched it itself is its `basis`: only `official` was; `saved_file` and `example` came in
    a file."""

    kind: Literal["official_price"] = "official_price"
    snapshot_id: str
    source: str = Field(
        description="query_api | saved_price_list_file | capacity_block_query | example_file"
    )
    basis: PriceBasis = Field(description="official | saved_file | example (from the source)")
    origin: PriceOrigin | None = None
    sku: str
    rate_code: str
    effective_date: str | None = None
    publication_date: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _basis(cls, data: Any) -> Any:
        """Provenance stored before bases existed takes its source's."""
        if isinstance(data, dict) and data.get("basis") is None:
            return {**data, "basis": basis_of_source(str(data.get("source", "")))}
        return data


MAX_LINE_RANGES = 20


class LineRange(DomainModel):
    """Lines first..last (1-based, inclusive) of a log file, or entries of a JSON log."""

    first: int = Field(ge=1)
    last: int = Field(ge=1)


class MeasuredIn(DomainModel):
    """Where one trial figure was read: a log (file, format, lines), the trial agent's
    metrics, or the job's own description (SageMaker DescribeTrainingJob, the job event)."""

    source: Literal["log", "agent_metrics", "training_job", "job_event"]
    file: Text | None = Field(
        default=None, description="the log file, CloudWatch Logs group/stream, or namespace"
    )
    format: Text | None = Field(default=None, description="log format, or the metric read")
    lines: list[LineRange] = Field(
        default_factory=list,
        max_length=MAX_LINE_RANGES,
        description=f"line ranges read (at most {MAX_LINE_RANGES}; the last one absorbs the rest)",
    )
    line_count: int | None = Field(default=None, ge=0, description="lines read in all")


class TrialMeasurement(DomainModel):
    """A figure measured in one or more trial runs."""

    kind: Literal["trial_measurement"] = "trial_measurement"
    trial_ids: list[Text] = Field(min_length=1)
    metric: Text
    code_versions: list[Text] = Field(default_factory=list)
    dataset_ids: list[Text] = Field(default_factory=list)
    measured_in: list[MeasuredIn] = Field(
        default_factory=list, description="where it was read (empty: not said)"
    )


class UserAssumption(DomainModel):
    """A figure the user stated: negotiated rates, engineer cost, idle share, volumes..."""

    kind: Literal["user_assumption"] = "user_assumption"
    name: str
    note: str | None = None
    given_by: Literal["shared", "candidate"] | None = Field(
        default=None,
        description="in a comparison: stated in the shared assumptions or by this candidate",
    )


class PublishedReference(DomainModel):
    """A figure from named public sources (e.g. fleet failure rates, multi-node scaling)."""

    kind: Literal["published_reference"] = "published_reference"
    sources: list[str] = Field(min_length=1, description="each source: title, URL, date")
    figure: str = Field(description="what was taken from them and how it was combined")
    data_file: str | None = Field(
        default=None, description="the data file in trncost that holds the figures"
    )


class Derived(DomainModel):
    """A figure computed by a formula over other input rows (named by their ids)."""

    kind: Literal["derived"] = "derived"
    formula: str
    inputs: list[str] = Field(default_factory=list)


class Pending(DomainModel):
    """No official basis yet: never 0, never guessed."""

    kind: Literal["pending"] = "pending"
    reason: str
    price_key: str | None = None


Provenance = Annotated[
    OfficialPrice | TrialMeasurement | UserAssumption | PublishedReference | Derived | Pending,
    Field(discriminator="kind"),
]


# Fast constructors for the engine's hot path: the engine builds these from values it has
# already validated, so they skip re-validation (the estimate round-trip tests cover them).
def derived(formula: str, inputs: list[str]) -> Derived:
    return Derived.model_construct(formula=formula, inputs=inputs)


def measured(
    trial_ids: list[str], metric: str, code_versions: list[str], dataset_ids: list[str]
) -> TrialMeasurement:
    # every field given: model_construct inspects a default_factory's signature on each call
    return TrialMeasurement.model_construct(
        trial_ids=trial_ids,
        metric=metric,
        code_versions=code_versions,
        dataset_ids=dataset_ids,
        measured_in=[],
    )


def assumed(name: str, note: str | None = None) -> UserAssumption:
    return UserAssumption.model_construct(name=name, note=note)
