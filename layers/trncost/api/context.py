"""What every route module shares: the wiring of the request being answered, a Router, and
the path and query parameters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from trncost.wiring import Wiring

Limit = Annotated[int, Query(ge=1, le=100, description="page size")]
Cursor = Annotated[str | None, Query(description="the next_cursor of the previous page")]
Id = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")]

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
