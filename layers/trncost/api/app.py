"""The HTTP API: one Powertools resolver with the route modules included (each on the first
request that needs it, all of them for the OpenAPI document), validated by Powertools.

    api/workloads.py    workloads, trials, rejected ingests
    api/estimates.py    estimates, their versions and reports; comparisons (stored, by id)
    api/prices.py       price snapshots
    api/trial_plans.py  trial plans (the Step Functions workflow)
    api/actuals.py      billed actuals, estimate vs actual, the scorecard, budgets
    api/errors.py       every error → its status code, in one place
    api/context.py      the services of the request being answered, its caller
    api/bodies.py       the error and health bodies, the base of every schema
    api/openapi.py      writes the OpenAPI document from the routes (`make openapi`)
    api/docs.py         what the OpenAPI document says beyond the code: summaries,
                        descriptions, examples, status codes (a test sends every example)
    api/openapi.json    that document, checked in (the repository's `openapi.json` links to
                        it): served as it is at /openapi.json and shown by Swagger UI at /docs

A route validates, calls one service, and returns. `handle` is the Lambda entry: it turns
what Powertools would answer with a 500 (oversized, non-UTF-8, non-JSON bodies) into 4xx
first, and a 5xx never shows a stack trace.
"""

from __future__ import annotations

import base64
import binascii
import functools
from importlib import resources
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from trncost import __version__, safejson
from trncost.api import errors, idempotency
from trncost.api.bodies import Health
from trncost.api.context import serving
from trncost.api.errors import error
from trncost.wiring import Wiring

MAX_BODY_BYTES = 1024 * 1024
# A trial log import carries log text (capped by the service): up to Lambda's 6 MB payload.
LOG_IMPORT_MAX_BODY_BYTES = 6 * 1000 * 1000 - 1
LOG_IMPORT_SUFFIX = "/trials/import"
# POST /actuals takes a billing export itself (CSV, gzip CSV, Parquet) or the JSON the CLI sends
# for a larger one: up to Lambda's 6 MB request, which a binary body fills base64-encoded (4/3).
ACTUALS_PATH = "/actuals"
ACTUALS_MAX_BODY_BYTES = 6 * 1000 * 1000 - 1
ACTUALS_CONTENT_TYPES = frozenset(
    {
        "application/json",
        "text/csv",
        "application/gzip",
        "application/x-gzip",
        "application/vnd.apache.parquet",
        "application/x-parquet",
        "application/octet-stream",
    }
)

app = APIGatewayRestResolver(enable_validation=True)
errors.register(app)

# The OpenAPI document, checked in inside the package so the layer ships it: written by
# `make openapi` (trncost.api.openapi), served as it is; a test fails when it is stale.
SPEC_FILE = Path(__file__).with_name("openapi.json")
DOCS_PATH = "/docs"
# Swagger UI's script and stylesheet as Powertools bundles them: inlined, no CDN.
SWAGGER_UI = "aws_lambda_powertools.event_handler.openapi.swagger_ui"


@functools.cache
def spec_text() -> str:
    """The checked-in OpenAPI document, byte for byte."""
    return SPEC_FILE.read_text(encoding="utf-8")


@functools.cache
def docs_page() -> str:
    """Swagger UI over the checked-in document, self-contained: its script, stylesheet and the
    document are in the page (`</` escaped, so the document cannot end a script)."""
    from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import (
        generate_swagger_html,
    )

    bundle = resources.files(SWAGGER_UI)
    return generate_swagger_html(
        spec_text().replace("</", "<\\/"),
        (bundle / "swagger-ui-bundle.min.js").read_text(encoding="utf-8"),
        (bundle / "swagger-ui.min.css").read_text(encoding="utf-8"),
        "",  # no base URL: script and stylesheet inlined
        None,  # no OAuth2: a deployed stage takes IAM (SigV4)
    )


# -- health and docs ----------------------------------------------------------------------------
@app.get("/health", tags=["meta"])
def health() -> Health:
    return Health(status="ok", version=__version__)


# A raw Response is not a schema type: no return annotation, or Powertools documents one.
@app.get("/openapi.json", tags=["meta"], include_in_schema=False)
def openapi():
    return Response(status_code=200, content_type="application/json", body=spec_text())


@app.get(DOCS_PATH, tags=["meta"], include_in_schema=False)
def swagger_ui():
    # The page names its document `/docs?format=json` (Swagger UI shows it as a link)
    if (app.current_event.query_string_parameters or {}).get("format") == "json":
        return openapi()
    return Response(status_code=200, content_type="text/html", body=docs_page())


def routed_app() -> APIGatewayRestResolver:
    """The resolver with every route module included: what the OpenAPI document is made from."""
    _Routes.include()
    return app


