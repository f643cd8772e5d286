"""Faults on every AWS call the ingest handler makes → each message succeeds after retry or ends
in the DLQ, and after a redrive everything that can be recorded is, exactly once.

The wiring is the deployed one, on moto: EventBridge rules → ingest queue (redrive to its DLQ
after MAX_RECEIVE_COUNT receives, as stacks/ingest.py sets it) → the real handler (partial
batch responses) → DynamoDB, CloudWatch, SageMaker, EventBridge. Every attempt of every call
the handler makes (DynamoDB, CloudWatch, SageMaker, EventBridge) may be answered with
throttling, a 500 or a 503 (botocore's standard retries see real HTTP error responses), and:

- k % of the events are SageMaker jobs whose DescribeTrainingJob always fails (a job the
  account does not know): they must end in the DLQ, and nothing of them anywhere else;
- some good events meet an EventBridge outage when their "Trial Recorded" is published:
  their record and its event commit together (the outbox, issue 23), so the ingest succeeds
  and the outbox sweeper (lambdas/outbox, under the same faults) delivers the event once the
  outage is over; a redrive of the DLQ completes the rest without a second record.

A redelivery comes after the queue's visibility timeout, which is longer than the claim lease
(stacks/ingest.py): the service's clock moves on by that much at each delivery.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from stacks.ingest import MAX_RECEIVE_COUNT
from tests.support.events import load_event, put_event
from tests.support.factories import candidate, instance_quote, snapshot, trial, workload
from tests.support.handlers import FakeContext, load_handler
from tests.support.reliability_kit import (
    UNAVAILABLE,
    FaultInjector,
    depth,
    drain,
    figure,
    no_retry_quota,
    no_retry_sleep,
    queue_with_dlq,
    route,
)
from trncost.events import DetailType, pattern
from trncost.metrics.events import AGENT_PATTERN, BATCH_PATTERN, SAGEMAKER_PATTERN
from trncost.model import Assumptions
from trncost.services.estimates import EstimateService
from trncost.services.ingest import LEASE_S, AwsCollector
from trncost.services.snapshots import SnapshotService
from trncost.settings import BUS_NAME_ENV, TABLE_NAME_ENV
from trncost.store.ingest import IngestStore
from trncost.store.outbox import OutboxStore
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore
from trncost_client.dead_letters import QueueOps
from trncost_client.local.esm import QueuePoller

pytestmark = pytest.mark.slow

WL = "llama31-8b-cpt"
BUS = "trncost-reliability"
N_AGENT, N_BATCH, N_PERMANENT = 24, 16, 10  # 50 events, 20 % permanent failures
OUTAGE = {f"agent-outage-{i}" for i in range(4)}  # of the agent trials
FAULT_RATE = 0.2  # of every attempt of every call
SERVICES = frozenset({"dynamodb", "cloudwatch", "sagemaker", "eventbridge"})
REDELIVERY = timedelta(seconds=LEASE_S + 121)  # the ingest queue's visibility > lease + timeout
SECTION = "faults: throttling/5xx on every AWS call of the ingest handler"


class QueueClock:
    """Each delivery comes one visibility timeout after the one before."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += REDELIVERY
        return self.now


def agent_event(trial_id: str) -> dict:
    e = load_event("agent_trial_run_completed")
    e["detail"]["run_id"] = f"{trial_id}-i-0a1b2c3d4e5f67890"
    e["detail"]["tags"]["trncost:trial"] = trial_id
    return e


def batch_event(i: int) -> dict:
    e = load_event("batch_job_succeeded")
    job = f"0000{i:04d}-0a82-49aa-ba5a-4727fcce14a8"
    e["detail"]["jobId"] = job
    e["detail"]["jobArn"] = f"arn:aws:batch:us-east-1:123456789012:job/{job}"
    return e


def permanent_event(i: int) -> dict:
    e = load_event("sagemaker_training_job_completed")
    name = f"unknown-job-{i:02d}"
    e["detail"]["TrainingJobName"] = name
    e["detail"]["TrainingJobArn"] = f"arn:aws:sagemaker:us-east-1:123456789012:training-job/{name}"
    return e


@pytest.fixture
def wired(table, monkeypatch):
    sqs, events = boto3.client("sqs"), boto3.client("events")
    events.create_event_bus(Name=BUS)
    ingest_q, ingest_dlq = queue_with_dlq(sqs, "ingest", MAX_RECEIVE_COUNT)
    recorded_q = sqs.create_queue(QueueName="trial-recorded")["QueueUrl"]
    route(events, sqs, "sagemaker", "default", SAGEMAKER_PATTERN, ingest_q)
    route(events, sqs, "batch", "default", BATCH_PATTERN, ingest_q)
    route(events, sqs, "agent", BUS, AGENT_PATTERN, ingest_q)
    route(events, sqs, "recorded", BUS, pattern(DetailType.trial_recorded), recorded_q)
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(BUS_NAME_ENV, BUS)
    records = RecordStore(table)
    records.put_workload(
        workload(
            workload_id=WL, code_version="git:4f2a9c1", dataset_id="s3://team-data/cpt-mix-v3"
        ),
        "2026-11-28T00:00:00+00:00",
    )
    module = load_handler("ingest")
    service = module.services.ingest
    service.clock = QueueClock()
    service.collector = AwsCollector()  # the deployed collector (botocore's retries only)
    return {
        "sqs": sqs,
        "events": events,
        "records": records,
        "claims": IngestStore(table),
        "module": module,
        "ingest_q": ingest_q,
        "ingest_dlq": ingest_dlq,
        "recorded_q": recorded_q,
    }


