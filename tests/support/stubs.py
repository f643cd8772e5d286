"""AWS answers for tests where moto has none: botocore Stubber helpers for the Price List API
(moto has no `pricing` service), and HTTP-level stubs below botocore's retry handler, so that
its standard-mode retries (trncost.aws) see the errors the services would send."""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import botocore.session
import pytest
from botocore import xform_name
from botocore.awsrequest import AWSResponse
from botocore.paginate import Paginator
from botocore.stub import Stubber

from tests.support.events import saved_price_list
from trncost import aws
from trncost.model.catalog import Catalog
from trncost.pricing.catalog import queries_for
from trncost.pricing.parser import parse_item


def saved_items() -> list[str]:
    return list(saved_price_list()["PriceList"])


def pricing_client() -> Any:
    """A Price List client with trncost's retry policy (trncost.aws)."""
    return aws.client("pricing", "us-east-1")


def expect_catalog(
    stubber: Stubber | HttpStub, catalog: Catalog, items: list[str], page_size: int = 100
) -> int:
    """Queue one GetProducts answer per catalog query (split into pages of `page_size`),
    each answering with the saved items that query would match. Returns the calls queued."""
    parsed = [(raw, parse_item(raw)) for raw in items]
    calls = 0
    for query in queries_for(catalog):
        matching = [raw for raw, p in parsed if query.accepts(p)]
        pages = [matching[i : i + page_size] for i in range(0, len(matching), page_size)] or [[]]
        for n, page in enumerate(pages):
            params: dict[str, Any] = {
                "ServiceCode": query.service_code,
                "Filters": query.api_filters(),
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            }
            if n:
                params["NextToken"] = f"page-{n}"
            response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": page}
            if n + 1 < len(pages):
                response["NextToken"] = f"page-{n + 1}"
            stubber.add_response("get_products", response, params)
            calls += 1
    return calls


# -- below botocore's retries ---------------------------------------------------------------------
class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def _cbor_text(text: str) -> bytes:
    raw = text.encode()
    n = len(raw)
    if n < 24:
        return bytes([0x60 + n]) + raw
    if n < 256:
        return bytes([0x78, n]) + raw
    return bytes([0x79]) + n.to_bytes(2, "big") + raw


def _cbor_map(items: dict[str, str]) -> bytes:
    assert len(items) < 24
    out = bytes([0xA0 + len(items)])
    for k, v in items.items():
        out += _cbor_text(k) + _cbor_text(v)
    return out


def error_response(
    request: Any, status: int, code: str, message: str, query_code: str | None = None
) -> AWSResponse:
    """The HTTP error response the service would send, in the request's own protocol
    (`query_code`: the AWS Query error code of an RPC v2 CBOR service, e.g. CloudWatch's
    "Throttling" for ThrottlingException)."""
    headers = {"x-amzn-RequestId": str(uuid.uuid4())}
    if request.headers.get("smithy-protocol") in ("rpc-v2-cbor", b"rpc-v2-cbor"):
        # CloudWatch (RPC v2 CBOR, query compatible): the query error code in a header
        sender = "Sender" if status < 500 else "Receiver"
        headers.update(
            {
                "smithy-protocol": "rpc-v2-cbor",
                "Content-Type": "application/cbor",
                "x-amzn-query-error": f"{query_code or code};{sender}",
            }
        )
        body = _cbor_map({"__type": code, "message": message})
    else:
        headers["Content-Type"] = "application/x-amz-json-1.1"
        body = json.dumps({"__type": code, "message": message}).encode()
    return AWSResponse(request.url, status, headers, _Raw(body))


def _operation(event_name: str) -> str:
    return event_name.rsplit(".", 1)[-1]


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


class HttpStub:
    """What a Stubber does for a JSON-protocol client (the Price List API), but at the HTTP
    send, below botocore's retry handler: queued answers, one per attempt, in order."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.answers: deque[tuple[str, int, dict[str, Any], dict[str, Any] | None]] = deque()
        self.attempts = 0
        self._event = f"before-send.{client.meta.service_model.service_id.hyphenize()}"

    def add_response(
        self, operation: str, response: dict[str, Any], expected_params: dict[str, Any] | None
    ) -> None:
        self.answers.append((operation, 200, response, expected_params))

    def add_client_error(
        self,
        operation: str,
        service_error_code: str,
        service_message: str = "",
        http_status_code: int = 400,
    ) -> None:
        body = {"__type": service_error_code, "message": service_message}
        self.answers.append((operation, http_status_code, body, None))

    def assert_no_pending_responses(self) -> None:
        assert not self.answers, f"{len(self.answers)} answers were not asked for"

    def _answer(self, request: Any, event_name: str, **_: Any) -> AWSResponse:
        self.attempts += 1
        assert self.answers, f"unexpected call: {_operation(event_name)}"
        operation, status, body, expected = self.answers.popleft()
        assert _snake(_operation(event_name)) == operation, (event_name, operation)
        if expected is not None:
            assert json.loads(request.body or b"{}") == json.loads(json.dumps(expected))
        headers = {"Content-Type": "application/x-amz-json-1.1"}
        return AWSResponse(request.url, status, headers, _Raw(json.dumps(body).encode()))

    def __enter__(self) -> HttpStub:
        self.client.meta.events.register_first(self._event, self._answer)
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.meta.events.unregister(self._event, self._answer)


@contextmanager
def failing_first(
    client: Any, attempts: int, code: str, status: int = 400, query_code: str | None = None
) -> Iterator[list[str]]:
    """The first `attempts` HTTP attempts of `client` answered with an error; the rest go
    through (to moto). Yields the operations of every attempt, in order."""
    seen: list[str] = []
    event = f"before-send.{client.meta.service_model.service_id.hyphenize()}"

    def answer(request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        seen.append(_operation(event_name))
        if len(seen) > attempts:
            return None
        return error_response(request, status, code, "Rate exceeded", query_code)

    client.meta.events.register_first(event, answer)
    try:
        yield seen
    finally:
        client.meta.events.unregister(event, answer)


def record_backoff(mp: pytest.MonkeyPatch) -> list[float]:
    """botocore's standard-mode backoff delays, at the top of their jitter (random = 1), kept
    in a list instead of slept (the retries still happen)."""
    from botocore.retries import standard

    delays: list[float] = []
    original = standard.ExponentialBackoff.delay_amount

    def delay(self: Any, context: Any) -> float:
        self._random = lambda: 1.0
        delays.append(original(self, context))
        return 0.0

    mp.setattr(standard.ExponentialBackoff, "delay_amount", delay)
    return delays


def paginator_over(fake: Any, service: str, operation: str) -> Paginator:
    """What `get_paginator(operation)` gives on a real client (botocore's own pagination
    config for the operation), over a fake client's method of that name: a fake that answers
    one call at a time is paged the way the adapters page AWS."""
    session = botocore.session.get_session()
    model = session.get_service_model(service)
    name = next(n for n in model.operation_names if xform_name(n) == operation)
    config = session.get_paginator_model(service).get_paginator(name)
    return Paginator(getattr(fake, operation), config, model.operation_model(name))
