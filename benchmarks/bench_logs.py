"""Trial-log import figures (issue #15): a 1 GB synthetic training log imported in bounded memory,
and the CloudWatch Logs calls a 7-day job's logs take. No AWS.

1. **File import.** A 1 GB Megatron-LM log (the real line shape of NVIDIA/Megatron-LM#756, one
   iteration a second with its timestamp, renumbered) with nine lines of the noise a training
   log carries between iterations (NCCL, warnings, Neuron runtime lines) is written to a
   temporary file, then imported in a fresh process as `trncost trial import` does it (detect,
   stream on two cores — metrics/logs/parallel.py —, build the record). Goal: ≥ 100 MiB/s wall
   on 2 cores and ≤ 200 MiB peak RSS. On a shared machine the wall time is its load's: the
   CPU seconds of the two processes say what two free cores give (the file over the busier).
2. **CloudWatch Logs.** The same job's log (7 days, one iteration a second, nine noise lines
   each) read by the ingest's JobLogsReader over a fake GetLogEvents that honours the API's
   limits (10,000 events or 1 MB a response, 26 bytes of overhead per event): the calls it
   takes, and what the cap (MAX_CALLS) leaves.
3. **The subscription (issue 24).** The same 7-day log delivered as the CloudWatch Logs
   subscription filter delivers it (gzip + base64 payloads of 10,000 events) to the ingest's
   JobLogStreamService, kept as log parts in trncost's table (moto DynamoDB), then read whole
   when the job ends: lines delivered, read, dropped (goal 0), and the times.

Prints the figures; asserts nothing, so a slow machine reports instead of failing the build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests package (tests.support), as pytest sees it
SIZE_BYTES = 2**30
START = datetime(2026, 11, 1, tzinfo=UTC)
DAYS = 7
NOISE = [
    "ip-10-0-1-12:39810:40233 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
    "2026-11-01 09:57:13.000144:  39810  INFO ||NEURON_CACHE||: Compile cache path: "
    "/var/tmp/neuron-compile-cache",
    "/opt/venv/lib/python3.10/site-packages/torch/utils/checkpoint.py:460: UserWarning: "
    "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False",
    "[rank3]:[W1101 09:57:13.144 ProcessGroupNCCL.cpp:4115] Warning: barrier() may hang",
    "2026-11-01 09:57:13.000150:  39811  INFO ||NRT||: nrt_load done in 1.2 s",
    "ip-10-0-1-12:39810:40233 [0] NCCL INFO Connected all rings",
    "INFO:root:data loader worker 3 prefetched 16 batches",
    "WARNING: xla: the graph for step has 12 inputs marked as donated",
    "ip-10-0-1-12:39810:40233 [0] NCCL INFO comm 0x5581 rank 0 nranks 64 - Init COMPLETE",
]
ITERATION = (
    " [{ts}] iteration {it:8d}/ 1000000 | consumed samples: {cs:12d} | elapsed time per "
    "iteration (ms): 1021.4 | throughput per GPU (TFLOP/s/GPU): 243.6 | learning rate: "
    "1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | loss scale: 1.0 | "
    "grad norm: 1.300 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |"
)


def _iteration(i: int) -> str:
    ts = (START + timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S")
    return ITERATION.format(ts=ts, it=i + 1, cs=(i + 1) * 128)


def write_log(path: str, size: int = SIZE_BYTES) -> int:
    """A Megatron log of about `size` bytes; the iterations it holds."""
    noise = "\n".join(NOISE) + "\n"
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            block = "".join(f"{_iteration(j)}\n{noise}" for j in range(i, i + 4096))
            f.write(block)
            written += len(block)
            i += 4096
    return i


IMPORT = r"""
import json, os, resource, sys, time
from datetime import UTC, datetime
t0 = time.perf_counter()
from trncost.metrics.logs import FORMATS
from trncost.metrics.logs.scan import Reader
from trncost.metrics.logs.timeline import Timeline
from trncost.metrics.logs.trial import trial_from_logs
from trncost.model import Phase, TrialStatus, Workload
t1 = time.perf_counter()
c1 = time.process_time()
wl = Workload.model_validate({"workload_id": "bench", "model": {"name": "m", "parameters": 8e9},
    "code_version": "v", "dataset_id": "d", "target": {"unit": "tokens", "amount": 1e12},
    "quality_gate": {"metric": "validation lm loss", "threshold": 2, "direction": "at_most"}})
tl = Timeline(seq_length=4096)
result = Reader(tl, FORMATS).read_path(sys.argv[1])
got = trial_from_logs(tl, [result], wl, trial_id="bench", phase=Phase.target,
    instance_type="trn3.48xlarge", instance_count=64, region="us-east-1",
    imported_at=datetime.now(UTC), status=TrialStatus.completed)
