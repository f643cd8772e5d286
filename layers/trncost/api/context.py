"""What every route module shares: the wiring of the request being answered, a Router, the
path and query parameters, and who is calling (`caller_arn`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from trncost.ids import ID_MAX_LENGTH, ID_PATTERN
from trncost.wiring import Wiring

Limit = Annotated[int, Query(ge=1, le=100, description="page size")]
Cursor = Annotated[str | None, Query(description="the next_cursor of the previous page")]
Id = Annotated[str, Path(min_length=1, max_length=ID_MAX_LENGTH, pattern=ID_PATTERN)]

LOCAL_CALLER = "local"  # the caller of a request that API Gateway did not authenticate

_current: ContextVar[Wiring | None] = ContextVar("trncost_api_wiring", default=None)


def services() -> Wiring:
    """The wiring of the request being answered (`trncost.api.app.handle` binds the API
    Lambda's own; a test binds one with `serving`)."""
    current = _current.get()
    if current is None:
        raise RuntimeError("no services bound: answer requests inside api.context.serving()")
    return current


@contextmanager
def serving(wiring: Wiring) -> Iterator[None]:
    """Answer the requests of this thread (or task) with `wiring`'s services."""
    token = _current.set(wiring)
    try:
        yield
    finally:
        _current.reset(token)


def router() -> Router:
    return Router()


def caller_arn(event: Mapping[str, Any]) -> str:
    """Who sent this API request: the IAM ARN API Gateway authenticated it as
    (`requestContext.identity.userArn`, present on every request with IAM auth), or `local`
    when there is none (the local runtime, which authenticates nobody). Every write stores it
    and answers with it."""
    context = event.get("requestContext")
    identity = context.get("identity") if isinstance(context, Mapping) else None
    arn = identity.get("userArn") if isinstance(identity, Mapping) else None
    return arn if isinstance(arn, str) and arn.strip() else LOCAL_CALLER


def caller(routes: Router) -> str:
    """The caller of the request `routes` is answering."""
    return caller_arn(routes.current_event.raw_event)


def public_path(routes: Router, path: str) -> str:
    """`path` (a route's path, e.g. /comparisons/x) as the client reaches it: behind an API
    Gateway stage the URL path carries the stage first (/dev/comparisons/x), which the event's
    `requestContext.path` shows beside the route's own `path`."""
    event = routes.current_event.raw_event
    context = event.get("requestContext")
    full = context.get("path") if isinstance(context, Mapping) else None
    own = str(event.get("path") or "")
    if isinstance(full, str) and own and full.endswith(own):
        return full[: len(full) - len(own)] + path
    return path
