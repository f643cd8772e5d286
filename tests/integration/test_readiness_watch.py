"""The Trainium3 readiness watch (issue 26, item 3) on moto: after a snapshot the prices job
notices what the stage's estimates wait on that appeared (a price, an instance type in botocore's
model), re-runs the estimates that depend on it, and each new version whose decision differs is
announced as "Estimate Decision Changed" with before and after."""

from __future__ import annotations

import pytest

from tests.support.factories import candidate, instance_quote, snapshot, trial, workload
from trncost.events import DetailType
from trncost.model import Assumptions
from trncost.model.catalog import Catalog
from trncost.services.readiness import ReadinessWatch
from trncost.settings import Settings
from trncost.store.readiness import WatchStore
from trncost.wiring import Wiring

CATALOG = Catalog(
    instance_types=["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"], regions=["us-east-1"]
)
OK = {"metric": "eval_loss", "value": 1.9}


def _verified(trial_id, instance_type):
    return trial(
        trial_id,
        instance_type=instance_type,
        phase="target",
        count=2,
        work=3.6e8,
        wall={"steady_s": 3600, "compile_s": 600, "checkpoint_save_s": 20, "restart_s": 300},
        checkpointing={"saves": 2, "size_gb": 10, "restore_verified": True},
        reliability={"failures": 1},
        quality=OK,
        utilization={"neuroncore": 0.8},
    )


@pytest.fixture
def services(table, bus):
    wiring = Wiring(Settings(table_name=table, bus_name=bus.name, catalog=CATALOG))
    wiring.records.put_workload(workload(), "2026-01-01T00:00:00+00:00")
    return wiring


def _publish(services, *quotes, sid):
    snap = snapshot(*quotes).model_copy(update={"snapshot_id": sid, "taken_at": f"2026-0{sid[-1]}"})
    return services.snapshots.commit(snap).snapshot


def _decision_events(bus):
    return [e for e in bus.received() if e["detail-type"] == DetailType.estimate_decision_changed]


def test_a_trainium3_price_appearing_reruns_the_estimate_and_announces_the_decision(services, bus):
    # Given a measured trn3 candidate (two verified target runs) whose price AWS has not published
    for t in (_verified("t3-a", "trn3.48xlarge"), _verified("t3-b", "trn3.48xlarge")):
        services.trials.record(t, "api")
    first = _publish(services, instance_quote("trn2.48xlarge", "36"), sid="snap-1")
    created = services.estimates.create("wl-1", candidate("trn3.48xlarge", 2), Assumptions())
    assert created.estimate.status == "incomplete" and created.decision is not None
    watch = ReadinessWatch(services.estimates, WatchStore(services.settings.table_name), CATALOG)
    # When a snapshot without it is checked: the estimate waits on the price, nothing appeared
    quiet = watch.check(first, "2026-01-02")
    assert "price:AmazonEC2/us-east-1/trn3.48xlarge/on_demand" in quiet.awaited
    assert quiet.appeared == [] and quiet.rerun == []
    bus.received()  # drop the set-up's events
    # When the next snapshot prices trn3
    second = _publish(
        services,
        instance_quote("trn2.48xlarge", "36"),
        instance_quote("trn3.48xlarge", "30"),
        sid="snap-2",
    )
    found = watch.check(second, "2026-01-03")
    # Then the price appeared, the estimate was re-run into a complete version
    assert found.appeared == ["price:AmazonEC2/us-east-1/trn3.48xlarge/on_demand"]
    assert [r.version for r in found.rerun] == [2]
    latest = services.estimates.version(created.estimate_id)
    assert latest.estimate.status == "complete" and "readiness watch" in latest.reason
    # And "Estimate Decision Changed" says what it was and what it is
    (event,) = _decision_events(bus)
    d = event["detail"]
    assert d["estimate_id"] == created.estimate_id and d["total_known_changed"] is True
    assert d["before"]["version"] == 1 and d["after"]["version"] == 2
    assert d["before"]["pending_prices"] and not d["after"]["pending_prices"]
    assert d["before"]["total_usd"] is None and d["after"]["total_usd"] is not None
    assert set(d["reasons_removed"]) | set(d["reasons_added"]) or d["total_known_changed"]
    # And a second check of the same snapshot changes nothing and says nothing
    again = watch.check(second, "2026-01-04")
    assert again.appeared == [] and _decision_events(bus) == []


