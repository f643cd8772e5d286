"""`trncost dlq list | redrive | status`: dead-letter queues and their redrive
(trncost_client.dead_letters).

Two paths: SQS message move tasks (StartMessageMoveTask / ListMessageMoveTasks, which moto
does not implement: a botocore Stubber with real-format responses), and --by-copy (receive,
send, delete) on moto.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from trncost.errors import OpsError
from trncost_client.cli import dlq as cli_dlq
from trncost_client.cli import main
from trncost_client.dead_letters import QueueOps, is_dead_letter_name

ACCOUNT = "123456789012"
URL = f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}"


def arn(name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}"


@pytest.fixture
def queues(aws):
    """ingest (→ ingest-dlq after 2 receives), refresh (→ refresh-dlq), a plain queue, and a
    CDK-named DLQ."""
    sqs = boto3.client("sqs")
    made: dict[str, str] = {}
    for name in ("ingest-dlq", "refresh-dlq", "dev-Ingest-DeadLetterQueue9F6B-ABC"):
        made[name] = sqs.create_queue(QueueName=name)["QueueUrl"]
    for name in ("ingest", "refresh"):
        made[name] = sqs.create_queue(
            QueueName=name,
            Attributes={
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": arn(f"{name}-dlq"), "maxReceiveCount": "2"}
                )
            },
        )["QueueUrl"]
    made["plain"] = sqs.create_queue(QueueName="plain")["QueueUrl"]
    return sqs, made


def dead_letter(sqs, urls: dict[str, str], queue: str, bodies: list[str]) -> None:
    """Send `bodies` to `queue` and fail them until its redrive policy moves them to the DLQ."""
    for body in bodies:
        sqs.send_message(
            QueueUrl=urls[queue],
            MessageBody=body,
            MessageAttributes={"origin": {"DataType": "String", "StringValue": "test"}},
        )
    for _ in range(3):  # the third receive finds them past maxReceiveCount: moved to the DLQ
        sqs.receive_message(QueueUrl=urls[queue], MaxNumberOfMessages=10, VisibilityTimeout=0)


def bodies(sqs, url: str) -> list[str]:
    out = []
    while msgs := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", []):
        for m in msgs:
            out.append(m["Body"])
            assert m["MessageAttributes"]["origin"]["StringValue"] == "test"
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return sorted(out)


def depth(sqs, url: str) -> int:
    return int(
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
            "Attributes"
        ]["ApproximateNumberOfMessages"]
    )


@pytest.mark.parametrize(
    ("name", "dead"),
    [
        ("ingest-dlq", True),
        ("trncost-ingest-dlq.fifo", True),
        ("dev-TrncostIngest-IngestQueueDeadLetterQueue1A2B-xyz", True),
        ("ingest", False),
        ("dlq-consumer", False),
    ],
)
def test_dead_letter_names(name, dead):
    assert is_dead_letter_name(name) is dead


# -- list ---------------------------------------------------------------------------------------
def test_list_shows_dead_letter_queues_with_depth_and_sources(queues, capsys):
    sqs, urls = queues
    dead_letter(sqs, urls, "ingest", ["a", "b", "c"])
    assert main(["dlq", "list", "--aws", "--json"]) == 0
    listed = {q["name"]: q for q in json.loads(capsys.readouterr().out)}
    assert set(listed) == {"ingest-dlq", "refresh-dlq", "dev-Ingest-DeadLetterQueue9F6B-ABC"}
    assert listed["ingest-dlq"]["messages"] == 3 and listed["ingest-dlq"]["sources"] == ["ingest"]
    assert listed["refresh-dlq"]["messages"] == 0
    assert main(["dlq", "list", "--aws"]) == 0
    table = capsys.readouterr().out
    assert "ingest-dlq" in table and "plain" not in table


# -- redrive by copy (moto) ---------------------------------------------------------------------
def test_redrive_by_copy_moves_everything_back_to_the_source(queues, capsys):
    sqs, urls = queues
    dead_letter(sqs, urls, "ingest", ["a", "b", "c"])
    assert depth(sqs, urls["ingest-dlq"]) == 3
    assert main(["dlq", "redrive", "--aws", "ingest-dlq", "--by-copy", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["moved"] == 3 and out["mode"] == "copy"
    assert depth(sqs, urls["ingest-dlq"]) == 0
    assert bodies(sqs, urls["ingest"]) == ["a", "b", "c"]  # body and attributes as they were


@pytest.mark.parametrize("how", ["name", "url", "arn"])
def test_redrive_by_copy_to_a_named_queue(queues, capsys, how):
    sqs, urls = queues
    dead_letter(sqs, urls, "ingest", ["x"])
    dlq = {"name": "ingest-dlq", "url": urls["ingest-dlq"], "arn": arn("ingest-dlq")}[how]
    to = {"name": "plain", "url": urls["plain"], "arn": arn("plain")}[how]
    assert main(["dlq", "redrive", "--aws", dlq, "--to", to, "--by-copy"]) == 0
    assert "moved 1 messages by copy" in capsys.readouterr().out
    assert bodies(sqs, urls["plain"]) == ["x"] and depth(sqs, urls["ingest"]) == 0


def test_an_empty_dlq_has_nothing_to_redrive(queues, capsys):
    assert main(["dlq", "redrive", "--aws", "refresh-dlq", "--by-copy"]) == 0
    assert "nothing to redrive" in capsys.readouterr().out


class Repeating:
    """An SQS client whose next receive returns the last batch again (a visibility timeout
    that ran out mid-redrive, or SQS's at-least-once delivery)."""

    def __init__(self, client: Any, source_arn: str | None = None) -> None:
        self.client = client
        self.source_arn = source_arn
        self.repeated = False
        self.last: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def receive_message(self, **kwargs: Any) -> dict[str, Any]:
        out = self.client.receive_message(**kwargs)
        if self.source_arn:
            for m in out.get("Messages", []):
                m.setdefault("Attributes", {})["DeadLetterQueueSourceArn"] = self.source_arn
        if out.get("Messages"):
            self.last = out["Messages"]
        elif self.last and not self.repeated:
            self.repeated = True
            return {"Messages": self.last}
        return out

    def delete_message(self, **kwargs: Any) -> Any:
        from botocore.exceptions import ClientError

        try:
            return self.client.delete_message(**kwargs)
        except ClientError:  # moto refuses a receipt handle it already deleted
            return {}


def test_redrive_by_copy_sends_each_message_once(queues):
    sqs, urls = queues
    dead_letter(sqs, urls, "ingest", ["a", "b"])
    ops = QueueOps(client=Repeating(sqs))
    result = ops.redrive_by_copy(ops.resolve("ingest-dlq"))
    assert (result.moved, result.duplicates) == (2, 2)
    assert bodies(sqs, urls["ingest"]) == ["a", "b"]


def test_by_copy_follows_each_message_s_own_source(queues):
    sqs, urls = queues
    # a DLQ that two queues redrive to: a message's DeadLetterQueueSourceArn decides
    sqs.set_queue_attributes(
        QueueUrl=urls["refresh"],
        Attributes={
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": arn("ingest-dlq"), "maxReceiveCount": "2"}
            )
        },
    )
    dead_letter(sqs, urls, "ingest", ["from-refresh"])
    ops = QueueOps(client=Repeating(sqs, source_arn=arn("refresh")))
    assert ops.redrive_by_copy(ops.resolve("ingest-dlq")).moved == 1
    assert bodies(sqs, urls["refresh"]) == ["from-refresh"]


