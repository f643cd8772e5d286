"""Price snapshots: list, read, diff, and take one (from a saved Price List file, or live)."""

from __future__ import annotations

from trncost.api.context import Cursor, Id, Limit, caller, router, services
from trncost.api.schemas import Page, SnapshotSummaryView, SnapshotTaken
from trncost.model import PriceSnapshot, SnapshotDiff
from trncost.model.requests import SnapshotRequest

routes = router()


@routes.get("/prices/snapshots", tags=["prices"])
def list_snapshots(limit: Limit = 50, cursor: Cursor = None) -> Page[SnapshotSummaryView]:
    summaries, next_cursor = services().snapshots.summaries(limit, cursor)
    items = [SnapshotSummaryView.model_validate(s, from_attributes=True) for s in summaries]
    return Page[SnapshotSummaryView](items=items, next_cursor=next_cursor)


@routes.get("/prices/snapshots/latest", tags=["prices"])
def latest_snapshot() -> PriceSnapshot:
    return services().snapshots.latest()


@routes.get("/prices/snapshots/<snapshot_id>", tags=["prices"])
def get_snapshot(snapshot_id: Id) -> PriceSnapshot:
    return services().snapshots.get(snapshot_id)


@routes.get("/prices/snapshots/<snapshot_id>/diff/<other_id>", tags=["prices"])
def diff(snapshot_id: Id, other_id: Id) -> SnapshotDiff:
    return services().snapshots.diff(snapshot_id, other_id)


@routes.post("/prices/snapshots", tags=["prices"])
def take_snapshot(request: SnapshotRequest) -> tuple[SnapshotTaken, int]:
    """Live, or from an uploaded saved file: stored with its basis and its caller; an upload
    becomes latest only with `publish` on a stage that accepts uploads."""
    result = services().snapshots.take_requested(
        request.saved_price_list, request.note, caller(routes), publish=request.publish
    )
    summary = result.summary()
    return SnapshotTaken.model_validate({k: summary[k] for k in SnapshotTaken.model_fields}), 201