def test_a_projected_trainium3_estimate_is_announced_when_its_total_becomes_known(services, bus):
    # Given trn2 trials only: a trn3 estimate is projected, its price PENDING
    for t in (_verified("t2-a", "trn2.48xlarge"), _verified("t2-b", "trn2.48xlarge")):
        services.trials.record(t, "api")
    _publish(services, instance_quote("trn2.48xlarge", "36"), sid="snap-1")
    created = services.estimates.create("wl-1", candidate("trn3.48xlarge", 2), Assumptions())
    assert created.estimate.status == "projected" and created.estimate.total_usd is None
    bus.received()
    watch = ReadinessWatch(services.estimates, WatchStore(services.settings.table_name), CATALOG)
    snap = _publish(
        services,
        instance_quote("trn2.48xlarge", "36"),
        instance_quote("trn3.48xlarge", "30"),
        sid="snap-2",
    )
    watch.check(snap, "2026-01-03")
    latest = services.estimates.version(created.estimate_id)
    # Then it stays projected (still no trial of its own), now with a total, and it is announced
    assert latest.estimate.status == "projected" and latest.estimate.total_usd is not None
    assert latest.decision.action == "continue_trials"
    (event,) = _decision_events(bus)
    assert event["detail"]["total_known_changed"] and not event["detail"]["action_changed"]


def test_an_instance_type_appearing_in_botocores_model_reruns_its_estimates(services, bus):
    for t in (_verified("t3-a", "trn3.48xlarge"), _verified("t3-b", "trn3.48xlarge")):
        services.trials.record(t, "api")
    snap = _publish(services, instance_quote("trn3.48xlarge", "30"), sid="snap-1")
    created = services.estimates.create("wl-1", candidate("trn3.48xlarge", 2), Assumptions())
    known = {"types": frozenset({"trn2.48xlarge"})}
    watch = ReadinessWatch(
        services.estimates,
        WatchStore(services.settings.table_name),
        CATALOG,
        known_types=lambda: known["types"],
    )
    # Given a check while botocore's model does not name trn3.48xlarge
    first = watch.check(snap, "2026-01-02")
    assert first.awaited["instance_type:trn3.48xlarge"] == [created.estimate_id]
    # When the layer's botocore names it (a redeploy), the next check notices and re-runs
    known["types"] = frozenset({"trn2.48xlarge", "trn3.48xlarge"})
    found = watch.check(snap, "2026-01-03")
    assert found.appeared == ["instance_type:trn3.48xlarge"]
    assert [r.estimate_id for r in found.rerun] == [created.estimate_id]
    assert watch.check(snap, "2026-01-04").appeared == []  # once


def test_a_price_no_snapshot_can_bring_is_said_not_in_the_catalog(services, bus):
    narrow = Catalog(instance_types=["trn2.48xlarge"], regions=["us-east-1"])
    services.trials.record(_verified("t3-a", "trn3.48xlarge"), "api")
    snap = _publish(services, instance_quote("trn2.48xlarge", "36"), sid="snap-1")
    services.estimates.create("wl-1", candidate("trn3.48xlarge", 2), Assumptions())
    watch = ReadinessWatch(services.estimates, WatchStore(services.settings.table_name), narrow)
    found = watch.check(snap, "2026-01-02")
    assert found.not_in_catalog == ["price:AmazonEC2/us-east-1/trn3.48xlarge/on_demand"]
