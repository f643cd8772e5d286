"""moto as the tests use it: fake credentials, and DynamoDB's atomic conditional writes.

DynamoDB applies a conditional write atomically; moto's in-process backend does not when
threads race. Serialising its item operations restores the real service's guarantee, so that
concurrency tests test our code, not moto's."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

AWS_ENV = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
DYNAMODB_ITEM_OPS = (
    "put_item",
    "update_item",
    "delete_item",
    "get_item",
    "query",
    "transact_write_items",
)
_DYNAMODB_LOCK = threading.RLock()


def _atomic(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _DYNAMODB_LOCK:
            return method(*args, **kwargs)

    return locked


def atomic_dynamodb(mp: pytest.MonkeyPatch) -> None:
    """Serialise moto's DynamoDB item operations (see the module docstring)."""
    from moto.dynamodb.models import DynamoDBBackend

    for name in DYNAMODB_ITEM_OPS:
        mp.setattr(DynamoDBBackend, name, _atomic(getattr(DynamoDBBackend, name)))


@contextmanager
def mocked_aws(
    mp: pytest.MonkeyPatch, config: dict[str, Any] | None = None, **env: str
) -> Iterator[None]:
    """Atomic DynamoDB, the fake credentials (and `env`) set through `mp`, and moto on
    (with moto's own `config`, e.g. {"batch": {"use_docker": False}})."""
    from moto import mock_aws

    atomic_dynamodb(mp)
    for name, value in {**AWS_ENV, **env}.items():
        mp.setenv(name, value)
    with mock_aws(config=config):
        yield


def create_table(name: str) -> str:
    """trncost's table (the one schema, trncost.store.schema) in moto; returns its name."""
    import boto3

    from trncost.store.schema import TABLE

    boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(name))
    return name
