"""An SQS event source mapping, in-process: what Lambda does between a queue and a function.

Receive up to `batch_size` messages, invoke the handler with an SQS event, delete the messages
it processed, and make the ones it reported in `batchItemFailures` visible again, so the
queue's redrive policy moves a message that keeps failing to its DLQ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[[dict[str, Any], Any], dict[str, Any] | None]


@dataclass
class Delivery:
    invocations: int = 0
    processed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {
                    "ApproximateReceiveCount": m.get("Attributes", {}).get(
                        "ApproximateReceiveCount", "1"
                    ),
                    "SentTimestamp": m.get("Attributes", {}).get("SentTimestamp", "0"),
                    "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                    "ApproximateFirstReceiveTimestamp": "0",
                },
                "messageAttributes": {},
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


class QueuePoller:
    def __init__(
        self, sqs: Any, queue_url: str, handler: Handler, context: Any, batch_size: int = 10
    ) -> None:
        self.sqs = sqs
        self.queue_url = queue_url
        self.handler = handler
        self.context = context
        self.batch_size = batch_size
        attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
        self.queue_arn = attrs["Attributes"]["QueueArn"]
        self.region = self.queue_arn.split(":")[3]

    def poll_once(self, wait_s: int = 0) -> Delivery:
        """One receive → invoke → delete/return cycle."""
        result = Delivery()
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            WaitTimeSeconds=wait_s,
            AttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return result
        result.invocations = 1
        try:
            response = (
                self.handler(sqs_event(messages, self.queue_arn, self.region), self.context) or {}
            )
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        except Exception as exc:  # the whole batch failed, as Lambda would see it
            failed = {m["MessageId"] for m in messages}
            result.failures.append(repr(exc))
        for m in messages:
            if m["MessageId"] in failed:
                result.failed += 1
                self.sqs.change_message_visibility(
                    QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                )
            else:
                result.processed += 1
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        return result

    def drain(self, max_rounds: int = 50) -> Delivery:
        """Poll until the queue is empty (failed messages retried until they are redriven)."""
        total = Delivery()
        for _ in range(max_rounds):
            d = self.poll_once()
            if not d.invocations:
                return total
            total.invocations += d.invocations
            total.processed += d.processed
            total.failed += d.failed
            total.failures += d.failures
        return total
