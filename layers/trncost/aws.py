"""The one place boto3 clients are made: lazily, by the adapters that need them, with
botocore's standard retry mode."""

from __future__ import annotations

from typing import Any


def client(service: str, region: str | None = None, *, max_attempts: int | None = None) -> Any:
    import boto3
    from botocore.config import Config

    retries: dict[str, Any] = {"mode": "standard"}
    if max_attempts is not None:
        retries["max_attempts"] = max_attempts
    return boto3.client(service, region_name=region, config=Config(retries=retries))
