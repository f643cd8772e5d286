"""moto-backed AWS for integration tests: a table from the one schema, a bus whose events land
in an SQS queue (EventBridge → SQS works in moto; → Lambda does not)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import boto3
import pytest
from moto import mock_aws

from trncost.events import DetailType, pattern
from trncost.store.schema import TABLE

TABLE_NAME = "trncost-test"
BUS_NAME = "trncost-test"


@pytest.fixture
def aws(monkeypatch):
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield


@pytest.fixture
def table(aws) -> str:
    boto3.client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
    return TABLE_NAME


@dataclass
class Bus:
    name: str
    queue_url: str

    def received(self) -> list[dict]:
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
def bus(aws) -> Bus:
    events, sqs = boto3.client("events"), boto3.client("sqs")
    events.create_event_bus(Name=BUS_NAME)
    url = sqs.create_queue(QueueName="trncost-test-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(
        Name="all-trncost",
        EventBusName=BUS_NAME,
        EventPattern=json.dumps(pattern(DetailType.price_snapshot_taken)),
    )
    events.put_targets(
        Rule="all-trncost", EventBusName=BUS_NAME, Targets=[{"Id": "queue", "Arn": arn}]
    )
    return Bus(BUS_NAME, url)
