"""What the reliability suite shares: the figures it prints, moto with DynamoDB's atomic
conditional writes, the ingest wiring (EventBridge → SQS + DLQ → the real handler), and a
fault injector that answers AWS calls with throttling or 5xx the way the services do, so that
botocore's own retries (standard mode) see real HTTP error responses."""

from __future__ import annotations

import json
import random
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support import moto_env, stubs

# -- the figures ------------------------------------------------------------------------------
FIGURES: dict[str, dict[str, object]] = {}


def figure(section: str, name: str, value: object) -> None:
    """Record one figure to print at the end of the session."""
    FIGURES.setdefault(section, {})[name] = value


def add(section: str, name: str, value: int) -> None:
    FIGURES.setdefault(section, {})
    FIGURES[section][name] = int(FIGURES[section].get(name, 0)) + value  # type: ignore[arg-type]


# -- moto: tests/support/moto_env.py, and Powertools without tracing ----------------------------
POWERTOOLS_ENV = {"POWERTOOLS_TRACE_DISABLED": "true"}
AWS_ENV = {**moto_env.AWS_ENV, **POWERTOOLS_ENV}


def no_retry_sleep(mp: pytest.MonkeyPatch) -> None:
    """botocore's standard-mode backoff, without the waiting (the retries still happen)."""
    from botocore.retries import standard

    mp.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0.0)


def no_retry_quota(mp: pytest.MonkeyPatch) -> None:
    """Every call gets botocore's three attempts, however many faults came before it.

    Standard mode stops retrying once a client has spent its retry quota (500; 5 a retry, 1
    back a success). At the fault rates these tests inject on every attempt (30–45 %) it is
    spent within a few hundred calls, and from then on each call fails at its first fault: what
    a test then sees hangs on how many calls came before (any write path gaining one call moved
    another's outcome), not on the behaviour it checks."""
    from botocore.retries.quota import RetryQuota

    mp.setattr(RetryQuota, "acquire", lambda self, capacity_amount: True)


# -- queues and rules -------------------------------------------------------------------------
def queue_arn(sqs: Any, url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]


def queue_with_dlq(sqs: Any, name: str, max_receives: int) -> tuple[str, str]:
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    url = sqs.create_queue(
        QueueName=name,
        Attributes={
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": queue_arn(sqs, dlq), "maxReceiveCount": str(max_receives)}
            )
        },
    )["QueueUrl"]
    return url, dlq


def route(events: Any, sqs: Any, rule: str, bus: str, pattern: dict, queue_url: str) -> None:
    events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps(pattern))
    events.put_targets(
        Rule=rule, EventBusName=bus, Targets=[{"Id": "q", "Arn": queue_arn(sqs, queue_url)}]
    )


def drain(sqs: Any, url: str) -> list[dict[str, Any]]:
    """Every message body left in a queue (received and deleted)."""
    out: list[dict[str, Any]] = []
    while True:
        msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not msgs:
            return out
        for m in msgs:
            out.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def depth(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(
        attrs["ApproximateNumberOfMessagesNotVisible"]
    )


def sqs_record(body: str, queue_arn_: str, message_id: str | None = None) -> dict[str, Any]:
    """One SQS record as Lambda's event source mapping hands it to the function."""
    return {
        "messageId": message_id or str(uuid.uuid4()),
        "receiptHandle": uuid.uuid4().hex,
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "0",
            "SenderId": "AIDAIENQZJOLO23YVJ4VO",
            "ApproximateFirstReceiveTimestamp": "0",
        },
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn_,
        "awsRegion": "us-east-1",
    }


def own_metrics(module: Any) -> None:
    """Give a loaded handler module its own Powertools metric set. Powertools keeps one per
    process (a Lambda sandbox runs one invocation at a time); threads standing in for separate
    sandboxes must not share it."""
    provider = module.metrics.provider
    provider.metric_set = {}
    provider.dimension_set = dict(provider.dimension_set)
    provider.metadata_set = {}


# -- fault injection --------------------------------------------------------------------------
@dataclass(frozen=True)
class Fault:
    status: int
    code: str
    message: str

    @property
    def kind(self) -> str:
        return "throttling" if self.status == 400 else "5xx"


THROTTLING = Fault(400, "ThrottlingException", "Rate exceeded")
INTERNAL = Fault(500, "InternalServerError", "We encountered an internal error")
UNAVAILABLE = Fault(503, "ServiceUnavailable", "Service is unavailable; try again")
TRANSIENT = (THROTTLING, INTERNAL, UNAVAILABLE)


def error_response(request: Any, fault: Fault) -> Any:
    """The HTTP error response the service would send, in the request's own protocol."""
    query_code = "Throttling" if fault is THROTTLING else None
    return stubs.error_response(request, fault.status, fault.code, fault.message, query_code)


Decide = Callable[[str, str, bytes], Fault | None]


class FaultInjector:
    """Answers AWS calls made inside `active()` with a fault instead of moto's answer.

    `rate`: the chance that any one attempt (each retry is an attempt) gets a transient fault,
    drawn from a seeded generator. `outage(service, operation, body)`: a fault to answer every
    matching attempt with while it returns one (a service down for some requests)."""

    def __init__(
        self,
        *,
        rate: float,
        seed: int,
        services: frozenset[str],
        outage: Decide | None = None,
    ) -> None:
        self.rate = rate
        self.rng = random.Random(seed)
        self.services = services
        self.outage = outage
        self.attempts: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def active(self) -> Iterator[None]:
        self._local.on = True
        try:
            yield
        finally:
            self._local.on = False

    def decide(self, service: str, operation: str, body: bytes) -> Fault | None:
        if not getattr(self._local, "on", False) or service not in self.services:
            return None
        with self._lock:
            self.attempts[f"{service}.{operation}"] += 1
            fault = self.outage(service, operation, body) if self.outage else None
            if fault is not None:
                self.injected["outage"] += 1
            elif self.rng.random() < self.rate:
                fault = self.rng.choice(TRANSIENT)
            if fault is not None:
                self.injected[fault.kind] += 1
                self.injected[f"{service}.{operation}"] += 1
            return fault

    def install(self, mp: pytest.MonkeyPatch) -> None:
        """Wrap moto's before-send hook: every client of every thread goes through it."""
        from moto.core.botocore_stubber import BotocoreStubber

        original = BotocoreStubber.__call__
        injector = self

        def call(stub: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
            _, service, operation = (event_name.split(".", 2) + ["", ""])[:3]
            raw = request.body
            body = raw.encode() if isinstance(raw, str) else raw if isinstance(raw, bytes) else b""
            fault = injector.decide(service, operation, body)
            if fault is not None:
                return error_response(request, fault)
            return original(stub, event_name, request, **kwargs)

        mp.setattr(BotocoreStubber, "__call__", call)

    @property
    def total(self) -> int:
        return self.injected["throttling"] + self.injected["5xx"]
