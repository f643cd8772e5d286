"""Powertools' Tracer, made on first use instead of at import.

`Tracer()` imports the X-Ray SDK and patches botocore (and requests, httplib...) when it is
made: ~75 ms of a cold start before the first request, whether or not a trace is sampled.
`LazyTracer` keeps the same decorators but makes the Tracer on the first invocation (before the
handler runs, so every boto3 client, made lazily in the handler, is patched), or before a
SnapStart snapshot (`tracer.tracer` in a before-snapshot hook), so a restored sandbox pays
nothing for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

F = TypeVar("F", bound=Callable[..., Any])


class LazyTracer:
    def __init__(self, **options: Any) -> None:
        self._options = options
        self._tracer: Tracer | None = None

    @property
    def made(self) -> bool:
        return self._tracer is not None

    @property
    def tracer(self) -> Tracer:
        """The Tracer, made (and the AWS SDK patched) on first use."""
        if self._tracer is None:
            from aws_lambda_powertools import Tracer

            self._tracer = Tracer(**self._options)
        return self._tracer

    def capture_lambda_handler(self, handler: F) -> F:
        """`Tracer.capture_lambda_handler`, applied on the first invocation."""
        traced: Callable[..., Any] | None = None

        @functools.wraps(handler)
        def wrapper(event: Any, context: Any) -> Any:
            nonlocal traced
            if traced is None:
                traced = self.tracer.capture_lambda_handler(handler)
            return traced(event, context)

        return wrapper  # type: ignore[return-value]

    def capture_method(self, method: F) -> F:
        """`Tracer.capture_method`, applied on the first call."""
        traced: Callable[..., Any] | None = None

        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal traced
            if traced is None:
                traced = self.tracer.capture_method(method)
            return traced(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
