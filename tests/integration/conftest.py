"""moto-backed AWS for integration tests: a table from the one schema, a bus whose events land
in an SQS queue (EventBridge → SQS works in moto; → Lambda does not)."""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend

from trncost.events import SOURCE
from trncost.store.schema import TABLE

TABLE_NAME = "trncost-test"
BUS_NAME = "trncost-test"


_DYNAMODB_LOCK = threading.RLock()


def _atomic(method):
    @functools.wraps(method)
    def locked(*args, **kwargs):
        with _DYNAMODB_LOCK:
            return method(*args, **kwargs)

    return locked


@pytest.fixture
def aws(monkeypatch):
    # DynamoDB applies a conditional write atomically; moto's in-process backend does not
    # when several threads race. Serialising its item operations restores the real
    # service's guarantee, so concurrency tests test our code, not moto's.
    for name in (
        "put_item",
        "update_item",
        "delete_item",
        "get_item",
        "query",
        "transact_write_items",
    ):
        monkeypatch.setattr(DynamoDBBackend, name, _atomic(getattr(DynamoDBBackend, name)))
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
        EventPattern=json.dumps({"source": [SOURCE]}),
    )
    events.put_targets(
        Rule="all-trncost", EventBusName=BUS_NAME, Targets=[{"Id": "queue", "Arn": arn}]
    )
    return Bus(BUS_NAME, url)
