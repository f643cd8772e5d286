"""The HTTP API: every route in one place, validated by Powertools, OpenAPI generated from it.

Errors are mapped once, here: unknown ids 404, conflicts 409, bad input 4xx naming the field,
missing evidence 422 with what is missing. Nothing a client sends yields a 5xx; a 5xx is a bug
and never shows a stack trace (see `handle`).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import ValidationError

from trncost import __version__
from trncost.api.schemas import (
    ComparisonRequest,
    ErrorBody,
    EstimateRequest,
    EstimateView,
    Health,
    Page,
    RejectedIngestView,
    SnapshotRequest,
    SnapshotSummaryView,
    SnapshotTaken,
    TrialView,
    VersionInfo,
    Versions,
    WorkloadView,
)
from trncost.estimate import DomainError, MissingEvidence
from trncost.model import PriceSnapshot, SnapshotDiff, TrialRun, Workload, diff_snapshots
from trncost.model.analysis import Analysis
from trncost.pricing.parser import PriceListItemError
from trncost.services.estimates import EstimateService, NoPrices, NotFound
from trncost.settings import Settings
from trncost.store.base import BadCursor
from trncost.store.prices import PriceStore
from trncost.store.records import AlreadyExists, EstimateVersion, RecordStore

if TYPE_CHECKING:
    from trncost.pricing.snapshot import SnapshotService

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 1024 * 1024
TITLE = "trncost"
DESCRIPTION = (
    "What it costs to reach a training target on AWS Trainium3 (and the alternatives), from "
    "your own trials and official AWS prices, every number traceable."
)

app = APIGatewayRestResolver(enable_validation=True)
app.enable_swagger(path="/docs", title=TITLE, version=__version__, description=DESCRIPTION)

Limit = Annotated[int, Query(ge=1, le=100, description="page size")]
Cursor = Annotated[str | None, Query(description="the next_cursor of the previous page")]
Id = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")]


class Services:
    """Adapters and services, built once per process from the environment."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.records = RecordStore(settings.table_name)
        self.prices = PriceStore(settings.table_name)
        self.estimates = EstimateService(self.records, self.prices)

    def snapshots(self) -> SnapshotService:
        from trncost.bus import EventPublisher
        from trncost.pricing.client import PriceListClient
        from trncost.pricing.snapshot import SnapshotService

        publisher = EventPublisher(self.settings.bus_name) if self.settings.bus_name else None
        return SnapshotService(
            store=self.prices,
            price_list=PriceListClient(self.settings.price_list_region),
            publisher=publisher,
        )


@lru_cache(maxsize=1)
def services() -> Services:
    return Services(Settings.from_env())


# -- errors -----------------------------------------------------------------------------------
def error(status: int, code: str, message: str, fields: list[str] | None = None) -> Response:
    body = ErrorBody(error=code, message=message, fields=fields or [])
    return Response(
        status_code=status, content_type="application/json", body=body.model_dump_json()
    )


@app.exception_handler(RequestValidationError)
def _validation(exc: RequestValidationError) -> Response:
    problems, fields = [], []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ())]
        if loc and loc[0] in ("body", "query", "path"):
            where = ".".join(loc[1:]) or loc[0]
        else:
            where = ".".join(loc)
        fields.append(where)
        problems.append(f"{where}: {err.get('msg')}")
    return error(422, "validation_error", "; ".join(problems) or "invalid request", fields)


@app.exception_handler(ValidationError)
def _model_validation(exc: ValidationError) -> Response:
    from trncost.requestfile import format_validation_error

    fields = [".".join(str(p) for p in e["loc"]) for e in exc.errors()]
    return error(422, "validation_error", format_validation_error(exc), fields)


@app.exception_handler(MissingEvidence)
def _missing(exc: MissingEvidence) -> Response:
    return error(422, "missing_evidence", str(exc), exc.missing)


@app.exception_handler(NoPrices)
def _no_prices(exc: NoPrices) -> Response:
    return error(409, "no_price_snapshot", str(exc))


@app.exception_handler(DomainError)
def _domain(exc: DomainError) -> Response:
    return error(422, "domain_error", str(exc))


@app.exception_handler(NotFound)
def _not_found(exc: NotFound) -> Response:
    return error(404, "not_found", str(exc))


@app.exception_handler(NotFoundError)
def _no_route(exc: NotFoundError) -> Response:
    return error(404, "not_found", "no such route")


@app.exception_handler(AlreadyExists)
def _conflict(exc: AlreadyExists) -> Response:
    return error(409, "conflict", str(exc))


