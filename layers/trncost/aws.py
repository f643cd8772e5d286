"""The one place boto3 clients and resources are made, with the one retry policy.

Every adapter asks here, lazily, when it first needs a client (and tests inject their own:
moto, or a client wrapped in a botocore Stubber). The policy is botocore's standard retry mode
with MAX_ATTEMPTS attempts per call — exponential backoff with full jitter, throttling and 5xx
retried, for every service alike. No adapter retries on top of it: each asynchronous hop has
its own retry beyond this one (SQS redelivery then the DLQ, the Scheduler's retry, the state
machine's Retry), and the API answers 503 when an AWS service still fails (`unavailable`).

Endpoints: botocore's own `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_<SERVICE>` variables apply (the
local runtime points every client at its embedded moto that way), or `endpoint_url=`.
"""

from __future__ import annotations

from typing import Any, ClassVar

MAX_ATTEMPTS = 4  # in all, the first attempt included: botocore's own default for DynamoDB

# What botocore reports once its retries are spent on a service that is throttling or failing.
THROTTLING_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "Throttling",
    }
)


def config() -> Any:
    """The botocore Config every client and resource gets."""
    from botocore.config import Config

    # total_max_attempts: a client Config's `max_attempts` would count the retries only
    return Config(retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS})


def client(
    service: str,
    region: str | None = None,
    *,
    endpoint_url: str | None = None,
    access_key: tuple[str, str] | None = None,
) -> Any:
    """`access_key` (id, secret): explicit keys, for an emulator that takes any (the local
    runtime's embedded AWS); None: the default credential chain."""
    import boto3

    keys = {}
    if access_key is not None:
        keys = {"aws_access_key_id": access_key[0], "aws_secret_access_key": access_key[1]}
    return boto3.client(
        service, region_name=region, endpoint_url=endpoint_url, config=config(), **keys
    )


def resource(service: str, region: str | None = None, *, endpoint_url: str | None = None) -> Any:
    import boto3

    return boto3.resource(service, region_name=region, endpoint_url=endpoint_url, config=config())


class RegionalAdapter:
    """An adapter over one AWS service in one region: its client made here on first use, or
    injected (a test's); `calls` counts the API calls made through it (a page is a call)."""

    service: ClassVar[str]  # botocore's name: "pricing", "cloudwatch", ...

    def __init__(self, region: str, client: Any = None) -> None:
        self.region = region
        self._client = client
        self.calls = 0

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client(self.service, self.region)
        return self._client

    @property
    def endpoint(self) -> str:
        """The endpoint the requests go to (an official price's origin names it)."""
        meta = getattr(self.client, "meta", None)
        found = getattr(meta, "endpoint_url", None)
        return str(found or f"{self.service}.{self.region}.amazonaws.com")


def credentials() -> Any:
    """The default session's credentials (env, profile, SSO, role...), frozen; None when
    there are none. For SigV4 signing outside botocore (the HTTP client)."""
    import boto3

    found = boto3.Session().get_credentials()
    return None if found is None else found.get_frozen_credentials()


def error_code(exc: BaseException) -> str:
    """The AWS error code of a botocore ClientError ("" for anything else)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", ""))


def unavailable(exc: BaseException) -> bool:
    """An AWS service still throttling or failing after the retries (not a bug in trncost,
    and not the caller's fault): any botocore transport error, a 5xx, or throttling."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(exc, BotoCoreError):
        return True
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return int(status or 0) >= 500 or error_code(exc) in THROTTLING_CODES
    return False


def is_aws_error(exc: BaseException) -> bool:
    """Anything botocore raises (a service's error answer, or no answer at all)."""
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(exc, BotoCoreError | ClientError)
