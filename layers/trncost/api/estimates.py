"""Estimates (created, listed, versioned, reported) and comparisons of several candidates
(stored as immutable records with ids, read and reported by id)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Annotated, Literal
from urllib.parse import quote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from trncost.api.context import Cursor, Id, Limit, caller, public_path, router, services
from trncost.api.schemas import (
    ComparisonView,
    EstimateSummary,
    EstimateView,
    Page,
    RefreshFailureView,
    VersionInfo,
    Versions,
)
from trncost.model.capacity import CapacityPlan
from trncost.model.records import EstimateListing, EstimateVersion, StoredComparison
from trncost.model.requests import ComparisonRequest, EstimateRequest
from trncost.services.versions import summary_of

if TYPE_CHECKING:
    from trncost.report.render import Rendered

routes = router()
Version = Annotated[int | None, Query(ge=1, description="a version; omitted: latest")]


def _view(version: EstimateVersion) -> EstimateView:
    return EstimateView(
        estimate_id=version.estimate_id,
        version=version.version,
        created_at=version.created_at,
        reason=version.reason,
        changes=version.changes,
        report_url=f"/estimates/{quote(version.estimate_id)}/report?version={version.version}",
        created_by=version.created_by,
        estimate=version.estimate,
        range=version.range,
        checkpoint=version.checkpoint,
        decision=version.decision,
    )


def _summary(listed: EstimateListing) -> EstimateSummary:
    latest = listed.latest
    s = listed.summary
    if s is None and latest is not None:  # stored before headlines were kept
        s = summary_of(latest, None)
    st = listed.standing
    return EstimateSummary(
        estimate_id=listed.estimate_id,
        candidate=listed.candidate,
        pinned_snapshot_id=listed.pinned_snapshot_id,
        version=s.version if s else None,
        updated_at=s.created_at if s else None,
        reason=s.reason if s else None,
        status=s.status if s else "unreadable",
        snapshot_id=s.snapshot_id if s else None,
        total_usd=s.total_usd if s else None,
        total_known_usd=s.total_known_usd if s else None,
        cloud_usd=s.cloud_usd if s else None,
        labour_usd=s.labour_usd if s else None,
        price_basis=s.price_basis if s else None,
        cost_per_target_usd=s.cost_per_target_usd if s else None,
        cost_per_million_tokens_usd=s.cost_per_million_tokens_usd if s else None,
        time_to_target_h=s.time_to_target_h if s else None,
        pending_prices=sorted({t.price_key for t in s.pending_terms}) if s else [],
        warnings=s.warnings if s else 0,
        range_usd=s.range_usd if s else None,
        decision=s.decision if s else None,
        cost_rank=st.cost_rank if st else None,
        ranked=st.ranked if st and st.cost_rank is not None else None,
        report_url=f"/estimates/{quote(listed.estimate_id)}/report",
        problem=listed.problem,
    )


def _comparison_view(record: StoredComparison) -> ComparisonView:
    cid = quote(record.comparison_id)
    return ComparisonView(
        comparison_id=record.comparison_id,
        workload_id=record.workload_id,
        created_at=record.created_at,
        created_by=record.created_by,
        snapshot_id=record.snapshot_id,
        url=f"/comparisons/{cid}",
        report_url=f"/comparisons/{cid}/report",
        request=record.request,
        analysis=record.analysis,
    )


@routes.post("/workloads/<workload_id>/estimates", tags=["estimates"])
def create_estimate(workload_id: Id, request: EstimateRequest) -> tuple[EstimateView, int]:
    version = services().estimates.create(
        workload_id,
        request.candidate,
        request.assumptions,
        request.snapshot_id,
        created_by=caller(routes),
    )
    return _view(version), 201


@routes.get("/workloads/<workload_id>/estimates", tags=["estimates"])
def list_estimates(
    workload_id: Id, limit: Limit = 50, cursor: Cursor = None
) -> Page[EstimateSummary]:
    page = services().estimates.listing(workload_id, limit, cursor)
    return Page[EstimateSummary](items=[_summary(e) for e in page.items], next_cursor=page.cursor)


@routes.get("/estimates/<estimate_id>", tags=["estimates"])
def get_estimate(estimate_id: Id, version: Version = None) -> EstimateView:
    return _view(services().estimates.version(estimate_id, version))


@routes.post(
    "/estimates/<estimate_id>/capacity",
    tags=["estimates"],
    responses={201: {"description": "quoted now (EC2 Capacity Blocks, SageMaker Training Plans)"}},
)
def quote_capacity(estimate_id: Id, version: Version = None) -> tuple[CapacityPlan, int]:
    """Ask EC2 and SageMaker now for the capacity the version's P50 and P90 held time needs,
    weighed against its draws beside on-demand (kept with the version)."""
    return services().capacity.quote(estimate_id, version), 201


@routes.get("/estimates/<estimate_id>/capacity", tags=["estimates"])
def get_capacity(estimate_id: Id, version: Version = None) -> CapacityPlan:
    """The capacity last quoted for the version (404 when none was)."""
    return services().capacity.latest(estimate_id, version)


@routes.get("/estimates/<estimate_id>/versions", tags=["estimates"])
def list_versions(estimate_id: Id) -> Versions:
    service = services().estimates
    versions = service.versions(estimate_id)
    failures = service.refresh_failures(estimate_id)
    return Versions(
        estimate_id=estimate_id,
        versions=[VersionInfo.model_validate(v) for v in versions],
        refresh_failures=[
            RefreshFailureView(at=f.at, trigger=f.trigger, reason=f.reason) for f in failures
        ],
    )


# A report route's `format`: the HTML page, or its line items and input table as CSV or Markdown.
Format = Annotated[
    Literal["html", "csv", "md"],
    Query(description="html (the page), csv or md (its line items and input table)"),
]


# The estimate report's `format`: also `focus`, the run's forecast as FOCUS-shaped rows (CSV).
EstimateFormat = Annotated[
    Literal["html", "csv", "md", "focus"],
    Query(
        description="html (the page), csv or md (its line items and input table), focus (the "
        "run's forecast as FOCUS-shaped CSV rows)"
    ),
]
Start = Annotated[
    date | None,
    Query(description="format focus: the run's first day (default: the version's day)"),
]


def rendered(report: Rendered) -> Response[str]:
    """A rendered report as the answer: its content type and file name."""
    return Response(
        status_code=200,
        content_type=report.content_type,
        body=report.body,
        headers={"Content-Disposition": report.disposition},
    )


# The HTML routes carry no return annotation: Powertools would document it as a JSON schema.
@routes.get("/estimates/<estimate_id>/report", tags=["estimates"])
def report(
    estimate_id: Id,
    version: Version = None,
    format: EstimateFormat = "html",  # noqa: A002
    start: Start = None,
):
    if format == "focus":
        return rendered(services().actuals.forecast_focus(estimate_id, version, start))
    return rendered(services().estimates.render(estimate_id, version, format))


@routes.post("/workloads/<workload_id>/comparisons", tags=["comparisons"])
def compare(workload_id: Id, request: ComparisonRequest) -> Response[ComparisonView]:
    record, created = services().comparisons.create(workload_id, request, created_by=caller(routes))
    view = _comparison_view(record)
    return Response(
        status_code=201 if created else 200,
        content_type="application/json",
        body=view,
        headers={"Location": public_path(routes, view.url)},
    )


@routes.get("/comparisons/<comparison_id>", tags=["comparisons"])
def get_comparison(comparison_id: Id) -> ComparisonView:
    return _comparison_view(services().comparisons.get(comparison_id))


@routes.get("/comparisons/<comparison_id>/report", tags=["comparisons"])
def comparison_report(comparison_id: Id, format: Format = "html"):  # noqa: A002
    return rendered(services().comparisons.render_of(comparison_id, format))


@routes.post("/workloads/<workload_id>/comparisons/report", tags=["comparisons"])
def compare_report(workload_id: Id, request: ComparisonRequest, format: Format = "html"):  # noqa: A002
    return rendered(services().comparisons.render(workload_id, request, format))
