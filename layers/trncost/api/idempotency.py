"""`Idempotency-Key` on every create (issue 23): the same key and the same body answer what the
first request did (the same resource, never a second one); the same key with another body is a
409; a key whose first request is still running is a 409 to retry. Without the header, a POST
runs as it is.

The record is per caller and route (trncost.store.idempotency): one caller's key never answers
another's request. Only a 2xx is remembered: a 4xx or 5xx created nothing, so the key is freed
and the same request may be sent again. The key is a 1-128 character id (trncost.ids' pattern);
anything else is a 400 naming the header.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any, Protocol

from trncost.api.context import caller_arn
from trncost.api.errors import error
from trncost.ids import ID_MAX_LENGTH, ID_PATTERN

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
_KEY = re.compile(ID_PATTERN)
NOT_CREATES = ("/report",)
SETTLE_TRIES = (
    3  # each with botocore's own retries  # POSTs that render, store nothing: no key needed or kept
)


class Remembered(Protocol):
    @property
    def body_hash(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def response_status(self) -> int | None: ...
    @property
    def response_body(self) -> str | None: ...


class KeyStore(Protocol):
    """What the wiring's idempotency store does (trncost.store.idempotency)."""

    def claim(self, request_key: str, body_hash: str, now: int) -> Remembered | None: ...
    def done(self, request_key: str, status: int, body: str) -> bool: ...
    def release(self, request_key: str) -> None: ...


def _header(event: dict[str, Any]) -> str | None:
    for name, value in (event.get("headers") or {}).items():
        if name.lower() == HEADER.lower() and value is not None:
            return str(value)
    return None


def _body_hash(text: str | None) -> str:
    canonical = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":")) if text else ""
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _request_key(event: dict[str, Any], key: str) -> str:
    scope = "\n".join([caller_arn(event), "POST", str(event.get("path") or ""), key])
    return hashlib.sha256(scope.encode()).hexdigest()


def applies(event: dict[str, Any]) -> bool:
    path = str(event.get("path") or "").rstrip("/")
    return event.get("httpMethod") == "POST" and not path.endswith(NOT_CREATES)


def run_once(
    event: dict[str, Any],
    store: KeyStore,
    resolve: Callable[[], dict[str, Any]],
    proxy: Callable[[Any], dict[str, Any]],
    now: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """Answer `event` (a POST whose body passed the precheck) once per Idempotency-Key."""
    key = _header(event)
    if key is None or not applies(event):
        return resolve()
    if not (0 < len(key) <= ID_MAX_LENGTH and _KEY.match(key)):
        return proxy(
            error(
                400,
                "bad_request",
                f"{HEADER}: 1-{ID_MAX_LENGTH} letters, digits and . _ : + - (a UUID will do)",
                [HEADER],
            )
        )
    body_hash = _body_hash(event.get("body"))
    request_key = _request_key(event, key)
    remembered = store.claim(request_key, body_hash, int(now()))
    if remembered is not None:
        if remembered.body_hash != body_hash:
            return proxy(
                error(
                    409,
                    "conflict",
                    f"{HEADER}: {key} was sent before with another body; a new request "
                    "needs a new key",
                    [HEADER],
                )
            )
        if remembered.status != "done" or remembered.response_status is None:
            return proxy(
                error(
                    409,
                    "conflict",
                    f"{HEADER}: the first request with {key} is still being answered; retry",
                    [HEADER],
                )
            )
        return {
            "statusCode": remembered.response_status,
            "headers": {"Content-Type": "application/json", REPLAYED_HEADER: "true"},
            "multiValueHeaders": {},
            "body": remembered.response_body or "",
            "isBase64Encoded": False,
        }
    try:
        response = resolve()
    except BaseException:
        _settle(lambda: store.release(request_key), key)
        raise
    status = int(response.get("statusCode", 500))
    if 200 <= status < 300:
        _settle(lambda: store.done(request_key, status, str(response.get("body") or "")), key)
    else:
        _settle(lambda: store.release(request_key), key)
    return response


def _settle(step: Callable[[], object], key: str, tries: int = SETTLE_TRIES) -> None:
    """Keep the answer (or free the key), a few times over: the request is answered whatever
    happens here; if DynamoDB never takes it, the key's lease frees it (a retry until then is
    a 409 to retry)."""
    for attempt in range(tries):
        try:
            step()
            return
        except Exception as exc:  # noqa: BLE001 - see above
            if attempt == tries - 1:
                log.warning("%s %s: not settled (%s); its lease frees it", HEADER, key, exc)