t2 = time.perf_counter()
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"import_s": t2 - t1, "cpu_s": time.process_time() - c1,
    "child_cpu_s": kids.ru_utime + kids.ru_stime, "child_rss_mb": kids.ru_maxrss / 1024,
    "load": os.getloadavg()[0], "startup_s": t1 - t0, "format": result.format,
    "lines": result.lines, "matched": result.matched_lines, "measured": len(got.measured),
    "work": got.trial.work.done, "steady_samples": len(got.trial.steady_throughput_samples),
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def bench_file() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "megatron-1gb.log")
        t = time.perf_counter()
        iterations = write_log(path)
        size = os.path.getsize(path)
        print(
            f"  wrote {size / 2**20:,.0f} MiB ({iterations:,} iterations, "
            f"{iterations * (1 + len(NOISE)):,} lines) in {time.perf_counter() - t:.1f} s"
        )
        done = subprocess.run(
            [sys.executable, "-c", IMPORT, path], capture_output=True, text=True, check=True
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
    mib = size / 2**20
    rate = mib / r["import_s"]
    busiest = max(r["cpu_s"], r["child_cpu_s"])  # the two processes run side by side
    print(f"  format {r['format']}: {r['matched']:,} of {r['lines']:,} lines read")
    print(
        f"  import: {r['import_s']:.1f} s = {rate:,.0f} MiB/s wall (goal ≥ 100; load average "
        f"{r['load']:.1f} on {os.cpu_count()} cores); CPU {r['cpu_s']:.1f} s here + "
        f"{r['child_cpu_s']:.1f} s in the tail's process = {mib / busiest:,.0f} MiB/s on two "
        f"free cores; peak RSS {r['peak_rss_mb']:,.0f} MiB here, {r['child_rss_mb']:,.0f} MiB "
        f"in the tail's process (goal ≤ 200 each; imports {r['startup_s']:.1f} s before)"
    )
    print(
        f"  record: {r['work']:,.0f} tokens, {r['steady_samples']:,} steady samples, "
        f"{r['measured']} figures measured"
    )


class FakeLogs:
    """GetLogEvents with the real limits, over a job's log generated on the fly: one
    iteration a second for DAYS days, NOISE lines between iterations."""

    MAX_EVENTS, MAX_BYTES, OVERHEAD = 10_000, 1_048_576, 26

    def __init__(self, days: int = DAYS) -> None:
        self.seconds = days * 86400
        self.per_second = 1 + len(NOISE)
        self.total = self.seconds * self.per_second
        self.calls = 0

    def get_paginator(self, operation: str) -> Any:
        from tests.support.stubs import paginator_over  # botocore's own paging, over this fake

        return paginator_over(self, "logs", operation)

    def describe_log_streams(self, **_: Any) -> dict[str, Any]:
        self.calls += 1
        return {"logStreams": [{"logStreamName": "job/algo-1-1790000000"}]}

    def _event(self, n: int) -> dict[str, Any]:
        second, k = divmod(n, self.per_second)
        message = _iteration(second).split("] ", 1)[1] if k == 0 else NOISE[k - 1]
        ts = int((START + timedelta(seconds=second)).timestamp() * 1000)
        return {"timestamp": ts, "message": message}

    def get_log_events(self, **kw: Any) -> dict[str, Any]:
        self.calls += 1
        start = int(kw.get("nextToken", "f/0").split("/")[1])
        events, size, n = [], 0, start
        while n < self.total and len(events) < self.MAX_EVENTS:
            e = self._event(n)
            cost = len(e["message"].encode()) + self.OVERHEAD
            if size + cost > self.MAX_BYTES:
                break
            events.append(e)
            size += cost
            n += 1
        token = f"f/{n}"
        return {"events": events, "nextForwardToken": token if events else kw.get("nextToken")}


def bench_cloudwatch() -> None:
    from trncost.metrics.joblogs import MAX_CALLS, JobLogsReader
    from trncost.metrics.jobs import JobContext, JobSource
    from trncost.metrics.logs.timeline import Timeline
    from trncost.model import Phase, TimingScope

    scope = TimingScope(compile=True, data_loading=True, checkpoints=True, evaluation=True)
    ctx = JobContext(
        source=JobSource.sagemaker, job_id="job", job_arn=None, status="Completed",
        region="us-east-1", account=None, event_time=START, workload_id="w",
        phase=Phase.target, trial_id="t", plan_id=None, run=None, code_version=None,
        dataset_id=None, timing_scope=scope, instance_type="ml.trn3.48xlarge",
        instance_count=64, started_at=START, ended_at=START + timedelta(days=DAYS),
    )  # fmt: skip
    window = (START, START + timedelta(days=DAYS))
    fake = FakeLogs()
    # every call the whole read needs (no cap), counted without parsing
    uncapped = JobLogsReader("us-east-1", client=fake, max_calls=10**9)
    events = sum(1 for _ in uncapped.events("g", "s", *window))
    print(
        f"  {DAYS}-day job, one iteration a second + {len(NOISE)} noise lines: {events:,} "
        f"events, {fake.calls:,} GetLogEvents calls to read them all "
        f"(≈ {events / fake.calls:,.0f} events a call: the 1 MB limit, not 10,000 events)"
    )
    capped_fake = FakeLogs()
    reader = JobLogsReader("us-east-1", client=capped_fake)
    t = time.perf_counter()
    found = reader.read(ctx, window, Timeline())
    took = time.perf_counter() - t
    (r,) = found.results
    print(
        f"  the ingest's read (cap {MAX_CALLS} calls): {reader.calls:,} calls, {r.lines:,} "
        f"events, {r.matched_lines:,} iterations parsed in {took:.1f} s; "
        + ("all read" if reader.calls < MAX_CALLS else "capped: " + found.notes[-1])
    )
    one_day = FakeLogs(days=1)
    per_day = JobLogsReader("us-east-1", client=one_day, max_calls=10**9)
    sum(1 for _ in per_day.events("g", "s", START, START + timedelta(days=1)))
    print(f"  a 1-day job of the same log: {one_day.calls:,} calls")


def bench_subscription(days: int = DAYS, per_delivery: int = 10_000) -> None:
    import base64
    import gzip

    import pytest

    from tests.support.moto_env import create_table, mocked_aws
    from trncost.metrics.joblogs import SAGEMAKER_LOG_GROUP, JobLogsReader
    from trncost.metrics.jobs import JobContext, JobSource
    from trncost.metrics.logs.timeline import Timeline
    from trncost.model import Phase, TimingScope
    from trncost.services.job_log_stream import JobLogStreamService
    from trncost.store.joblogs import JobLogStore

    fake = FakeLogs(days=days)
    stream = "job/algo-1-1790000000"
    scope = TimingScope(compile=True, data_loading=True, checkpoints=True, evaluation=True)
    ctx = JobContext(
        source=JobSource.sagemaker, job_id="job", job_arn=None, status="Completed",
        region="us-east-1", account=None, event_time=START, workload_id="w",
        phase=Phase.target, trial_id="t", plan_id=None, run=None, code_version=None,
        dataset_id=None, timing_scope=scope, instance_type="ml.trn3.48xlarge",
        instance_count=64, started_at=START, ended_at=START + timedelta(days=days),
    )  # fmt: skip
    mp = pytest.MonkeyPatch()
    with mocked_aws(mp):
        store = JobLogStore(create_table("bench-joblogs"))
        service = JobLogStreamService(store)
        took_in = 0.0
        delivered = deliveries = 0
        for first in range(0, fake.total, per_delivery):
            events = [fake._event(n) for n in range(first, min(first + per_delivery, fake.total))]
            doc = {"messageType": "DATA_MESSAGE", "logGroup": SAGEMAKER_LOG_GROUP,
                   "logStream": stream, "logEvents": [
                       {"id": f"{first + i:056d}", **e} for i, e in enumerate(events)]}  # fmt: skip
            data = base64.b64encode(gzip.compress(json.dumps(doc).encode(), 1)).decode()
            t = time.perf_counter()  # the ingest's side only: decode, keep, count
            service.receive(data)
            took_in += time.perf_counter() - t
            delivered += len(events)
            deliveries += 1
        reader = JobLogsReader("us-east-1", client=object(), parts=store)
        reader.streams = lambda _ctx: [(SAGEMAKER_LOG_GROUP, stream)]  # type: ignore[method-assign]
        t = time.perf_counter()
        found = reader.read(ctx, None, Timeline())
        took_out = time.perf_counter() - t
    mp.undo()
    (r,) = found.results
    print(
        f"  {days}-day job through the subscription: {delivered:,} lines in {deliveries:,} "
        f"deliveries, kept by the ingest in {took_in:.1f} s "
        f"({took_in / deliveries * 1000:.0f} ms a delivery); "
        f"read at the job's end in {took_out:.1f} s: {found.lines_read:,} lines read of "
        f"{found.lines_received:,} received, {r.matched_lines:,} iterations parsed, "
        f"lines dropped = {delivered - found.lines_read:,}; {reader.calls} GetLogEvents calls"
    )


def main() -> None:
    print("trial log import (issue #15)")
    bench_file()
    print("CloudWatch Logs reads of a job without the agent")
    bench_cloudwatch()
    bench_subscription()


if __name__ == "__main__":
    main()
