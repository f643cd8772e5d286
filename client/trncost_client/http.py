"""A small HTTP client for the trncost API: JSON in and out, clear errors, timeouts, pagination,
and SigV4 signing when it talks to a deployed stage (API Gateway with IAM authorization).

    client = TrncostClient("http://127.0.0.1:8080")            # the local runtime: never signed
    client = TrncostClient("https://abc123.execute-api.us-east-1.amazonaws.com/dev")  # signed
    for workload in client.paginate("/workloads"):
        ...

Signing is decided once, from the URL: a host ending in `.amazonaws.com` is signed (service
`execute-api`, region from `<id>.execute-api.<region>.amazonaws.com` or `region=`), anything
else is not unless `sign=True` (a custom domain in front of a stage). Credentials come from the
default boto3 session, and only when a request is signed: a local URL never touches AWS.

`prepare()` builds the request (signed or not) without sending it; `send()` sends one.
"""

from __future__ import annotations

import json
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from ipaddress import ip_address
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from trncost import __version__
from trncost.errors import ApiError, ClientError, ConnectionFailed, SigningError
from trncost.settings import URL_ENV

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 30.0
SERVICE = "execute-api"
AWS_SUFFIX = ".amazonaws.com"
MAX_PAGES = 10_000  # a guard against a server that never stops paging
# A report's formats (the routes' `format`) and the content type each comes back as.
REPORT_TYPES = {"html": "text/html", "csv": "text/csv", "md": "text/markdown", "focus": "text/csv"}


def api_error(status: int, body: bytes) -> ApiError:
    """The ApiError for an error answer: its error body ({"error", "message", "fields"}), or
    what API Gateway's own errors ({"message"} / {"Message"}) or a bare body say."""
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text) if text else None
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        message = data.get("message") or data.get("Message") or reason or text
        code = data.get("error") or data.get("__type") or _status_code(status)
        fields = data.get("fields")
        if not isinstance(fields, list):
            fields = []
        return ApiError(status, str(code), str(message), [str(f) for f in fields])
    return ApiError(status, _status_code(status), (text[:200] or reason or "no body").strip())


def _status_code(status: int) -> str:
    return {
        400: "bad_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        409: "conflict",
        413: "payload_too_large",
        415: "unsupported_media_type",
        422: "validation_error",
        429: "too_many_requests",
    }.get(status, f"http_{status}")


