"""Lambda handlers as the runtime loads them, the environment they find, a LambdaContext
stand-in, API events, and schemathesis over the API."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from trncost.settings import CATALOG_ENV, TABLE_NAME_ENV
from trncost_client.local.handlers import load_handler

__all__ = [
    "CATALOG",
    "FakeContext",
    "api_context",
    "api_event",
    "api_schema",
    "lambda_env",
    "load_handler",
]

# What the handler tests snapshot: two instance types in one region.
CATALOG = {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}


def lambda_env(mp: pytest.MonkeyPatch, table: str, **env: str) -> None:
    """What a deployed handler finds in its environment: the table, the catalog (CATALOG),
    tracing off; and `env` on top (names from trncost.settings or Powertools)."""
    mp.setenv(TABLE_NAME_ENV, table)
    mp.setenv(CATALOG_ENV, json.dumps(CATALOG))
    mp.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    for name, value in env.items():
        mp.setenv(name, value)


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
    if raw_body is not None:
        text = raw_body
    elif body is not None:
        text = json.dumps(body)
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


def api_context(request_id: str) -> FakeContext:
    """The API function's context (trncost-api), for one kind of request."""
    return FakeContext(
        function_name="trncost-api",
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:trncost-api",
        aws_request_id=request_id,
    )


def api_schema(module: Any, request_id: str) -> Any:
    """schemathesis over the API's own OpenAPI document, served by the loaded API handler
    `module` in-process (WSGI, no socket), generating positive and negative cases."""
    import schemathesis

    from trncost_client.local.gateway import WsgiGateway

    gateway = WsgiGateway(module.handler, api_context(request_id))
    schema = schemathesis.openapi.from_wsgi("/openapi.json", gateway)
    schema.config.generation.update(
        modes=[schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]
    )
    return schema