class _Routes:
    """The route modules, each included (imported, its models built) on the first request
    for one of its paths: a cold start loads what its first request needs, not every
    module's models. The health check and the docs need none (the document is a file); a
    path no module claims includes them all (so an unknown path is the full app's 404)."""

    included: set[str] = set()
    ALL = ("workloads", "estimates", "prices", "trial_plans", "actuals")

    @classmethod
    def include(cls, names: tuple[str, ...] = ALL) -> None:
        for name in names:
            if name not in cls.included:
                app.include_router(_router(name))
                cls.included.add(name)

    @classmethod
    def for_path(cls, path: str) -> tuple[str, ...]:
        parts = [p for p in path.split("/") if p]
        first = parts[0] if parts else ""
        nested = parts[2] if len(parts) >= 3 and first == "workloads" else None
        if first in ("health", "docs", "openapi.json"):
            return ()
        if first == "prices":
            return ("prices",)
        if first == "actuals" or (
            first == "estimates" and len(parts) == 3 and parts[2] in ("actuals", "budget")
        ):
            return ("actuals",)
        if first == "trial-plans" or nested == "trial-plans":
            return ("trial_plans",)
        if first in ("estimates", "comparisons") or nested in ("estimates", "comparisons"):
            return ("estimates",)
        if first in ("workloads", "trials", "ingest") and nested in (None, "trials"):
            return ("workloads",)
        return cls.ALL


def _router(name: str) -> Router:
    if name == "workloads":
        from trncost.api import workloads as module
    elif name == "estimates":
        from trncost.api import estimates as module  # type: ignore[no-redef]
    elif name == "prices":
        from trncost.api import prices as module  # type: ignore[no-redef]
    elif name == "actuals":
        from trncost.api import actuals as module  # type: ignore[no-redef]
    else:
        from trncost.api import trial_plans as module  # type: ignore[no-redef]
    return module.routes


# -- the Lambda entry ---------------------------------------------------------------------------
def _precheck(event: dict[str, Any]) -> Response[str] | None:
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
    path = str(event.get("path") or "").rstrip("/")
    limit = LOG_IMPORT_MAX_BODY_BYTES if path.endswith(LOG_IMPORT_SUFFIX) else MAX_BODY_BYTES
    actuals = path == ACTUALS_PATH and event.get("httpMethod") == "POST"
    limit = ACTUALS_MAX_BODY_BYTES if actuals else limit
    if len(raw) > limit:
        return error(413, "payload_too_large", f"body: larger than {limit} bytes")
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items() if v is not None}
    content_type = headers.get("content-type", "application/json").split(";")[0].strip()
    if actuals and content_type.lower() in ACTUALS_CONTENT_TYPES - {"application/json"}:
        return None  # a billing export: the route reads the body as sent (base64 or text)
    if actuals and content_type != "application/json":
        return error(
            415,
            "unsupported_media_type",
            f"content-type: {content_type!r}; send text/csv, application/gzip, "
            "application/vnd.apache.parquet or application/json",
        )
    if event.get("httpMethod") in ("POST", "PUT", "PATCH") and content_type != ("application/json"):
        return error(
            415, "unsupported_media_type", f"content-type: {content_type!r}; send application/json"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return error(400, "bad_request", "body: not UTF-8")
    unsafe = safejson.problem(text)  # nested deeper than 64, an integer over 30 digits, ...
    if unsafe is not None:
        return error(400, "bad_request", f"body: {unsafe}", ["body"])
    event["body"] = text
    event["isBase64Encoded"] = False
    return None


def handle(event: dict[str, Any], context: Any, services: Wiring) -> dict[str, Any]:
    """The API Lambda: precheck, route with `services`, and a 503 or a 500 without internals
    if anything escapes."""
    early = _precheck(event)
    if early is not None:
        return _proxy(early)
    try:
        _Routes.include(_Routes.for_path(str(event.get("path") or "")))

        def resolve() -> dict[str, Any]:
            with serving(services):
                return app.resolve(event, context)

        if not idempotency.applies(event):
            return resolve()
        return idempotency.run_once(event, services.idempotency, resolve, _proxy)
    except Exception as exc:  # logged with its trace, answered without it
        return _proxy(errors.unexpected(exc, event))


def warm_up(services: Wiring) -> None:
    """What the first requests would do, done ahead (before a SnapStart snapshot): every route
    module included and each route's validation built (Powertools builds a route's models for
    its OpenAPI schema as for its first request), the docs page, one request through
    validation. Nothing here calls AWS, so no client, credential or connection is made."""
    routed_app().get_openapi_schema()
    docs_page()
    handle(
        {"httpMethod": "GET", "path": "/health", "headers": {}, "requestContext": {}},
        None,
        services,
    )


def _proxy(response: Response[str]) -> dict[str, Any]:
    return {
        "statusCode": response.status_code,
        "headers": {"Content-Type": response.content_type or "application/json"},
        "multiValueHeaders": {},
        "body": response.body,
        "isBase64Encoded": False,
    }
