"""The same EventBridge event delivered 1–10 times, one after the other and all at once → one
trial record and one "Trial Recorded" event.

EventBridge and SQS deliver at least once, so the ingest Lambda meets the same event more than
once: in one batch, in later batches, or in several concurrent invocations. Here the real
handler takes them, through the ingest queue (one after the other) or straight from N threads
that each stand for a separate Lambda sandbox with its own clients (all at once); a delivery
told to come back later (another holds the claim) is retried as SQS would retry it.
"""

from __future__ import annotations

import json
import threading
import uuid

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from tests.support.events import load_event
from tests.support.factories import workload
from tests.support.handlers import FakeContext, load_handler
from tests.support.reliability_kit import drain, figure, own_metrics, queue_arn, route, sqs_record
from trncost.events import DetailType, pattern
from trncost.metrics.cloudwatch import MetricsReader
from trncost.services.ingest import AwsCollector
from trncost.settings import BUS_NAME_ENV, TABLE_NAME_ENV
from trncost.store.records import RecordStore
from trncost_client.local.esm import QueuePoller

pytestmark = pytest.mark.slow

WL = "llama31-8b-cpt"
BUS = "trncost-reliability"
TIMES = range(1, 11)
SECTION = "duplicates: the same event delivered 1-10 times"


def agent_event(trial_id: str) -> dict:
    e = load_event("agent_trial_run_completed")
    e["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, trial_id))
    e["detail"]["run_id"] = f"{trial_id}-i-0a1b2c3d4e5f67890"
    e["detail"]["tags"]["trncost:trial"] = trial_id
    return e


@pytest.fixture
def world(table, monkeypatch):
    sqs, events = boto3.client("sqs"), boto3.client("events")
    events.create_event_bus(Name=BUS)
    ingest_q = sqs.create_queue(QueueName="ingest")["QueueUrl"]
    recorded_q = sqs.create_queue(QueueName="trial-recorded")["QueueUrl"]
    route(events, sqs, "recorded", BUS, pattern(DetailType.trial_recorded), recorded_q)
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(BUS_NAME_ENV, BUS)
    records = RecordStore(table)
    records.put_workload(workload(workload_id=WL), "2026-11-28T00:00:00+00:00")
    return {"sqs": sqs, "records": records, "ingest_q": ingest_q, "recorded_q": recorded_q}


def sandbox():
    """A fresh load of the ingest handler with its own clients, created here (boto3 client
    creation is not thread-safe; using a client from another thread is)."""
    module = load_handler("ingest")
    own_metrics(module)
    svc = module.services.ingest
    _ = svc.records.table, svc.claims.table, svc.publisher.client  # create them here
    cw = boto3.client("cloudwatch")
    svc.collector = AwsCollector(metrics=lambda region: MetricsReader(region, client=cw))
    return module


def test_one_after_the_other_through_the_queue(world):
    w = world
    sent = 0
    for times in TIMES:
        trial_id = f"dup-seq-{times}"
        body = json.dumps(agent_event(trial_id))
        for _ in range(times):
            w["sqs"].send_message(QueueUrl=w["ingest_q"], MessageBody=body)
        sent += times
    poller = QueuePoller(w["sqs"], w["ingest_q"], load_handler("ingest").handler, FakeContext())
    delivered = poller.drain(max_rounds=100)
    assert delivered.processed == sent and delivered.failed == 0

    trials = [t.trial_id for t in w["records"].all_trials(WL)]
    assert sorted(trials) == sorted(f"dup-seq-{n}" for n in TIMES)
    announced = [e["detail"]["trial_id"] for e in drain(w["sqs"], w["recorded_q"])]
    assert sorted(announced) == sorted(trials)  # one "Trial Recorded" each
    figure(SECTION, "in sequence: deliveries sent", sent)
    figure(SECTION, "in sequence: records made", f"{len(trials)} (one per event)")


def test_all_at_once_from_separate_sandboxes(world):
    w = world
    arn = queue_arn(w["sqs"], w["ingest_q"])
    sent = busy = 0
    for times in TIMES:
        trial_id = f"dup-par-{times}"
        body = json.dumps(agent_event(trial_id))
        modules = [sandbox() for _ in range(times)]
        barrier = threading.Barrier(times)
        failed: list[str] = []
        errors: list[BaseException] = []

        def deliver(module, body=body, barrier=barrier, failed=failed, errors=errors):
            record = sqs_record(body, arn)
            barrier.wait()
            try:
                out = module.handler({"Records": [record]}, FakeContext())
                failed.extend(f["itemIdentifier"] for f in out["batchItemFailures"])
            except BatchProcessingError:  # every record of the batch failed: all come back
                failed.append(record["messageId"])
            except BaseException as exc:  # surfaced below, with the thread's own error
                errors.append(exc)

        threads = [threading.Thread(target=deliver, args=(m,)) for m in modules]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        sent += times
        busy += len(failed)
        # what came back ("someone else holds the claim") is delivered again, later
        for _ in failed:
            out = modules[0].handler({"Records": [sqs_record(body, arn)]}, FakeContext())
            assert out["batchItemFailures"] == []

    trials = [t.trial_id for t in w["records"].all_trials(WL)]
    assert sorted(trials) == sorted(f"dup-par-{n}" for n in TIMES)
    announced = [e["detail"]["trial_id"] for e in drain(w["sqs"], w["recorded_q"])]
    assert sorted(announced) == sorted(trials)
    figure(SECTION, "all at once: deliveries sent", f"{sent} ({busy} told to come back)")
    figure(SECTION, "all at once: records made", f"{len(trials)} (one per event)")
