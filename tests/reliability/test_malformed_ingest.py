"""Every class of malformed ingest event becomes a rejected ingest with its reason, through the
real ingest handler on moto (issue 17): no record fails, so nothing retries into the DLQ. The
classes are the ones fuzzing the parser found (trncost.metrics.events names them); a missing
job (DescribeTrainingJob: not found) is issue 15's."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.events import load_event as sample_event
from tests.support.factories import workload
from tests.support.handlers import load_handler
from tests.support.reliability_kit import figure, sqs_record
from trncost.settings import TABLE_NAME_ENV
from trncost.store.ingest import IngestStore
from trncost.store.records import RecordStore

pytestmark = pytest.mark.slow

SECTION = "malformed ingest events (issue 17)"
WL = "llama31-8b-cpt"  # the samples' workload
QUEUE = "arn:aws:sqs:us-east-1:123456789012:trncost-ingest"
REJECTED: dict[str, str] = {}


class Ctx:
    function_name = "trncost-ingest"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:trncost-ingest"
    aws_request_id = "malformed"


def _sagemaker(mutate: Callable[[dict[str, Any]], None]) -> str:
    e = sample_event("sagemaker_training_job_completed")
    mutate(e)
    e["id"] = str(uuid.uuid4())
    return json.dumps(e)


def _batch(mutate: Callable[[dict[str, Any]], None]) -> str:
    e = sample_event("batch_job_succeeded")
    mutate(e)
    e["id"] = str(uuid.uuid4())
    return json.dumps(e)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(e: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        at = e
        for key in parents:
            at = at[key]
        at[last] = value

    return mutate


# (class, message body, what the reason says)
CLASSES: list[tuple[str, str, str]] = [
    (
        "1. a time out of range",
        _sagemaker(_set("detail.TrainingEndTime", 1e20)),
        "TrainingEndTime",
    ),
    ("1. a time that is not a number", _sagemaker(_set("time", "NaN")), "time"),
    (
        "2. a count that is not a whole number",
        _sagemaker(_set("detail.ResourceConfig.InstanceCount", 2.5)),
        "InstanceCount",
    ),
    (
        "2. a count out of range",
        _sagemaker(_set("detail.ResourceConfig.InstanceCount", 10**9)),
        "InstanceCount",
    ),
    (
        "3. a part that is not an object",
        _sagemaker(_set("detail.ResourceConfig", "ml.trn2.48xlarge")),
        "ResourceConfig",
    ),
    ("3. tags that are not an object", _batch(_set("detail.tags", ["a", "b"])), "detail.tags"),
    (
        "4. an identifier AWS would refuse",
        _sagemaker(_set("detail.TrainingJobName", "no spaces / allowed")),
        "training job name",
    ),
    ("4. a region that is not a region", _sagemaker(_set("region", "moon-base-1a")), "region"),
    (
        "4. a tag that is not a string",
        _sagemaker(_set("detail.Tags.trncost:workload", {"id": WL})),
        "trncost:workload",
    ),
    (
        "5. a body nested too deep",
        '{"detail": ' + "[" * 2000 + "]" * 2000 + "}",
        "nested deeper than 64",
    ),
    ("5. an integer of 5,000 digits", '{"time": ' + "9" * 5000 + "}", "more than 30 digits"),
    ("5. not JSON at all", "\x00not json", "not JSON"),
]


@pytest.fixture
def ingest(table, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    RecordStore(table).put_workload(workload(workload_id=WL), "2026-11-28T00:00:00+00:00")
    return load_handler("ingest"), IngestStore(table)


@pytest.mark.parametrize(("name", "body", "why"), CLASSES, ids=[c[0] for c in CLASSES])
def test_each_class_of_malformed_event_is_rejected_with_its_reason(ingest, name, body, why):
    module, claims = ingest
    # When the ingest Lambda gets the message
    out = module.handler({"Records": [sqs_record(body, QUEUE)]}, Ctx())
    # Then it does not fail (no retry, no DLQ): it is a rejected ingest, and the reason says why
    assert out["batchItemFailures"] == []
    (rejected,) = claims.rejected()
    assert why in rejected.reason, rejected.reason
    REJECTED[name] = rejected.reason


def test_the_figure() -> None:
    classes = sorted({name.split(".")[0] for name in REJECTED})
    figure(SECTION, "classes (cases) sent", f"{len(classes)} ({len(CLASSES)})")
    figure(SECTION, "rejected with their reason", f"{len(REJECTED)} of {len(CLASSES)}")
    figure(SECTION, "retried into the DLQ", len(CLASSES) - len(REJECTED))
    assert len(REJECTED) == len(CLASSES) and len(classes) == 5
