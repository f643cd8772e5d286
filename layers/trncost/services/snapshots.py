"""Price snapshots: take one (query the Price List API, or read a saved Price List file; one
quote per catalog key, priced or PENDING; store it whole, move "latest", announce what
changed), and read them back (list, latest, one, the diff of two).

Every snapshot carries a basis, decided by the call that makes it — never by anything in an
uploaded file:

    take / build_live          official     trncost queried AWS itself (endpoint, time, filters)
    take_from_saved, uploads   saved_file   a person supplied the file (sha256, who, note)
    seed_example               example      the bundled illustrative file (the local runtime)

Only trncost's own live snapshots (and the local runtime's example seed) move "latest" by
themselves. An upload is stored and usable by its snapshot id; it becomes latest only when the
request asks (`publish`) and the stage allows it (`accept_uploads`, `prices.accept_uploads` in
the stage config), and otherwise nothing is stored (PublishRefused).
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from trncost import aws
from trncost.bus import EventPublisher
from trncost.errors import (
    DomainError,
    LivePricesOff,
    NotFound,
    PriceListItemError,
    PublishRefused,
    Unavailable,
)
from trncost.events import DetailType
from trncost.model.basis import (
    ExampleOrigin,
    OfficialOrigin,
    PriceOrigin,
    QueryFilter,
    SavedFileOrigin,
    basis_of_source,
)
from trncost.model.catalog import Catalog
from trncost.model.price import (
    PriceQuote,
    PriceSnapshot,
    Rejection,
    SnapshotDiff,
    SnapshotSource,
    Unmatched,
    diff_snapshots,
)
from trncost.model.records import Publication, SnapshotSummary
from trncost.pricing.capacity_blocks import capacity_block_quote
from trncost.pricing.catalog import ProductQuery, queries_for
from trncost.pricing.client import CapacityBlockClient, PriceListClient
from trncost.pricing.matching import explain, match
from trncost.pricing.parser import Product, items_from_saved_file, parse_item
from trncost.pricing.quotes import build_quote
from trncost.services.outbox import Outbox
from trncost.settings import ACCEPT_UPLOADS_ENV, CATALOG_ENV, LIVE_PRICES_ENV
from trncost.store.outbox import OutboxEvent
from trncost.store.prices import PriceStore

__all__ = [
    "LOCAL_CALLER",
    "SnapshotResult",
    "SnapshotService",
    "build_snapshot",
    "file_sha256",
    "new_snapshot_id",
    "snapshot_from_saved",
]

log = logging.getLogger(__name__)
MAX_KEYS_IN_EVENT = 500
LOCAL_CALLER = "local"  # who supplied a file when there is no API caller (CLI, local runtime)


def file_sha256(data: Any) -> str:
    """The sha256 of a saved Price List file's JSON in canonical form (keys sorted, no
    whitespace, UTF-8), so the same file has the same digest whether uploaded or read from
    disk: `python -c 'import json,sys,hashlib; print(hashlib.sha256(json.dumps(
    json.load(open(sys.argv[1])), sort_keys=True, separators=(",", ":"),
    ensure_ascii=False).encode()).hexdigest())' FILE`."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_snapshot_id(now: datetime) -> str:
    return f"ps-{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SnapshotResult:
    snapshot: PriceSnapshot
    publication: Publication
    diff: SnapshotDiff | None
    event_id: str | None
    taken_by: str | None = None  # who asked for it over the API (IAM ARN)

    def summary(self) -> dict[str, Any]:
        s = self.snapshot
        return {
            "snapshot_id": s.snapshot_id,
            "taken_at": s.taken_at,
            "source": s.source,
            "basis": s.basis.value,
            "origin": s.origin.model_dump(mode="json") if s.origin else None,
            "quotes": len(s.quotes),
            "pending": sum(q.is_pending for q in s.quotes),
            "rejected": len(s.rejected),
            "unmatched": len(s.unmatched),
            "published_as_latest": self.publication.published,
            "previous_snapshot_id": self.publication.previous_id,
            "changed_keys": self.diff.changed_keys if self.diff else [],
            "event_id": self.event_id,
            "taken_by": self.taken_by,
        }


