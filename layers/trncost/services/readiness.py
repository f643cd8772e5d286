"""The Trainium3 readiness watch: the scheduled price job notices when something the stage's
estimates wait on appears, re-runs every estimate that depends on it, and each new version whose
own decision differs from the one before is announced as "Estimate Decision Changed" (with
before and after; an SNS topic carries it to subscribers: stacks/pricing.py, docs/trainium3.md).

What an estimate waits on (its latest version):

    price:<key>          a PENDING price of its total (AWS has published no Trn3 price)
    capacity:<key>       the stage's Capacity Block quote of its instance type, still PENDING
                         (when the stage catalog asks for blocks: catalog.capacity_block_hours)
    instance_type:<t>    its instance type, not yet in botocore's EC2 model (1.44 names no trn3)

A price or capacity quote has appeared when the new snapshot prices it; an instance type when
botocore's model (the layer's botocore: it changes when the stage is redeployed with a newer one)
names it and did not at the last check (the watch's memory, store/readiness.py). An estimate
pinned to a snapshot keeps its prices: a price appearing does not re-run it. A key no estimate
can get because the stage catalog does not price it is listed (`not_in_catalog`), never waited
on silently.

The re-run is the estimate service's own refresh (a version only when its figures change), so
a refresh Lambda that got there first leaves nothing to do; the event is sent by whichever made
the version (EstimateService._announcement: written with it in the outbox), once.

References
----------
DESIGN.md, "How data flows" (the prices Lambda, "Price Snapshot Taken", the refresh); issue 26,
item 3.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from trncost.model.candidate import PurchaseOption
from trncost.model.catalog import Catalog
from trncost.model.price import PriceKey, PriceSnapshot, UsageItem
from trncost.model.records import EstimateDefinition, EstimateVersion, UnreadableDefinition
from trncost.services.estimates import EstimateService, Refreshed
from trncost.store.readiness import WatchStore

log = logging.getLogger(__name__)


def _side(v: EstimateVersion) -> dict[str, Any]:
    est, d = v.estimate, v.decision
    assert d is not None
    return {
        "version": v.version,
        "action": d.action.value,
        "reasons": sorted({r.code for r in d.reasons}),
        "summary": d.summary,
        "status": est.status,
        "snapshot_id": est.snapshot_id,
        "total_usd": None if est.total_usd is None else str(est.total_usd),
        "total_formula": est.total_formula,
        "pending_prices": sorted(t.price_key for t in est.pending_terms),
    }


def decision_change(
    definition: EstimateDefinition, before: EstimateVersion, after: EstimateVersion
) -> dict[str, Any] | None:
    """The "Estimate Decision Changed" detail when `after`'s own decision differs from
    `before`'s (its action, or its set of reason codes) or what it rests on turned (its total
    became known: a PENDING price appeared, or the reverse); None when neither, or when either
    version has no decision kept (stored before decisions were).

    Returns
    -------
    dict or None
        estimate id, workload, candidate, what made the new version, `before` and `after`
        (version, action, reason codes, summary, status, total or its formula, PENDING prices),
        the reasons added and removed, and the new version's report URL.
    """
    b, a = before.decision, after.decision
    if b is None or a is None:
        return None
    codes_b = {r.code for r in b.reasons}
    codes_a = {r.code for r in a.reasons}
    priced = (before.estimate.total_usd is None) != (after.estimate.total_usd is None)
    if b.action == a.action and codes_b == codes_a and not priced:
        return None
    eid = definition.estimate_id
    return {
        "estimate_id": eid,
        "workload_id": definition.workload_id,
        "candidate": after.estimate.candidate.label,
        "instance_type": after.estimate.candidate.instance_type,
        "trigger": after.reason,
        "action_changed": b.action != a.action,
        # a PENDING price appeared (or went): the total is now a number (or a formula)
        "total_known_changed": priced,
        "before": _side(before),
        "after": _side(after),
        "reasons_added": sorted(codes_a - codes_b),
        "reasons_removed": sorted(codes_b - codes_a),
        "report_url": f"/estimates/{eid}/report?version={after.version}",
    }


@dataclass
class WatchResult:
    """One check: what the stage's estimates wait on (item → estimate ids), what appeared, the
    estimates re-run (and what became of each), and the keys no snapshot can price because the
    stage catalog does not list them."""

    snapshot_id: str
    awaited: dict[str, list[str]] = field(default_factory=dict)
    appeared: list[str] = field(default_factory=list)
    rerun: list[Refreshed] = field(default_factory=list)
    not_in_catalog: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "awaited": {k: len(v) for k, v in sorted(self.awaited.items())},
            "appeared": self.appeared,
            "rerun": [r.__dict__ for r in self.rerun],
            "new_versions": sum(r.version is not None for r in self.rerun),
            "not_in_catalog": self.not_in_catalog,
        }


def _ec2_types() -> frozenset[str]:
    from trncost.pricing.names import ec2_instance_types

    return ec2_instance_types()


class ReadinessWatch:
    def __init__(
        self,
        estimates: EstimateService,
        store: WatchStore,
        catalog: Catalog | None,
        known_types: Callable[[], frozenset[str]] = _ec2_types,
    ) -> None:
        self.estimates = estimates
        self.records = estimates.records
        self.store = store
        self.catalog = catalog
        self.known_types = known_types  # botocore's EC2 model (tests pass their own)

    def _latest(self) -> list[tuple[EstimateDefinition, EstimateVersion]]:
        found: list[tuple[EstimateDefinition, EstimateVersion]] = []
        cursor = None
        while True:
            ids, cursor = self.records.workload_ids(limit=100, cursor=cursor)
            for workload_id in ids:
                for definition in self.records.readable_definitions(workload_id):
                    if isinstance(definition, UnreadableDefinition):
                        continue
                    try:
                        latest = self.records.get_version(definition.estimate_id)
                    except ValidationError:
                        continue  # the refresh records it as failing
                    if latest is not None:
                        found.append((definition, latest))
            if cursor is None:
                return found

    def awaited(
        self, latest: list[tuple[EstimateDefinition, EstimateVersion]], snapshot: PriceSnapshot
    ) -> dict[str, list[str]]:
        """What each estimate waits on (module docstring), item → estimate ids."""
        known = self.known_types()
        blocks = self.catalog is not None and bool(self.catalog.capacity_block_hours)
        out: dict[str, set[str]] = {}
        for definition, version in latest:
            est, eid = version.estimate, definition.estimate_id
            for term in est.pending_terms:
                out.setdefault(f"price:{term.price_key}", set()).add(eid)
            itype = est.candidate.instance_type.removeprefix("ml.")
            if itype not in known:
                out.setdefault(f"instance_type:{itype}", set()).add(eid)
            if blocks and not est.candidate.on_sagemaker:
                key = PriceKey.for_instance(
                    itype, est.candidate.region, PurchaseOption.capacity_block
                )
                if snapshot.quote_for(key).is_pending:
                    out.setdefault(f"capacity:{key}", set()).add(eid)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def _in_catalog(self, item: str) -> bool:
        """Whether the stage catalog prices the key of a price or capacity item."""
        if self.catalog is None or not item.startswith(("price:", "capacity:")):
            return True
        key = PriceKey.model_validate(item.split(":", 1)[1])
        if key.region not in self.catalog.regions:
            return False
        usage = {u.value for u in UsageItem}
        return key.item in usage or key.item in self.catalog.instance_types

    def check(self, snapshot: PriceSnapshot, checked_at: str) -> WatchResult:
        """Notice what appeared in `snapshot` (and in botocore's model) that the stage's
        estimates wait on, and re-run the estimates that depend on it, each on its own.

        Returns
        -------
        WatchResult
        """
        latest = self._latest()
        by_id = {d.estimate_id: d for d, _ in latest}
        waits = self.awaited(latest, snapshot)
        result = WatchResult(snapshot.snapshot_id, awaited=waits)
        known = self.known_types()
        unknown_before = self.store.unknown_types()
        appeared: dict[str, list[str]] = {}
        for item, ids in waits.items():
            kind, _, name = item.partition(":")
            if kind in ("price", "capacity"):
                if not snapshot.quote_for(PriceKey.model_validate(name)).is_pending:
                    # a pinned estimate keeps its snapshot: a new price does not move it
                    follow = [i for i in ids if by_id[i].snapshot_id is None]
                    if follow:
                        appeared[item] = follow
                elif not self._in_catalog(item):
                    result.not_in_catalog.append(item)
        for itype in sorted(unknown_before & known):
            ids = sorted(
                d.estimate_id
                for d, v in latest
                if v.estimate.candidate.instance_type.removeprefix("ml.") == itype
            )
            if ids:
                appeared[f"instance_type:{itype}"] = ids
        still_unknown = {i.split(":", 1)[1] for i in waits if i.startswith("instance_type:")}
        self.store.put(still_unknown, checked_at, snapshot.snapshot_id)
        result.appeared = sorted(appeared)
        done: set[str] = set()
        for item in result.appeared:
            for eid in appeared[item]:
                if eid in done:
                    continue
                done.add(eid)
                trigger = f"readiness watch: {item} appeared (snapshot {snapshot.snapshot_id})"
                result.rerun.append(self.estimates.refresh_one(by_id[eid], trigger))
        log.info("readiness watch", extra=result.summary())
        return result