def test_by_copy_asks_for_to_when_the_source_is_ambiguous(queues, capsys):
    sqs, urls = queues
    sqs.set_queue_attributes(
        QueueUrl=urls["refresh"],
        Attributes={
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": arn("ingest-dlq"), "maxReceiveCount": "2"}
            )
        },
    )
    dead_letter(sqs, urls, "ingest", ["a"])
    assert main(["dlq", "redrive", "--aws", "ingest-dlq", "--by-copy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trncost: error:") and "pass --to" in err and err.count("\n") == 1
    assert depth(sqs, urls["ingest-dlq"]) == 1  # nothing moved, nothing lost


def test_by_copy_paces_itself(queues):
    sqs, urls = queues
    dead_letter(sqs, urls, "ingest", [str(i) for i in range(6)])
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    ops = QueueOps(client=sqs, sleep=sleep, monotonic=lambda: now[0])
    assert ops.redrive_by_copy(ops.resolve("ingest-dlq"), max_per_second=2).moved == 6
    assert now[0] == pytest.approx(2.5)  # message k is sent at k/2 s


# -- the SQS API path: message move tasks (Stubber: moto has none) -------------------------------
def stubbed(monkeypatch) -> tuple[Stubber, Any]:
    client = boto3.client("sqs", region_name="us-east-1")
    stub = Stubber(client)
    monkeypatch.setattr(
        cli_dlq,
        "QueueOps",
        lambda region=None, endpoint_url=None: QueueOps(
            region, client=client, sleep=lambda _s: None
        ),
    )
    return stub, client


def expect_queue(stub: Stubber, name: str) -> None:
    stub.add_response("get_queue_url", {"QueueUrl": f"{URL}/{name}"}, {"QueueName": name})
    stub.add_response(
        "get_queue_attributes",
        {"Attributes": {"QueueArn": arn(name)}},
        {"QueueUrl": f"{URL}/{name}", "AttributeNames": ["QueueArn"]},
    )


def expect_depth(stub: Stubber, name: str, messages: int) -> None:
    stub.add_response(
        "get_queue_attributes",
        {
            "Attributes": {
                "QueueArn": arn(name),
                "ApproximateNumberOfMessages": str(messages),
                "ApproximateNumberOfMessagesNotVisible": "0",
                "ApproximateNumberOfMessagesDelayed": "0",
            }
        },
        {
            "QueueUrl": f"{URL}/{name}",
            "AttributeNames": [
                "QueueArn",
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        },
    )


def task(status: str, moved: int, handle: str | None = None, **extra: Any) -> dict[str, Any]:
    t = {
        "Status": status,
        "SourceArn": arn("ingest-dlq"),
        "DestinationArn": arn("ingest"),
        "MaxNumberOfMessagesPerSecond": 50,
        "ApproximateNumberOfMessagesMoved": moved,
        "ApproximateNumberOfMessagesToMove": 40,
        "StartedTimestamp": 1796032000000,
        **extra,
    }
    if handle:
        t["TaskHandle"] = handle
    return t


HANDLE = "eyJ0YXNrSWQiOiJkYWQxZjRjYS0xMjM0In0="


def test_redrive_starts_a_move_task_and_follows_it(monkeypatch, capsys):
    stub, _ = stubbed(monkeypatch)
    expect_queue(stub, "ingest-dlq")
    expect_queue(stub, "ingest")
    expect_depth(stub, "ingest-dlq", 40)
    stub.add_response(
        "start_message_move_task",
        {"TaskHandle": HANDLE},
        {
            "SourceArn": arn("ingest-dlq"),
            "DestinationArn": arn("ingest"),
            "MaxNumberOfMessagesPerSecond": 50,
        },
    )
    listing = {"SourceArn": arn("ingest-dlq"), "MaxResults": 10}
    stub.add_response(
        "list_message_move_tasks", {"Results": [task("RUNNING", 12, HANDLE)]}, listing
    )
    stub.add_response("list_message_move_tasks", {"Results": [task("COMPLETED", 40)]}, listing)
    with stub:
        code = main(
            [
                *("dlq", "redrive", "--aws", "ingest-dlq", "--to", "ingest"),
                *("--max-per-second", "50", "--wait"),
            ]
        )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ingest-dlq: 40 messages (0 in flight) → ingest" in out
    assert "RUNNING: 12/40 moved" in out and "COMPLETED: 40/40 moved" in out
    stub.assert_no_pending_responses()


def test_without_to_the_messages_go_back_to_their_original_source(monkeypatch, capsys):
    stub, _ = stubbed(monkeypatch)
    expect_queue(stub, "ingest-dlq")
    expect_depth(stub, "ingest-dlq", 3)
    stub.add_response(
        "start_message_move_task", {"TaskHandle": HANDLE}, {"SourceArn": arn("ingest-dlq")}
    )
    with stub:
        assert main(["dlq", "redrive", "--aws", "ingest-dlq", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "dlq": "ingest-dlq",
        "destination": None,
        "mode": "move_task",
        "task_handle": HANDLE,
    }
    stub.assert_no_pending_responses()


def test_a_failed_move_task_exits_1_with_its_reason(monkeypatch, capsys):
    stub, _ = stubbed(monkeypatch)
    expect_queue(stub, "ingest-dlq")
    expect_depth(stub, "ingest-dlq", 40)
    stub.add_response(
        "start_message_move_task", {"TaskHandle": HANDLE}, {"SourceArn": arn("ingest-dlq")}
    )
    failed = task("FAILED", 7, FailureReason="AWS.SimpleQueueService.NonExistentQueue")
    stub.add_response(
        "list_message_move_tasks",
        {"Results": [failed]},
        {"SourceArn": arn("ingest-dlq"), "MaxResults": 10},
    )
    with stub:
        assert main(["dlq", "redrive", "--aws", "ingest-dlq", "--wait"]) == 1
    assert "FAILED: 7/40 moved (AWS.SimpleQueueService.NonExistentQueue)" in capsys.readouterr().out


def test_a_refused_move_task_is_one_line_and_exit_2(monkeypatch, capsys):
    stub, _ = stubbed(monkeypatch)
    expect_queue(stub, "ingest-dlq")
    expect_depth(stub, "ingest-dlq", 5)
    stub.add_client_error(
        "start_message_move_task",
        service_error_code="InvalidParameterValue",
        service_message="There is already a task running. Only one active task is allowed.",
        http_status_code=400,
    )
    with stub:
        assert main(["dlq", "redrive", "--aws", "ingest-dlq"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "trncost: error: start_message_move_task: InvalidParameterValue: There is already a "
        "task running. Only one active task is allowed.\n"
    )


def test_status_shows_the_move_tasks(monkeypatch, capsys):
    stub, _ = stubbed(monkeypatch)
    expect_queue(stub, "ingest-dlq")
    expect_depth(stub, "ingest-dlq", 28)
    stub.add_response(
        "list_message_move_tasks",
        {"Results": [task("RUNNING", 12, HANDLE), task("COMPLETED", 40)]},
        {"SourceArn": arn("ingest-dlq"), "MaxResults": 10},
    )
    with stub:
        assert main(["dlq", "status", "--aws", "ingest-dlq"]) == 0
    out = capsys.readouterr().out
    assert "ingest-dlq: 28 messages" in out
    assert "→ ingest: RUNNING: 12/40 moved" in out and "→ ingest: COMPLETED: 40/40 moved" in out


# -- errors ---------------------------------------------------------------------------------------
def test_moto_has_no_move_tasks_and_the_error_says_use_by_copy(queues, capsys):
    sqs, urls = queues
    dead_letter(sqs, urls, "ingest", ["a"])
    assert main(["dlq", "redrive", "--aws", "ingest-dlq"]) == 2
    err = capsys.readouterr().err
    assert "not supported by this endpoint" in err and "--by-copy" in err
    assert depth(sqs, urls["ingest-dlq"]) == 1


def test_an_unknown_queue_is_one_line_and_exit_2(queues, capsys):
    assert main(["dlq", "redrive", "--aws", "nope-dlq", "--by-copy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trncost: error: get_queue_url:") and err.count("\n") == 1


@pytest.mark.parametrize("bad", ["0", "-3"])
def test_max_per_second_must_be_positive(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["dlq", "redrive", "--aws", "q-dlq", "--max-per-second", bad])
    assert exc.value.code == 2
    assert "--max-per-second must be 1 or more" in capsys.readouterr().err


def test_the_move_rate_limit_is_sqs_s():
    ops = QueueOps(client=object())
    with pytest.raises(OpsError, match="1..500"):
        ops.start_redrive(ops_queue("q-dlq"), max_per_second=501)


def ops_queue(name: str):
    from trncost_client.dead_letters import Queue

    return Queue(name=name, url=f"{URL}/{name}", arn=arn(name))


def test_an_endpoint_without_move_tasks_points_to_by_copy(monkeypatch, capsys):
    # e.g. the local runtime's moto server: an HTTP error without an SQS error code
    stub, _ = stubbed(monkeypatch)
    expect_queue(stub, "ingest-dlq")
    expect_depth(stub, "ingest-dlq", 1)
    stub.add_client_error("start_message_move_task", service_error_code="500", http_status_code=500)
    with stub:
        assert main(["dlq", "redrive", "--aws", "ingest-dlq"]) == 2
    assert capsys.readouterr().err == (
        "trncost: error: start_message_move_task: HTTP 500 from the endpoint, not an SQS "
        "answer; redrive with --by-copy instead\n"
    )