@app.exception_handler(BadCursor)
def _bad_cursor(exc: BadCursor) -> Response:
    return error(422, "validation_error", str(exc), ["cursor"])


class LivePricesOff(Exception):
    """This deployment may not call the Price List API."""


@app.exception_handler(LivePricesOff)
def _live_off(exc: LivePricesOff) -> Response:
    return error(409, "live_prices_off", str(exc), ["saved_price_list"])


class Upstream(Exception):
    """An AWS service trncost depends on failed after retries."""


@app.exception_handler(Upstream)
def _upstream(exc: Upstream) -> Response:
    return error(503, "upstream_unavailable", str(exc))


@app.exception_handler(PriceListItemError)
def _bad_price_list(exc: PriceListItemError) -> Response:
    return error(422, "validation_error", f"saved_price_list: {exc.reason}", ["saved_price_list"])


def _missing_id(kind: str, ident: str) -> NotFound:
    return NotFound(f"{kind} {ident} not found")


# -- health and docs ----------------------------------------------------------------------------
@app.get("/health", tags=["meta"])
def health() -> Health:
    return Health(status="ok", version=__version__)


def openapi_document() -> dict[str, Any]:
    return json.loads(
        app.get_openapi_json_schema(title=TITLE, version=__version__, description=DESCRIPTION)
    )


@app.get("/openapi.json", tags=["meta"], include_in_schema=False)
def openapi():  # noqa: ANN201 - a raw Response is not a schema type
    return Response(
        status_code=200, content_type="application/json", body=json.dumps(openapi_document())
    )


# -- workloads --------------------------------------------------------------------------------
@app.post("/workloads", tags=["workloads"], responses={201: {"description": "created"}})
def create_workload(workload: Workload) -> tuple[WorkloadView, int]:
    from datetime import UTC, datetime

    services().records.put_workload(workload, datetime.now(UTC).isoformat())
    return WorkloadView(workload=workload), 201


@app.get("/workloads", tags=["workloads"])
def list_workloads(limit: Limit = 50, cursor: Cursor = None) -> Page[Workload]:
    page = services().records.list_workloads(limit, cursor)
    return Page[Workload](items=page.items, next_cursor=page.cursor)


@app.get("/workloads/<workload_id>", tags=["workloads"])
def get_workload(workload_id: Id) -> WorkloadView:
    return WorkloadView(workload=_workload(workload_id))


def _workload(workload_id: str) -> Workload:
    workload = services().records.get_workload(workload_id)
    if workload is None:
        raise _missing_id("workload", workload_id)
    return workload


# -- trials -----------------------------------------------------------------------------------
@app.post("/workloads/<workload_id>/trials", tags=["trials"])
def import_trial(workload_id: Id, trial: TrialRun) -> tuple[TrialView, int]:
    from datetime import UTC, datetime

    _workload(workload_id)
    if trial.workload_id != workload_id:
        raise DomainError(
            f"workload_id: the trial names {trial.workload_id}, the path {workload_id}"
        )
    if not services().records.put_trial(trial, datetime.now(UTC).isoformat(), "api"):
        raise AlreadyExists(f"trial {trial.trial_id} exists")
    return TrialView(trial=trial), 201


@app.get("/workloads/<workload_id>/trials", tags=["trials"])
def list_trials(workload_id: Id, limit: Limit = 50, cursor: Cursor = None) -> Page[TrialRun]:
    _workload(workload_id)
    page = services().records.list_trials(workload_id, limit, cursor)
    return Page[TrialRun](items=page.items, next_cursor=page.cursor)


@app.get("/trials/<trial_id>", tags=["trials"])
def get_trial(trial_id: Id) -> TrialView:
    trial = services().records.get_trial(trial_id)
    if trial is None:
        raise _missing_id("trial", trial_id)
    return TrialView(trial=trial)


# -- estimates --------------------------------------------------------------------------------
def _view(version: EstimateVersion) -> EstimateView:
    return EstimateView(
        estimate_id=version.estimate_id,
        version=version.version,
        created_at=version.created_at,
        reason=version.reason,
        report_url=f"/estimates/{quote(version.estimate_id)}/report?version={version.version}",
        estimate=version.estimate,
    )


@app.post("/workloads/<workload_id>/estimates", tags=["estimates"])
def create_estimate(workload_id: Id, request: EstimateRequest) -> tuple[EstimateView, int]:
    version = services().estimates.create(
        workload_id, request.candidate, request.assumptions, request.snapshot_id
    )
    return _view(version), 201


