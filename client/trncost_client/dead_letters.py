"""Operations on the queues: list the dead-letter queues with their depth, and redrive one.

A redrive moves what a DLQ holds back to a queue whose consumer will process it again (the
consumers are idempotent: an ingest is claimed once per job and status, a refresh of unchanged
inputs adds no version, so a message that is redriven twice changes nothing the second time).

Two ways to move the messages:

- **the SQS API** (the default): `StartMessageMoveTask` from the DLQ's ARN to the source
  queue's ARN, or, without a destination, back to each message's original source queue (what
  SQS does); the task runs inside SQS, at up to `max_per_second` messages a second;
  `ListMessageMoveTasks` reports its progress.
- **by copy** (`--by-copy`): receive from the DLQ, send the body and message attributes to the
  source queue, delete from the DLQ. For endpoints without message move tasks (moto, the local
  runtime) or a DLQ whose messages did not come from a redrive policy. It is idempotent per
  message id within a run (a message seen twice is sent once); across runs, a crash between
  the send and the delete resends that one message, which the idempotent consumers absorb.
  The destination is `--to`, else the message's `DeadLetterQueueSourceArn`, else the one queue
  whose redrive policy names this DLQ (several: `--to` is required).

The SQS client is created lazily by `trncost.aws` (standard retries) and can be injected (tests
pass a moto client or one wrapped in a botocore Stubber). The CLI's `dlq` commands use this
module; it is not part of the Lambda layer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from trncost import aws
from trncost.errors import OpsError

ACTIVE_TASK_STATUSES = frozenset({"RUNNING", "CANCELLING"})
MAX_MOVE_RATE = 500  # StartMessageMoveTask's MaxNumberOfMessagesPerSecond limit
RECEIVE_BATCH = 10
COPY_VISIBILITY_S = 60
MOVE_TASK_OPERATIONS = frozenset(
    {"start_message_move_task", "list_message_move_tasks", "cancel_message_move_task"}
)
UNSUPPORTED_CODES = frozenset(
    {"InvalidAction", "UnknownOperationException", "UnsupportedOperation", "NotImplemented"}
)
BY_COPY_HINT = "redrive with --by-copy instead"
_ATTRIBUTE_VALUE_KEYS = frozenset({"DataType", "StringValue", "BinaryValue"})
DEPTH_ATTRIBUTES = [
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
]


def is_dead_letter_name(name: str) -> bool:
    """`*-dlq` (also `*-dlq.fifo`) or `*DeadLetter*`, in any case."""
    lowered = name.lower().removesuffix(".fifo")
    return lowered.endswith("-dlq") or "deadletter" in lowered or "dead-letter" in lowered


@dataclass(frozen=True)
class Queue:
    name: str
    url: str
    arn: str

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]


@dataclass(frozen=True)
class Depth:
    visible: int
    in_flight: int
    delayed: int

    @property
    def total(self) -> int:
        return self.visible + self.in_flight + self.delayed


@dataclass(frozen=True)
class DeadLetterQueue:
    queue: Queue
    depth: Depth
    sources: list[str]  # names of the queues whose redrive policy targets it


@dataclass(frozen=True)
class MoveTask:
    """One message move task as ListMessageMoveTasks reports it."""

    status: str
    source_arn: str
    destination_arn: str | None
    moved: int
    to_move: int | None
    max_per_second: int | None = None
    task_handle: str | None = None
    failure_reason: str | None = None
    started_ms: int | None = None

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_TASK_STATUSES

    @classmethod
    def from_api(cls, r: dict[str, Any]) -> MoveTask:
        return cls(
            status=str(r.get("Status", "UNKNOWN")),
            source_arn=str(r.get("SourceArn", "")),
            destination_arn=r.get("DestinationArn"),
            moved=int(r.get("ApproximateNumberOfMessagesMoved", 0)),
            to_move=(
                int(r["ApproximateNumberOfMessagesToMove"])
                if r.get("ApproximateNumberOfMessagesToMove") is not None
                else None
            ),
            max_per_second=r.get("MaxNumberOfMessagesPerSecond"),
            task_handle=r.get("TaskHandle"),
            failure_reason=r.get("FailureReason"),
            started_ms=r.get("StartedTimestamp"),
        )


@dataclass(frozen=True)
class StartedMove:
    task_handle: str
    source: Queue
    destination_arn: str | None  # None: each message's original source queue


@dataclass
class CopyResult:
    moved: int = 0
    duplicates: int = 0  # received again after being sent: deleted, not sent twice
    destinations: dict[str, int] = field(default_factory=dict)  # queue ARN -> messages


def _error_message(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and "Error" in response:
        err = response["Error"]
        return f"{err.get('Code', 'Error')}: {err.get('Message', '')}".rstrip(": ")
    return str(exc) or type(exc).__name__


def arn_name(arn: str) -> str:
    return arn.rsplit(":", 1)[-1]


class QueueOps:
    def __init__(
        self,
        region: str | None = None,
        client: Any = None,
        endpoint_url: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        access_key: tuple[str, str] | None = None,
    ) -> None:
        self.region = region
        self.endpoint_url = endpoint_url
        self.access_key = access_key  # the local runtime's embedded AWS takes any keys
        self._client = client
        self.sleep = sleep
        self.monotonic = monotonic

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = aws.client(
                "sqs", self.region, endpoint_url=self.endpoint_url, access_key=self.access_key
            )
        return self._client

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        """One SQS call; any AWS or SDK error becomes an OpsError naming the operation."""
        with self._errors(operation):
            answer: dict[str, Any] = getattr(self.client, operation)(**kwargs)
        return answer

    def _pages(self, operation: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every page of a listing, through botocore's paginator; errors as `_call`'s."""
        with self._errors(operation):
            yield from self.client.get_paginator(operation).paginate(**kwargs)

    @contextmanager
    def _errors(self, operation: str) -> Iterator[None]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            message = _error_message(exc)
            if code.isdigit():  # an HTTP error without an AWS error code (not SQS itself)
                message = f"HTTP {code} from the endpoint, not an SQS answer"
            hint = ""
            if operation in MOVE_TASK_OPERATIONS and (code in UNSUPPORTED_CODES or code.isdigit()):
                hint = f"; {BY_COPY_HINT}"
            raise OpsError(f"{operation}: {message}{hint}") from None
        except NotImplementedError:  # moto (the local runtime, the tests) has no move tasks
            raise OpsError(f"{operation}: not supported by this endpoint; {BY_COPY_HINT}") from None
        except BotoCoreError as exc:  # no credentials, no region, endpoint unreachable
            raise OpsError(f"{operation}: {exc}") from None

    # -- queues ----------------------------------------------------------------------------
    def resolve(self, queue: str) -> Queue:
        """A queue by name, URL or ARN."""
        queue = queue.strip()
        if not queue:
            raise OpsError("no queue named")
        if queue.startswith("arn:"):
            parts = queue.split(":")
            if len(parts) != 6 or parts[2] != "sqs":
                raise OpsError(f"{queue}: not an SQS queue ARN")
            if self._client is None and self.region is None:
                self.region = parts[3]  # no region given: the ARN's
            kwargs: dict[str, Any] = {"QueueName": parts[5], "QueueOwnerAWSAccountId": parts[4]}
            url = self._call("get_queue_url", **kwargs)["QueueUrl"]
        elif queue.startswith(("https://", "http://")):
            url = queue
        else:
            url = self._call("get_queue_url", QueueName=queue)["QueueUrl"]
        attrs = self._attributes(url, ["QueueArn"])
        arn = attrs["QueueArn"]
        return Queue(name=arn_name(arn), url=url, arn=arn)

    def _attributes(self, url: str, names: list[str]) -> dict[str, str]:
        answer = self._call("get_queue_attributes", QueueUrl=url, AttributeNames=names)
        attributes: dict[str, str] = answer.get("Attributes", {})
        return attributes

    def depth(self, queue: Queue) -> Depth:
        a = self._attributes(queue.url, DEPTH_ATTRIBUTES)
        return Depth(
            visible=int(a.get("ApproximateNumberOfMessages", 0)),
            in_flight=int(a.get("ApproximateNumberOfMessagesNotVisible", 0)),
            delayed=int(a.get("ApproximateNumberOfMessagesDelayed", 0)),
        )

    def _queue_urls(self, prefix: str | None = None) -> Iterator[str]:
        kwargs: dict[str, Any] = {"MaxResults": 1000}
        if prefix:
            kwargs["QueueNamePrefix"] = prefix
        for page in self._pages("list_queues", **kwargs):
            yield from page.get("QueueUrls", [])

    def sources(self, dlq: Queue) -> list[str]:
        """URLs of the queues whose redrive policy sends to `dlq`."""
        pages = self._pages("list_dead_letter_source_queues", QueueUrl=dlq.url, MaxResults=1000)
        return [url for page in pages for url in page.get("queueUrls", [])]

    def dead_letter_queues(self, prefix: str | None = None) -> list[DeadLetterQueue]:
        """Queues named `*-dlq` or `*DeadLetter*`, with their depth and source queues."""
        found: list[DeadLetterQueue] = []
        for url in self._queue_urls(prefix):
            name = url.rstrip("/").rsplit("/", 1)[-1]
            if not is_dead_letter_name(name):
                continue
            arn = self._attributes(url, ["QueueArn"])["QueueArn"]
            queue = Queue(name=name, url=url, arn=arn)
            sources = [u.rstrip("/").rsplit("/", 1)[-1] for u in self.sources(queue)]
            found.append(DeadLetterQueue(queue, self.depth(queue), sorted(sources)))
        return sorted(found, key=lambda d: d.queue.name)

    # -- the SQS API: message move tasks ------------------------------------------------------
    def start_redrive(
        self, dlq: Queue, to: Queue | None = None, max_per_second: int | None = None
    ) -> StartedMove:
        """StartMessageMoveTask from `dlq` to `to`, or to the messages' original sources."""
        if max_per_second is not None and not 1 <= max_per_second <= MAX_MOVE_RATE:
            raise OpsError(f"--max-per-second must be in 1..{MAX_MOVE_RATE}")
        kwargs: dict[str, Any] = {"SourceArn": dlq.arn}
        if to is not None:
            kwargs["DestinationArn"] = to.arn
        if max_per_second is not None:
            kwargs["MaxNumberOfMessagesPerSecond"] = max_per_second
        handle = self._call("start_message_move_task", **kwargs)["TaskHandle"]
        return StartedMove(handle, dlq, to.arn if to else None)

    def move_tasks(self, dlq: Queue, limit: int = 10) -> list[MoveTask]:
        """The most recent message move tasks of `dlq` (at most 10 are kept by SQS)."""
        page = self._call("list_message_move_tasks", SourceArn=dlq.arn, MaxResults=limit)
        return [MoveTask.from_api(r) for r in page.get("Results", [])]

    def wait(
        self,
        started: StartedMove,
        poll_s: float = 5.0,
        timeout_s: float = 3600.0,
        progress: Callable[[MoveTask], None] | None = None,
    ) -> MoveTask:
        """Poll ListMessageMoveTasks until the task is no longer running."""
        deadline = self.monotonic() + timeout_s
        while True:
            tasks = self.move_tasks(started.source)
            # the running task carries its handle; a finished one is the newest entry
            task = next((t for t in tasks if t.task_handle == started.task_handle), None)
            if task is None and tasks:
                task = tasks[0]
            if task is None:
                raise OpsError(f"{started.source.name}: no message move task listed")
            if progress is not None:
                progress(task)
            if not task.active:
                return task
            if self.monotonic() >= deadline:
                raise OpsError(
                    f"{started.source.name}: the move task is still {task.status} after "
                    f"{timeout_s:.0f} s ({task.moved} moved); it goes on in SQS"
                )
            self.sleep(poll_s)

    # -- by copy -----------------------------------------------------------------------------
    def _copy_destination(self, dlq: Queue, to: Queue | None) -> Callable[[dict[str, Any]], str]:
        """Which queue URL a message goes to."""
        if to is not None:
            return lambda _m: to.url
        cache: dict[str, str] = {}
        fallback: list[str] = []

        def destination(message: dict[str, Any]) -> str:
            source_arn = message.get("Attributes", {}).get("DeadLetterQueueSourceArn")
            if source_arn:
                if source_arn not in cache:
                    cache[source_arn] = self.resolve(source_arn).url
                return cache[source_arn]
            if not fallback:
                sources = self.sources(dlq)
                if len(sources) != 1:
                    found = ", ".join(s.rsplit("/", 1)[-1] for s in sources) or "none"
                    raise OpsError(
                        f"{dlq.name}: a message does not say its source queue and "
                        f"{len(sources)} queues redrive to this DLQ ({found}): pass --to"
                    )
                fallback.append(sources[0])
            return fallback[0]

        return destination

    def redrive_by_copy(
        self,
        dlq: Queue,
        to: Queue | None = None,
        max_per_second: int | None = None,
        max_messages: int | None = None,
    ) -> CopyResult:
        """Receive → send to the source → delete, until the DLQ reports no message."""
        if max_per_second is not None and max_per_second < 1:
            raise OpsError("--max-per-second must be 1 or more")
        destination = self._copy_destination(dlq, to)
        result = CopyResult()
        sent: set[str] = set()
        started = self.monotonic()
        while max_messages is None or result.moved < max_messages:
            want = RECEIVE_BATCH
            if max_messages is not None:
                want = min(want, max_messages - result.moved)
            messages = self._call(
                "receive_message",
                QueueUrl=dlq.url,
                MaxNumberOfMessages=want,
                WaitTimeSeconds=0,
                VisibilityTimeout=COPY_VISIBILITY_S,
                AttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                return result
            for i, m in enumerate(messages):
                try:
                    self._copy_one(dlq, m, destination, sent, result, started, max_per_second)
                except OpsError:
                    self._release(dlq, messages[i:])
                    raise
        return result

    def _copy_one(
        self,
        dlq: Queue,
        m: dict[str, Any],
        destination: Callable[[dict[str, Any]], str],
        sent: set[str],
        result: CopyResult,
        started: float,
        max_per_second: int | None,
    ) -> None:
        if m["MessageId"] in sent:
            result.duplicates += 1
        else:
            if max_per_second is not None:
                due = started + result.moved / max_per_second
                if (wait := due - self.monotonic()) > 0:
                    self.sleep(wait)
            url = destination(m)
            self._call("send_message", **self._send_kwargs(url, m))
            sent.add(m["MessageId"])
            result.moved += 1
            where = m.get("Attributes", {}).get("DeadLetterQueueSourceArn") or url
            result.destinations[where] = result.destinations.get(where, 0) + 1
        self._call("delete_message", QueueUrl=dlq.url, ReceiptHandle=m["ReceiptHandle"])

    def _release(self, dlq: Queue, messages: list[dict[str, Any]]) -> None:
        """Make messages received but not moved visible again at once (best effort: they
        come back anyway when their visibility timeout runs out)."""
        for m in messages:
            try:
                self._call(
                    "change_message_visibility",
                    QueueUrl=dlq.url,
                    ReceiptHandle=m["ReceiptHandle"],
                    VisibilityTimeout=0,
                )
            except OpsError:
                pass

    @staticmethod
    def _send_kwargs(url: str, m: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"QueueUrl": url, "MessageBody": m["Body"]}
        if m.get("MessageAttributes"):
            kwargs["MessageAttributes"] = {
                name: {k: v for k, v in value.items() if k in _ATTRIBUTE_VALUE_KEYS}
                for name, value in m["MessageAttributes"].items()
            }
        if url.rstrip("/").endswith(".fifo"):
            attrs = m.get("Attributes", {})
            kwargs["MessageGroupId"] = attrs.get("MessageGroupId", "redrive")
            # SQS drops a second send with the same id within 5 minutes: one copy per message
            kwargs["MessageDeduplicationId"] = m["MessageId"]
        return kwargs
