"""boto3 adapters for the AWS Price List Query API and EC2 Capacity Block offerings.

Clients are created lazily with standard retries and can be injected (tests pass clients
wrapped in a botocore Stubber). Throttling is retried here as well, with exponential backoff
and full jitter, so that a snapshot survives a burst of ThrottlingException.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from trncost import aws
from trncost.settings import PRICE_LIST_REGIONS

RETRYABLE = {
    "ThrottlingException",
    "Throttling",
    "TooManyRequestsException",
    "RequestLimitExceeded",
    "InternalErrorException",
    "ServiceUnavailableException",
    "InternalError",
    "ServiceUnavailable",
}


def _client(service: str, region: str) -> Any:
    return aws.client(service, region, max_attempts=5)


@dataclass
class Retry:
    attempts: int = 6
    base_s: float = 0.5
    cap_s: float = 20.0
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random

    def call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        from botocore.exceptions import ClientError

        for attempt in range(self.attempts):
            try:
                return fn(**kwargs)
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code not in RETRYABLE or attempt == self.attempts - 1:
                    raise
                self.sleep(self.rand() * min(self.cap_s, self.base_s * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover


class PriceListClient:
    """`pricing:GetProducts` with filters and pagination, on a Price List endpoint region."""

    def __init__(
        self, region: str = "us-east-1", client: Any = None, retry: Retry | None = None
    ) -> None:
        if region not in PRICE_LIST_REGIONS:
            raise ValueError(
                f"the Price List API is served from {', '.join(PRICE_LIST_REGIONS)}, not {region}"
            )
        self.region = region
        self._client = client
        self.retry = retry or Retry()
        self.calls = 0

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = _client("pricing", self.region)
        return self._client

    def get_products(self, service_code: str, filters: list[dict[str, str]]) -> Iterator[str]:
        """Every PriceList item (a JSON string) matching the filters, page by page."""
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {
                "ServiceCode": service_code,
                "Filters": filters,
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            }
            if token:
                kwargs["NextToken"] = token
            self.calls += 1
            page = self.retry.call(self.client.get_products, **kwargs)
            yield from page.get("PriceList", [])
            token = page.get("NextToken")
            if not token:
                return


class CapacityBlockClient:
    """`ec2:DescribeCapacityBlockOfferings` in one region."""

    def __init__(self, region: str, client: Any = None, retry: Retry | None = None) -> None:
        self.region = region
        self._client = client
        self.retry = retry or Retry()
        self.calls = 0

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = _client("ec2", self.region)
        return self._client

    def offerings(
        self,
        instance_type: str,
        instance_count: int,
        duration_hours: int,
        start: datetime,
        end: datetime,
    ) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {
                "InstanceType": instance_type,
                "InstanceCount": instance_count,
                "CapacityDurationHours": duration_hours,
                "StartDateRange": start,
                "EndDateRange": end,
            }
            if token:
                kwargs["NextToken"] = token
            self.calls += 1
            page = self.retry.call(self.client.describe_capacity_block_offerings, **kwargs)
            yield from page.get("CapacityBlockOfferings", [])
            token = page.get("NextToken")
            if not token:
                return