def _version(estimate_id: str, version: int | None) -> EstimateVersion:
    found = services().records.get_version(estimate_id, version)
    if found is None:
        what = f"estimate {estimate_id}" + (f" version {version}" if version else "")
        raise NotFound(f"{what} not found")
    return found


@app.get("/estimates/<estimate_id>", tags=["estimates"])
def get_estimate(
    estimate_id: Id,
    version: Annotated[int | None, Query(ge=1, description="a version; omitted: latest")] = None,
) -> EstimateView:
    return _view(_version(estimate_id, version))


@app.get("/estimates/<estimate_id>/versions", tags=["estimates"])
def list_versions(estimate_id: Id) -> Versions:
    versions = services().records.list_versions(estimate_id)
    if not versions:
        raise _missing_id("estimate", estimate_id)
    return Versions(estimate_id=estimate_id, versions=[VersionInfo(**v) for v in versions])


@app.get("/estimates/<estimate_id>/report", tags=["estimates"])
def report(
    estimate_id: Id,
    version: Annotated[int | None, Query(ge=1, description="a version; omitted: latest")] = None,
):  # a raw Response (text/html) is not a schema type
    from trncost.report.html import render_report

    found = _version(estimate_id, version)
    workload = services().records.get_workload(found.estimate.workload_id)
    page = render_report(
        found.estimate,
        estimate_id=estimate_id,
        version=found.version,
        created_at=found.created_at,
        workload_name=workload.name if workload else None,
    )
    return Response(status_code=200, content_type="text/html; charset=utf-8", body=page)


def _analysis(workload_id: str, request: ComparisonRequest) -> tuple[Workload, Analysis]:
    from datetime import UTC, datetime

    from trncost.estimate import analyse
    from trncost.model import EstimateInput

    svc = services()
    workload = _workload(workload_id)
    trials = svc.records.all_trials(workload_id)
    prices = svc.estimates.snapshot(request.snapshot_id)
    inputs = [
        EstimateInput(
            workload=workload,
            candidate=plan.candidate,
            trials=trials,
            prices=prices,
            assumptions=plan.assumptions or request.assumptions,
        )
        for plan in request.candidates
    ]
    limited = {
        p.candidate.instance_type: p.limited_features
        for p in request.candidates
        if p.limited_features
    }
    as_of = datetime.now(UTC).date().isoformat() if request.credits else None
    return workload, analyse(
        inputs,
        seed=request.seed,
        samples=request.samples,
        credits=request.credits,
        as_of=as_of,
        limited_features=limited,
    )


@app.post("/workloads/<workload_id>/comparisons", tags=["estimates"])
def compare(workload_id: Id, request: ComparisonRequest) -> Analysis:
    """Rank the candidates by cost per completed target and by time (comparable ones only),
    with P10/P50/P90 ranges, the tornado, scaling fits, break-even prices of PENDING
    candidates, MFU checks, the decision, and the credits runway when credits are given.
    Not stored: the same request and seed give the same answer."""
    return _analysis(workload_id, request)[1]


@app.post("/workloads/<workload_id>/comparisons/report", tags=["estimates"])
def compare_report(workload_id: Id, request: ComparisonRequest):  # text/html
    """The same analysis as a self-contained HTML page (decision, ranking, ranges, tornado,
    scaling curves)."""
    from trncost.report import render_analysis_report

    workload, analysis = _analysis(workload_id, request)
    page = render_analysis_report(
        analysis, workload_name=workload.name, workload_id=workload.workload_id
    )
    return Response(status_code=200, content_type="text/html; charset=utf-8", body=page)


# -- prices -----------------------------------------------------------------------------------
@app.get("/prices/snapshots", tags=["prices"])
def list_snapshots(limit: Limit = 50, cursor: Cursor = None) -> Page[SnapshotSummaryView]:
    summaries, next_cursor = services().prices.list_snapshots(limit, cursor)
    return Page[SnapshotSummaryView](
        items=[SnapshotSummaryView(**s.__dict__) for s in summaries], next_cursor=next_cursor
    )


@app.get("/prices/snapshots/latest", tags=["prices"])
def latest_snapshot() -> PriceSnapshot:
    snap = services().prices.latest()
    if snap is None:
        raise NotFound("no price snapshot yet: POST /prices/snapshots takes one")
    return snap


def _snapshot(snapshot_id: str) -> PriceSnapshot:
    snap = services().prices.get_snapshot(snapshot_id)
    if snap is None:
        raise _missing_id("price snapshot", snapshot_id)
    return snap


@app.get("/prices/snapshots/<snapshot_id>", tags=["prices"])
def get_snapshot(snapshot_id: Id) -> PriceSnapshot:
    return _snapshot(snapshot_id)


