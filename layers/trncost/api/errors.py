"""Errors → HTTP answers, in one place. Every error body is `ErrorBody` ({error, message,
fields}); nothing a client sends yields a 5xx, and a 5xx never shows a stack trace.

| raised                                        | status | error                  |
|-----------------------------------------------|--------|------------------------|
| request schema (Powertools, pydantic)         | 422    | validation_error       |
| MissingEvidence                               | 422    | missing_evidence       |
| LogFormatError (a log in no known format)     | 422    | unrecognised_log       |
| InvalidInput (BadCursor), PriceListItemError  | 422    | validation_error       |
| DomainError (anything else of the domain)     | 422    | domain_error           |
| NotFound, no such route                       | 404    | not_found              |
| Conflict                                      | 409    | conflict               |
| NoPrices                                      | 409    | no_price_snapshot      |
| LivePricesOff                                 | 409    | live_prices_off        |
| PublishRefused                                | 409    | publish_refused        |
| Unavailable (TransientError), and an AWS      | 503    | upstream_unavailable   |
| service still throttling or failing after     |        |                        |
| botocore's retries                            |        |                        |
| a body that is not UTF-8 JSON (or base64)     | 400    | bad_request            |
| a body over 1 MiB (6 MiB: a trial log import), | 413    | payload_too_large      |
| PayloadTooLarge (log text over its cap)       |        |                        |
| a POST/PUT/PATCH that is not JSON             | 415    | unsupported_media_type |
| anything else (a bug: logged with its trace)  | 500    | internal_error         |

`fields` names the fields at fault, dotted; the message names them too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from pydantic import ValidationError

from trncost import aws
from trncost.api.bodies import ErrorBody
from trncost.errors import (
    Conflict,
    DomainError,
    InvalidInput,
    LivePricesOff,
    LogFormatError,
    MissingEvidence,
    NoPrices,
    NotFound,
    PayloadTooLarge,
    PriceListItemError,
    PublishRefused,
    TrncostError,
    Unavailable,
    field_path,
    format_validation_error,
    validation_fields,
)

log = logging.getLogger(__name__)

# The domain's errors: (status, error code). The most specific class that matches wins.
STATUS: dict[type[TrncostError], tuple[int, str]] = {
    MissingEvidence: (422, "missing_evidence"),
    LogFormatError: (422, "unrecognised_log"),
    InvalidInput: (422, "validation_error"),
    PriceListItemError: (422, "validation_error"),
    DomainError: (422, "domain_error"),
    NotFound: (404, "not_found"),
    Conflict: (409, "conflict"),
    NoPrices: (409, "no_price_snapshot"),
    LivePricesOff: (409, "live_prices_off"),
    PublishRefused: (409, "publish_refused"),
    Unavailable: (503, "upstream_unavailable"),
    PayloadTooLarge: (413, "payload_too_large"),
}
UPSTREAM_MESSAGE = "an AWS service trncost depends on is throttling or failing; retry later"


def error(status: int, code: str, message: str, fields: list[str] | None = None) -> Response[str]:
    body = ErrorBody(error=code, message=message, fields=fields or [])
    return Response(
        status_code=status, content_type="application/json", body=body.model_dump_json()
    )


def domain_error(exc: TrncostError) -> Response[str]:
    """The answer to one of trncost's own errors (registered for each class in STATUS)."""
    status, code = next(STATUS[c] for c in type(exc).__mro__ if c in STATUS)
    if isinstance(exc, PriceListItemError):  # only a saved Price List upload reaches the API
        return error(status, code, f"saved_price_list: {exc.reason}", ["saved_price_list"])
    return error(status, code, str(exc), exc.fields)


def request_validation_error(exc: RequestValidationError) -> Response[str]:
    """The route's own request validation (path, query, body): 422 naming each field."""
    problems, fields = [], []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ())]
        if loc and loc[0] in ("body", "query", "path"):
            where = field_path(loc[1:]) or loc[0]
        else:
            where = field_path(loc)
        fields.append(where)
        problems.append(f"{where}: {err.get('msg')}")
    return error(422, "validation_error", "; ".join(problems) or "invalid request", fields)


def model_validation_error(exc: ValidationError) -> Response[str]:
    """A model built inside a route that does not validate (same answer as the schema's)."""
    return error(422, "validation_error", format_validation_error(exc), validation_fields(exc))


def no_route(exc: NotFoundError) -> Response[str]:
    return error(404, "not_found", "no such route")


def register(resolver: APIGatewayRestResolver) -> None:
    """Map every error above on `resolver` (the app, or a test's own resolver)."""
    handlers: list[tuple[type[Exception], Callable[[Any], Response[str]]]] = [
        (RequestValidationError, request_validation_error),
        (ValidationError, model_validation_error),
        (NotFoundError, no_route),
        *((cls, domain_error) for cls in STATUS),
    ]
    for cls, handler in handlers:
        resolver.exception_handler(cls)(handler)


def unexpected(exc: Exception, event: dict[str, Any]) -> Response[str]:
    """What escaped the routes: an AWS service failing after retries (503), else a bug (500,
    logged with its trace, answered without it)."""
    if aws.unavailable(exc):
        log.warning("AWS dependency failed after retries: %s", exc)
        return error(503, "upstream_unavailable", UPSTREAM_MESSAGE)
    log.exception("unhandled error in %s %s", event.get("httpMethod"), event.get("path"))
    return error(500, "internal_error", "internal error; it has been logged")
