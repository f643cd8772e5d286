"""The reliability suite: moto with DynamoDB's atomic conditional writes (tests/support), and the
figures the suite prints at the end of the session (requests tried and 5xx seen, duplicates sent
and records made, events sent and where they ended, versions, cdk-nag findings: printed by
tests/conftest.py, which gathers them from every worker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.moto_env import mocked_aws
from tests.support.reliability_kit import POWERTOOLS_ENV


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with mocked_aws(monkeypatch, **POWERTOOLS_ENV):
        yield


@pytest.fixture
def table_name() -> str:
    return "trncost-reliability"
