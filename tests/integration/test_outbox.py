"""The outbox (issue 23): a write that announces itself commits its record and its event
together, answers success even while EventBridge is down, and the sweeper delivers the event
once EventBridge is back; a record DynamoDB would refuse is a 413 naming its field; an estimate
is stored with its first version or not at all (moto DynamoDB, EventBridge → SQS)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from tests.support.factories import candidate, instance_quote, snapshot, trial, workload
from trncost.bus import EventPublisher
from trncost.errors import PayloadTooLarge
from trncost.events import DetailType
from trncost.model import Assumptions
from trncost.services.estimates import EstimateService
from trncost.services.outbox import Outbox
from trncost.services.snapshots import SnapshotService
from trncost.services.trials import TrialService
from trncost.store.outbox import OutboxStore
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore

WL = "wl-1"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class FlakyBus(EventPublisher):
    """EventBridge down while `down` is set: PutEvents answers 503 (after botocore's retries)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.down = False

    def publish(self, detail_type, detail, resources=None):  # type: ignore[no-untyped-def]
        if self.down:
            raise ClientError(
                {
                    "Error": {"Code": "ServiceUnavailable", "Message": "down"},
                    "ResponseMetadata": {"HTTPStatusCode": 503},
                },
                "PutEvents",
            )
        return super().publish(detail_type, detail, resources)


@pytest.fixture
def world(table, bus):
    records = RecordStore(table)
    records.put_workload(workload(workload_id=WL), "2026-12-01T08:00:00+00:00")
    publisher = FlakyBus(bus.name)
    clock = Clock()
    outbox = Outbox(OutboxStore(table), publisher, clock)
    return records, publisher, outbox, clock


def _types(bus) -> list[str]:
    return [e["detail-type"] for e in bus.received()]


def test_a_trial_recorded_while_eventbridge_is_down_is_announced_by_the_sweeper(world, bus):
    records, publisher, outbox, clock = world
    trials = TrialService(records, clock, outbox=outbox)
    # Given EventBridge down
    publisher.down = True
    # When a trial is recorded
    assert trials.record(trial("t-1", workload_id=WL), "api") is True
    # Then the record is there, the call succeeded, and its event waits in the outbox
    assert records.get_trial("t-1", WL) is not None
    assert bus.received() == []
    waiting = outbox.store.pending()
    assert [e.detail_type for e in waiting] == [DetailType.trial_recorded]
    assert outbox.sweep().failed == 1  # still down: it stays, its attempt counted
    # When EventBridge is back and the sweeper runs
    publisher.down = False
    swept = outbox.sweep()
    # Then the event is delivered once and nothing waits
    assert (swept.sent, swept.left) == (1, 0)
    received = bus.received()
    assert [e["detail"]["trial_id"] for e in received] == ["t-1"]
    assert outbox.store.pending() == []


def test_a_repeated_trial_record_writes_and_announces_nothing(world, bus):
    records, _, outbox, clock = world
    trials = TrialService(records, clock, outbox=outbox)
    assert trials.record(trial("t-1", workload_id=WL), "api") is True
    assert trials.record(trial("t-1", workload_id=WL), "api") is False
    assert _types(bus) == ["Trial Recorded"]
    assert outbox.store.pending() == []


def test_a_snapshot_published_while_eventbridge_is_down_is_latest_and_announced_later(table, bus):
    prices = PriceStore(table)
    publisher = FlakyBus(bus.name)
    svc = SnapshotService(store=prices, publisher=publisher, clock=Clock())
    publisher.down = True
    result = svc.commit(snapshot(instance_quote("trn2.48xlarge", "36")))
    # Then it is latest at once, the call succeeded, and the event waits
    assert prices.latest_pointer()["snapshot_id"] == result.snapshot.snapshot_id
    assert result.diff is not None and bus.received() == []
    publisher.down = False
    assert svc.outbox is not None and svc.outbox.sweep().sent == 1
    [event] = bus.received()
    assert event["detail-type"] == "Price Snapshot Taken"
    assert event["detail"]["snapshot_id"] == result.snapshot.snapshot_id


def test_a_record_over_the_item_limit_is_a_413_naming_its_field(world):
    records, _, outbox, clock = world
    trials = TrialService(records, clock, outbox=outbox)
    # Given a trial whose notes are each within bounds but together too large for one item
    big = trial("t-big", workload_id=WL, notes=["n" * 3999] * 100)
    # When it is recorded  Then it is refused naming the notes, and nothing is stored
    with pytest.raises(PayloadTooLarge) as refused:
        trials.record(big, "api")
    assert refused.value.fields == ["notes"]
    assert records.get_trial("t-big", WL) is None
    assert outbox.store.pending() == []


def test_an_estimate_is_stored_with_its_first_version_or_not_at_all(table, monkeypatch):
    records, prices = RecordStore(table), PriceStore(table)
    records.put_workload(workload(workload_id=WL), "2026-12-01T08:00:00+00:00")
    records.put_trial(trial("t-1", workload_id=WL), "2026-12-01T08:30:00+00:00", "api")
    SnapshotService(store=prices).commit(snapshot(instance_quote("trn2.48xlarge", "36")))
    svc = EstimateService(records, prices)
    # Given DynamoDB refusing the transaction that writes the definition and version 1
    real = records.table.meta.client.transact_write_items

    def refuse(**kwargs):
        raise ClientError(
            {
                "Error": {"Code": "InternalServerError", "Message": "boom"},
                "ResponseMetadata": {"HTTPStatusCode": 500},
            },
            "TransactWriteItems",
        )

    monkeypatch.setattr(records.table.meta.client, "transact_write_items", refuse)
    with pytest.raises(ClientError):
        svc.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    # Then no definition is listed without its version
    assert records.readable_definitions(WL) == []
    monkeypatch.setattr(records.table.meta.client, "transact_write_items", real)
    created = svc.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    assert created.version == 1
    assert svc.version(created.estimate_id).version == 1
