"""The OpenAPI document is the contract: every documented example request is sent to the real
API handler (in-process, on moto), and each answer's status must be one the document lists for
that operation, with a body that validates against the schema documented for that status and
media type. The example workload of examples/llama-8b/ is what they are about: the test
creates it with the documented example, records the file's trials and takes a price snapshot
from the bundled saved Price List file first, so every example but the live snapshot (409 where
live prices are off) answers 2xx."""

from __future__ import annotations

import json
from typing import Any

import boto3
import jsonschema_rs
import pytest

from tests.support.examples import EXAMPLE_DIR, ROOT
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from tests.support.moto_env import mocked_aws
from trncost.api import docs
from trncost.api.app import SPEC_FILE
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    ACCOUNT_ID_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    STATE_MACHINE_ARN_ENV,
)
from trncost.workflow.definition import render, substitutions

DOCUMENT = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
BUNDLED_PRICES = ROOT / "client" / "trncost_client" / "local" / "data" / "saved_price_list.json"
CATALOG = {
    "instance_types": ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge", "c7i.16xlarge"],
    "regions": ["us-east-2"],
}
# Operations whose documented example answers with a documented error here, and why.
EXPECTED_ERRORS = {
    ("post", "/prices/snapshots"): (409, "live_prices_off"),  # a live snapshot: off in tests
    # the example estimate has no billed actuals: no bill is imported for it here
    ("get", "/estimates/{estimate_id}/actuals"): (404, "not_found"),
}
# The order the examples are sent in: what creates first, so that what reads finds it.
FIRST = [
    ("get", "/health"),
    ("post", "/workloads"),
    ("post", "/workloads/{workload_id}/trials"),
    ("post", "/prices/snapshots"),
    ("post", "/workloads/{workload_id}/estimates"),
    ("post", "/estimates/{estimate_id}/capacity"),
    ("post", "/workloads/{workload_id}/comparisons"),
    ("post", "/workloads/{workload_id}/trial-plans"),
]


# ... and last what closes the workload to new evidence.
LAST = [("post", "/workloads/{workload_id}/retract")]


def operations() -> list[tuple[str, str]]:
    every = [(m, p) for p, ops in DOCUMENT["paths"].items() for m in ops]
    return FIRST + sorted(set(every) - set(FIRST) - set(LAST)) + LAST


@pytest.fixture
def aws(monkeypatch):
    """moto, in a stage deployed to the examples' region (a trial plan launches there only)."""
    with mocked_aws(monkeypatch, AWS_DEFAULT_REGION=docs.REGION):
        yield


