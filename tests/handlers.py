"""Lambda handlers as the runtime loads them, a LambdaContext stand-in, and API events."""

from __future__ import annotations

from dataclasses import dataclass

from trncost.local.handlers import load_handler

__all__ = ["FakeContext", "api_event", "load_handler"]


@dataclass
class FakeContext:
    function_name: str = "trncost-test"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:trncost-test"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"


def api_event(
    method: str,
    path: str,
    body: object = None,
    *,
    query: dict | None = None,
    headers: dict | None = None,
    raw_body: str | None = None,
    base64_body: bool = False,
) -> dict:
    """An API Gateway REST (proxy integration) event, as the API Lambda receives it."""
    import json as _json

    if raw_body is not None:
        text = raw_body
    elif body is not None:
        text = _json.dumps(body)
    else:
        text = None
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": {"Content-Type": "application/json", **(headers or {})},
        "multiValueHeaders": {},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {k: [v] for k, v in (query or {}).items()} or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": method,
            "path": f"/dev{path}",
            "stage": "dev",
            "requestId": "req-1",
            "accountId": "123456789012",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": text,
        "isBase64Encoded": base64_body,
    }
