"""A job that ran without the trncost agent: the ingest reads its own CloudWatch Logs (moto),
parses them by format, and the record says which source each figure came from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest

from tests.support.events import load_event as event
from tests.support.factories import workload
from trncost.metrics.events import parse_job_event
from trncost.metrics.joblogs import BATCH_LOG_GROUP, SAGEMAKER_LOG_GROUP, JobLogsReader
from trncost.metrics.logs.timeline import Timeline
from trncost.services.ingest import AwsCollector

LOGS = Path(__file__).resolve().parents[1] / "events" / "logs"


def megatron_lines(start: datetime, count: int, every_s: int = 60) -> list[dict]:
    """Megatron-LM iteration lines (the real line of NVIDIA/Megatron-LM#756, renumbered), one a
    `every_s`, as CloudWatch Logs events (no timestamp in the text: the event's own counts)."""
    line = (LOGS / "megatron_mixtral_h100.log").read_text().splitlines()[0].split("] ", 1)[1]
    out = []
    for i in range(count):
        text = line.replace("iteration       71/", f"iteration {i + 1:8d}/").replace(
            "consumed samples:         9088", f"consumed samples: {(i + 1) * 128:12d}"
        )
        out.append(
            {
                "timestamp": int((start + timedelta(seconds=i * every_s)).timestamp() * 1000),
                "message": text,
            }
        )
    return out


@pytest.fixture
def batch_job(aws):
    e = event("batch_job_succeeded")
    ctx = parse_job_event(e)
    logs = boto3.client("logs", region_name="us-east-1")
    logs.create_log_group(logGroupName=BATCH_LOG_GROUP)
    logs.create_log_stream(logGroupName=BATCH_LOG_GROUP, logStreamName=ctx.log_stream)
    assert ctx.started_at is not None
    logs.put_log_events(
        logGroupName=BATCH_LOG_GROUP,
        logStreamName=ctx.log_stream,
        logEvents=[{"timestamp": int(ctx.started_at.timestamp() * 1000), "message": "starting"}]
        + megatron_lines(ctx.started_at + timedelta(minutes=1), 300),
    )
    return ctx


def test_the_event_names_the_batch_log_stream(aws) -> None:
    assert parse_job_event(event("batch_job_succeeded")).log_stream == "llama31-8b/default/d5d2"


def test_a_batch_job_without_the_agent_is_read_from_its_own_logs(batch_job) -> None:
    ctx = batch_job
    collector = AwsCollector()
    trial, notes = collector.collect(
        ctx, workload(workload_id=ctx.workload_id, tokens_per_sample=None)
    )
    # work and throughput from the job's log, the clock from the job's event
    assert (
        trial.work.unit == "samples" and trial.work.done == 300 * 128
    )  # from iteration 1: the run began in this log
    assert trial.steady_throughput_samples  # 5 hours of minutes, after the first 10
    where = trial.provenance["work.done"].measured_in[0]
    assert (where.source, where.format) == ("log", "megatron")
    assert where.file == f"{BATCH_LOG_GROUP}/llama31-8b/default/d5d2"
    assert where.lines[0].first == 2  # event 1 is "starting", event 2 the first iteration
    assert trial.provenance["wall.steady_s"].measured_in[0].source == "job_event"
    assert any("no agent metrics: read the job's log" in n for n in notes)
    assert collector.log_calls >= 1


def test_a_sagemaker_leader_stream_is_found_by_prefix_and_paginated(aws) -> None:
    logs = boto3.client("logs", region_name="us-east-1")
    logs.create_log_group(logGroupName=SAGEMAKER_LOG_GROUP)
    for stream in ("job-1/algo-1-1790000000", "job-1/algo-2-1790000000", "job-10/algo-1-1"):
        logs.create_log_stream(logGroupName=SAGEMAKER_LOG_GROUP, logStreamName=stream)
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(
        days=1
    )  # CloudWatch takes recent events only
    events = megatron_lines(
        start, 25_000, every_s=1
    )  # more than one GetLogEvents page (10,000 events)
    for i in range(0, len(events), 10_000):
        logs.put_log_events(
            logGroupName=SAGEMAKER_LOG_GROUP,
            logStreamName="job-1/algo-1-1790000000",
            logEvents=events[i : i + 10_000],
        )
    ctx = parse_job_event(event("sagemaker_training_job_completed"))
    ctx = type(ctx)(**{**ctx.__dict__, "job_id": "job-1"})
    reader = JobLogsReader("us-east-1")
    assert reader.streams(ctx) == [(SAGEMAKER_LOG_GROUP, "job-1/algo-1-1790000000")]
    tl = Timeline()
    found = reader.read(ctx, (start, start + timedelta(days=2)), tl)
    assert found.results, found.notes
    assert found.results[0].format == "megatron" and found.results[0].matched_lines == 25_000
    assert reader.calls >= 3  # DescribeLogStreams + at least three pages
    capped = JobLogsReader("us-east-1", max_calls=2)
    capped_found = capped.read(ctx, (start, start + timedelta(days=2)), Timeline())
    assert capped.calls == 2 and any("cap of 2" in n for n in capped_found.notes)
