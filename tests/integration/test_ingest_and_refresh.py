"""Ingest exactly once, reject what cannot be ingested, and refresh estimates into new versions
only when their inputs change (moto DynamoDB, EventBridge → SQS)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from tests.support.events import load_event
from tests.support.factories import candidate, instance_quote, snapshot, trial, workload
from trncost.bus import EventPublisher
from trncost.errors import Busy
from trncost.events import DetailType
from trncost.model import Assumptions
from trncost.services.estimates import EstimateService
from trncost.services.ingest import IngestService
from trncost.store.ingest import IngestStore
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore

WL = "llama31-8b-cpt"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class FakeCollector:
    """Stands in for CloudWatch/SageMaker: a fixed measurement per job."""

    def __init__(self, fail: int = 0) -> None:
        self.calls = 0
        self.fail = fail

    def collect(self, ctx, wl):
        self.calls += 1
        if self.fail:
            self.fail -= 1
            raise ClientError(  # what botocore raises once its retries are spent
                {
                    "Error": {"Code": "ThrottlingException", "Message": "throttled"},
                    "ResponseMetadata": {"HTTPStatusCode": 400},
                },
                "GetMetricData",
            )
        t = trial(
            ctx.trial_id,
            instance_type="trn2.48xlarge",
            count=2,
            phase=ctx.phase.value,
            workload_id=ctx.workload_id,
        )
        return t, ["no eval metric published"]


@pytest.fixture
def stores(table):
    records, claims = RecordStore(table), IngestStore(table)
    records.put_workload(workload(workload_id=WL), "2026-11-30T08:00:00+00:00")
    return records, claims


def sagemaker_event(run="1"):
    e = load_event("sagemaker_training_job_completed")
    e["detail"]["Tags"]["trncost:run"] = run
    return e


def test_an_event_becomes_one_trial_record_and_a_trial_recorded_event(stores, bus):
    records, claims = stores
    svc = IngestService(records, claims, FakeCollector(), EventPublisher(bus.name), Clock())
    out = svc.ingest(sagemaker_event())
    assert out.status == "recorded" and out.trial_id == "sagemaker-llama31-8b-trn2-baseline-01"
    assert records.get_trial(out.trial_id).workload_id == WL
    assert records.get_trial(out.trial_id).notes == ["no eval metric published"]
    (e,) = bus.received()
    assert e["detail-type"] == DetailType.trial_recorded
    assert e["detail"]["trial_id"] == out.trial_id and e["detail"]["workload_id"] == WL


@pytest.mark.parametrize("times", [1, 2, 5, 10])
def test_the_same_event_delivered_n_times_yields_one_record(stores, times):
    records, claims = stores
    collector = FakeCollector()
    svc = IngestService(records, claims, collector, clock=Clock())
    outcomes = [svc.ingest(sagemaker_event()).status for _ in range(times)]
    assert outcomes == ["recorded"] + ["duplicate"] * (times - 1)
    assert len(records.all_trials(WL)) == 1 and collector.calls == 1


def test_concurrent_deliveries_yield_one_record(stores):
    records, claims = stores
    collector = FakeCollector()
    svc = IngestService(records, claims, collector, clock=Clock())
    barrier, results = threading.Barrier(6), []

    def deliver():
        # each delivery is its own invocation with its own clients
        own = IngestService(
            RecordStore(records.table_name),
            IngestStore(claims.table_name),
            collector,
            clock=Clock(),
        )
        barrier.wait()
        try:
            results.append(own.ingest(sagemaker_event()).status)
        except Busy:
            results.append("busy")

    threads = [threading.Thread(target=deliver) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("recorded") == 1
    assert set(results) <= {"recorded", "duplicate", "busy"}
    # the busy ones come back later (the queue redelivers) and find it done
    assert svc.ingest(sagemaker_event()).status == "duplicate"
    assert len(records.all_trials(WL)) == 1


def test_a_later_terminal_event_for_the_same_job_replaces_nothing(stores):
    records, claims = stores
    svc = IngestService(records, claims, FakeCollector(), clock=Clock())
    first = svc.ingest(sagemaker_event())
    stopped = sagemaker_event()
    stopped["detail"]["TrainingJobStatus"] = "Stopped"
    out = svc.ingest(stopped)
    assert out.status == "already_recorded" and out.trial_id == first.trial_id
    assert len(records.all_trials(WL)) == 1


def test_a_failed_collection_releases_the_claim_and_the_retry_succeeds(stores):
    records, claims = stores
    svc = IngestService(records, claims, FakeCollector(fail=1), clock=Clock())
    with pytest.raises(ClientError, match="throttled"):
        svc.ingest(sagemaker_event())
    assert records.all_trials(WL) == []
    assert svc.ingest(sagemaker_event()).status == "recorded"


def test_a_crashed_delivery_is_taken_over_after_its_lease(stores):
    records, claims = stores
    clock = Clock()
    svc = IngestService(records, claims, FakeCollector(), clock=clock, lease_s=60)
    ctx_key = "sagemaker#us-east-1#llama31-8b-trn2-baseline-01#Completed"
    claims.claim(ctx_key, int(clock.now.timestamp()), 60)  # a delivery that then died
    with pytest.raises(Busy):
        svc.ingest(sagemaker_event())
    clock.now += timedelta(minutes=5)
    assert svc.ingest(sagemaker_event()).status == "recorded"


@pytest.mark.parametrize(
    ("name", "mutate", "reason"),
    [
        ("sagemaker_training_job_untagged", None, "no trncost:workload tag"),
        (
            "sagemaker_training_job_completed",
            lambda e: e["detail"]["Tags"].update({"trncost:workload": "nope"}),
            "unknown workload nope",
        ),
        ("sagemaker_training_job_completed", lambda e: e.update(source="aws.ec2"), "unknown event"),
    ],
)
def test_unusable_events_are_recorded_as_rejected_ingests(stores, name, mutate, reason):
    records, claims = stores
    e = load_event(name)
    if mutate:
        mutate(e)
    svc = IngestService(records, claims, FakeCollector(), clock=Clock())
    out = svc.ingest(e)
    assert out.status == "rejected" and reason in out.reason
    (rejected,) = claims.rejected()
    assert reason in rejected.reason and rejected.event_id == e["id"]
    svc.ingest(e)  # redelivered: still one rejection
    assert len(claims.rejected()) == 1


# -- refresh ----------------------------------------------------------------------------------
@pytest.fixture
def priced(stores, table):
    from trncost.services.snapshots import SnapshotService

    prices = PriceStore(table)
    svc = SnapshotService(store=prices, clock=Clock())
    svc.commit(
        snapshot(instance_quote("trn2.48xlarge", "36")).model_copy(
            update={"snapshot_id": "ps-1", "taken_at": "2026-11-30T08:00:00+00:00"}
        )
    )
    return stores[0], prices


def test_estimates_get_a_new_version_when_a_trial_lands_and_only_then(priced, stores):
    records, prices = priced
    records.put_trial(trial("t-1", count=2, workload_id=WL), "2026-11-30T08:10:00+00:00", "api")
    est = EstimateService(records, prices, Clock())
    v1 = est.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    assert v1.version == 1 and v1.estimate.status == "complete"
    # nothing changed: a repeated refresh adds nothing
    (same,) = est.refresh_workload(WL, "trial recorded")
    assert same.version is None and same.reason == "inputs unchanged"
    records.put_trial(
        trial("t-2", count=2, workload_id=WL, work=7.2e8), "2026-11-30T08:20:00+00:00", "api"
    )
    (changed,) = est.refresh_workload(WL, "trial t-2 recorded")
    assert changed.version == 2
    v2 = records.get_version(v1.estimate_id)
    assert v2.estimate.steady_throughput > v1.estimate.steady_throughput
    # the old version stays readable
    assert records.get_version(v1.estimate_id, 1).estimate == v1.estimate
    assert [v["version"] for v in records.list_versions(v1.estimate_id)] == [1, 2]


def test_a_new_price_snapshot_refreshes_estimates_that_follow_latest(priced):
    records, prices = priced
    records.put_trial(trial("t-1", count=2, workload_id=WL), "2026-11-30T08:10:00+00:00", "api")
    est = EstimateService(records, prices, Clock())
    follows = est.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    pinned = est.create(WL, candidate("trn2.48xlarge", 2), Assumptions(), snapshot_id="ps-1")
    from trncost.services.snapshots import SnapshotService

    SnapshotService(store=prices, clock=Clock()).commit(
        snapshot(instance_quote("trn2.48xlarge", "30")).model_copy(
            update={"snapshot_id": "ps-2", "taken_at": "2026-11-30T09:30:00+00:00"}
        )
    )
    refreshed = est.refresh_for_snapshot("ps-1", "ps-2")
    assert [(r.estimate_id, r.version) for r in refreshed] == [(follows.estimate_id, 2)]
    assert records.get_version(follows.estimate_id).estimate.snapshot_id == "ps-2"
    assert records.get_version(pinned.estimate_id).version == 1


def test_concurrent_refreshes_give_strictly_increasing_versions_none_lost(priced):
    records, prices = priced
    est = EstimateService(records, prices, Clock())
    records.put_trial(trial("t-1", count=2, workload_id=WL), "2026-11-30T08:10:00+00:00", "api")
    v1 = est.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    base = records.get_version(v1.estimate_id).estimate
    barrier = threading.Barrier(8)
    taken = []

    def add():
        own = RecordStore(records.table_name)  # one per "invocation": boto3 resources are
        barrier.wait()  # not shared across threads
        taken.append(own.add_version(v1.estimate_id, base, "t", "race", "fp").version)

    threads = [threading.Thread(target=add) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == list(range(2, 10))
    assert [v["version"] for v in records.list_versions(v1.estimate_id)] == list(range(1, 10))


def test_a_slow_refresh_never_stores_older_evidence_as_the_newest_version(priced):
    """Refresh A reads the inputs, then refresh B (which sees a new trial) stores the next
    version first: A must not store a newer version computed from its older inputs."""
    records, prices = priced
    records.put_trial(trial("t-1", count=2, workload_id=WL), "2026-11-30T08:10:00+00:00", "api")
    est = EstimateService(records, prices, Clock())
    v1 = est.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    definition = records.get_estimate_definition(v1.estimate_id)
    slow = EstimateService(RecordStore(records.table_name), prices, Clock())
    real_input = slow._input
    state = {"paused": False}

    def input_then_let_the_other_refresh_win(d):
        inp = real_input(d)
        if not state["paused"]:
            state["paused"] = True
            records.put_trial(
                trial("t-2", count=2, workload_id=WL, work=7.2e8),
                "2026-11-30T08:20:00+00:00",
                "api",
            )
            fast = EstimateService(RecordStore(records.table_name), prices, Clock())
            assert fast.recompute(definition, "trial t-2 recorded").version == 2
        return inp

    slow._input = input_then_let_the_other_refresh_win
    result = slow.recompute(definition, "trial t-1 recorded (late)")
    latest = records.get_version(v1.estimate_id)
    # the slow refresh lost the race for version 2, re-read the inputs and found nothing new
    assert result.version is None and result.reason == "inputs unchanged"
    assert latest.version == 2
    assert {"t-1", "t-2"} <= {
        row.provenance.trial_ids[0] for row in latest.estimate.inputs if row.id.startswith("trial:")
    }


# -- trial ids per workload (issue 13) --------------------------------------------------------
def test_another_workloads_job_with_the_same_trial_id_is_recorded_under_its_own_workload(stores):
    # before: the second job was dropped as "already recorded" and showed up nowhere
    records, claims = stores
    records.put_workload(workload(workload_id="wl-b"), "2026-11-30T08:00:00+00:00")
    svc = IngestService(records, claims, FakeCollector(), clock=Clock())
    first = svc.ingest(sagemaker_event())
    other = sagemaker_event(run="2")
    other["detail"]["TrainingJobName"] = "team-b-job"
    other["detail"]["Tags"]["trncost:workload"] = "wl-b"
    other["detail"]["Tags"]["trncost:trial"] = first.trial_id
    second = svc.ingest(other)
    assert (first.status, second.status) == ("recorded", "recorded")
    assert first.trial_id == second.trial_id
    assert [t.workload_id for t in records.all_trials("wl-b")] == ["wl-b"]
    assert records.get_trial(first.trial_id, WL).workload_id == WL


def test_a_trial_id_taken_in_the_workload_with_other_content_is_a_rejected_ingest(stores):
    records, claims = stores
    svc = IngestService(records, claims, FakeCollector(), clock=Clock())
    first = svc.ingest(sagemaker_event())
    # a second job of the same workload names the same trial id: its record differs (phase)
    clash = sagemaker_event(run="2")
    clash["detail"]["TrainingJobName"] = "another-job"
    clash["detail"]["Tags"]["trncost:trial"] = first.trial_id
    clash["detail"]["Tags"]["trncost:phase"] = "target"
    out = svc.ingest(clash)
    assert out.status == "rejected" and "other content" in out.reason and "phase" in out.reason
    (rejected,) = claims.rejected()
    assert first.trial_id in rejected.reason
    assert records.get_trial(first.trial_id, WL).phase == "baseline"  # nothing replaced
