"""moto's Lambda, in-process: the local runtime's functions are its real handlers.

moto runs a Lambda function's code only in Docker; its Docker-less backend (config
`lambda.use_docker: false`) answers every invoke with the request's own body. `install()`
replaces that backend's invoke with a dispatch to the handler registered for the function's
name — the real module (lambdas/<name>/handler.py) called in this process — answered as the
Lambda service would: the handler's result as JSON, or its unhandled error as
`x-amz-function-error: Unhandled` with `{"errorType", "errorMessage"}` (what Step Functions
matches a state's Retry and Catch against). So moto's Step Functions, executing the real state
machine definition, reaches the real trial steps handler. A function nobody registered keeps
moto's own answer.

The moto server runs in this process (ThreadedMotoServer), so its backends are this process's:
the patch is process-wide, installed once, and dispatches by function name.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
Handler = Callable[[dict[str, Any], Any], Any]

_handlers: dict[str, tuple[Handler, Any]] = {}
_lock = threading.Lock()
_original: Callable[..., Any] | None = None


def function_name(name_or_arn: str) -> str:
    """`arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]` or a name → name."""
    parts = name_or_arn.split(":")
    if len(parts) >= 7 and parts[0] == "arn" and parts[5] == "function":
        return parts[6]
    return name_or_arn


def register(name_or_arn: str, handler: Handler, context: Any) -> None:
    install()
    with _lock:
        _handlers[function_name(name_or_arn)] = (handler, context)


def unregister(name_or_arn: str) -> None:
    with _lock:
        _handlers.pop(function_name(name_or_arn), None)


def invoke(name_or_arn: str, payload: Any) -> tuple[bytes, bool]:
    """Run the registered handler on the payload: (the answer, whether it is an error)."""
    with _lock:
        found = _handlers.get(function_name(name_or_arn))
    if found is None:
        raise KeyError(name_or_arn)
    handler, context = found
    if isinstance(payload, bytes | bytearray):
        payload = payload.decode("utf-8")
    event = json.loads(payload) if isinstance(payload, str) and payload else payload or {}
    try:
        result = handler(event, context)
    except Exception as exc:  # as the Lambda runtime reports an unhandled error
        log.info("%s: %s: %s", function_name(name_or_arn), type(exc).__name__, exc)
        error = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
        return json.dumps(error).encode(), True
    return json.dumps(result, default=str).encode(), False


def install() -> None:
    """Patch moto's Docker-less Lambda backend once (idempotent)."""
    global _original
    from moto.awslambda_simple.models import LambdaSimpleBackend

    with _lock:
        if _original is not None:
            return
        _original = LambdaSimpleBackend.invoke
        original = _original

    def dispatching_invoke(
        self: Any,
        function_name: str,
        qualifier: str | None,
        body: Any,
        headers: Any,
        response_headers: Any,
    ) -> str | bytes | None:
        try:
            answer, failed = invoke(function_name, body)
        except KeyError:
            return original(self, function_name, qualifier, body, headers, response_headers)
        if failed:
            response_headers["x-amz-function-error"] = "Unhandled"
        return answer

    LambdaSimpleBackend.invoke = dispatching_invoke  # type: ignore[method-assign]
