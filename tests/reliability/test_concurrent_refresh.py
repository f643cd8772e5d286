"""Concurrent estimate refreshes for one workload → versions strictly increasing, none lost.

Trials land on one workload from many ingests at once, and each "Trial Recorded" starts a
refresh: here N threads, each a separate refresh Lambda sandbox with its own clients, write a
trial and run the real refresh handler on its "Trial Recorded" event at the same moment, for
two estimates of the workload (one following the latest prices, one pinned to a snapshot).
"""

from __future__ import annotations

import json
import threading

import boto3
import pytest

from tests.support.factories import candidate, instance_quote, snapshot, trial, workload
from tests.support.handlers import FakeContext, load_handler
from tests.support.reliability_kit import figure, own_metrics, sqs_record
from trncost.events import DetailType
from trncost.model import Assumptions
from trncost.services.estimates import EstimateService
from trncost.services.snapshots import SnapshotService
from trncost.settings import TABLE_NAME_ENV
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore

pytestmark = pytest.mark.slow

WL = "wl-1"
THREADS = 8
ROUNDS = 3
ARN = "arn:aws:sqs:us-east-1:123456789012:refresh"
SECTION = "concurrent refreshes of one workload"


@pytest.fixture
def estimates(table, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    records, prices = RecordStore(table), PriceStore(table)
    records.put_workload(workload(workload_id=WL), "2026-11-30T08:00:00+00:00")
    records.put_trial(trial("t-0", count=2), "2026-11-30T08:10:00+00:00", "api")
    SnapshotService(store=prices).commit(
        snapshot(instance_quote("trn2.48xlarge", "36")).model_copy(
            update={"snapshot_id": "ps-1", "taken_at": "2026-11-30T08:00:00+00:00"}
        )
    )
    svc = EstimateService(records, prices)
    follows = svc.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    pinned = svc.create(WL, candidate("trn2.48xlarge", 2), Assumptions(), snapshot_id="ps-1")
    return svc, [follows.estimate_id, pinned.estimate_id]


def sandbox(results: list):
    """A fresh load of the refresh handler with its own clients, which reports what each
    refresh returned."""
    module = load_handler("refresh")
    own_metrics(module)
    svc = module.services.estimates
    _ = svc.records.table, svc.prices.table  # created here, used in the thread
    route = module.route_refresh

    def reporting(service, event):
        out = route(service, event)
        results.extend(out)
        return out

    module.route_refresh = reporting
    return module, RecordStore(
        svc.records.table_name, boto3.resource("dynamodb").Table(svc.records.table_name)
    )


def trial_recorded(trial_id: str) -> str:
    return json.dumps(
        {
            "id": f"evt-{trial_id}",
            "source": "trncost",
            "detail-type": DetailType.trial_recorded.value,
            "detail": {"workload_id": WL, "trial_id": trial_id, "outcome": "recorded"},
        }
    )


def test_versions_strictly_increase_and_none_is_lost(estimates):
    svc, estimate_ids = estimates
    results: list = []
    refreshes = 0
    for r in range(ROUNDS):
        sandboxes = [sandbox(results) for _ in range(THREADS)]
        barrier = threading.Barrier(THREADS)
        errors: list[BaseException] = []

        def refresh(i, module, store, r=r, barrier=barrier, errors=errors):
            trial_id = f"t-{r}-{i}"
            barrier.wait()
            try:
                store.put_trial(
                    trial(trial_id, count=2, work=3.6e8 * (1 + i / 10)), f"2026-12-0{r + 1}", "x"
                )
                out = module.handler(
                    {"Records": [sqs_record(trial_recorded(trial_id), ARN)]}, FakeContext()
                )
                assert out["batchItemFailures"] == []
            except BaseException as exc:
                errors.append(exc)

        threads = [
            threading.Thread(target=refresh, args=(i, m, s)) for i, (m, s) in enumerate(sandboxes)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        refreshes += THREADS

    made = [(x.estimate_id, x.version) for x in results if x.version is not None]
    for estimate_id in estimate_ids:
        numbers = [v["version"] for v in svc.records.list_versions(estimate_id)]
        mine = sorted(v for e, v in made if e == estimate_id)
        # strictly increasing from 1, no gap, no number taken twice
        assert numbers == list(range(1, len(numbers) + 1))
        # none lost: every version a refresh reported is stored, and every stored one after
        # the first was reported by exactly one refresh
        assert mine == numbers[1:]
    # and after the race, one more refresh finds the latest versions computed from every trial
    settled = svc.refresh_workload(WL, "settle")
    stale = [s.estimate_id for s in settled if s.version is not None]

    figure(SECTION, "refresh invocations", f"{refreshes} ({ROUNDS} rounds of {THREADS} at once)")
    figure(SECTION, "estimates refreshed", len(estimate_ids))
    figure(SECTION, "versions made", f"{len(made)} (numbers 1..n, no gap, none lost)")
    # Not asserted (yet): a refresh that read the trials before a faster one can still store
    # the newest version, computed from fewer trials (EstimateService.recompute takes the next
    # number without checking that its inputs are still current); the next event repairs it.
    figure(
        SECTION,
        "estimates whose latest misses a trial",
        f"{len(stale)} of {len(estimate_ids)} (refreshed on the next event)",
    )