@pytest.fixture
def api(table, monkeypatch):
    sfn = boto3.client("stepfunctions")
    arn = sfn.create_state_machine(
        name="trial-plans",
        definition=render(substitutions("arn:aws:lambda:us-east-1:123456789012:function:steps")),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    lambda_env(
        monkeypatch,
        table,
        **{
            LIVE_PRICES_ENV: "false",
            ACCEPT_UPLOADS_ENV: "true",  # as the local runtime: an upload may be the latest
            CATALOG_ENV: json.dumps(CATALOG),
            STATE_MACHINE_ARN_ENV: arn,
            ACCOUNT_ID_ENV: "123456789012",  # moto's: POST /estimates/{id}/budget makes it there
        },
    )
    module = load_handler("api")
    # moto has no Capacity Block or Training Plan offerings: the local runtime's constructed
    # ones answer POST /estimates/{id}/capacity (basis example)
    from trncost_client.local.offerings import example_capacity

    wiring = module.services
    wiring.capacity = example_capacity(wiring.estimates, wiring.capacity_store)

    def call(method: str, path: str, body: Any = None, query: dict | None = None):
        event = api_event(method.upper(), path, body, query=query)
        response = module.handler(event, FakeContext())
        headers = dict(response.get("headers") or {})
        for name, values in (response.get("multiValueHeaders") or {}).items():
            headers.setdefault(name, ",".join(values))
        return {**response, "headers": headers}

    yield call


def _schema_of(operation: dict[str, Any], status: int, content_type: str) -> dict[str, Any]:
    documented = operation["responses"][str(status)]
    media = content_type.split(";")[0].strip()
    listed = list(documented["content"])
    assert media in listed, f"{status} answered {media}, documented {listed}"
    return documented["content"][media]["schema"]


def _validate(body: Any, schema: dict[str, Any]) -> None:
    root = {**schema, "components": DOCUMENT["components"]}
    jsonschema_rs.Draft202012Validator(root).validate(body)


def _request(method: str, path: str, operation: dict[str, Any], ids: dict[str, str]):
    """The documented example request, with the ids the server made substituted."""
    query: dict[str, str] = {}
    for parameter in operation.get("parameters", []):
        example = ids.get(parameter["name"], parameter.get("example"))
        if example is None and not parameter.get("required"):
            continue  # an optional parameter with no example (a cursor): not sent
        assert example is not None, f"{method} {path}: parameter {parameter['name']} has no example"
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", str(example))
        elif parameter["in"] == "query":
            query[parameter["name"]] = str(example)
    body = None
    if "requestBody" in operation:
        body = operation["requestBody"]["content"]["application/json"]["example"]
    return path, body, query or None


def _seed(api) -> dict[str, str]:
    """The example workload's other trials and a snapshot of the bundled saved Price List."""
    wid = docs.WORKLOAD_ID
    for trial in json.loads((EXAMPLE_DIR / "trials.json").read_text()):
        response = api("post", f"/workloads/{wid}/trials", trial)
        assert response["statusCode"] == 201, response["body"]
    saved = json.loads(BUNDLED_PRICES.read_text())
    body = {"saved_price_list": saved, "note": "bundled", "publish": True}
    response = api("post", "/prices/snapshots", body)
    assert response["statusCode"] == 201, response["body"]
    snapshot = json.loads(response["body"])["snapshot_id"]
    return {"snapshot_id": snapshot, "other_id": snapshot}


def test_the_examples_are_the_example_workload():
    assert docs.WORKLOAD == json.loads((EXAMPLE_DIR / "workload.json").read_text())
    trials = json.loads((EXAMPLE_DIR / "trials.json").read_text())
    assert docs.TRIAL["trial_id"] not in {t["trial_id"] for t in trials}
    fit = next(t for t in trials if t["trial_id"] == "trn2-fit-01")
    assert {k: v for k, v in docs.TRIAL.items() if k not in ("trial_id", "wall")} == {
        k: v for k, v in fit.items() if k not in ("trial_id", "wall")
    }
    request = json.loads((EXAMPLE_DIR / "estimate.json").read_text())
    files = {c["candidate"]["instance_type"]: c["candidate"] for c in request["candidates"]}
    assert files == {c["instance_type"]: c for c in (docs.TRN2, docs.TRN3, docs.P5)}


def test_every_documented_example_is_answered_as_documented(api):
    ids: dict[str, str] = {}
    answered: list[str] = []
    for method, path in operations():
        if (method, path) == ("post", "/prices/snapshots"):
            ids.update(_seed(api))
        operation = DOCUMENT["paths"][path][method]
        url, body, query = _request(method, path, operation, ids)
        response = api(method, url, body, query)
        status = response["statusCode"]
        where = f"{method.upper()} {url} answered {status}: {str(response['body'])[:400]}"
        assert str(status) in operation["responses"], where
        expected = EXPECTED_ERRORS.get((method, path))
        if expected:
            assert status == expected[0] and json.loads(response["body"])["error"] == expected[1]
        else:
            assert 200 <= status < 300, where
        content_type = response["headers"]["Content-Type"]
        schema = _schema_of(operation, status, content_type)
        payload = json.loads(response["body"]) if "json" in content_type else response["body"]
        _validate(payload, schema)
        if "Location" in operation["responses"][str(status)].get("headers", {}):
            # behind the stage the client's path starts with it (api_event: stage dev)
            assert response["headers"]["Location"] == "/dev" + payload["url"]
        if isinstance(payload, dict):
            ids.setdefault("estimate_id", payload.get("estimate_id") or "")
            if payload.get("comparison_id"):
                ids["comparison_id"] = payload["comparison_id"]
            ids = {k: v for k, v in ids.items() if v}
        answered.append(f"{method.upper()} {path} {status}")
    documented = sum(len(ops) for ops in DOCUMENT["paths"].values())
    assert len(answered) == documented
    print(f"\nopenapi examples: {len(answered)} of {documented} sent, all answered as documented")
    print("  " + "\n  ".join(answered))


def test_every_operation_is_documented_for_a_person():
    for path, ops in DOCUMENT["paths"].items():
        for method, operation in ops.items():
            where = f"{method.upper()} {path}"
            assert operation["summary"] and operation["summary"] != where, where
            assert len(operation["description"]) > 20, where
            if "requestBody" in operation:
                assert operation["requestBody"]["content"]["application/json"]["example"], where
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    schema = response["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorBody"}, where
    assert not {"HTTPValidationError", "ValidationError"} & set(DOCUMENT["components"]["schemas"])
    # one schema per model, named as a person reads it: no Page_Workload_, no -Input/-Output
    names = list(DOCUMENT["components"]["schemas"])
    assert [n for n in names if not n.isalnum()] == []
