"""Every exception trncost raises on purpose, in one hierarchy (stdlib only: the pure engine,
the Lambdas, the agent and the CLI all import it).

    TrncostError
    ├── DomainError (ValueError)      well-formed, but the domain cannot answer it as asked
    │   ├── MissingEvidence           the trials do not hold what the estimate needs
    │   ├── NoPrices                  no price snapshot to estimate with
    │   ├── LogFormatError            a training log in no format trncost reads
    │   └── InvalidInput              a field the domain refuses, named in `fields`
    │       └── BadCursor             a pagination cursor this API did not hand out
    ├── NotFound (LookupError)        an id that names nothing
    ├── Conflict                      an id that is taken (records are written once)
    ├── LivePricesOff                 this deployment may not call the Price List API
    ├── PublishRefused                this stage does not publish uploaded prices as latest
    ├── Unavailable                   an AWS service failed after botocore's retries
    │   └── TransientError            ... and a later try may succeed (Step Functions retries it)
    ├── LaunchRejected                AWS refused a trial launch: recorded, not retried
    ├── Busy                          another delivery holds the ingest claim: come back later
    ├── PublishFailed                 EventBridge took the call but not the entry
    ├── UnusableEvent, RecordError, JobTagError, QueryError, ProtocolError   (ingest side)
    ├── PayloadTooLarge               a request part over its cap (a trial log): 413
    ├── PriceListItemError            a Price List item (or file) that cannot be used
    ├── RequestFileError, StepError, DefinitionError, OpsError
    └── ClientError                   the HTTP client (CLI): ConnectionFailed, SigningError,
                                      ApiError

The API maps these to status codes in one place (`trncost.api.errors`). Classes that were
ValueErrors or LookupErrors still are, so a caller catching those keeps working. The names
TransientError and LaunchRejected are part of the trial plan state machine (its Retry and Catch
match the Lambda's error type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # stdlib only at run time: the formatters below read what .errors() gives
    from pydantic import ValidationError


class TrncostError(Exception):
    """Base of every error trncost raises on purpose. `fields`: the request fields at fault,
    dotted (empty when the error is not about a field)."""

    def __init__(self, *args: object, fields: Sequence[str] | None = None) -> None:
        super().__init__(*args)
        self.fields: list[str] = list(fields or [])


# -- the domain ---------------------------------------------------------------------------------
class DomainError(TrncostError, ValueError):
    """The request is well-formed but the domain cannot answer it as asked."""


class MissingEvidence(DomainError):
    """An estimate needs evidence the trials do not hold. Never answered with a guess."""

    def __init__(self, message: str, missing: list[str]) -> None:
        super().__init__(message, fields=missing)
        self.missing = missing


class NoPrices(DomainError):
    """No price snapshot to estimate with."""


class InvalidInput(DomainError):
    """A request field the domain refuses (not a schema error: the value is valid on its own)."""

    def __init__(self, message: str, fields: Sequence[str] | None = None) -> None:
        super().__init__(message, fields=fields)


class BadCursor(InvalidInput):
    """A pagination cursor this API did not hand out."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ["cursor"])


class NotFound(TrncostError, LookupError):
    """An id that names nothing."""


class Conflict(TrncostError):
    """The id is taken: workloads, trials, estimates, snapshots and trial plans are written
    once (a trial plan's id with other content is a conflict too)."""

    def __init__(self, message: str, fields: Sequence[str] | None = None) -> None:
        super().__init__(message, fields=fields)


class LivePricesOff(TrncostError):
    """This deployment may not call the Price List API (upload a saved Price List instead)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, fields=["saved_price_list"])


class PublishRefused(TrncostError):
    """An upload asked to become the latest prices on a stage that does not allow it
    (`prices.accept_uploads` is false): nothing is stored."""

    def __init__(self, message: str) -> None:
        super().__init__(message, fields=["publish"])


# -- AWS ----------------------------------------------------------------------------------------
class Unavailable(TrncostError):
    """An AWS service trncost depends on failed after botocore's retries."""


class TransientError(Unavailable):
    """Try again later (throttling, a service's own 5xx). The state machine retries it."""


class LaunchRejected(TrncostError):
    """AWS refused the launch (capacity, quota, access, bad parameter): recorded, not retried."""


