"""schemathesis over the API's own OpenAPI document, in-process (WSGI, no socket), on moto:
positive and negative requests for every operation, and not one response ≥ 500. The stage is
whole (a trial plan state machine included): once the documented example workload exists, the
documented trial plan reaches Step Functions, which a stage without one answers with a 503."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, settings
from moto import mock_aws

from tests.support.handlers import api_schema, load_handler
from trncost.settings import (
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    STATE_MACHINE_ARN_ENV,
    TABLE_NAME_ENV,
)
from trncost.store.schema import TABLE
from trncost.wiring import Wiring
from trncost.workflow.definition import render, substitutions

pytestmark = pytest.mark.slow

ENV = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    TABLE_NAME_ENV: "trncost-fuzz",
    CATALOG_ENV: json.dumps({"instance_types": ["trn2.48xlarge"], "regions": ["us-east-1"]}),
    "POWERTOOLS_TRACE_DISABLED": "true",
    LIVE_PRICES_ENV: "false",
}


API = load_handler("api")
schema = api_schema(API, "fuzz")
SEEN: dict[str, int] = {"requests": 0, "5xx": 0}


@pytest.fixture(scope="module", autouse=True)
def moto_backend():
    saved = {k: os.environ.get(k) for k in (*ENV, STATE_MACHINE_ARN_ENV)}
    os.environ.update(ENV)
    with mock_aws():
        import boto3

        boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs("trncost-fuzz"))
        os.environ[STATE_MACHINE_ARN_ENV] = boto3.client("stepfunctions").create_state_machine(
            name="trial-plans",
            definition=render(substitutions("arn:aws:lambda:us-east-1:123456789012:function:s")),
            roleArn="arn:aws:iam::123456789012:role/sfn",
        )["stateMachineArn"]
        API.services = Wiring()  # this module's sandbox, fresh inside the mock
        yield
        API.services = Wiring()  # this module's sandbox, fresh inside the mock
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    print(f"\nschemathesis: {SEEN['requests']} requests, {SEEN['5xx']} responses >= 500")


@schema.parametrize()
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_request_yields_a_5xx(case):
    response = case.call()
    SEEN["requests"] += 1
    if response.status_code >= 500:
        SEEN["5xx"] += 1
    assert response.status_code < 500, (case.method, case.path, response.text[:300])