def test_every_event_is_recorded_once_or_dead_lettered(wired, monkeypatch):
    w = wired
    no_retry_sleep(monkeypatch)
    outage_on = True

    def outage(service: str, operation: str, body: bytes):
        if (service, operation) == ("sagemaker", "DescribeTrainingJob") and b"unknown-job-" in body:
            # the permanent failures: SageMaker answers 503 on every attempt for these jobs (an
            # infrastructure failure, retried into the DLQ; a job's own 4xx would be rejected)
            return UNAVAILABLE
        if not outage_on or (service, operation) != ("eventbridge", "PutEvents"):
            return None
        return UNAVAILABLE if any(t.encode() in body for t in OUTAGE) else None

    faults = FaultInjector(rate=FAULT_RATE, seed=20261201, services=SERVICES, outage=outage)
    faults.install(monkeypatch)

    def handler(e, ctx):
        with faults.active():
            return w["module"].handler(e, ctx)

    poller = QueuePoller(w["sqs"], w["ingest_q"], handler, FakeContext())

    # Given 50 finished jobs: 40 that can be recorded, 10 whose DescribeTrainingJob always fails
    good = [f"agent-{i}" for i in range(N_AGENT - len(OUTAGE))] + sorted(OUTAGE)
    for trial_id in good:
        put_event(w["events"], agent_event(trial_id), BUS)
    for i in range(N_BATCH):
        put_event(w["events"], batch_event(i), "default")
    for i in range(N_PERMANENT):
        put_event(w["events"], permanent_event(i), "default")
    sent = N_AGENT + N_BATCH + N_PERMANENT
    good_ids = set(good) | {
        f"batch-0000{i:04d}-0a82-49aa-ba5a-4727fcce14a8" for i in range(N_BATCH)
    }

    # When the ingest queue is drained, faults on every call and EventBridge down for some
    first = poller.drain(max_rounds=1000)
    dead = depth(w["sqs"], w["ingest_dlq"])

    # Then every message either succeeded or is in the DLQ: nothing lost, nothing both
    assert first.processed + dead == sent, (first, dead)
    assert dead >= N_PERMANENT
    # the outage's trials are recorded all the same: their events wait in the outbox
    recorded_first = {t.trial_id for t in w["records"].all_trials(WL)}
    assert OUTAGE <= recorded_first
    assert depth(w["sqs"], w["ingest_q"]) == 0
    # no fault became a rejection (a rejected event is acknowledged: it would be lost)
    assert w["claims"].rejected(limit=100) == []
    trials = {t.trial_id: t for t in w["records"].all_trials(WL)}
    assert set(trials) <= good_ids
    assert not any(t.startswith("sagemaker-") for t in trials)
    retried = first.failed  # deliveries that failed and came back (or went to the DLQ)

    # When the outage is over and the DLQ is redriven (by copy: moto has no move tasks)
    outage_on = False
    ops = QueueOps(client=w["sqs"])
    moved = ops.redrive_by_copy(ops.resolve(w["ingest_dlq"]))
    assert moved.moved == dead
    second = poller.drain(max_rounds=1000)
    dead_after = depth(w["sqs"], w["ingest_dlq"])

    # Then every good event is recorded exactly once and only the permanent failures remain
    trials = {t.trial_id for t in w["records"].all_trials(WL)}
    assert trials == good_ids
    assert len(w["records"].all_trials(WL)) == len(good_ids)
    assert dead_after == N_PERMANENT
    assert second.processed + dead_after == moved.moved
    assert first.processed + second.processed + dead_after == sent
    # When the outbox sweeper runs (the outage over, the same faults on its calls)
    sweeper = load_handler("outbox")
    sweeps = 0
    while OutboxStore(w["records"].table_name).pending() and sweeps < 50:
        sweeps += 1
        with faults.active():
            try:
                sweeper.handler({}, FakeContext())
            except Exception:  # noqa: BLE001 - a sweep that failed is run again by the schedule
                pass
    # Then every record was announced ("Trial Recorded" at least once; refreshes are
    # idempotent), and nothing waits
    announced = {e["detail"]["trial_id"] for e in drain(w["sqs"], w["recorded_q"])}
    assert announced == good_ids
    assert OutboxStore(w["records"].table_name).pending() == []

    figure(SECTION, "events sent", sent)
    figure(SECTION, "  of which permanent failures", f"{N_PERMANENT} ({N_PERMANENT / sent:.0%})")
    figure(
        SECTION,
        "faults injected",
        f"{faults.total} of {sum(faults.attempts.values())} attempts "
        f"({faults.injected['throttling']} throttling, {faults.injected['5xx']} 5xx "
        f"incl. {faults.injected['outage']} from an EventBridge outage)",
    )
    figure(SECTION, "failed deliveries (came back)", retried)
    figure(SECTION, "first pass: succeeded + DLQ", f"{first.processed} + {dead} = {sent}")
    figure(SECTION, "redriven from the DLQ", moved.moved)
    figure(
        SECTION,
        "after redrive: succeeded + DLQ",
        f"{len(good_ids)} + {dead_after} = {len(good_ids) + dead_after}",
    )
    figure(SECTION, "trial records (one per good event)", len(trials))
    figure(
        SECTION, "recorded during the EventBridge outage", f"{len(OUTAGE)} (events via the outbox)"
    )
    figure(SECTION, "outbox sweeps until empty", sweeps)
    figure(SECTION, "records announced", f"{len(announced)} of {len(good_ids)}")


