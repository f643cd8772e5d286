"""The API's one mapping of trncost's errors to HTTP answers (trncost.api.errors): status,
stable error code, message and the fields at fault, for each class of the hierarchy."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from trncost.api.errors import domain_error, unexpected
from trncost.errors import (
    BadCursor,
    Conflict,
    DomainError,
    InvalidInput,
    LivePricesOff,
    MissingEvidence,
    NoPrices,
    NotFound,
    PriceListItemError,
    TransientError,
    Unavailable,
)


def answer(response) -> tuple[int, dict]:
    return response.status_code, json.loads(response.body)


@pytest.mark.parametrize(
    ("exc", "status", "code", "fields"),
    [
        (MissingEvidence("no throughput", ["trials"]), 422, "missing_evidence", ["trials"]),
        (InvalidInput("workload_id: differs", ["workload_id"]), 422, "validation_error", None),
        (BadCursor("cursor: not a cursor this API returned"), 422, "validation_error", ["cursor"]),
        (DomainError("cannot answer"), 422, "domain_error", []),
        (NotFound("workload x not found"), 404, "not_found", []),
        (Conflict("trial t exists"), 409, "conflict", []),
        (Conflict("trial plan p exists", ["plan_id"]), 409, "conflict", ["plan_id"]),
        (NoPrices("no price snapshot yet"), 409, "no_price_snapshot", []),
        (LivePricesOff("live off"), 409, "live_prices_off", ["saved_price_list"]),
        (Unavailable("Step Functions did not start"), 503, "upstream_unavailable", []),
        (TransientError("throttled"), 503, "upstream_unavailable", []),
    ],
)
def test_each_error_has_one_answer(exc, status, code, fields) -> None:
    got_status, body = answer(domain_error(exc))
    assert (got_status, body["error"], body["message"]) == (status, code, str(exc))
    assert body["fields"] == (exc.fields if fields is None else fields)


def test_a_bad_saved_price_list_names_the_field() -> None:
    status, body = answer(domain_error(PriceListItemError("not a saved Price List")))
    assert status == 422 and body["error"] == "validation_error"
    assert body["message"] == "saved_price_list: not a saved Price List"
    assert body["fields"] == ["saved_price_list"]


def _client_error(code: str, status: int) -> ClientError:
    error = {"Code": code, "Message": "x"}
    return ClientError({"Error": error, "ResponseMetadata": {"HTTPStatusCode": status}}, "Query")


@pytest.mark.parametrize(
    "exc",
    [
        _client_error("ProvisionedThroughputExceededException", 400),
        _client_error("ThrottlingException", 400),
        _client_error("InternalServerError", 500),
        EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com"),
    ],
)
def test_aws_still_failing_after_retries_is_503_without_details(exc) -> None:
    status, body = answer(unexpected(exc, {"httpMethod": "GET", "path": "/workloads"}))
    assert status == 503 and body["error"] == "upstream_unavailable"
    assert "retry later" in body["message"] and "x" not in body["message"].split()


def test_anything_else_is_a_500_that_shows_nothing() -> None:
    status, body = answer(
        unexpected(_client_error("ValidationException", 400), {"httpMethod": "GET"})
    )
    assert status == 500 and body == {
        "error": "internal_error",
        "message": "internal error; it has been logged",
        "fields": [],
    }
    status, body = answer(unexpected(KeyError("secret"), {}))
    assert status == 500 and "secret" not in json.dumps(body)
