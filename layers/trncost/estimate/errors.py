"""Domain errors the engine raises. The API maps them to 4xx with their message."""

from __future__ import annotations


class DomainError(ValueError):
    """The request is well-formed but the domain cannot answer it as asked."""


class MissingEvidence(DomainError):
    """An estimate needs evidence the trials do not hold. Never answered with a guess."""

    def __init__(self, message: str, missing: list[str]) -> None:
        super().__init__(message)
        self.missing = missing