def _parse_all(raw_items: Iterable[Any], rejected: list[Rejection]) -> list[Product]:
    products = []
    for raw in raw_items:
        try:
            products.append(parse_item(raw))
        except PriceListItemError as exc:
            log.warning("Price List item rejected: %s (sku %s)", exc.reason, exc.sku)
            rejected.append(Rejection(sku=exc.sku, reason=exc.reason))
    return products


def _publication_dates(products: Iterable[Product]) -> dict[str, str]:
    dates: dict[str, str] = {}
    for p in products:
        if p.service_code and p.publication_date:
            dates[p.service_code] = max(dates.get(p.service_code, ""), p.publication_date)
    return dates


def build_snapshot(
    queries: list[ProductQuery],
    found: dict[int, list[Product]],
    *,
    snapshot_id: str,
    taken_at: str,
    source: SnapshotSource,
    rejected: list[Rejection],
    note: str | None = None,
    origin: PriceOrigin | None = None,
    origins: Callable[[ProductQuery], PriceOrigin | None] | None = None,
    unmatched: list[Unmatched] | None = None,
) -> PriceSnapshot:
    """One quote per query, PENDING where no usable product was found. `origins`: each
    query's own origin (a live query: its filters); else every quote has `origin`."""
    dates = _publication_dates(p for products in found.values() for p in products)
    quotes: list[PriceQuote] = []
    for i, query in enumerate(queries):
        quote, bad = build_quote(
            query,
            found.get(i, []),
            snapshot_id=snapshot_id,
            source=source,
            as_of=dates.get(query.service_code),
            origin=origins(query) if origins else origin,
        )
        for r in bad:
            log.warning("quote rejected for %s: %s (sku %s)", r.key, r.reason, r.sku)
        rejected.extend(bad)
        quotes.append(quote)
    return PriceSnapshot(
        snapshot_id=snapshot_id,
        taken_at=taken_at,
        source=source,
        basis=basis_of_source(source),
        origin=origin,
        publication_dates=dates,
        quotes=_ordered(quotes),
        rejected=rejected,
        unmatched=unmatched or [],
        note=note,
    )


def _ordered(quotes: list[PriceQuote]) -> list[PriceQuote]:
    """Quotes in key order: the order they are stored and read back in."""
    return sorted(quotes, key=lambda q: str(q.key))


def _from_file(
    data: Any,
    catalog: Catalog,
    now: datetime,
    origin: SavedFileOrigin | ExampleOrigin,
    note: str | None,
) -> PriceSnapshot:
    """The catalog's keys from a saved Price List file: every product that answers no key is
    listed in `unmatched`, every one refused in `rejected`, each with its reason."""
    rejected: list[Rejection] = []
    products = _parse_all(items_from_saved_file(data), rejected)
    queries = queries_for(catalog)
    found, unmatched = match(queries, products)
    source: SnapshotSource = (
        "example_file" if isinstance(origin, ExampleOrigin) else "saved_price_list_file"
    )
    return build_snapshot(
        queries,
        found,
        snapshot_id=new_snapshot_id(now),
        taken_at=now.isoformat(),
        source=source,
        rejected=rejected,
        note=note,
        origin=origin,
        unmatched=unmatched,
    )


def snapshot_from_saved(
    data: Any,
    catalog: Catalog,
    now: datetime,
    note: str | None = None,
    *,
    supplied_by: str = LOCAL_CALLER,
) -> PriceSnapshot:
    """A snapshot of the catalog's keys from a saved Price List file (GetProducts responses,
    item lists or bulk offer files), basis `saved_file`: for air-gapped teams, uploads and
    the tests. Raises PriceListItemError when `data` is not a saved Price List at all."""
    origin = SavedFileOrigin(
        sha256=file_sha256(data), supplied_by=supplied_by, supplied_at=now.isoformat(), note=note
    )
    return _from_file(data, catalog, now, origin, note)


def _diff_from(previous: PriceSnapshot | None, snapshot: PriceSnapshot) -> SnapshotDiff:
    """What changed from `previous` (None: the first snapshot, every key is new)."""
    if previous is None:
        previous = PriceSnapshot(
            snapshot_id="none", taken_at="", source=snapshot.source, basis=snapshot.basis
        )
    return diff_snapshots(previous, snapshot)


