"""The local runtime's in-process Lambda: a registered handler answers its function's invokes
as the Lambda service would (its result, or its unhandled error as errorType/errorMessage)."""

from __future__ import annotations

import json

import pytest

from trncost.errors import TransientError
from trncost_client.local import lambdas

ARN = "arn:aws:lambda:us-east-1:123456789012:function:trncost-local-test-steps"


@pytest.fixture
def registered():
    calls = []

    def handler(event, context):
        calls.append((event, context))
        if event.get("fail"):
            raise TransientError("throttled, try again")
        return {"echo": event["x"], "context": context}

    lambdas.register(ARN, handler, "ctx")
    yield calls
    lambdas.unregister(ARN)


@pytest.mark.parametrize(
    ("given", "name"),
    [
        (ARN, "trncost-local-test-steps"),
        (f"{ARN}:$LATEST", "trncost-local-test-steps"),
        ("trncost-local-test-steps", "trncost-local-test-steps"),
    ],
)
def test_function_names_from_arns(given, name) -> None:
    assert lambdas.function_name(given) == name


def test_an_invoke_runs_the_registered_handler_by_name_or_arn(registered) -> None:
    answer, failed = lambdas.invoke("trncost-local-test-steps", b'{"x": 1}')
    assert not failed and json.loads(answer) == {"echo": 1, "context": "ctx"}
    answer, failed = lambdas.invoke(f"{ARN}:$LATEST", '{"x": 2}')
    assert json.loads(answer)["echo"] == 2 and registered[-1] == ({"x": 2}, "ctx")


def test_an_unhandled_error_is_answered_as_lambda_reports_it(registered) -> None:
    answer, failed = lambdas.invoke(ARN, b'{"fail": true}')
    assert failed
    assert json.loads(answer) == {
        "errorType": "TransientError",
        "errorMessage": "throttled, try again",
    }


def test_an_unregistered_function_is_not_answered_here() -> None:
    with pytest.raises(KeyError):
        lambdas.invoke("nobody", b"{}")


def test_moto_s_docker_less_backend_dispatches_to_it(registered) -> None:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    lambdas.install()
    lambdas.install()  # idempotent
    headers: dict[str, str] = {}
    backend = LambdaSimpleBackend("us-east-1", "123456789012")
    assert json.loads(backend.invoke(ARN, None, b'{"x": 3}', {}, headers))["echo"] == 3
    assert backend.invoke(ARN, None, b'{"fail": 1}', {}, headers) and headers == {
        "x-amz-function-error": "Unhandled"
    }
    assert backend.invoke("other", None, '{"y": 1}', {}, {}) == b'{"y": 1}'  # moto's own
