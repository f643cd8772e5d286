"""Trial ingest figures (issue #4): CloudWatch calls and read time for a 7-day trial at 1-minute
resolution on 64 instances × 8 per-host metrics, over a fake GetMetricData that honours the
API's limits (500 queries a call, 100,800 datapoints a response, NextToken pages). No AWS.

Goal: calls = ⌈queries / 500⌉ × pages, at least 20× fewer than one call per metric.

Three reads are timed:
1. per-host series returned raw (512 queries, 10,080 points each): the datapoint cap, not the
   query cap, sets the calls; shown for comparison;
2. the same 512 per-host queries pooled by CloudWatch metric math (AVG/SUM/MAX of the 64
   hosts, members not returned): how the ingest reads per-host sources;
3. the ingest's own read for the trial (the agent's pooled {TrialId} series, trial_queries)
   plus build_trial_record over the 7 days of series.
Prints the figures; asserts nothing, so a slow machine reports instead of failing the build.
"""

from __future__ import annotations

import math
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from trncost.metrics import names as n
from trncost.metrics.cloudwatch import (
    MAX_DATAPOINTS_PER_CALL,
    MAX_QUERIES_PER_CALL,
    MetricQuery,
    MetricsReader,
    expected_points,
)
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.record import build_trial_record
from trncost.model import Phase, TimingScope, Workload

DAYS, PERIOD, INSTANCES = 7, 60, 64
START = datetime(2026, 11, 1, tzinfo=UTC)
END = START + timedelta(days=DAYS)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests package (tests.support), as pytest sees it
GET_METRIC_STATISTICS_MAX_POINTS = 1_440  # datapoints one GetMetricStatistics call returns


