"""Long jobs read whole (issue 24): the CloudWatch Logs subscription filter delivers a job's log
to the ingest Lambda as it is written; each delivery is kept as the job's log parts (moto
DynamoDB), and when the job ends the ingest reads every line of them, in event order, instead
of GetLogEvents (capped at MAX_CALLS calls). On moto as far as it goes: moto keeps the filter
(its destination function must exist) but does not invoke a Lambda without Docker, so the
deliveries are the documented payload shape handed to the real handler."""

from __future__ import annotations

import base64
import gzip
import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from tests.integration.test_job_logs import megatron_lines
from tests.support.events import load_event as event
from tests.support.factories import workload
from tests.support.handlers import FakeContext, load_handler
from trncost.metrics.events import parse_job_event
from trncost.metrics.joblogs import BATCH_LOG_GROUP, SAGEMAKER_LOG_GROUP, JobLogsReader
from trncost.metrics.logs.timeline import Timeline
from trncost.services.ingest import AwsCollector
from trncost.services.job_log_stream import JobLogStreamService
from trncost.settings import TABLE_NAME_ENV
from trncost.store.joblogs import JobLogStore

STREAM = "llama31-8b-baseline-0001/algo-1-1790000000"
START = datetime(2026, 11, 1, tzinfo=UTC)
NOISE = "ip-10-0-1-12:39810:40233 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read"


def payload(
    events: list[dict], stream: str = STREAM, first_id: int = 0, group: str = SAGEMAKER_LOG_GROUP
) -> str:
    """A subscription delivery as CloudWatch Logs sends it: gzip, then base64, of this JSON
    (the shape of the CloudWatch Logs User Guide's "Subscription filters" examples)."""
    doc = {
        "messageType": "DATA_MESSAGE",
        "owner": "123456789012",
        "logGroup": group,
        "logStream": stream,
        "subscriptionFilters": ["trncost-ingest-job-logs"],
        "logEvents": [
            {"id": f"{first_id + i:056d}", "timestamp": e["timestamp"], "message": e["message"]}
            for i, e in enumerate(events)
        ],
    }
    return base64.b64encode(gzip.compress(json.dumps(doc).encode())).decode()


def job_events(iterations: int) -> list[dict]:
    """The job's log: Megatron iteration lines, three noise lines after each."""
    out = []
    for e in megatron_lines(START, iterations):
        out.append(e)
        out += [{"timestamp": e["timestamp"] + 1, "message": NOISE}] * 3
    return out


@pytest.fixture
def store(aws, table):
    return JobLogStore(table)


def deliver(service: JobLogStreamService, events: list[dict], size: int, order=None) -> int:
    """The events in deliveries of `size`, in `order` (default: as written)."""
    batches = [(i, events[i : i + size]) for i in range(0, len(events), size)]
    for i, batch in order(batches) if order else batches:
        service.receive(payload(batch, first_id=i))
    return len(batches)


def test_deliveries_out_of_order_and_twice_are_read_whole_in_event_order(store) -> None:
    # Given a job's log of 1,200 lines, delivered in 12 batches, out of order, one twice
    service = JobLogStreamService(store, clock=lambda: 1_790_000_000)
    events = job_events(300)
    deliver(service, events, 100, order=lambda b: [*reversed(b), b[3]])
    counts = store.counts(SAGEMAKER_LOG_GROUP, STREAM)
    assert counts.events == 1200 and counts.parts == 12 and counts.kept == 300
    # When the ingest reads the job's stream from its parts
    reader = JobLogsReader("us-east-1", client=object(), parts=store)
    tl = Timeline()
    found = JobLogs_read(reader, tl)
    # Then every line was read, in event order: no GetLogEvents call, none dropped
    assert found.lines_received == found.lines_read == 1200
    (result,) = found.results
    assert result.format == "megatron" and result.lines == 1200 and result.matched_lines == 300
    assert reader.calls == 0
    assert tl.failures == 0 and tl.duplicates == 0  # in order: no step went back
    assert tl.max_step == 300 and tl.state.step_at[0].line == 1197  # line numbers: the stream's
    assert any("read whole from the CloudWatch Logs subscription: 1,200 of the 1,200" in n
               for n in found.notes)  # fmt: skip