@dataclass
class PreparedRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None = None
    signed: bool = False


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        for k, v in self.headers.items():
            if k.lower() == "content-type":
                return v
        return ""

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def execute_api_region(host: str) -> str | None:
    """`us-east-1` from `abc123.execute-api.us-east-1.amazonaws.com` (None otherwise)."""
    parts = host.lower().split(".")
    if len(parts) >= 5 and parts[1] == SERVICE and host.lower().endswith(AWS_SUFFIX):
        return parts[2]
    return None


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class TrncostClient:
    """The trncost API at `base_url` (scheme, host, optional port and stage path)."""

    base_url: str
    sign: bool | None = field(default=None, kw_only=True)  # None: sign only *.amazonaws.com
    region: str | None = field(default=None, kw_only=True)
    timeout: float = field(default=DEFAULT_TIMEOUT_S, kw_only=True)
    credentials: Any = field(default=None, kw_only=True, repr=False)  # botocore Credentials

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError(
                f"not an http(s) URL: {self.base_url!r} (e.g. {DEFAULT_URL} or "
                "https://<api-id>.execute-api.<region>.amazonaws.com/<stage>)"
            )
        if parts.query or parts.fragment:
            raise ClientError(f"the base URL takes no query or fragment: {self.base_url!r}")
        self.base_url = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
        self.host = parts.hostname
        if self.sign is None:
            self.sign = self.host.lower().endswith(AWS_SUFFIX)
        if self.sign and self.region is None:
            self.region = execute_api_region(self.host)
        # Loopback never goes through an HTTP(S)_PROXY from the environment.
        handlers: list[urllib.request.BaseHandler] = []
        if is_loopback(self.host):
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    # -- building and sending -----------------------------------------------------------------
    def url_for(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/': {path!r}")
        params = {k: str(v) for k, v in (query or {}).items() if v is not None}
        return self.base_url + path + (f"?{urlencode(params)}" if params else "")

    def prepare(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        accept: str = "application/json",
    ) -> PreparedRequest:
        """The request as it will be sent (signed when the client signs); nothing is sent."""
        headers = {"Accept": accept, "User-Agent": f"trncost-cli/{__version__}"}
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = PreparedRequest(method.upper(), self.url_for(path, query), headers, data)
        if self.sign:
            self._sign(request)
        return request

    def _sign(self, request: PreparedRequest) -> None:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        region = self.region
        if not region:
            raise SigningError(
                f"cannot tell the AWS region of {self.host}: pass --region (region=...)"
            )
        credentials = self.credentials or _default_credentials()
        aws = AWSRequest(
            method=request.method, url=request.url, data=request.body, headers=request.headers
        )
        SigV4Auth(credentials, SERVICE, region).add_auth(aws)
        request.headers = dict(aws.headers.items())
        request.signed = True

    def send(self, request: PreparedRequest) -> Response:
        """Send a prepared request; any status comes back as a Response (no raising on 4xx)."""
        req = urllib.request.Request(
            request.url, data=request.body, headers=request.headers, method=request.method
        )
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return Response(resp.status, dict(resp.headers.items()), resp.read())
        except urllib.error.HTTPError as exc:
            with exc:
                body = exc.read() or b""
            return Response(exc.code, dict(exc.headers.items()) if exc.headers else {}, body)
        except urllib.error.URLError as exc:
            raise self._unreachable(exc.reason) from None
        except (TimeoutError, ConnectionError, ssl.SSLError) as exc:
            raise self._unreachable(exc) from None

    def _unreachable(self, reason: object) -> ConnectionFailed:
        local = is_loopback(self.host)
        hint = (
            "start the local service with `make run` (or `trncost serve`), or pass --url "
            f"(or set {URL_ENV}) to point at a deployed stage"
            if local
            else f"check --url (or {URL_ENV}) and your network"
        )
        if isinstance(reason, ConnectionRefusedError):
            what = "connection refused"
        elif isinstance(reason, TimeoutError):
            what = f"no answer within {self.timeout:g} s"
        elif isinstance(reason, socket.gaierror):
            what = f"unknown host {self.host}"
        elif isinstance(reason, ssl.SSLError):
            what = f"TLS error: {reason}"
        else:
            what = str(reason) or type(reason).__name__
        return ConnectionFailed(f"cannot reach trncost at {self.base_url} ({what}): {hint}")

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        accept: str = "application/json",
    ) -> Response:
        """Prepare, send, and raise ApiError on an error status."""
        response = self.send(self.prepare(method, path, query=query, body=body, accept=accept))
        if response.status >= 400:
            raise api_error(response.status, response.body)
        return response

    def get_json(self, path: str, query: Mapping[str, Any] | None = None) -> Any:
        return self._json(self.request("GET", path, query=query))

    def post_json(self, path: str, body: Any) -> Any:
        return self._json(self.request("POST", path, body=body))

    def get_object(self, path: str, query: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """GET a route that answers a JSON object."""
        found: dict[str, Any] = self.get_json(path, query)
        return found

    def post_object(self, path: str, body: Any) -> dict[str, Any]:
        """POST to a route that answers a JSON object."""
        found: dict[str, Any] = self.post_json(path, body)
        return found

    def _json(self, response: Response) -> Any:
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            kind = response.content_type or "no content type"
            raise ClientError(
                f"{self.base_url} answered HTTP {response.status} with {kind}, not JSON: "
                "is --url the trncost API?"
            ) from None

    def paginate(
        self, path: str, *, limit: int | None = None, query: Mapping[str, Any] | None = None
    ) -> Iterator[Any]:
        """Every item of a paged list, following `next_cursor` until it is null."""
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            params = {**(query or {}), "limit": limit, "cursor": cursor}
            page = self.get_json(path, params)
            if not isinstance(page, dict) or not isinstance(page.get("items"), list):
                raise ClientError(f"GET {path}: the answer is not a page of items")
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return
            if cursor in seen:
                raise ClientError(f"GET {path}: the server repeated a cursor ({cursor})")
            seen.add(cursor)
        raise ClientError(f"GET {path}: more than {MAX_PAGES} pages")

    # -- the API, by route ----------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self.get_object("/health")

    def workloads(self, *, page_size: int | None = None) -> list[dict[str, Any]]:
        return list(self.paginate("/workloads", limit=page_size))

    def create_workload(self, workload: Mapping[str, Any]) -> dict[str, Any]:
        return self.post_object("/workloads", workload)

    def import_trial(self, workload_id: str, trial: Mapping[str, Any]) -> dict[str, Any]:
        return self.post_object(f"/workloads/{_seg(workload_id)}/trials", trial)

    def retract_trial(self, workload_id: str, trial_id: str, reason: str) -> dict[str, Any]:
        return self.post_object(
            f"/workloads/{_seg(workload_id)}/trials/{_seg(trial_id)}/retract", {"reason": reason}
        )

    def retract_workload(
        self, workload_id: str, reason: str, superseded_by: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"reason": reason}
        if superseded_by:
            body["superseded_by"] = superseded_by
        return self.post_object(f"/workloads/{_seg(workload_id)}/retract", body)

    def create_comparison(self, workload_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """Store a comparison (201, or 200 when the same one was stored before)."""
        return self.post_object(f"/workloads/{_seg(workload_id)}/comparisons", request)

    def estimates(self, workload_id: str, *, page_size: int | None = None) -> list[dict[str, Any]]:
        return list(self.paginate(f"/workloads/{_seg(workload_id)}/estimates", limit=page_size))

    def create_estimate(self, workload_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
        return self.post_object(f"/workloads/{_seg(workload_id)}/estimates", request)

    def estimate(self, estimate_id: str, version: int | None = None) -> dict[str, Any]:
        return self.get_object(f"/estimates/{_seg(estimate_id)}", {"version": version})

    def capacity(self, estimate_id: str, version: int | None = None) -> dict[str, Any]:
        """The capacity last quoted for an estimate version (GET /estimates/{id}/capacity)."""
        return self.get_object(f"/estimates/{_seg(estimate_id)}/capacity", {"version": version})

    def quote_capacity(self, estimate_id: str, version: int | None = None) -> dict[str, Any]:
        """Quote Capacity Blocks and Training Plans now (POST /estimates/{id}/capacity)."""
        found: dict[str, Any] = self._json(
            self.request(
                "POST", f"/estimates/{_seg(estimate_id)}/capacity", query={"version": version}
            )
        )
        return found

    def report(self, estimate_id: str, version: int | None = None, fmt: str = "html") -> str:
        """An estimate's report: the HTML page, or its line items and input table as `csv` or
        `md`."""
        return self._report(f"/estimates/{_seg(estimate_id)}/report", version, fmt)

    def _report(self, path: str, version: int | None, fmt: str) -> str:
        expected = REPORT_TYPES[fmt]
        response = self.request(
            "GET",
            path,
            query={"version": version, "format": None if fmt == "html" else fmt},
            accept=expected,
        )
        if expected not in response.content_type:
            raise ClientError(
                f"the report came back as {response.content_type or 'no content type'}, "
                f"not {expected}"
            )
        return response.text

    def comparison_report(self, comparison_id: str, fmt: str = "html") -> str:
        """A stored comparison's report: the HTML page, or its summary, decisions, ranges,
        runway, line items and input tables as `csv` or `md`."""
        return self._report(f"/comparisons/{_seg(comparison_id)}/report", None, fmt)

    def latest_snapshot(self) -> dict[str, Any]:
        return self.get_object("/prices/snapshots/latest")

    def take_snapshot(
        self, saved_price_list: Any = None, note: str | None = None, publish: bool = False
    ) -> dict[str, Any]:
        """POST /prices/snapshots: live, or an uploaded saved file (latest only with
        `publish`, where the stage accepts uploads)."""
        body: dict[str, Any] = {}
        if saved_price_list is not None:
            body["saved_price_list"] = saved_price_list
        if note is not None:
            body["note"] = note
        if publish:
            body["publish"] = True
        return self.post_object("/prices/snapshots", body)


def _seg(value: str) -> str:
    """One path segment, percent-encoded."""
    return quote(str(value), safe="")


def _default_credentials() -> Any:
    """Credentials of the default boto3 session (env, profile, SSO, role...), frozen."""
    from trncost import aws

    credentials = aws.credentials()
    if credentials is None:
        raise SigningError(
            "no AWS credentials to sign the request with: configure a profile or "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (the stage uses IAM authorization)"
        )
    return credentials
