"""The ingest and refresh Lambdas as deployed, on moto: put_events → rule → SQS (+DLQ) → the
real handler (partial batch failures) → DynamoDB trial record → "Trial Recorded" → refresh
queue → the refresh handler → a new estimate version."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.support.events import load_event, put_event
from tests.support.factories import instance_quote, snapshot, workload
from tests.support.handlers import FakeContext, load_handler
from trncost.events import DetailType, pattern
from trncost.metrics import names as n
from trncost.metrics.events import AGENT_PATTERN, BATCH_PATTERN, SAGEMAKER_PATTERN
from trncost.metrics.sagemaker import TrainingJobReader
from trncost.model import Assumptions, WorkUnit
from trncost.pricing.names import KnownNames
from trncost.services.estimates import EstimateService
from trncost.services.snapshots import SnapshotService
from trncost.settings import BUS_NAME_ENV, TABLE_NAME_ENV
from trncost.store.ingest import IngestStore
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore
from trncost_client.local.esm import QueuePoller

WL = "llama31-8b-cpt"
AGENT_TRIAL = "trn3-base-01"
START = datetime(2026, 11, 29, 1, 0, 5, tzinfo=UTC)


def queue_with_dlq(sqs, name: str, max_receives: int = 2) -> tuple[str, str]:
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    url = sqs.create_queue(
        QueueName=name,
        Attributes={
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receives)}
            )
        },
    )["QueueUrl"]
    return url, dlq


def route(events, rule: str, bus: str, event_pattern: dict, queue_url: str, sqs) -> None:
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps(event_pattern))
    events.put_targets(Rule=rule, EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])


@pytest.fixture
def deployed(table, monkeypatch):
    """The ingest wiring of stacks/ingest.py, built on moto from the same patterns."""
    sqs, events = boto3.client("sqs"), boto3.client("events")
    events.create_event_bus(Name="trncost-test")
    ingest_q, ingest_dlq = queue_with_dlq(sqs, "ingest")
    refresh_q, refresh_dlq = queue_with_dlq(sqs, "refresh")
    route(events, "sagemaker", "default", SAGEMAKER_PATTERN, ingest_q, sqs)
    route(events, "batch", "default", BATCH_PATTERN, ingest_q, sqs)
    route(events, "agent", "trncost-test", AGENT_PATTERN, ingest_q, sqs)
    route(events, "trials", "trncost-test", pattern(DetailType.trial_recorded), refresh_q, sqs)
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(BUS_NAME_ENV, "trncost-test")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    records = RecordStore(table)
    records.put_workload(
        workload(
            workload_id=WL,
            code_version="git:4f2a9c1",
            dataset_id="s3://team-data/cpt-mix-v3@2026-10-01",
        ),
        "2026-11-28T00:00:00+00:00",
    )
    return {
        "sqs": sqs,
        "events": events,
        "records": records,
        "table": table,
        "ingest": QueuePoller(sqs, ingest_q, load_handler("ingest").handler, FakeContext()),
        "refresh": QueuePoller(sqs, refresh_q, load_handler("refresh").handler, FakeContext()),
        "ingest_dlq": ingest_dlq,
        "refresh_dlq": refresh_dlq,
    }


def publish_agent_metrics() -> None:
    """What the trial agent publishes for a 2-hour baseline run (120 minutes)."""
    cw = boto3.client("cloudwatch")

    def put(spec, points, **dims):
        dims = {n.TRIAL_DIMENSION: AGENT_TRIAL, **dims}
        cw.put_metric_data(
            Namespace=spec.namespace,
            MetricData=[
                {
                    "MetricName": spec.name,
                    "Unit": spec.unit,
                    "Value": float(v),
                    "Timestamp": START + timedelta(minutes=m),
                    "Dimensions": [{"Name": k, "Value": val} for k, val in dims.items()],
                }
                for m, v in points
            ],
        )

    put(n.COMPILE_SECONDS, [(1, 900)])
    put(n.WARMUP_SECONDS, [(16, 240)])
    put(n.TOKENS_PER_SECOND, [(m, 120_000) for m in range(16, 120)])
    put(n.WORK_DONE[WorkUnit.tokens], [(m, 7_200_000) for m in range(16, 120)])
    put(n.TRAINING_LOSS, [(m, 2.1) for m in range(16, 120)])
    put(n.NON_FINITE_LOSS, [(16, 0)])
    put(n.FAILURES, [(16, 0)])
    put(n.AGENT_NEURON.utilization, [(m, 66) for m in range(16, 120)])


def test_events_become_trial_records_and_estimates_refresh(deployed):
    d = deployed
    publish_agent_metrics()
    prices = PriceStore(d["table"])
    SnapshotService(store=prices).commit(snapshot(instance_quote("trn3.48xlarge", "60")))
    put_event(d["events"], load_event("agent_trial_run_completed"), "trncost-test")
    put_event(d["events"], load_event("sagemaker_training_job_untagged"), "default")
    delivered = d["ingest"].drain()
    assert delivered.processed == 2 and delivered.failed == 0

    trn3 = d["records"].get_trial(AGENT_TRIAL)
    assert trn3 is not None and trn3.phase == "baseline" and trn3.status == "completed"
    # 104 minutes × 7.2M tokens = 748.8M tokens published as the agent's work counter
    assert trn3.work.done == pytest.approx(104 * 7_200_000)
    assert trn3.utilization.neuroncore == pytest.approx(0.66)
    (rejected,) = IngestStore(d["table"]).rejected()
    assert "no trncost:workload tag" in rejected.reason

    # an estimate on the trn3 evidence, then a second trial lands (a p5 run from Batch)
    # trn3 is newer than the pinned botocore: the stage catalog names it (as cdk.json does)
    stage = KnownNames.of(["trn3.48xlarge"])
    created = EstimateService(d["records"], prices, names=stage).create(
        WL, trn3.candidate, Assumptions()
    )
    assert created.version == 1
    put_event(d["events"], load_event("batch_job_succeeded"), "default")
    assert d["ingest"].drain().processed == 1
    batch = d["records"].get_trial("batch-4c7599ae-0a82-49aa-ba5a-4727fcce14a8")
    assert batch.candidate.instance_type == "p5.48xlarge" and batch.work.done == 0
    assert any("not usable for throughput" in note for note in batch.notes)

    # two "Trial Recorded" events reach the refresh queue and are processed: the workload's
    # inputs changed (a p5 trial), but no figure of the trn3 estimate did, so no version is
    # added (a version is added only when the figures change)
    refreshed = d["refresh"].drain()
    assert refreshed.processed == 2 and refreshed.failed == 0
    versions = d["records"].list_versions(created.estimate_id)
    assert [v["version"] for v in versions] == [1]


def test_redelivered_events_change_nothing(deployed):
    d = deployed
    publish_agent_metrics()
    for _ in range(3):
        put_event(d["events"], load_event("agent_trial_run_completed"), "trncost-test")
    assert d["ingest"].drain().processed == 3
    assert len(d["records"].all_trials(WL)) == 1


def test_a_poisoned_message_reaches_the_dlq_while_the_rest_succeeds(deployed, monkeypatch):
    d = deployed
    publish_agent_metrics()

    # A SageMaker job whose DescribeTrainingJob fails on every attempt: SageMaker answers 503
    # (an infrastructure failure: retried, never rejected; a job's own 4xx is rejected).
    def unavailable(self, job_name):
        raise ClientError(
            {
                "Error": {"Code": "ServiceUnavailable", "Message": "try again"},
                "ResponseMetadata": {"HTTPStatusCode": 503},
            },
            "DescribeTrainingJob",
        )

    monkeypatch.setattr(TrainingJobReader, "describe", unavailable)
    put_event(d["events"], load_event("sagemaker_training_job_completed"), "default")
    put_event(d["events"], load_event("agent_trial_run_completed"), "trncost-test")
    delivered = d["ingest"].drain()
    assert delivered.processed == 1 and delivered.failed == 2  # 2 receives, then redriven
    assert d["records"].get_trial(AGENT_TRIAL) is not None
    dead = d["sqs"].receive_message(QueueUrl=d["ingest_dlq"], MaxNumberOfMessages=10)
    (msg,) = dead["Messages"]
    assert json.loads(msg["Body"])["detail"]["TrainingJobName"] == "llama31-8b-trn2-baseline-01"
    # nothing half-done: the claim was released, no record, no rejection
    assert d["records"].get_trial("sagemaker-llama31-8b-trn2-baseline-01") is None
    assert IngestStore(d["table"]).rejected() == []


def test_a_sagemaker_job_that_does_not_exist_is_a_rejected_ingest_not_retried(deployed):
    d = deployed
    # moto does not know the job: DescribeTrainingJob answers ValidationException
    put_event(d["events"], load_event("sagemaker_training_job_completed"), "default")
    delivered = d["ingest"].drain()
    assert delivered.processed == 1 and delivered.failed == 0
    (rejected,) = IngestStore(d["table"]).rejected()
    assert "llama31-8b-trn2-baseline-01 does not exist" in rejected.reason
    assert "ValidationException" in rejected.reason
    dead = d["sqs"].receive_message(QueueUrl=d["ingest_dlq"], MaxNumberOfMessages=10)
    assert dead.get("Messages", []) == []


def test_a_message_that_is_not_json_is_rejected_not_retried(deployed):
    d = deployed
    queue = d["ingest"].queue_url
    d["sqs"].send_message(QueueUrl=queue, MessageBody="\x00not json")
    assert d["ingest"].drain().processed == 1
    (rejected,) = IngestStore(d["table"]).rejected()
    assert "not JSON" in rejected.reason
