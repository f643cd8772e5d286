"""One poison quote is isolated (issue 23): a stored quote that no longer reads (a price above
its bound, another basis) is listed as rejected with its reason, and the snapshot stays usable
for every other key: an estimate whose own quote is fine is computed, and one that needs the
poisoned key sees it PENDING with the reason."""

from __future__ import annotations

import json

from tests.support.factories import candidate, instance_quote, snapshot, trial, workload
from trncost.model import Assumptions
from trncost.model.price import PriceKey
from trncost.services.estimates import EstimateService
from trncost.services.snapshots import SnapshotService
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore
from trncost.store.schema import quote_sk, snapshot_pk

WL = "wl-1"


def _poison(prices: PriceStore, snapshot_id: str, key: str, **changes) -> None:
    item = prices.table.get_item(Key={"pk": snapshot_pk(snapshot_id), "sk": quote_sk(key)})
    stored = json.loads(item["Item"]["quote"])
    stored.update(changes)
    prices.table.put_item(Item={**item["Item"], "quote": json.dumps(stored)})


def test_a_poison_quote_is_rejected_and_the_rest_of_the_snapshot_is_used(table):
    records, prices = RecordStore(table), PriceStore(table)
    records.put_workload(workload(workload_id=WL), "2026-12-01T08:00:00+00:00")
    for tid, itype in (("t-2", "trn2.48xlarge"), ("t-3", "trn1.32xlarge")):
        records.put_trial(trial(tid, instance_type=itype, workload_id=WL), "2026-12-01", "api")
    taken = SnapshotService(store=prices).commit(
        snapshot(instance_quote("trn2.48xlarge", "36"), instance_quote("trn1.32xlarge", "60"))
    )
    sid = taken.snapshot.snapshot_id
    # Given the stored trn1 quote poisoned: its price far above any bound
    trn1 = str(PriceKey.for_instance("trn1.32xlarge", "us-east-1"))
    stored = json.loads(
        prices.table.get_item(Key={"pk": snapshot_pk(sid), "sk": quote_sk(trn1)})["Item"]["quote"]
    )
    stored["tiers"][0]["usd"] = "1e30"
    _poison(prices, sid, trn1, tiers=stored["tiers"])
    # When the snapshot is read (a fresh store: snapshots are cached per process)
    fresh = PriceStore(table).get_snapshot(sid)
    # Then it reads, without that quote, which is listed as rejected with its reason
    assert fresh is not None
    assert trn1 not in {str(q.key) for q in fresh.quotes}
    [rejected] = [r for r in fresh.rejected if r.key == trn1]
    assert "stored quote unreadable" in rejected.reason
    # and an estimate on trn2 is computed; one on trn1 has its instance price PENDING
    svc = EstimateService(RecordStore(table), PriceStore(table))
    ok = svc.create(WL, candidate("trn2.48xlarge", 2), Assumptions())
    assert ok.estimate.status == "complete" and ok.estimate.total_usd is not None
    pending = svc.create(WL, candidate("trn1.32xlarge", 2), Assumptions())
    assert pending.estimate.status == "incomplete"
    reasons = [t.reason for t in pending.estimate.pending_terms]
    assert any("rejected: stored quote unreadable" in r for r in reasons), reasons
