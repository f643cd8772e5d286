"""NaN, ±inf and negative datapoints in metric series are excluded with a note, never an
exception (issue 15: int(round(nan)) crashed the record); a SageMaker job that does not
exist is an UnusableEvent (a rejected ingest), throttling is not."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from trncost.errors import UnusableEvent
from trncost.metrics import names as n
from trncost.metrics import quantities as q
from trncost.metrics.cloudwatch import Series
from trncost.metrics.readings import SeriesReader, Window
from trncost.metrics.sagemaker import TrainingJobReader

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def series(key: str, *values: float) -> Series:
    stamps = tuple(T0 + timedelta(minutes=i) for i in range(len(values)))
    return Series(key, 60, stamps, values)


def test_nan_inf_and_negative_counts_are_excluded_with_a_note() -> None:
    notes: list[str] = []
    r = SeriesReader(
        {
            n.FAILURES.key: series(n.FAILURES.key, math.nan, -1.0, 2.0),
            n.ERRORS.key: series(n.ERRORS.key, math.inf),
            n.CHECKPOINT_SAVES.key: series(n.CHECKPOINT_SAVES.key, math.nan),
            n.TRAINING_LOSS.key: series(n.TRAINING_LOSS.key, 2.0, math.nan, -0.5),
        },
        Window(None, None),
        notes,
    )
    failures = q.failure_count(r, None, notes)
    assert failures.count == 2
    assert q.reliability(r, n.AGENT_NEURON, failures, notes).errors == 0
    assert q.checkpointing(r, notes).saves == 0
    # a loss may be negative, and a NaN loss is divergence, not noise
    assert q.loss_finite(r, notes) is False
    assert (
        "failures: 2 datapoint(s) NaN, infinite or negative excluded (not a measurement)" in notes
    )
    assert any(note.startswith("errors: 1 datapoint(s)") for note in notes)


def _stubbed(error_code: str, status: int) -> TrainingJobReader:
    client = boto3.client("sagemaker", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_client_error(
        "describe_training_job",
        service_error_code=error_code,
        service_message="Requested resource not found.",
        http_status_code=status,
    )
    stub.activate()
    return TrainingJobReader("us-east-1", client=client)


@pytest.mark.parametrize("code", ["ValidationException", "ResourceNotFound"])
def test_a_job_that_does_not_exist_is_an_unusable_event_with_the_reason(code) -> None:
    with pytest.raises(UnusableEvent, match=f"job-x does not exist in us-east-1 \\({code}"):
        _stubbed(code, 400).describe("job-x")


@pytest.mark.parametrize(
    ("code", "status"), [("ThrottlingException", 400), ("InternalFailure", 500)]
)
def test_throttling_and_5xx_raise_to_be_retried(code, status) -> None:
    with pytest.raises(ClientError):
        _stubbed(code, status).describe("job-x")
