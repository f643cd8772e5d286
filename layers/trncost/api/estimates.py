"""Estimates (created, versioned, reported) and comparisons of several candidates."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from trncost.api.context import Id, caller, router, services
from trncost.api.schemas import (
    ComparisonRequest,
    EstimateRequest,
    EstimateView,
    RefreshFailureView,
    VersionInfo,
    Versions,
)
from trncost.model.analysis import Analysis
from trncost.services.estimates import EstimateVersion

routes = router()
Version = Annotated[int | None, Query(ge=1, description="a version; omitted: latest")]
HTML = "text/html; charset=utf-8"


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


@routes.get("/estimates/<estimate_id>", tags=["estimates"])
def get_estimate(estimate_id: Id, version: Version = None) -> EstimateView:
    return _view(services().estimates.version(estimate_id, version))


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


# The HTML routes carry no return annotation: Powertools would document it as a JSON schema.
@routes.get("/estimates/<estimate_id>/report", tags=["estimates"])
def report(estimate_id: Id, version: Version = None):
    page = services().estimates.report(estimate_id, version)
    return Response(status_code=200, content_type=HTML, body=page)


@routes.post("/workloads/<workload_id>/comparisons", tags=["estimates"])
def compare(workload_id: Id, request: ComparisonRequest) -> Analysis:
    """Rank the candidates by cost per completed target and by time (comparable ones only),
    with P10/P50/P90 ranges, the tornado, scaling fits, break-even prices of PENDING
    candidates, MFU checks, the decision, and the credits runway when credits are given.
    Not stored: the same request and seed give the same answer."""
    return services().comparisons.compare(workload_id, request)


@routes.post("/workloads/<workload_id>/comparisons/report", tags=["estimates"])
def compare_report(workload_id: Id, request: ComparisonRequest):
    """The same analysis as a self-contained HTML page (decision, ranking, ranges, tornado,
    scaling curves)."""
    page = services().comparisons.report(workload_id, request)
    return Response(status_code=200, content_type=HTML, body=page)
