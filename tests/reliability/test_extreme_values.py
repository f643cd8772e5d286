"""Extreme values to every route and every event handler (issue 17): no 5xx, and no exception
escapes a handler.

Valid bodies and events (a workload, trials, estimates with every assumption, comparisons with
credits, a saved Price List, a trial plan; real-format job events from tests/events) get one to
three numeric leaves replaced by values past any physical range (1e30, 1e308, -1, 10**29, NaN
and infinity as text, booleans, 1e-300), or their text made hostile (JSON nested 1,000 deep,
integers of 31 and 5,000 digits). They go to the real handlers on moto:

- the API (every POST route, and the GET routes with extreme ids and query values): every
  answer < 500, a 4xx naming its error;
- ingest and refresh (SQS batches): no record fails (a malformed event is a rejected ingest,
  an impossible refresh a refresh failure of its estimate), nothing raises;
- prices (a saved Price List with extreme prices): a summary or a rejection, nothing raises;
- trial steps: only StepError (the state machine records it on the plan), never another
  exception.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections import Counter
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.support.events import SAVED_PRICE_LIST as SAVED_US_EAST_1
from tests.support.events import load_event as sample_event
from tests.support.factories import trial, workload
from tests.support.handlers import load_handler
from tests.support.moto_env import atomic_dynamodb
from tests.support.reliability_kit import AWS_ENV, figure, sqs_record
from tests.support.workflow_kit import plan_data
from trncost.errors import StepError
from trncost.events import DetailType
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    BUS_NAME_ENV,
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

TABLE_NAME = "trncost-extreme"
BUS = "trncost-extreme"
WL = "wl-extreme"
ENV = {
    **AWS_ENV,
    TABLE_NAME_ENV: TABLE_NAME,
    BUS_NAME_ENV: BUS,
    CATALOG_ENV: json.dumps(
        {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}
    ),
    LIVE_PRICES_ENV: "false",
    ACCEPT_UPLOADS_ENV: "true",  # the seeding upload asks to be latest
    "POWERTOOLS_METRICS_DISABLED": "true",
}
SECTION = "extreme values (every route and event handler)"
SEEN: Counter[str] = Counter()
HANDLERS = ("api", "ingest", "refresh", "prices", "trial_steps")
QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:trncost-extreme"

# Past any physical range, and what JSON can carry of them.
EXTREMES = st.sampled_from(
    [
        1e30,
        -1e30,
        1e308,
        -1e308,
        1e-300,
        10**29,
        -(10**29),
        2**63,
        1e19,
        1e15,
        0,
        -1,
        True,
        "1e30",
        "NaN",
        "Infinity",
        "-0",
        None,
    ]
)


class Ctx:
    function_name = "trncost-extreme"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:trncost-extreme"
    aws_request_id = "extreme"


MODULES = {name: load_handler(name) for name in HANDLERS}


# -- the world ------------------------------------------------------------------------------
def _api(method: str, path: str, body: bytes | None = None, query: str = "") -> tuple[int, Any]:
    event = proxy_event(method, path, query, {"Content-Type": "application/json"}, body)
    status, headers, raw = response_parts(MODULES["api"].handler(event, Ctx()))
    SEEN["api"] += 1
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
            boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
            boto3.client("events").create_event_bus(Name=BUS)
            arn = boto3.client("stepfunctions").create_state_machine(
                name="trial-plans",
                definition=render(
                    substitutions("arn:aws:lambda:us-east-1:123456789012:function:s")
                ),
                roleArn="arn:aws:iam::123456789012:role/sfn",
            )["stateMachineArn"]
            mp.setenv(STATE_MACHINE_ARN_ENV, arn)
            for module in MODULES.values():
                module.services = Wiring()  # this module's sandboxes, fresh inside the mock
            _seed()
            yield
            for module in MODULES.values():
                module.services = Wiring()


def _seed() -> None:
    wl = workload(workload_id=WL, dataset_gb=100).model_dump(mode="json")
    assert _api("POST", "/workloads", json.dumps(wl).encode())[0] == 201
    for i, (instance_type, count) in enumerate(
        [("trn2.48xlarge", 2), ("trn2.48xlarge", 4), ("trn3.48xlarge", 2)]
    ):
        t = trial(
            f"t-{i}", instance_type=instance_type, count=count, phase="target", workload_id=WL
        )
        assert (
            _api("POST", f"/workloads/{WL}/trials", json.dumps(t.model_dump(mode="json")).encode())[
                0
            ]
            == 201
        )
    saved = json.loads(SAVED_US_EAST_1.read_text())
    assert (
        _api(
            "POST",
            "/prices/snapshots",
            json.dumps({"saved_price_list": saved, "publish": True}).encode(),
        )[0]
        == 201
    )
    status, made = _api("POST", f"/workloads/{WL}/estimates", json.dumps(ESTIMATE).encode())
    assert status == 201, made
    ESTIMATE_IDS.append(made["estimate_id"])
    # a stored plan, so the trial steps get past "no such plan" to the fields they read
    plan = plan_data(plan_id="plan-x", workload_id=WL)
    status, made = _api("POST", f"/workloads/{WL}/trial-plans", json.dumps(plan).encode())
    assert status == 201, made


ESTIMATE_IDS: list[str] = []
CANDIDATE = {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
ASSUMPTIONS = {
    "idle_fraction": 0.1,
    "failure_rate_per_instance_hour": 0.001,
    "restart_s": 600,
    "checkpoint_interval_s": 1800,
    "ebs_gb_per_instance": 500,
    "checkpoints_retained": 3,
    "storage_months_after_run": 1,
    "log_retention_months_after_run": 1,
    "transfer_out_gb": 100,
    "transfer_inter_region_gb": 50,
    "log_ingest_gb": 10,
    "custom_metrics": 40,
    "data_preparation": {"instance_type": "c7i.48xlarge", "instance_hours": 20},
    "engineering_hours": 80,
    "engineering_hourly_usd": "150",
    "price_overrides": [
        {
            "key": {
                "service": "AmazonEC2",
                "region": "us-east-1",
                "item": "trn2.48xlarge",
                "purchase_option": "on_demand",
            },
            "usd": "40",
            "unit": "Hrs",
        }
    ],
}
ESTIMATE = {"candidate": CANDIDATE, "assumptions": ASSUMPTIONS}
COMPARISON = {
    "candidates": [
        {"candidate": CANDIDATE},
        {"candidate": {**CANDIDATE, "instance_type": "trn3.48xlarge"}},
    ],
    "assumptions": ASSUMPTIONS,
    "seed": 7,
    "samples": 1000,
    "credits": {"amount_usd": "100000", "expires_on": "2027-12-31", "targets_per_month": 2},
}


def _bases() -> dict[str, Any]:
    plan = plan_data(plan_id=None, workload_id=WL)
    plan.pop("plan_id")
    plan.pop("workload_id")
    return {
        "/workloads": workload(workload_id="wl-x", dataset_gb=100).model_dump(mode="json"),
        f"/workloads/{WL}/trials": trial("t-x", workload_id=WL).model_dump(mode="json"),
        f"/workloads/{WL}/estimates": ESTIMATE,
        f"/workloads/{WL}/comparisons": COMPARISON,
        f"/workloads/{WL}/comparisons/report": COMPARISON,
        f"/workloads/{WL}/trial-plans": plan,
        # the saved file's items as objects (a list of items is a saved Price List too), so
        # the prices inside them are leaves to mutate
        "/prices/snapshots": {
            "saved_price_list": [
                json.loads(item) for item in json.loads(SAVED_US_EAST_1.read_text())["PriceList"]
            ]
        },
    }


BASES = _bases()


# -- mutation -------------------------------------------------------------------------------
def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of the numeric leaves (and numeric strings: prices are text in a Price List)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [path]
    if isinstance(value, str) and value.replace(".", "", 1).lstrip("-").isdigit():
        return [path]
    return []


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


@st.composite
def mutated(draw: Any, base: Any) -> Any:
    doc = copy.deepcopy(base)
    leaves = _leaves(doc)
    for path in draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3, unique=True)):
        _set(doc, path, draw(EXTREMES))
    return doc


def _encode(doc: Any, hostile: str) -> bytes:
    text = json.dumps(doc, allow_nan=True)
    if hostile == "deep":
        text = '{"x": ' + "[" * 1000 + "]" * 1000 + ", " + text[1:]
    elif hostile == "long int":
        text = '{"x": ' + "9" * 31 + ", " + text[1:]
    elif hostile == "huge int":
        text = '{"x": ' + "9" * 5000 + ", " + text[1:]
    return text.encode()


HOSTILE = st.sampled_from(["", "", "", "", "deep", "long int", "huge int"])
POSTS = st.sampled_from(sorted(BASES))


def _unique(path: str, doc: Any) -> Any:
    """Fresh ids where the route stores, so a repeat is not just a 409."""
    if path == "/workloads" and isinstance(doc, dict):
        doc["workload_id"] = f"wl-{uuid.uuid4().hex[:12]}"
    elif path.endswith("/trials") and isinstance(doc, dict):
        doc["trial_id"] = f"t-{uuid.uuid4().hex[:12]}"
    return doc


# -- the API ----------------------------------------------------------------------------------
@settings(max_examples=320, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(data=st.data(), path=POSTS, hostile=HOSTILE)
def test_extreme_bodies_to_every_post_route_get_no_5xx(data, path, hostile) -> None:
    doc = _unique(path, data.draw(mutated(BASES[path])))
    status, payload = _api("POST", path, _encode(doc, hostile))
    assert status < 500, (path, hostile, doc if len(json.dumps(doc)) < 3000 else "...", payload)
    if hostile:
        assert status == 400, (path, hostile, payload)


GETS = st.sampled_from(
    [
        "/workloads",
        f"/workloads/{WL}",
        f"/workloads/{WL}/trials",
        "/trials/t-0",
        "/estimates/{eid}",
        "/estimates/{eid}/versions",
        "/estimates/{eid}/report",
        "/prices/snapshots",
        "/prices/snapshots/latest",
        "/ingest/rejected",
        "/trial-plans/plan-x",
    ]
)
QUERY_VALUES = st.sampled_from(["1e30", "-1", "0", "9" * 40, "NaN", "", "1", "2"])


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(path=GETS, key=st.sampled_from(["limit", "version", "cursor"]), value=QUERY_VALUES)
def test_extreme_queries_to_every_get_route_get_no_5xx(path, key, value) -> None:
    path = path.format(eid=ESTIMATE_IDS[0])
    status, payload = _api("GET", path, query=f"{key}={value}")
    assert status < 500, (path, key, value, payload)


# -- ingest -----------------------------------------------------------------------------------
EVENTS = {
    name: sample_event(name)
    for name in (
        "sagemaker_training_job_completed",
        "batch_job_succeeded",
        "agent_trial_run_completed",
    )
}
for _e in EVENTS.values():  # job events of the seeded workload
    _e["detail"].get("Tags", _e["detail"].get("tags", {}))["trncost:workload"] = WL


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(data=st.data(), name=st.sampled_from(sorted(EVENTS)), hostile=HOSTILE)
def test_extreme_job_events_are_rejected_never_retried(data, name, hostile) -> None:
    doc = data.draw(mutated(EVENTS[name]))
    doc["id"] = str(uuid.uuid4())
    record = sqs_record(_encode(doc, hostile).decode(), QUEUE_ARN)
    out = MODULES["ingest"].handler({"Records": [record]}, Ctx())
    SEEN["ingest"] += 1
    assert out["batchItemFailures"] == [], (name, hostile, doc)


# -- refresh ----------------------------------------------------------------------------------
REFRESH_EVENTS = {
    DetailType.trial_recorded: {"workload_id": WL, "trial_id": "t-0", "phase": "target"},
    DetailType.price_snapshot_taken: {"snapshot_id": "ps-x", "previous_snapshot_id": None},
}


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(
    kind=st.sampled_from(sorted(REFRESH_EVENTS)),
    key=st.sampled_from(["workload_id", "trial_id", "snapshot_id", "previous_snapshot_id"]),
    value=st.one_of(EXTREMES, st.just("x" * 5000), st.just({"a": [1]})),
)
def test_extreme_refresh_events_fail_no_record(kind, key, value) -> None:
    detail = {**REFRESH_EVENTS[kind], key: value}
    body = json.dumps(
        {"id": str(uuid.uuid4()), "source": "trncost", "detail-type": kind, "detail": detail}
    )
    out = MODULES["refresh"].handler({"Records": [sqs_record(body, QUEUE_ARN)]}, Ctx())
    SEEN["refresh"] += 1
    assert out["batchItemFailures"] == [], (kind, detail)


# -- prices -----------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(data=st.data())
def test_extreme_saved_price_lists_are_answered_never_raised(data) -> None:
    doc = data.draw(mutated(BASES["/prices/snapshots"]))
    out = MODULES["prices"].handler(doc, Ctx())
    SEEN["prices"] += 1
    assert out["status"] in ("ok", "rejected"), out


# -- trial steps ------------------------------------------------------------------------------
STEP_ACTIONS = st.sampled_from(
    ["start", "budget_check", "launch", "check_record", "gate", "record_outcome"]
    + ["record_failure", "nope"]
)


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(
    action=STEP_ACTIONS,
    plan_id=st.one_of(st.just("plan-x"), EXTREMES, st.just({"a": 1}), st.just("p" * 300)),
    index=st.one_of(EXTREMES, st.integers(-5, 5)),
    polls=EXTREMES,
    reasons=st.one_of(EXTREMES, st.just(["a", 1e30])),
    error=st.one_of(EXTREMES, st.just({"Error": 1e30, "Cause": [1]})),
)
def test_extreme_trial_step_events_raise_only_step_errors(
    action, plan_id, index, polls, reasons, error
) -> None:
    event = {
        "action": action,
        "plan_id": plan_id,
        "index": index,
        "polls": polls,
        "max_polls": polls,
        "outcome": "timeout",
        "reasons": reasons,
        "error": error,
        "execution_id": polls,
    }
    SEEN["trial_steps"] += 1
    try:
        MODULES["trial_steps"].handler(event, Ctx())
    except StepError:
        SEEN["trial_steps step errors"] += 1  # recorded on the plan by the state machine


def test_extreme_values_were_tried_everywhere_and_none_got_a_5xx() -> None:
    total = sum(SEEN[h] for h in HANDLERS)
    figure(SECTION, "extreme-value requests tried", total)
    for name in HANDLERS:
        figure(SECTION, f"  {name}", SEEN[name])
    figure(SECTION, "5xx seen", SEEN["5xx"])
    figure(SECTION, "exceptions escaping a handler", 0)
    assert SEEN["5xx"] == 0
    assert all(SEEN[h] > 0 for h in HANDLERS), SEEN
