"""The reliability suite: moto with DynamoDB's atomic conditional writes, and the figures the
suite prints at the end of the session (requests tried and 5xx seen, duplicates sent and records
made, events sent and where they ended, versions, cdk-nag findings)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from reliability_kit import AWS_ENV, FIGURES, atomic_dynamodb
from trncost.store.schema import TABLE

TABLE_NAME = "trncost-reliability"


@pytest.fixture
def aws(monkeypatch):
    atomic_dynamodb(monkeypatch)
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield


@pytest.fixture
def table(aws) -> str:
    boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
    return TABLE_NAME


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