class FakeCloudWatch:
    """GetMetricData with the real limits: every query has a value in every period; a response
    holds at most MaxDatapoints (≤ 100,800) values, cut mid-series (PartialData) when needed,
    and the rest follows NextToken."""

    def __init__(self) -> None:
        self.requests = 0
        self._stamps: dict[tuple[datetime, datetime, int], list[datetime]] = {}
        self._values: dict[int, list[float]] = {}

    def stamps(self, start: datetime, end: datetime, period: int) -> list[datetime]:
        key = (start, end, period)
        if key not in self._stamps:
            count = int((end - start).total_seconds() // period)
            self._stamps[key] = [start + timedelta(seconds=i * period) for i in range(count)]
        return self._stamps[key]

    def values(self, count: int) -> list[float]:
        if count not in self._values:
            self._values[count] = [float(50 + i % 40) for i in range(count)]
        return self._values[count]

    def get_paginator(self, operation: str) -> Any:
        from tests.support.stubs import paginator_over  # botocore's own paging, over this fake

        return paginator_over(self, "cloudwatch", operation)

    def get_metric_data(
        self,
        MetricDataQueries: list[dict[str, Any]],  # noqa: N803 (boto3's parameter names)
        StartTime: datetime,  # noqa: N803
        EndTime: datetime,  # noqa: N803
        ScanBy: str,  # noqa: N803
        NextToken: str | None = None,  # noqa: N803
        MaxDatapoints: int = MAX_DATAPOINTS_PER_CALL,  # noqa: N803
    ) -> dict[str, Any]:
        if len(MetricDataQueries) > MAX_QUERIES_PER_CALL:
            raise ValueError(f"{len(MetricDataQueries)} queries: the API takes at most 500")
        if ScanBy != "TimestampAscending":
            raise ValueError("this fake answers oldest first only")
        self.requests += 1
        budget = min(MaxDatapoints, MAX_DATAPOINTS_PER_CALL)
        period = next(q["MetricStat"]["Period"] for q in MetricDataQueries if "MetricStat" in q)
        stamps = self.stamps(StartTime, EndTime, period)
        values = self.values(len(stamps))
        returned = [q for q in MetricDataQueries if q.get("ReturnData", True)]
        qi, pi = map(int, (NextToken or "0:0").split(":"))
        results = []
        while qi < len(returned) and budget > 0:
            take = min(budget, len(stamps) - pi)
            results.append(
                {
                    "Id": returned[qi]["Id"],
                    "Label": returned[qi]["Id"],
                    "Timestamps": stamps[pi : pi + take],
                    "Values": values[pi : pi + take],
                    "StatusCode": "Complete" if pi + take == len(stamps) else "PartialData",
                }
            )
            budget -= take
            pi += take
            if pi == len(stamps):
                qi, pi = qi + 1, 0
        page: dict[str, Any] = {"MetricDataResults": results, "Messages": []}
        if qi < len(returned):
            page["NextToken"] = f"{qi}:{pi}"
        return page


def per_host_specs() -> list[n.MetricSpec]:
    """Eight per-host metrics, as an agent with `Host` on publishes them."""
    a, g = n.AGENT_NEURON, n.AGENT_GPU
    return [a.utilization, a.memory, a.execution_errors, n.ERRORS, n.LOG_INGEST_BYTES,
            g.utilization, n.DATA_WAIT_SECONDS, n.STEP_TIME]  # fmt: skip


def host_dims() -> list[dict[str, str]]:
    return n.agent_host_dimensions("bench-trial", INSTANCES)


def raw_queries() -> list[MetricQuery]:
    return [
        spec.query(dims, PERIOD, query_id=f"m{si}_h{hi}")
        for si, spec in enumerate(per_host_specs())
        for hi, dims in enumerate(host_dims())
    ]


def timed(items: list, runs: int = 3) -> tuple[int, float, dict]:
    best, calls, series = math.inf, 0, {}
    for _ in range(runs):
        reader = MetricsReader("us-east-1", client=FakeCloudWatch())
        t0 = time.perf_counter()
        series = reader.read(items, START, END)
        best = min(best, time.perf_counter() - t0)
        calls = reader.calls
    return calls, best, series


def ingest_ctx() -> JobContext:
    return JobContext(
        source=JobSource.agent,
        job_id="bench-run",
        job_arn=None,
        status="completed",
        region="us-east-1",
        account=None,
        event_time=END,
        workload_id="wl-bench",
        phase=Phase.target,
        trial_id="bench-trial",
        plan_id=None,
        run=None,
        code_version="git:bench",
        dataset_id="ds-bench",
        timing_scope=TimingScope(
            compile=True, data_loading=True, checkpoints=True, evaluation=True
        ),
        instance_type="trn2.48xlarge",
        instance_count=INSTANCES,
        started_at=START,
        ended_at=END,
    )


def main() -> int:
    points = expected_points(START, END, PERIOD)
    queries = len(per_host_specs()) * INSTANCES
    batches = math.ceil(queries / MAX_QUERIES_PER_CALL)
    per_batch = math.ceil(queries / batches)
    pages = math.ceil(per_batch * points / MAX_DATAPOINTS_PER_CALL)
    one_per_metric = queries  # one GetMetricData call per metric series (10,080 points fit)
    statistics_calls = queries * math.ceil(points / GET_METRIC_STATISTICS_MAX_POINTS)
    print(
        f"ingest read, {DAYS}-day trial at {PERIOD} s resolution, {INSTANCES} instances × "
        f"{len(per_host_specs())} metrics = {queries} queries, {points:,} points each"
    )
    print(
        f"  baselines: one GetMetricData call per metric = {one_per_metric} calls; "
        f"GetMetricStatistics ({GET_METRIC_STATISTICS_MAX_POINTS:,} points a call) = "
        f"{statistics_calls:,} calls"
    )

    raw = raw_queries()
    calls, seconds, _ = timed(raw, runs=1)
    print(
        f"  1. per-host series returned raw: {calls} calls "
        f"(⌈{queries}/500⌉ = {batches} batches × ⌈{per_batch} × {points:,} / "
        f"{MAX_DATAPOINTS_PER_CALL:,}⌉ = {pages} pages = {batches * pages}), "
        f"{one_per_metric / calls:.1f}× fewer than one call per metric, "
        f"{statistics_calls / calls:.1f}× fewer than GetMetricStatistics; read {seconds:.2f} s"
    )

    pooled = n.host_aggregates(per_host_specs(), host_dims(), PERIOD)
    structures = sum(a.size for a in pooled)
    calls, seconds, series = timed(pooled)
    returned = sum(len(s.values) for s in series.values())
    ratio = one_per_metric / calls
    print(
        f"  2. per-host series pooled by metric math (the ingest's way): {calls} calls "
        f"(⌈{queries}/500⌉ = {batches} batches of whole aggregates, {structures} structures, "
        f"{returned:,} points returned → 1 page each), {ratio:.0f}× fewer than one call per "
        f"metric: {'meets' if ratio >= 20 else 'MISSES'} the ≥ 20× goal; read {seconds:.3f} s"
    )

    wl = Workload.model_validate(
        {
            "workload_id": "wl-bench",
            "model": {"name": "llama-3.1-70b", "parameters": 7.0e10},
            "code_version": "git:bench",
            "dataset_id": "ds-bench",
            "target": {"unit": "tokens", "amount": 1e12},
            "quality_gate": {"metric": "eval_loss", "threshold": 2.0, "direction": "at_most"},
        }
    )
    items = n.trial_queries("bench-trial", "eval_loss", "neuron", period=PERIOD)
    calls, seconds, series = timed(items)
    t0 = time.perf_counter()
    _, notes = build_trial_record(ingest_ctx(), wl, series)
    build_s = time.perf_counter() - t0
    print(
        f"  3. the trial's own pooled series ({len(items)} queries × {points:,} points): "
        f"{calls} calls (1 batch × {math.ceil(len(items) * points / MAX_DATAPOINTS_PER_CALL)} "
        f"pages), read {seconds:.2f} s, build_trial_record {build_s * 1e3:.0f} ms "
        f"({len(notes)} notes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
