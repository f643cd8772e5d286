"""Idempotency-Key on every create, through the real API handler on moto (issue 23): the same
key and body answer what the first request did (one resource, the answer replayed); another
body is a 409; a 4xx remembers nothing; keys are per caller."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_api import seed
from tests.support.factories import workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from trncost.settings import ACCEPT_UPLOADS_ENV, LIVE_PRICES_ENV

CANDIDATE = {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}


@pytest.fixture
def api(table, monkeypatch):
    lambda_env(monkeypatch, table, **{LIVE_PRICES_ENV: "false", ACCEPT_UPLOADS_ENV: "true"})
    module = load_handler("api")

    def call(method, path, body=None, key=None, caller=None):
        event = api_event(method, path, body, headers={"Idempotency-Key": key} if key else None)
        if caller:
            event["requestContext"] = {"identity": {"userArn": caller}}
        response = module.handler(event, FakeContext())
        call.headers = response.get("headers") or {}
        return response["statusCode"], json.loads(response["body"])

    seed(lambda m, p, b=None: call(m, p, b))
    return call


def _estimates(api) -> list[str]:
    status, page = api("GET", "/workloads/wl-api/estimates")
    assert status == 200
    return [e["estimate_id"] for e in page["items"]]


def test_the_same_key_and_body_make_one_estimate_and_replay_its_answer(api):
    body = {"candidate": CANDIDATE}
    # Given one create sent three times with one key
    answers = [api("POST", "/workloads/wl-api/estimates", body, key="k-1") for _ in range(3)]
    # Then every answer is the first one, and there is one estimate
    assert {s for s, _ in answers} == {201}
    assert len({a["estimate_id"] for _, a in answers}) == 1
    assert api.headers.get("Idempotent-Replayed") == "true"
    assert len(_estimates(api)) == 1
    # and without a key, each request makes its own
    api("POST", "/workloads/wl-api/estimates", body)
    api("POST", "/workloads/wl-api/estimates", body)
    assert len(_estimates(api)) == 3


def test_the_same_key_with_another_body_is_a_409(api):
    assert api("POST", "/workloads/wl-api/estimates", {"candidate": CANDIDATE}, key="k-2")[0] == 201
    other = {"candidate": {**CANDIDATE, "instance_count": 4}}
    status, err = api("POST", "/workloads/wl-api/estimates", other, key="k-2")
    assert status == 409 and err["fields"] == ["Idempotency-Key"]
    # the same body with its keys in another order is the same body
    same = json.loads(json.dumps({"candidate": dict(reversed(list(CANDIDATE.items())))}))
    assert api("POST", "/workloads/wl-api/estimates", same, key="k-2")[0] == 201


def test_a_refused_request_remembers_nothing_and_keys_are_per_caller(api):
    bad = workload(workload_id="wl-new").model_dump(mode="json") | {"name": "x\x1b"}
    assert api("POST", "/workloads", bad, key="k-3")[0] == 422
    good = workload(workload_id="wl-new").model_dump(mode="json")
    assert api("POST", "/workloads", good, key="k-3")[0] == 201  # the key was freed
    # another caller's k-3 is their own
    mine = workload(workload_id="wl-mine").model_dump(mode="json")
    alice = "arn:aws:sts::123456789012:assumed-role/trncost-writer/alice"
    assert api("POST", "/workloads", mine, key="k-3", caller=alice)[0] == 201


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/workloads", workload(workload_id="wl-idem").model_dump(mode="json")),
        (
            "/workloads/wl-api/comparisons",
            {"candidates": [{"candidate": CANDIDATE}], "samples": 1000},
        ),  # fmt: skip
    ],
)
def test_every_create_takes_a_key(api, path, body):
    first = api("POST", path, body, key="k-every")
    again = api("POST", path, body, key="k-every")
    assert first[0] in (200, 201) and again == first