@app.get("/prices/snapshots/<snapshot_id>/diff/<other_id>", tags=["prices"])
def diff(snapshot_id: Id, other_id: Id) -> SnapshotDiff:
    return diff_snapshots(_snapshot(snapshot_id), _snapshot(other_id))


@app.post("/prices/snapshots", tags=["prices"])
def take_snapshot(request: SnapshotRequest) -> tuple[SnapshotTaken, int]:
    svc = services()
    catalog = svc.settings.catalog
    if catalog is None:
        raise DomainError("this deployment has no price catalog (TRNCOST_CATALOG)")
    snapshots = svc.snapshots()
    if request.saved_price_list is not None:
        result = snapshots.take_from_saved(request.saved_price_list, catalog, request.note)
    elif not svc.settings.live_prices:
        raise LivePricesOff(
            "live price snapshots are off here (TRNCOST_LIVE_PRICES=false): upload a saved "
            "Price List file as saved_price_list"
        )
    else:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            result = snapshots.take(catalog)
        except (BotoCoreError, ClientError) as exc:
            raise Upstream(f"the AWS Price List API failed after retries: {exc}") from None
    summary = result.summary()
    return SnapshotTaken(**{k: summary[k] for k in SnapshotTaken.model_fields}), 201


# -- ingest -----------------------------------------------------------------------------------
@app.get("/ingest/rejected", tags=["trials"])
def rejected_ingests(limit: Limit = 50) -> Page[RejectedIngestView]:
    from trncost.store.ingest import IngestStore

    store = IngestStore(services().settings.table_name, services().records.table)
    items = [RejectedIngestView(**r.__dict__) for r in store.rejected(limit)]
    return Page[RejectedIngestView](items=items)


# -- trial plans (the Step Functions workflow) ------------------------------------------------
from trncost.api.trial_plans import router as trial_plans_router  # noqa: E402

app.include_router(trial_plans_router)


# -- the Lambda entry ---------------------------------------------------------------------------
def _precheck(event: dict[str, Any]) -> Response | None:
    """What Powertools would turn into a 500: oversized, non-UTF-8, non-JSON bodies."""
    body = event.get("body")
    if body is None or body == "":
        return None
    raw: bytes
    if event.get("isBase64Encoded"):
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            return error(400, "bad_request", "body: not valid base64")
    else:
        raw = body.encode("utf-8", errors="surrogatepass") if isinstance(body, str) else body
    if len(raw) > MAX_BODY_BYTES:
        return error(413, "payload_too_large", f"body: larger than {MAX_BODY_BYTES} bytes")
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items() if v is not None}
    content_type = headers.get("content-type", "application/json").split(";")[0].strip()
    if event.get("httpMethod") in ("POST", "PUT", "PATCH") and content_type != ("application/json"):
        return error(
            415, "unsupported_media_type", f"content-type: {content_type!r}; send application/json"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return error(400, "bad_request", "body: not UTF-8")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return error(400, "bad_request", f"body: malformed JSON ({exc.msg} at {exc.pos})")
    event["body"] = text
    event["isBase64Encoded"] = False
    return None


def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The API Lambda: precheck, route, and a 500 without internals if anything escapes."""
    early = _precheck(event)
    if early is not None:
        return _proxy(early)
    try:
        return app.resolve(event, context)
    except Exception as exc:  # logged with its trace, answered without it
        if _upstream_failure(exc):
            log.warning("AWS dependency failed after retries: %s", exc)
            return _proxy(
                error(
                    503,
                    "upstream_unavailable",
                    "an AWS service trncost depends on is throttling or failing; retry later",
                )
            )
        log.exception("unhandled error in %s %s", event.get("httpMethod"), event.get("path"))
        return _proxy(error(500, "internal_error", "internal error; it has been logged"))


def _upstream_failure(exc: Exception) -> bool:
    """DynamoDB (or another AWS service) still throttling or failing after botocore's
    retries: not a bug in trncost, and not the client's fault."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(exc, BotoCoreError):
        return True
    if isinstance(exc, ClientError):
        error_info = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return status >= 500 or error_info.get("Code", "") in {
            "ThrottlingException",
            "ProvisionedThroughputExceededException",
            "RequestLimitExceeded",
            "TooManyRequestsException",
            "Throttling",
        }
    return False


def _proxy(response: Response) -> dict[str, Any]:
    return {
        "statusCode": response.status_code,
        "headers": {"Content-Type": response.content_type or "application/json"},
        "multiValueHeaders": {},
        "body": response.body,
        "isBase64Encoded": False,
    }
