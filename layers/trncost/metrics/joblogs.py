"""A finished job's own CloudWatch Logs, read for a trial record when the job ran without the
trncost agent: bounded, paginated reads, parsed with the log format registry.

Where the logs are (AWS documentation):

- SageMaker training jobs write to the log group `/aws/sagemaker/TrainingJobs`, one stream
  per host and start: `<job name>/algo-<n>-<epoch seconds>`. The leader is algo-1; its
  streams (one per restart) are read, oldest first (DescribeLogStreams with the prefix
  `<job>/algo-1-`, then `<job>/` if there is none).
- AWS Batch jobs write to `/aws/batch/job`, the stream named by the job's
  `container.logStreamName` (the state-change event carries DescribeJobs' job shape; without
  it, DescribeJobs is asked).

Where the job's log streams were subscribed (the stage's `job_log_subscription`: a CloudWatch
Logs subscription filter delivers every batch of events to the ingest as it is written,
services/job_log_stream.py), the stream is read from the parts it left (store/joblogs.py), in
event order: every line, however long the job ran, and the record says so (the lines the
stream received and read). Otherwise, GetLogEvents from the head (`startFromHead`), within the
job's window, following `nextForwardToken` until it repeats; at most MAX_CALLS calls per job
(each returns at most 10,000 events or 1 MB), a note saying so when the cap cut the read. The
client comes from `trncost.aws` (standard retries: throttling retried there); `calls` counts
the calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from trncost import aws
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.logs import FORMATS
from trncost.metrics.logs.scan import EventReading, FileResult, Reader
from trncost.metrics.logs.timeline import Timeline

if TYPE_CHECKING:
    from trncost.store.joblogs import JobLogStore

SAGEMAKER_LOG_GROUP = "/aws/sagemaker/TrainingJobs"
BATCH_LOG_GROUP = "/aws/batch/job"
LOG_GROUPS = (SAGEMAKER_LOG_GROUP, BATCH_LOG_GROUP)
MAX_CALLS = 400  # GetLogEvents + DescribeLogStreams calls per job (≈ 400 MB of logs at most)
MAX_STREAMS = 20  # restarts of the leader read, at most


def leader_stream(stream: str) -> bool:
    """A SageMaker stream of the job's leader host (`<job>/algo-1-<epoch seconds>`)."""
    return "/algo-1-" in stream


@dataclass
class JobLogs:
    """What reading a job's logs found."""

    results: list[FileResult] = field(default_factory=list)
    streams: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lines_received: int = 0  # lines the subscription delivered (its running counts)
    lines_read: int = 0  # lines read, from the parts or GetLogEvents


