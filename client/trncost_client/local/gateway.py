"""API Gateway in front of the API Lambda, locally: HTTP (WSGI) → REST proxy event → handler →
HTTP response. Used by the local runtime's server and by in-process tests (schemathesis)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

ApiHandler = Callable[[dict[str, Any], Any], dict[str, Any]]
# API Gateway's own limit is 10 MB; Lambda takes a 6 MB request (the API: 1 MiB of JSON, 6 MB
# of trial logs or a billing export)
MAX_READ_BYTES = 6 * 1000 * 1000


def proxy_event(
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes | None,
    stage: str = "local",
) -> dict[str, Any]:
    params = parse_qsl(query, keep_blank_values=True)
    single = dict(params) or None
    multi: dict[str, list[str]] = {}
    for k, v in params:
        multi.setdefault(k, []).append(v)
    text, is_b64 = None, False
    if body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:  # as API Gateway does for binary bodies
            text, is_b64 = base64.b64encode(body).decode("ascii"), True
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": single,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": method,
            "path": path,  # served at the root: no stage in the URL path
            "stage": stage,
            "requestId": str(uuid.uuid4()),
            "accountId": "123456789012",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": text,
        "isBase64Encoded": is_b64,
    }


def response_parts(response: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    headers: list[tuple[str, str]] = []
    for k, v in (response.get("headers") or {}).items():
        headers.append((k, str(v)))
    for k, values in (response.get("multiValueHeaders") or {}).items():
        if any(h[0].lower() == k.lower() for h in headers):
            continue
        headers.extend((k, str(v)) for v in values)
    body = response.get("body") or ""
    raw = base64.b64decode(body) if response.get("isBase64Encoded") else body.encode("utf-8")
    return int(response["statusCode"]), headers, raw


class WsgiGateway:
    """A WSGI app that hands every request to the API handler as API Gateway would."""

    def __init__(self, handler: ApiHandler, context: Any) -> None:
        self.handler = handler
        self.context = context

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > MAX_READ_BYTES:
            # read what was sent (up to API Gateway's 10 MB) so the client is not cut off
            # mid-upload, then refuse it
            remaining = min(length, 10 * 1024 * 1024)
            while remaining > 0:
                chunk = environ["wsgi.input"].read(min(remaining, 65536))
                if not chunk:
                    break
                remaining -= len(chunk)
            body = b'{"error":"payload_too_large","message":"body: too large","fields":[]}'
            start_response("413 Payload Too Large", [("Content-Type", "application/json")])
            return [body]
        raw = environ["wsgi.input"].read(length) if length else None
        headers = {
            key[5:].replace("_", "-").title(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        event = proxy_event(
            environ["REQUEST_METHOD"],
            environ.get("PATH_INFO") or "/",
            environ.get("QUERY_STRING", ""),
            headers,
            raw,
        )
        status, out_headers, body = response_parts(self.handler(event, self.context))
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        start_response(f"{status} {phrase}", out_headers + [("Content-Length", str(len(body)))])
        return [body]
