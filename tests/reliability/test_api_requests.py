"""Thousands of generated API requests → not one response ≥ 500.

Two generators against the real API handler on moto, with a world to hit (a workload with
trials on two instance types and a price snapshot, so estimates really compute):

- schemathesis over the API's own OpenAPI document (positive and negative cases for every
  operation), in-process through the local API Gateway (WSGI);
- hypothesis bodies for POST /workloads and POST /workloads/{id}/estimates, from the request
  models' JSON schemas: mostly valid, with hostile values here and there (wrong types,
  extreme or non-finite numbers, numeric strings, odd unicode, unknown or missing keys).

Every answer is < 500, JSON, and an error names its code and message without a stack trace.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.support.events import saved_price_list
from tests.support.factories import trial, workload
from tests.support.handlers import api_context, api_schema, load_handler
from tests.support.moto_env import atomic_dynamodb
from tests.support.reliability_bodies import from_schema
from tests.support.reliability_kit import AWS_ENV, figure
from trncost.model import Estimate, Workload
from trncost.model.requests import EstimateRequest
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    STATE_MACHINE_ARN_ENV,
    TABLE_NAME_ENV,
)
from trncost.store.schema import TABLE
from trncost.wiring import Wiring
from trncost.workflow.definition import render, substitutions
from trncost_client.local.gateway import proxy_event, response_parts

pytestmark = pytest.mark.slow

TABLE_NAME = "trncost-reliability-api"
ENV = {
    **AWS_ENV,
    TABLE_NAME_ENV: TABLE_NAME,
    CATALOG_ENV: json.dumps(
        {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}
    ),
    LIVE_PRICES_ENV: "false",
    ACCEPT_UPLOADS_ENV: "true",  # the seeding upload asks to be latest
    "POWERTOOLS_METRICS_DISABLED": "true",  # no EMF line per request on stdout
}
WL = "wl-rel"
SECTION = "API: generated requests"
SEEN: dict[str, int] = {"schemathesis": 0, "workloads": 0, "estimates": 0, "5xx": 0}
CREATED: dict[str, int] = {"workloads": 0, "estimates": 0}
CODES: Counter[str] = Counter()
MIN_REQUESTS = 2000
# max_examples per generator: schemathesis per operation and mode, hypothesis per route
SCHEMATHESIS_EXAMPLES = 15
WORKLOAD_EXAMPLES = 350
ESTIMATE_EXAMPLES = 650
STATUSES = get_args(Estimate.model_fields["status"].annotation)


API = load_handler("api")
schema = api_schema(API, "reliability")


def call(method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
    event = proxy_event(method, path, "", {"Content-Type": "application/json"}, body)
    status, headers, raw = response_parts(API.handler(event, api_context("reliability")))
    SEEN["5xx"] += status >= 500
    text = raw.decode("utf-8")
    assert "Traceback" not in text
    ctype = ",".join(v for k, v in headers if k.lower() == "content-type")
    payload = json.loads(text) if "json" in ctype and text else text
    if 400 <= status < 500:
        assert isinstance(payload, dict) and payload.get("error") and payload.get("message")
    return status, payload


@pytest.fixture(scope="module", autouse=True)
def world():
    with pytest.MonkeyPatch.context() as mp:
        atomic_dynamodb(mp)
        for k, v in ENV.items():
            mp.setenv(k, v)
        with mock_aws():
            import boto3

            boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
            # a whole stage: the documented trial plan reaches Step Functions (no 503 for lack
            # of a state machine) once the documented example workload exists
            arn = boto3.client("stepfunctions").create_state_machine(
                name="trial-plans",
                definition=render(
                    substitutions("arn:aws:lambda:us-east-1:123456789012:function:s")
                ),
                roleArn="arn:aws:iam::123456789012:role/sfn",
            )["stateMachineArn"]
            mp.setenv(STATE_MACHINE_ARN_ENV, arn)
            API.services = Wiring()  # this module's sandbox, fresh inside the mock
            _seed()
            yield
            API.services = Wiring()  # this module's sandbox, fresh inside the mock


def _seed() -> None:
    wl = workload(workload_id=WL, dataset_gb=100).model_dump(mode="json")
    assert call("POST", "/workloads", json.dumps(wl).encode())[0] == 201
    empty = workload(workload_id="wl-no-trials").model_dump(mode="json")
    assert call("POST", "/workloads", json.dumps(empty).encode())[0] == 201
    for i, (instance_type, count) in enumerate(
        [("trn2.48xlarge", 2), ("trn2.48xlarge", 4), ("trn3.48xlarge", 2), ("trn2.48xlarge", 2)]
    ):
        t = trial(
            f"t-{i}", instance_type=instance_type, count=count, phase="target", workload_id=WL
        )
        body = json.dumps(t.model_dump(mode="json")).encode()
        assert call("POST", f"/workloads/{WL}/trials", body)[0] == 201
    saved = saved_price_list()
    body = json.dumps({"saved_price_list": saved, "note": "reliability", "publish": True}).encode()
    assert call("POST", "/prices/snapshots", body)[0] == 201


# -- schemathesis ---------------------------------------------------------------------------
@schema.parametrize()
@settings(
    max_examples=SCHEMATHESIS_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_schemathesis_requests_get_no_5xx(case):
    response = case.call()
    SEEN["schemathesis"] += 1
    SEEN["5xx"] += response.status_code >= 500
    assert response.status_code < 500, (case.method, case.path, response.text[:300])


# -- hypothesis bodies ----------------------------------------------------------------------
def _encode(body: Any) -> bytes:
    return json.dumps(body, allow_nan=True).encode()


# fresh ids for half the valid bodies (hypothesis likes to repeat small ones: 409 conflicts)
WORKLOAD_OVERRIDES = {
    "workload_id": st.one_of(
        st.uuids().map(lambda u: f"wl-{u.hex[:16]}"),
        st.from_regex(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$", fullmatch=True).map(lambda s: s[:128]),
    )
}
WORKLOAD_BODIES = st.one_of(
    from_schema(Workload.model_json_schema(), wild=0, overrides=WORKLOAD_OVERRIDES),
    from_schema(Workload.model_json_schema(), wild=0.05),
)
INSTANCE_TYPES = st.sampled_from(
    ["trn2.48xlarge"] * 4 + ["trn3.48xlarge"] * 2 + ["p5.48xlarge", "ml.trn1.32xlarge"]
)
ESTIMATE_OVERRIDES = {
    # mostly candidates that have trials and prices, so the engine runs for real
    "candidate.instance_type": st.one_of(INSTANCE_TYPES, INSTANCE_TYPES, st.just("x.y")),
    "candidate.instance_count": st.one_of(
        st.sampled_from([2, 4, 2, 4, 1, 8]), st.integers(1, 100_000)
    ),
    "candidate.region": st.sampled_from(["us-east-1", "us-east-1", "us-west-2"]),
    "snapshot_id": st.one_of(st.none(), st.text(max_size=20)),
}
ESTIMATE_BODIES = st.one_of(
    from_schema(EstimateRequest.model_json_schema(), wild=0, overrides=ESTIMATE_OVERRIDES),
    from_schema(EstimateRequest.model_json_schema(), wild=0.03, overrides=ESTIMATE_OVERRIDES),
)
WORKLOAD_IDS = st.sampled_from([WL] * 6 + ["wl-no-trials", "nope", "a%2Fb", "x" * 200])


@settings(
    max_examples=WORKLOAD_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(body=WORKLOAD_BODIES)
def test_generated_workloads_get_no_5xx(body):
    status, payload = call("POST", "/workloads", _encode(body))
    SEEN["workloads"] += 1
    assert status < 500, (body, payload)
    if status == 201:
        CREATED["workloads"] += 1
        assert payload["workload"]["workload_id"] == body["workload_id"]


@settings(
    max_examples=ESTIMATE_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(workload_id=WORKLOAD_IDS, body=ESTIMATE_BODIES)
def test_generated_estimates_get_no_5xx(workload_id, body):
    status, payload = call("POST", f"/workloads/{workload_id}/estimates", _encode(body))
    SEEN["estimates"] += 1
    assert status < 500, (workload_id, body, payload)
    CODES[payload.get("error", "created") if isinstance(payload, dict) else "?"] += 1
    if status == 201:
        CREATED["estimates"] += 1
        assert payload["version"] == 1 and payload["estimate"]["status"] in STATUSES


def test_the_generators_sent_enough_requests_and_none_got_a_5xx():
    total = SEEN["schemathesis"] + SEEN["workloads"] + SEEN["estimates"]
    figure(SECTION, "requests tried", total)
    figure(SECTION, "  schemathesis (OpenAPI, positive + negative)", SEEN["schemathesis"])
    figure(
        SECTION,
        "  hypothesis POST /workloads",
        f"{SEEN['workloads']} ({CREATED['workloads']} created)",
    )
    figure(
        SECTION,
        "  hypothesis POST /workloads/{id}/estimates",
        f"{SEEN['estimates']} ({CREATED['estimates']} computed)",
    )
    figure(SECTION, "responses >= 500", SEEN["5xx"])
    figure(SECTION, "estimate answers", dict(CODES.most_common()))
    assert SEEN["5xx"] == 0
    assert total >= MIN_REQUESTS