class JobLogsReader(aws.RegionalAdapter):
    service = "logs"

    def __init__(
        self,
        region: str,
        client: Any = None,
        batch_client: Any = None,
        max_calls: int = MAX_CALLS,
        parts: JobLogStore | None = None,
    ) -> None:
        super().__init__(region, client)
        self._batch = batch_client
        self.max_calls = max_calls
        self.parts = parts

    @property
    def batch(self) -> Any:
        if self._batch is None:
            self._batch = aws.client("batch", self.region)
        return self._batch

    # -- where ---------------------------------------------------------------------------------
    def _prefixed(self, prefix: str) -> list[str]:
        names: list[str] = []
        if self.calls >= self.max_calls:
            return names
        pages = self.client.get_paginator("describe_log_streams").paginate(
            logGroupName=SAGEMAKER_LOG_GROUP, logStreamNamePrefix=prefix
        )
        for page in pages:  # a page is a call: stop at the call cap or with enough streams
            self.calls += 1
            names += [s["logStreamName"] for s in page.get("logStreams", [])]
            if self.calls >= self.max_calls or len(names) >= MAX_STREAMS:
                break
        return sorted(names)[:MAX_STREAMS]

    def streams(self, ctx: JobContext) -> list[tuple[str, str]]:
        """(log group, stream) of the job's leader, oldest first."""
        if ctx.source == JobSource.sagemaker:
            names = self._prefixed(f"{ctx.job_id}/algo-1-") or self._prefixed(f"{ctx.job_id}/")
            return [(SAGEMAKER_LOG_GROUP, name) for name in names]
        if ctx.source == JobSource.batch:
            stream = ctx.log_stream
            if not stream:
                self.calls += 1
                jobs = self.batch.describe_jobs(jobs=[ctx.job_id]).get("jobs", [])
                container = (jobs[0].get("container") or {}) if jobs else {}
                stream = container.get("logStreamName")
            return [(BATCH_LOG_GROUP, stream)] if stream else []
        return []

    # -- what ----------------------------------------------------------------------------------
    def events(
        self, group: str, stream: str, start: datetime | None, end: datetime | None
    ) -> Iterator[tuple[int, str]]:
        # A loop, not a paginator: botocore has none for GetLogEvents, whose stream ends when
        # nextForwardToken comes back unchanged (a paginator refuses a repeated token).
        token: str | None = None
        while self.calls < self.max_calls:
            kwargs: dict[str, Any] = {
                "logGroupName": group,
                "logStreamName": stream,
                "startFromHead": True,
            }
            if start is not None:
                kwargs["startTime"] = int(start.timestamp() * 1000)
            if end is not None:
                kwargs["endTime"] = int(end.timestamp() * 1000) + 1
            if token:
                kwargs["nextToken"] = token
            self.calls += 1
            page = self.client.get_log_events(**kwargs)
            for e in page.get("events", []):
                yield int(e.get("timestamp", 0)), str(e.get("message", "")).rstrip("\n")
            forward = page.get("nextForwardToken")
            if not forward or forward == token or not page.get("events"):
                return
            token = forward

    @staticmethod
    def _counted(events: Iterator[tuple[int, str]], out: JobLogs) -> Iterator[tuple[int, str]]:
        for event in events:
            out.lines_read += 1
            yield event

    def _from_parts(self, reader: Reader, group: str, stream: str, name: str, out: JobLogs) -> bool:
        """The stream as the subscription delivered it (False when it left no parts)."""
        counts = None if self.parts is None else self.parts.counts(group, stream)
        if counts is None or self.parts is None:
            return False
        reading = EventReading(reader, name)
        offset = 0
        for part in self.parts.parts(group, stream):
            for at, ms, message in part.lines:
                reading.add(ms, message, number=offset + at + 1)
            offset += part.events
        out.results.append(reading.result(lines=offset))
        out.lines_received += counts.events
        out.lines_read += offset
        dropped = counts.events - offset
        out.notes.append(
            f"{name}: read whole from the CloudWatch Logs subscription: {offset:,} of the "
            f"{counts.events:,} lines the stream received ({counts.parts:,} deliveries), "
            f"{counts.kept:,} of them a log format's"
            + (f"; {dropped:,} lines missing" if dropped else "")
        )
        return True

    def read(
        self,
        ctx: JobContext,
        window: tuple[datetime, datetime] | None,
        timeline: Timeline,
    ) -> JobLogs:
        """The job leader's logs into `timeline`, each stream in its detected format."""
        from trncost.errors import LogFormatError

        out = JobLogs()
        try:
            streams = self.streams(ctx)
        except Exception as exc:
            if aws.error_code(exc) != "ResourceNotFoundException":
                raise
            streams = []
        if not streams:
            out.notes.append(f"{ctx.source} job {ctx.job_id}: no CloudWatch Logs stream found")
            return out
        reader = Reader(timeline, FORMATS)
        start, end = window if window else (None, None)
        for group, stream in streams:
            name = f"{group}/{stream}"
            out.streams.append(name)
            try:
                if not self._from_parts(reader, group, stream, name, out):
                    events = self._counted(self.events(group, stream, start, end), out)
                    out.results.append(reader.read_events(name, events))
            except LogFormatError as exc:
                out.notes.append(f"{name}: {exc}")
            except Exception as exc:
                if aws.error_code(exc) != "ResourceNotFoundException":
                    raise
                out.notes.append(f"{name}: the stream does not exist")
        if self.calls >= self.max_calls:
            out.notes.append(
                f"the job's logs were read up to the cap of {self.max_calls} CloudWatch Logs "
                "calls: later lines were not read"
            )
        return out
