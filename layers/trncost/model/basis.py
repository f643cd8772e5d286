"""Where a price comes from, and how far it can be trusted: its basis, and the origin record
that makes the basis checkable.

    official    fetched by trncost itself from the AWS Price List Query API (or EC2
                DescribeCapacityBlockOfferings): the request time, endpoint and filters
    saved_file  a Price List file a person supplied: official format, unverified origin; its
                sha256, who supplied it and their note
    example     the illustrative file bundled with trncost (the local runtime, the examples)
    assumed     a user override (a negotiated rate, a what-if)

Strongest first. An estimate's `price_basis` is the weakest basis among its priced lines, so
"every priced line is official" is one check: `price_basis == "official"`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from trncost.model.common import DomainModel, Note


class PriceBasis(StrEnum):
    official = "official"
    saved_file = "saved_file"
    example = "example"
    assumed = "assumed"

    @property
    def strength(self) -> int:
        """3 official, 2 saved_file, 1 example, 0 assumed."""
        return _STRENGTH[self]

    @property
    def label(self) -> str:
        return _LABEL[self]


_STRENGTH = {
    PriceBasis.official: 3,
    PriceBasis.saved_file: 2,
    PriceBasis.example: 1,
    PriceBasis.assumed: 0,
}
_LABEL = {
    PriceBasis.official: "official price",
    PriceBasis.saved_file: "saved-file price",
    PriceBasis.example: "example price",
    PriceBasis.assumed: "assumed price",
}


def weakest(bases: Iterable[PriceBasis | None]) -> PriceBasis | None:
    """The weakest of `bases` (None entries, the unpriced, are skipped); None when none."""
    known = [b for b in bases if b is not None]
    return min(known, key=lambda b: b.strength) if known else None


def capped(basis: PriceBasis, ceiling: PriceBasis) -> PriceBasis:
    """`basis`, or `ceiling` when `basis` claims more than it may."""
    return basis if basis.strength <= ceiling.strength else ceiling


# The snapshot sources (how a snapshot was taken) and the basis each one carries.
SOURCE_BASIS: dict[str, PriceBasis] = {
    "query_api": PriceBasis.official,
    "capacity_block_query": PriceBasis.official,
    "saved_price_list_file": PriceBasis.saved_file,
    "example_file": PriceBasis.example,
}


def basis_of_source(source: str) -> PriceBasis:
    """The basis a snapshot source carries; an unknown source is at most a saved file."""
    return SOURCE_BASIS.get(source, PriceBasis.saved_file)


class QueryFilter(DomainModel):
    """One filter of a Price List query, as sent (`GetProducts` Filters)."""

    type: str
    field: str
    value: str


class OfficialOrigin(DomainModel):
    """trncost asked AWS itself: when, where, and with which filters."""

    basis: Literal["official"] = "official"
    requested_at: str = Field(description="when trncost made the request (UTC, ISO 8601)")
    endpoint: str = Field(description="the AWS endpoint that answered")
    operation: str = Field(description="pricing:GetProducts | ec2:DescribeCapacityBlockOfferings")
    service_code: str | None = None
    filters: list[QueryFilter] = Field(default_factory=list)


class SavedFileOrigin(DomainModel):
    """A person supplied a Price List file: the file's digest, who, when and why."""

    basis: Literal["saved_file"] = "saved_file"
    sha256: str = Field(min_length=64, max_length=64)
    supplied_by: str = Field(description="the caller's IAM ARN behind API Gateway; 'local' locally")
    supplied_at: str
    note: Note | None = None


class ExampleOrigin(DomainModel):
    """The illustrative file bundled with trncost."""

    basis: Literal["example"] = "example"
    file: str
    sha256: str | None = None
    note: Note | None = None


PriceOrigin = Annotated[
    OfficialOrigin | SavedFileOrigin | ExampleOrigin, Field(discriminator="basis")
]