def JobLogs_read(reader: JobLogsReader, tl: Timeline):  # noqa: N802 - a helper, named as read
    ctx = parse_job_event(event("sagemaker_training_job_completed"))
    reader.streams = lambda _ctx: [(SAGEMAKER_LOG_GROUP, STREAM)]  # type: ignore[method-assign]
    return reader.read(ctx, None, tl)


def test_another_hosts_stream_and_the_filters_control_message_are_not_kept(store) -> None:
    service = JobLogStreamService(store)
    other = service.receive(payload(job_events(2), stream="job/algo-2-1790000000"))
    assert (other.status, other.events) == ("not_leader", 8)
    control = base64.b64encode(gzip.compress(json.dumps({
        "messageType": "CONTROL_MESSAGE", "logGroup": "", "logStream": "", "logEvents": []
    }).encode())).decode()  # fmt: skip
    assert service.receive(control).status == "control"
    assert store.counts(SAGEMAKER_LOG_GROUP, "job/algo-2-1790000000") is None


def test_a_delivery_too_large_for_one_item_is_kept_in_pieces(store, monkeypatch) -> None:
    import trncost.store.joblogs as joblogs

    monkeypatch.setattr(joblogs, "PART_MAX_BYTES", 2_000)
    service = JobLogStreamService(store)
    events = job_events(200)
    deliver(service, events, 800)
    parts = list(store.parts(SAGEMAKER_LOG_GROUP, STREAM))
    assert [p.events for p in parts] == [800] and len(parts[0].lines) == 200


def test_the_ingest_lambda_keeps_a_delivery_and_the_collector_reads_the_job_from_it(
    store, table, monkeypatch
) -> None:
    # Given the ingest Lambda, and a Batch job's log delivered to it by the subscription
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    module = load_handler("ingest")
    ctx = parse_job_event(event("batch_job_succeeded"))
    assert ctx.started_at is not None and ctx.log_stream is not None
    events = megatron_lines(ctx.started_at + timedelta(minutes=1), 120)
    data = payload(events, stream=ctx.log_stream, group=BATCH_LOG_GROUP)
    answer = module.handler({"awslogs": {"data": data}}, FakeContext())
    assert answer["status"] == "kept" and answer["events"] == 120
    # When the job ends and the ingest collects it (no agent metrics, no GetLogEvents)
    collector = AwsCollector(job_logs=lambda region: JobLogsReader(region, parts=store))
    trial, notes = collector.collect(
        ctx, workload(workload_id=ctx.workload_id, tokens_per_sample=None)
    )
    # Then the record rests on the delivered lines, and says so
    assert trial.work.done == 120 * 128 and collector.log_calls == 0
    where = trial.provenance["work.done"].measured_in[0]
    assert (where.source, where.format) == ("log", "megatron")
    assert where.file == f"{BATCH_LOG_GROUP}/{ctx.log_stream}"
    assert any("read whole from the CloudWatch Logs subscription: 120 of the 120" in n
               for n in notes)  # fmt: skip


def _function_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("handler.py", "def handler(event, context):\n    return None\n")
    return buf.getvalue()


def test_moto_keeps_the_subscription_filter_to_the_ingest_function(aws) -> None:
    # moto accepts the filter once its destination function exists (and does not invoke it)
    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName="ingest", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"Service": "lambda.amazonaws.com"}}]}))["Role"]["Arn"]  # fmt: skip
    fn = boto3.client("lambda", region_name="us-east-1").create_function(
        FunctionName="trncost-ingest", Runtime="python3.12", Role=role, Handler="handler.handler",
        Code={"ZipFile": _function_zip()},
    )["FunctionArn"]  # fmt: skip
    logs = boto3.client("logs", region_name="us-east-1")
    logs.create_log_group(logGroupName=SAGEMAKER_LOG_GROUP)
    logs.put_subscription_filter(
        logGroupName=SAGEMAKER_LOG_GROUP, filterName="trncost-ingest-job-logs",
        filterPattern="", destinationArn=fn,
    )  # fmt: skip
    (found,) = logs.describe_subscription_filters(logGroupName=SAGEMAKER_LOG_GROUP)[
        "subscriptionFilters"
    ]
    assert found["destinationArn"] == fn and found["filterPattern"] == ""
