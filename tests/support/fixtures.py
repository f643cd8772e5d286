"""The fixtures every test folder may use, registered once in tests/conftest.py
(`pytest_plugins`): moto-backed AWS (`aws`, `table`, `bus`) and the synthesized CDK app
(`synthesized`, `cdk_context`, `cli_context`, `synthesize`, and the data stack's `data`,
`table_id`, `bus_id`, `stage_config`). Heavy imports (moto, aws-cdk-lib) happen inside the
fixtures, so the unit tier does not pay for them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support import cdk
from tests.support.moto_env import create_table, mocked_aws

TABLE_NAME = "trncost-test"
BUS_NAME = "trncost-test"


# -- moto ---------------------------------------------------------------------------------------
@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto on, with fake credentials and DynamoDB's atomic conditional writes."""
    with mocked_aws(monkeypatch):
        yield


@pytest.fixture
def table_name() -> str:
    """The name `table` creates (a folder's conftest may override it)."""
    return TABLE_NAME


@pytest.fixture
def table(aws: None, table_name: str) -> str:
    """trncost's table in moto, from the one schema; its name."""
    return create_table(table_name)


@dataclass
class Bus:
    """A project event bus whose events (source trncost) land in an SQS queue: EventBridge →
    SQS works in moto; → Lambda does not."""

    name: str
    queue_url: str

    def received(self) -> list[dict[str, Any]]:
        import boto3

        sqs = boto3.client("sqs")
        out = []
        while True:
            msgs = sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
            ).get("Messages", [])
            if not msgs:
                return out
            for m in msgs:
                out.append(json.loads(m["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])


@pytest.fixture
def bus(aws: None) -> Bus:
    import boto3

    from trncost.events import SOURCE

    events, sqs = boto3.client("events"), boto3.client("sqs")
    events.create_event_bus(Name=BUS_NAME)
    url = sqs.create_queue(QueueName="trncost-test-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(
        Name="all-trncost",
        EventBusName=BUS_NAME,
        EventPattern=json.dumps({"source": [SOURCE]}),
    )
    events.put_targets(
        Rule="all-trncost", EventBusName=BUS_NAME, Targets=[{"Id": "queue", "Arn": arn}]
    )
    return Bus(BUS_NAME, url)


# -- the CDK app --------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> cdk.Synthesized:
    """The real app (cdk.json context, every stage), synthesized once per session."""
    return cdk.synthesize_real_app(tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture
def cdk_context() -> dict[str, Any]:
    """A fresh copy of cdk.json's context, safe to modify."""
    return cdk.cdk_json_context()


@pytest.fixture
def cli_context() -> dict[str, Any]:
    """The context keys the CDK CLI adds, for throwaway apps built in a test."""
    return dict(cdk.CLI_CONTEXT)


@pytest.fixture(name="synthesize")
def synthesize_fixture() -> Any:
    """`synthesize(app, outdir) -> Synthesized`, for throwaway apps built in a test."""
    return cdk.synthesize


@pytest.fixture(scope="module")
def data(synthesized: cdk.Synthesized) -> dict[str, Any]:
    """The dev stage's data stack template (table, bus)."""
    return synthesized.template(cdk.DATA)


@pytest.fixture(scope="module")
def table_id(data: dict[str, Any]) -> str:
    """The logical id of the table in the data stack."""
    from tests.support.template_kit import one

    return one(data, "AWS::DynamoDB::Table")[0]


@pytest.fixture(scope="module")
def bus_id(data: dict[str, Any]) -> str:
    """The logical id of the event bus in the data stack."""
    from tests.support.template_kit import one

    return one(data, "AWS::Events::EventBus")[0]


@pytest.fixture(scope="module")
def stage_config() -> Any:
    """The dev stage's config, as the app loads it from cdk.json."""
    from stacks.config import load_stage_configs

    return load_stage_configs(cdk.cdk_json_context())[cdk.STAGE]