class Busy(TrncostError):
    """Another delivery of the same event holds the claim: come back later."""


class PublishFailed(TrncostError):
    """EventBridge accepted the call but not the entry."""


# -- ingest -------------------------------------------------------------------------------------
class UnusableEvent(TrncostError, ValueError):
    """The event cannot become a trial record; the reason is kept as a rejected ingest."""


class RecordError(TrncostError, ValueError):
    """The job cannot become a trial record (unknown status, no instance type, ...)."""


class JobTagError(TrncostError, ValueError):
    """The job does not say which workload or phase it belongs to (or says it wrongly)."""


class QueryError(TrncostError, ValueError):
    """A query that GetMetricData would reject (bad id, too many members, duplicate id)."""


class ProtocolError(TrncostError, ValueError):
    """A TRNCOST line (the trial agent's protocol) that is not a valid event."""


class LogFormatError(DomainError):
    """A training log trncost cannot read: `tried` lists each format and why it did not match."""

    def __init__(
        self, message: str, tried: Sequence[str], fields: Sequence[str] | None = None
    ) -> None:
        super().__init__(message, fields=list(fields or ["log"]))
        self.tried = list(tried)


class PayloadTooLarge(TrncostError):
    """A request part larger than its cap (the message says which and the cap)."""


# -- prices -------------------------------------------------------------------------------------
class PriceListItemError(TrncostError, ValueError):
    """A Price List item that cannot be used, with the reason."""

    def __init__(self, reason: str, sku: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sku = sku


# -- files, the trial workflow, operations --------------------------------------------------------
class RequestFileError(TrncostError, ValueError):
    """A request file that cannot be read or does not validate; the message names the field."""


class StepError(TrncostError, ValueError):
    """A trial step called with input it cannot act on (a bug in the definition or the plan)."""


class DefinitionError(TrncostError, ValueError):
    """A state machine substitution is missing, unknown, or renders an invalid definition."""


class OpsError(TrncostError):
    """Why an operation on the queues could not be done, in one line for the user."""


# -- the HTTP client (the CLI) ----------------------------------------------------------------
class ClientError(TrncostError):
    """Anything that stopped a request from getting an answer; the message is for the user."""


class ConnectionFailed(ClientError):
    """Nothing answered at the URL (refused, unknown host, timed out)."""


class SigningError(ClientError):
    """The request must be signed but cannot be (no credentials, no region)."""


class ApiError(ClientError):
    """The API answered with an error status; `code`, `message` and `fields` come from its
    error body ({"error", "message", "fields"}) or, for API Gateway's own errors
    ({"message"} / {"Message"}), from what it said."""

    def __init__(
        self, status: int, code: str, message: str, fields: list[str] | None = None
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        super().__init__(message, fields=fields)
        self.args = (str(self),)

    def __str__(self) -> str:
        where = f" [{', '.join(self.fields)}]" if self.fields else ""
        return f"{self.message}{where} (HTTP {self.status} {self.code})"


# -- pydantic validation errors, in words: the one formatter ----------------------------------
def field_path(loc: Sequence[object], prefix: str = "") -> str:
    """A validation error's location as a dotted field, under `prefix` ("" at the top)."""
    where = ".".join(str(p) for p in loc)
    return ".".join(p for p in (prefix, where) if p)


def validation_fields(exc: ValidationError, prefix: str = "") -> list[str]:
    """Every field at fault, dotted."""
    return [field_path(e["loc"], prefix) for e in exc.errors(include_url=False)]


def first_validation_problem(exc: ValidationError, prefix: str = "") -> tuple[str, str]:
    """(the first field at fault, its message), for a sentence that words them its own way."""
    first = exc.errors(include_url=False)[0]
    return field_path(first["loc"], prefix), first["msg"]


def first_validation_error(exc: ValidationError, prefix: str = "") -> tuple[str, str]:
    """(the first field at fault, "field: message") — what a 422 or a CLI line says."""
    field, message = first_validation_problem(exc, prefix)
    return field, f"{field or '(top level)'}: {message}"


def format_validation_error(exc: ValidationError, prefix: str = "") -> str:
    """Every problem as "field: message", joined by "; "."""
    return "; ".join(
        f"{field_path(e['loc'], prefix) or '(top level)'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )
