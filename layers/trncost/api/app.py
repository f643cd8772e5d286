"""The HTTP API: one Powertools resolver with the route modules included, validated by
Powertools, its OpenAPI document generated from the routes (`openapi.json`).

    api/workloads.py    workloads, trials, rejected ingests
    api/estimates.py    estimates, their versions and reports, comparisons
    api/prices.py       price snapshots
    api/trial_plans.py  trial plans (the Step Functions workflow)
    api/errors.py       every error → its status code, in one place
    api/context.py      the services of the request being answered

A route validates, calls one service, and returns. `handle` is the Lambda entry: it turns
what Powertools would answer with a 500 (oversized, non-UTF-8, non-JSON bodies) into 4xx
first, and a 5xx never shows a stack trace.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from trncost import __version__
from trncost.api import errors, estimates, prices, trial_plans, workloads
from trncost.api.context import serving
from trncost.api.errors import error
from trncost.api.schemas import Health
from trncost.wiring import Wiring

MAX_BODY_BYTES = 1024 * 1024
# What a body may hold and still parse safely: Python's json raises RecursionError past ~1,000
# levels and ValueError for an integer over 4,300 digits; both are refused with a 400 first.
# The deepest body the API takes (a bulk Price List offer file) is under 10 levels, and no
# bounded field (trncost.model.bounds) needs more than 19 integer digits.
MAX_JSON_DEPTH = 64
MAX_INTEGER_DIGITS = 30
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")
TITLE = "trncost"
DESCRIPTION = (
    "What it costs to reach a training target on AWS Trainium3 (and the alternatives), from "
    "your own trials and official AWS prices, every number traceable."
)

app = APIGatewayRestResolver(enable_validation=True)
app.enable_swagger(path="/docs", title=TITLE, version=__version__, description=DESCRIPTION)
errors.register(app)


# -- health and docs ----------------------------------------------------------------------------
@app.get("/health", tags=["meta"])
def health() -> Health:
    return Health(status="ok", version=__version__)


def openapi_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(title=TITLE, version=__version__, description=DESCRIPTION)
    )
    return document


# A raw Response is not a schema type: no return annotation, or Powertools documents one.
@app.get("/openapi.json", tags=["meta"], include_in_schema=False)
def openapi():
    return Response(
        status_code=200, content_type="application/json", body=json.dumps(openapi_document())
    )


for module in (workloads, estimates, prices, trial_plans):
    app.include_router(module.routes)


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
    unsafe = _unsafe_json(text)
    if unsafe is not None:
        return error(400, "bad_request", f"body: {unsafe}", ["body"])
    event["body"] = text
    event["isBase64Encoded"] = False
    return None


class _TooLong(ValueError):
    pass


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _TooLong(digits)
    return int(digits)


def json_depth(text: str) -> int:
    """How deep `text`'s arrays and objects nest (strings skipped), without parsing it."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return min(MAX_JSON_DEPTH, text.count("[") + text.count("{"))  # no deeper: no scan
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _unsafe_json(text: str) -> str | None:
    """Why `text` is not JSON the API can parse safely, or None: too deep, an integer too long,
    or malformed. Depth is measured before parsing; integers are bounded while parsing."""
    if json_depth(text) > MAX_JSON_DEPTH:
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        json.loads(text, parse_int=_bounded_int)
    except _TooLong:
        return f"an integer of more than {MAX_INTEGER_DIGITS} digits"
    except json.JSONDecodeError as exc:
        return f"malformed JSON ({exc.msg} at {exc.pos})"
    except (RecursionError, ValueError) as exc:  # pragma: no cover - bounded above
        return f"JSON that cannot be parsed ({type(exc).__name__})"
    return None


def handle(event: dict[str, Any], context: Any, services: Wiring) -> dict[str, Any]:
    """The API Lambda: precheck, route with `services`, and a 503 or a 500 without internals
    if anything escapes."""
    early = _precheck(event)
    if early is not None:
        return _proxy(early)
    try:
        with serving(services):
            return app.resolve(event, context)
    except Exception as exc:  # logged with its trace, answered without it
        return _proxy(errors.unexpected(exc, event))


def _proxy(response: Response[str]) -> dict[str, Any]:
    return {
        "statusCode": response.status_code,
        "headers": {"Content-Type": response.content_type or "application/json"},
        "multiValueHeaders": {},
        "body": response.body,
        "isBase64Encoded": False,
    }
