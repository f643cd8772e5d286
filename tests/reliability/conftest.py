"""The reliability suite: moto with DynamoDB's atomic conditional writes (tests/support), and the
figures the suite prints at the end of the session (requests tried and 5xx seen, duplicates sent
and records made, events sent and where they ended, versions, cdk-nag findings)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.moto_env import mocked_aws
from tests.support.reliability_kit import FIGURES, POWERTOOLS_ENV


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with mocked_aws(monkeypatch, **POWERTOOLS_ENV):
        yield


@pytest.fixture
def table_name() -> str:
    return "trncost-reliability"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not FIGURES:
        return
    tr = terminalreporter
    tr.section("reliability figures")
    width = max(len(name) for section in FIGURES.values() for name in section)
    for section, figures in FIGURES.items():
        tr.write_line(section)
        for name, value in figures.items():
            tr.write_line(f"  {name:<{width}}  {value}")
