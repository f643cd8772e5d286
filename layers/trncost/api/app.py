"""The HTTP API: one Powertools resolver with the route modules included (each on the first
request that needs it, all of them for the OpenAPI document), validated by Powertools, its
OpenAPI document generated from the routes (`openapi.json`).

    api/workloads.py    workloads, trials, rejected ingests
    api/estimates.py    estimates, their versions and reports; comparisons (stored, by id)
    api/prices.py       price snapshots
    api/trial_plans.py  trial plans (the Step Functions workflow)
    api/errors.py       every error → its status code, in one place
    api/context.py      the services of the request being answered, its caller
    api/bodies.py       the error and health bodies, the base of every schema
    api/docs.py         what the OpenAPI document says beyond the code: summaries,
                        descriptions, examples, status codes (a test sends every example)

A route validates, calls one service, and returns. `handle` is the Lambda entry: it turns
what Powertools would answer with a 500 (oversized, non-UTF-8, non-JSON bodies) into 4xx
first, and a 5xx never shows a stack trace.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from trncost import __version__, safejson
from trncost.api import errors
from trncost.api.bodies import ErrorBody, Health
from trncost.api.context import serving
from trncost.api.errors import error
from trncost.wiring import Wiring

MAX_BODY_BYTES = 1024 * 1024
# A trial log import carries log text (capped by the service): up to Lambda's 6 MB payload.
LOG_IMPORT_MAX_BODY_BYTES = 6 * 1000 * 1000 - 1
LOG_IMPORT_SUFFIX = "/trials/import"
TITLE = "trncost"
DESCRIPTION = (
    "What it costs to reach a training target on AWS Trainium3 (and the alternatives), from "
    "your own trials and official AWS prices, every number traceable."
)

app = APIGatewayRestResolver(enable_validation=True)
errors.register(app)
DOCS_PATH = "/docs"


class _Docs:
    """The Swagger UI route, added on the first request for it: enable_swagger imports
    Powertools' OpenAPI models (~90 ms of a cold start) that no other route needs."""

    enabled = False

    @classmethod
    def enable(cls) -> None:
        if not cls.enabled:
            _Routes.include()
            app.enable_swagger(
                path=DOCS_PATH, title=TITLE, version=__version__, description=DESCRIPTION
            )
            cls.enabled = True

    @classmethod
    def when_asked(cls, event: dict[str, Any]) -> None:
        if not cls.enabled and str(event.get("path") or "").rstrip("/").endswith(DOCS_PATH):
            cls.enable()


# -- health and docs ----------------------------------------------------------------------------
@app.get("/health", tags=["meta"])
def health() -> Health:
    return Health(status="ok", version=__version__)


# What the Lambda entry answers before any route runs, on every operation with a body.
BODY_ERRORS = {
    400: "the body is not JSON trncost parses safely: not UTF-8 (or base64), malformed, nested"
    f" deeper than {safejson.MAX_JSON_DEPTH} levels, or an integer of more than"
    f" {safejson.MAX_INTEGER_DIGITS} digits",
    413: f"the body is larger than {MAX_BODY_BYTES} bytes",
    415: "a POST whose content-type is not application/json",
}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document: generated from the routes, completed by trncost.api.docs
    (summaries, descriptions, examples, the real status codes and error schema)."""
    from trncost.api import docs

    _Routes.include()
    document: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(title=TITLE, version=__version__, description=DESCRIPTION)
    )
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas["ErrorBody"] = ErrorBody.model_json_schema()
    return docs.complete(document, BODY_ERRORS)


# A raw Response is not a schema type: no return annotation, or Powertools documents one.
@app.get("/openapi.json", tags=["meta"], include_in_schema=False)
def openapi():
    return Response(
        status_code=200, content_type="application/json", body=json.dumps(openapi_document())
    )


class _Routes:
    """The route modules, each included (imported, its models built) on the first request
    for one of its paths: a cold start loads what its first request needs, not every
    module's models. The OpenAPI document, the docs and a path no module claims include
    them all (so an unknown path is the full app's 404)."""

    included: set[str] = set()
    ALL = ("workloads", "estimates", "prices", "trial_plans")

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
        if first == "health":
            return ()
        if first == "prices":
            return ("prices",)
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
    if len(raw) > limit:
        return error(413, "payload_too_large", f"body: larger than {limit} bytes")
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
        _Docs.when_asked(event)
        _Routes.include(_Routes.for_path(str(event.get("path") or "")))
        with serving(services):
            return app.resolve(event, context)
    except Exception as exc:  # logged with its trace, answered without it
        return _proxy(errors.unexpected(exc, event))


def warm_up(services: Wiring) -> None:
    """What the first requests would do, done ahead (before a SnapStart snapshot): the docs
    route and its models, the OpenAPI document, one request through validation. Nothing here
    calls AWS, so no client, credential or connection is made."""
    _Docs.enable()
    openapi_document()
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