class SnapshotService:
    def __init__(
        self,
        store: PriceStore,
        price_list: PriceListClient | None = None,
        capacity_blocks: Callable[[str], CapacityBlockClient] | None = None,
        publisher: EventPublisher | None = None,
        clock: Callable[[], datetime] = _now,
        *,
        catalog: Catalog | None = None,
        live_prices: bool = True,
        accept_uploads: bool = False,
    ) -> None:
        self.store = store
        self.price_list = price_list or PriceListClient()
        self.capacity_blocks = capacity_blocks or (lambda region: CapacityBlockClient(region))
        self.publisher = publisher
        self.clock = clock
        # "Price Snapshot Taken" goes through the outbox in the prices' table (None: no bus)
        self.outbox = Outbox.beside(store, publisher, clock)
        self.catalog = catalog  # what the deployment prices (requested snapshots)
        self.live_prices = live_prices  # may a request query the Price List API
        self.accept_uploads = accept_uploads  # may an upload become latest (when it asks)

    # -- reading ----------------------------------------------------------------------------
    def summaries(
        self, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[SnapshotSummary], str | None]:
        """Newest first, and the cursor of the next page (None on the last)."""
        return self.store.list_snapshots(limit, cursor)

    def latest(self) -> PriceSnapshot:
        snap = self.store.latest()
        if snap is None:
            raise NotFound("no price snapshot yet: POST /prices/snapshots takes one")
        return snap

    def get(self, snapshot_id: str) -> PriceSnapshot:
        snap = self.store.get_snapshot(snapshot_id)
        if snap is None:
            raise NotFound(f"price snapshot {snapshot_id} not found")
        return snap

    def diff(self, snapshot_id: str, other_id: str) -> SnapshotDiff:
        return diff_snapshots(self.get(snapshot_id), self.get(other_id))

    def replaced_age(self, result: SnapshotResult) -> float | None:
        """How old the latest snapshot was when this one replaced it (its taken_at → this
        one's), in seconds; None when nothing was replaced (the first snapshot, or a newer one
        stays latest)."""
        previous_id = result.publication.previous_id
        if not result.publication.published or not previous_id:
            return None
        previous = self.store.get_snapshot(previous_id)  # read once already, for the diff
        if previous is None:
            return None
        try:
            then = datetime.fromisoformat(previous.taken_at)
            now = datetime.fromisoformat(result.snapshot.taken_at)
        except ValueError:
            return None
        if then.tzinfo is None or now.tzinfo is None:
            return None
        return max(0.0, (now - then).total_seconds())

    # -- a requested snapshot (POST /prices/snapshots) ----------------------------------------
    def take_requested(
        self,
        saved_price_list: Any | None,
        note: str | None,
        taken_by: str | None = None,
        *,
        publish: bool = False,
    ) -> SnapshotResult:
        """From the saved Price List file when one is given (basis saved_file, supplied by
        `taken_by`; latest only when `publish` and the stage accepts uploads), else live,
        when this deployment allows it (LivePricesOff otherwise); an AWS failure after
        retries is Unavailable. `taken_by`: the caller, stored with the snapshot."""
        catalog = self.catalog
        if catalog is None:
            raise DomainError(f"this deployment has no price catalog ({CATALOG_ENV})")
        if saved_price_list is not None:
            return self.take_from_saved(saved_price_list, catalog, note, taken_by, publish=publish)
        if not self.live_prices:
            raise LivePricesOff(
                f"live price snapshots are off here ({LIVE_PRICES_ENV}=false): upload a saved "
                "Price List file as saved_price_list"
            )
        try:
            return self.take(catalog, taken_by)
        except Exception as exc:
            if aws.is_aws_error(exc):
                raise Unavailable(f"the AWS Price List API failed after retries: {exc}") from None
            raise

    # -- building ---------------------------------------------------------------------------
    def _official(self, query: ProductQuery, requested_at: str) -> OfficialOrigin:
        return OfficialOrigin(
            requested_at=requested_at,
            endpoint=self.price_list.endpoint,
            operation="pricing:GetProducts",
            service_code=query.service_code,
            filters=[QueryFilter(type=f.type, field=f.field, value=f.value) for f in query.filters],
        )

    def build_live(self, catalog: Catalog) -> PriceSnapshot:
        """Query the Price List API once per catalog key (plus pages), then Capacity Blocks.
        Basis official: each quote records the endpoint, the request time and its filters."""
        now = self.clock()
        snapshot_id, taken_at = new_snapshot_id(now), now.isoformat()
        queries = queries_for(catalog)
        rejected: list[Rejection] = []
        unmatched: list[Unmatched] = []
        found: dict[int, list[Product]] = {}
        for i, query in enumerate(queries):
            items = self.price_list.get_products(query.service_code, query.api_filters())
            products = _parse_all(items, rejected)
            found[i] = [p for p in products if query.accepts(p)]
            unmatched += [explain(p, [query]) for p in products if not query.accepts(p)]
        snapshot = build_snapshot(
            queries,
            found,
            snapshot_id=snapshot_id,
            taken_at=taken_at,
            source="query_api",
            rejected=rejected,
            origin=OfficialOrigin(
                requested_at=taken_at,
                endpoint=self.price_list.endpoint,
                operation="pricing:GetProducts",
            ),
            origins=lambda q: self._official(q, taken_at),
            unmatched=unmatched,
        )
        if catalog.capacity_block_hours:
            snapshot = self._with_capacity_blocks(snapshot, catalog, now)
        return snapshot

    def _with_capacity_blocks(
        self, snapshot: PriceSnapshot, catalog: Catalog, now: datetime
    ) -> PriceSnapshot:
        quotes, rejected = list(snapshot.quotes), list(snapshot.rejected)
        hours = catalog.capacity_block_hours
        assert hours is not None
        end = now + timedelta(days=catalog.capacity_block_lookahead_days)
        for region in catalog.regions:
            client = self.capacity_blocks(region)
            for instance_type in catalog.instance_types:
                if instance_type.startswith("ml."):
                    continue  # Capacity Blocks are EC2's; SageMaker's training plans are not
                offerings = client.offerings(instance_type, 1, hours, now, end)
                origin = OfficialOrigin(
                    requested_at=now.isoformat(),
                    endpoint=getattr(client, "endpoint", f"ec2.{region}.amazonaws.com"),
                    operation="ec2:DescribeCapacityBlockOfferings",
                    filters=[
                        QueryFilter(type="PARAMETER", field=name, value=value)
                        for name, value in (
                            ("InstanceType", instance_type),
                            ("InstanceCount", "1"),
                            ("CapacityDurationHours", str(hours)),
                            ("StartDateRange", now.isoformat()),
                            ("EndDateRange", end.isoformat()),
                        )
                    ],
                )
                quote, bad = capacity_block_quote(
                    instance_type,
                    region,
                    offerings,
                    snapshot_id=snapshot.snapshot_id,
                    queried_at=now.isoformat(),
                    origin=origin,
                )
                quotes.append(quote)
                rejected.extend(bad)
        return snapshot.model_copy(update={"quotes": _ordered(quotes), "rejected": rejected})

    def build_from_saved(
        self,
        data: Any,
        catalog: Catalog,
        note: str | None = None,
        *,
        supplied_by: str = LOCAL_CALLER,
    ) -> PriceSnapshot:
        """The same catalog keys, read from a saved Price List file instead of the API:
        basis saved_file (its sha256, who supplied it, their note)."""
        return snapshot_from_saved(data, catalog, self.clock(), note, supplied_by=supplied_by)

    def build_example(
        self, data: Any, catalog: Catalog, file: str, note: str | None = None
    ) -> PriceSnapshot:
        """The bundled illustrative file, basis example. Only the local runtime seeds it."""
        origin = ExampleOrigin(file=file, sha256=file_sha256(data), note=note)
        return _from_file(data, catalog, self.clock(), origin, note)

    # -- committing ---------------------------------------------------------------------------
    def commit(
        self, snapshot: PriceSnapshot, taken_by: str | None = None, *, publish: bool = True
    ) -> SnapshotResult:
        """Store the snapshot whole, then (when `publish`) move "latest" and announce what
        changed: the pointer and the "Price Snapshot Taken" event are one transaction (the
        outbox), and the event is published right away, best effort (the outbox sweeper sends
        it if EventBridge is down: the snapshot is latest and the call succeeds either way).
        Unpublished, it is stored, listed and usable by its id, and nothing else happens."""
        if not publish:
            self.store.put_snapshot(snapshot, taken_by)
            try:  # stored: the answer says what is latest if DynamoDB tells
                pointer = self.store.latest_pointer()
            except Exception as exc:
                if not aws.is_aws_error(exc):
                    raise
                pointer = None
            current = pointer["snapshot_id"] if pointer else None
            log.info("snapshot %s stored, not published as latest", snapshot.snapshot_id)
            publication = Publication(False, current, current or snapshot.snapshot_id)
            return SnapshotResult(snapshot, publication, None, None, taken_by)
        moved: dict[str, Any] = {}
        events: list[OutboxEvent] = []

        def announce(previous_id: str | None) -> list[OutboxEvent]:
            # read and compared before the pointer moves: nothing after the commit can fail
            previous = self.store.get_snapshot(previous_id) if previous_id else None
            moved["diff"] = _diff_from(previous, snapshot)
            events.clear()
            if self.outbox is None:
                return events
            keys = moved["diff"].changed_keys
            events.append(
                self.outbox.event(
                    DetailType.price_snapshot_taken,
                    snapshot.snapshot_id,
                    {
                        "snapshot_id": snapshot.snapshot_id,
                        "previous_snapshot_id": previous_id,
                        "taken_at": snapshot.taken_at,
                        "source": snapshot.source,
                        "basis": snapshot.basis.value,
                        "changed_keys": keys[:MAX_KEYS_IN_EVENT],
                        "changed_keys_truncated": len(keys) > MAX_KEYS_IN_EVENT,
                        "pending_keys": sorted(str(q.key) for q in snapshot.quotes if q.is_pending),
                    },
                )
            )
            return events

        # listed and latest together: an upload that fails before this leaves nothing listed
        meta = self.store.put_snapshot_parts(snapshot, taken_by)
        publication = self.store.publish_latest(snapshot, events=announce, meta=meta)
        if not publication.published:
            log.info(
                "snapshot %s stored; %s is newer and stays latest",
                snapshot.snapshot_id,
                publication.latest_id,
            )
            return SnapshotResult(snapshot, publication, None, None, taken_by)
        event_id = None
        if self.outbox is not None and events:
            self.outbox.deliver(events)  # never raises: the sweeper sends what is left
            event_id = events[0].event_id
        return SnapshotResult(snapshot, publication, moved["diff"], event_id, taken_by)

    def take(self, catalog: Catalog, taken_by: str | None = None) -> SnapshotResult:
        """A live snapshot (basis official): stored, and latest unless a newer one is."""
        return self.commit(self.build_live(catalog), taken_by)

    def take_from_saved(
        self,
        data: Any,
        catalog: Catalog,
        note: str | None = None,
        taken_by: str | None = None,
        *,
        publish: bool = False,
    ) -> SnapshotResult:
        """An uploaded file (basis saved_file, supplied by `taken_by`): stored and usable by
        its id; latest only when `publish` and this stage accepts uploads — PublishRefused,
        with nothing stored, when it asks and the stage does not."""
        if publish and not self.accept_uploads:
            raise PublishRefused(
                "publish: this stage does not publish uploaded Price List files as the latest "
                f"prices (prices.accept_uploads is false; {ACCEPT_UPLOADS_ENV}). Upload "
                "without publish and use the snapshot by its snapshot_id"
            )
        snapshot = self.build_from_saved(data, catalog, note, supplied_by=taken_by or LOCAL_CALLER)
        return self.commit(snapshot, taken_by, publish=publish)

    def seed_example(
        self, data: Any, catalog: Catalog, file: str, note: str | None = None
    ) -> SnapshotResult:
        """The local runtime's example prices (basis example), published as latest so the
        example estimates have prices: the only call that makes an `example` snapshot."""
        return self.commit(self.build_example(data, catalog, file, note))