# -- the refresh handler ------------------------------------------------------------------------
REFRESH_SECTION = "faults: throttling/5xx on every AWS call of the refresh handler"
N_REFRESH = 30
OUTAGE_AT = range(10, 13)  # the refreshes of these trials meet the write outage


def test_every_refresh_makes_its_version_or_is_dead_lettered(table, monkeypatch):
    """Trials land one by one; each "Trial Recorded" is refreshed under faults on every
    DynamoDB call: a message succeeds (a new version, or "inputs unchanged") or ends in the
    DLQ, and after a redrive the latest version is computed from every trial."""
    sqs = boto3.client("sqs")
    refresh_q, refresh_dlq = queue_with_dlq(sqs, "refresh", MAX_RECEIVE_COUNT)
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    records, prices = RecordStore(table), PriceStore(table)
    records.put_workload(workload(workload_id="wl-1"), "2026-11-30T08:00:00+00:00")
    records.put_trial(trial("t-0", count=2), "2026-11-30T08:10:00+00:00", "api")
    SnapshotService(store=prices).commit(snapshot(instance_quote("trn2.48xlarge", "36")))
    estimates = EstimateService(records, prices)
    created = estimates.create("wl-1", candidate("trn2.48xlarge", 2), Assumptions())

    no_retry_sleep(monkeypatch)
    no_retry_quota(monkeypatch)  # each message's calls retried as the first ones were
    outage = {"on": False}  # DynamoDB writes refused for a while, as in a regional event

    def writes_down(service: str, operation: str, body: bytes):
        return UNAVAILABLE if outage["on"] and operation == "PutItem" else None

    faults = FaultInjector(rate=0.3, seed=7, services=frozenset({"dynamodb"}), outage=writes_down)
    faults.install(monkeypatch)
    module = load_handler("refresh")

    def handler(e, ctx):
        with faults.active():
            return module.handler(e, ctx)

    poller = QueuePoller(sqs, refresh_q, handler, FakeContext())
    succeeded = failed = 0
    for k in range(1, N_REFRESH + 1):
        outage["on"] = k in OUTAGE_AT
        records.put_trial(trial(f"t-{k}", count=2, work=3.6e8 + k), f"2026-12-01T{k:05d}", "x")
        detail = {"workload_id": "wl-1", "trial_id": f"t-{k}", "outcome": "recorded"}
        body = {"source": "trncost", "detail-type": DetailType.trial_recorded, "detail": detail}
        sqs.send_message(QueueUrl=refresh_q, MessageBody=json.dumps(body))
        delivered = poller.drain(max_rounds=100)
        succeeded += delivered.processed
        failed += delivered.failed
    dead = depth(sqs, refresh_dlq)
    assert succeeded + dead == N_REFRESH
    assert dead >= len(OUTAGE_AT)

    outage["on"] = False
    ops = QueueOps(client=sqs)
    moved = ops.redrive_by_copy(ops.resolve(refresh_dlq)).moved
    after = poller.drain(max_rounds=100)
    assert after.processed == moved and depth(sqs, refresh_dlq) == 0

    numbers = [v["version"] for v in records.list_versions(created.estimate_id)]
    assert numbers == list(range(1, len(numbers) + 1))
    # the latest version has every trial in it: one more refresh finds nothing to do
    (settled,) = estimates.refresh_workload("wl-1", "settle")
    assert settled.version is None and settled.reason == "inputs unchanged"

    figure(REFRESH_SECTION, "refresh events sent", N_REFRESH)
    figure(
        REFRESH_SECTION,
        "faults injected",
        f"{faults.total} of {sum(faults.attempts.values())} DynamoDB attempts "
        f"({faults.injected['throttling']} throttling, {faults.injected['5xx']} 5xx "
        f"incl. {faults.injected['outage']} from a write outage)",
    )
    figure(REFRESH_SECTION, "failed deliveries (came back)", failed)
    figure(REFRESH_SECTION, "succeeded + DLQ", f"{succeeded} + {dead} = {N_REFRESH}")
    figure(REFRESH_SECTION, "redriven from the DLQ, then succeeded", f"{moved}, {after.processed}")
    figure(REFRESH_SECTION, "versions", f"1..{numbers[-1]}, no gap; the latest has every trial")
