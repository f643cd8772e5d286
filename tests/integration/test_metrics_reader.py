"""CloudWatch GetMetricData batching and paging, and DescribeTrainingJob facts, on moto and on
botocore Stubber (for what moto does not do: NextToken pages, PartialData, throttling, billable
time and real status transitions).

Given metrics a trial agent put, when the ingest reads them back with MetricsReader and builds
the trial record, then the record holds the aggregated figures; and the calls made are
⌈queries / 500⌉ per page set.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from tests.support.events import load_event
from tests.support.factories import workload
from tests.support.stubs import failing_first, paginator_over, record_backoff
from trncost.aws import MAX_ATTEMPTS
from trncost.aws import client as aws_client
from trncost.metrics import names as n
from trncost.metrics.cloudwatch import MetricAggregate, MetricQuery, MetricsReader, plan_calls
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.record import build_trial_record
from trncost.metrics.sagemaker import TrainingJobReader, to_utc
from trncost.model import Phase, TimingScope, TrialStatus, WorkUnit

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
TRIAL = "trn2-base-01"


def at(minute: float) -> datetime:
    return T0 + timedelta(minutes=minute)


class Counting:
    """The real (moto) client, with every GetMetricData request kept."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.requests: list[dict[str, Any]] = []

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(kwargs)
        return self.client.get_metric_data(**kwargs)

    def list_metrics(self, **kwargs: Any) -> dict[str, Any]:
        return self.client.list_metrics(**kwargs)

    def get_paginator(self, operation: str) -> Any:
        return paginator_over(self, "cloudwatch", operation)


def put(cw: Any, spec: n.MetricSpec, points: list[tuple[float, float]], **dims: str) -> None:
    dimensions = [{"Name": n.TRIAL_DIMENSION, "Value": TRIAL}] + [
        {"Name": k, "Value": v} for k, v in dims.items()
    ]
    data = [
        {
            "MetricName": spec.name,
            "Dimensions": dimensions,
            "Timestamp": at(m),
            "Value": float(v),
            "Unit": spec.unit,
        }
        for m, v in points
    ]
    for i in range(0, len(data), 1000):  # PutMetricData takes up to 1,000 values a call
        cw.put_metric_data(Namespace=spec.namespace, MetricData=data[i : i + 1000])


def agent_ctx() -> JobContext:
    return JobContext(
        source=JobSource.agent,
        job_id="run-1",
        job_arn=None,
        status="completed",
        region="us-east-1",
        account="123456789012",
        event_time=at(121),
        workload_id="wl-1",
        phase=Phase.baseline,
        trial_id=TRIAL,
        plan_id=None,
        run="1",
        code_version="git:abc123",
        dataset_id="ds-1",
        timing_scope=TimingScope(
            compile=True, data_loading=True, checkpoints=True, evaluation=True
        ),
        instance_type="trn2.48xlarge",
        instance_count=2,
        started_at=at(0),
        ended_at=at(120),
    )


# ---------------------------------------------------------------------------------------------
# put → read back → aggregate → trial record
# ---------------------------------------------------------------------------------------------
def test_put_metrics_read_back_and_record(aws):
    cw = boto3.client("cloudwatch")
    # Two hosts publish utilization to the pooled {TrialId} series: CloudWatch averages them.
    put(cw, n.AGENT_NEURON.utilization, [(m, 80) for m in range(20, 110)])
    put(cw, n.AGENT_NEURON.utilization, [(m, 90) for m in range(20, 110)])
    put(cw, n.COMPILE_SECONDS, [(1, 600)])
    put(cw, n.WARMUP_SECONDS, [(16, 240)])
    put(cw, n.TOKENS_PER_SECOND, [(m, 50_000) for m in range(12, 16)])  # warm-up minutes
    put(cw, n.TOKENS_PER_SECOND, [(m, 100_000) for m in range(16, 120)])
    put(cw, n.CHECKPOINT_SAVE_SECONDS, [(40, 25), (80, 35)])
    put(cw, n.CHECKPOINT_RESTORE_SECONDS, [(41, 60)])
    put(cw, n.CHECKPOINT_RESTORE_OK, [(41, 1)])
    put(cw, n.DATA_WAIT_SECONDS, [(m, 5) for m in range(20, 44)])  # 24 × 5 = 120 s
    put(cw, n.TRAINING_LOSS, [(m, 2.0) for m in range(12, 120)])
    put(cw, n.NON_FINITE_LOSS, [(12, 0)])
    put(cw, n.FAILURES, [(12, 0)])
    put(cw, n.ERRORS, [(50, 2), (70, 1)])
    put(cw, n.WORK_DONE[WorkUnit.tokens], [(m, 6_000_000) for m in range(16, 120)])
    put(cw, n.EVAL_METRIC, [(60, 2.4), (119, 1.9)], Metric="eval_loss")
    put(cw, n.EVAL_METRIC, [(119, 0.7)], Metric="accuracy")  # another metric: not the gate's

    reader = MetricsReader("us-east-1", client=Counting(cw))
    queries = n.trial_queries(TRIAL, "eval_loss", "neuron")
    assert sum(q.size for q in queries) < 500
    series = reader.read(queries, at(0), at(120))
    custom = reader.count_metrics(n.AGENT_NAMESPACE, {n.TRIAL_DIMENSION: TRIAL})
    assert reader.calls == 2  # one GetMetricData page, one ListMetrics page
    assert series[n.CHECKPOINT_SAVES.key].values == (1.0, 1.0)  # SampleCount per save

    trial, notes = build_trial_record(agent_ctx(), workload(), series, custom_metrics=custom)
    # compile 600 + warm-up 240 + data wait 120 + saves 60 + restore 60 = 1,080;
    # steady = 7,200 − 1,080 = 6,120 s.
    assert trial.wall.compile_s == 600 and trial.wall.warmup_s == 240
    assert trial.wall.data_wait_s == 120
    assert trial.wall.checkpoint_save_s == 60 and trial.checkpointing.saves == 2
    assert trial.wall.steady_s == 6_120
    assert trial.checkpointing.restore_verified is True
    # Tokens: 104 increments of 6,000,000 = 624,000,000, all quality-meeting (completed, finite
    # loss, no failures).
    assert trial.work.done == trial.work.quality_meeting == 624_000_000
    # Steady samples: from minute 12 + 240 s = minute 16: 104 samples of 100,000.
    assert trial.steady_throughput_samples == [100_000.0] * 104
    assert trial.utilization.neuroncore == pytest.approx(0.85)  # both hosts pooled
    assert trial.reliability.errors == 3
    assert trial.quality is not None and trial.quality.value == 1.9
    assert trial.usage.custom_metrics == custom == 15  # distinct series put for the trial
    assert trial.status == TrialStatus.completed and trial.usable_for_throughput
    assert "eval_loss = 1.9: gate at_most 2 met" in notes


def test_read_only_returns_the_trials_own_series(aws):
    cw = boto3.client("cloudwatch")
    put(cw, n.COMPILE_SECONDS, [(1, 600)])
    reader = MetricsReader("us-east-1", client=cw)
    other = n.trial_queries("another-trial", "eval_loss", "neuron")
    series = reader.read(other, at(0), at(120))
    assert all(s.values == () for s in series.values())
    assert all(s.complete for s in series.values())


# ---------------------------------------------------------------------------------------------
# Batching: 1,200 queries → 3 calls of ≤ 500 (one page each on moto).
# ---------------------------------------------------------------------------------------------
def test_1200_queries_take_three_calls(aws):
    cw = boto3.client("cloudwatch")
    for h in range(3):
        put(cw, n.TOKENS_PER_SECOND, [(m, 1000 * (h + 1)) for m in range(5)], Host=f"node-{h}")
    queries = [
        MetricQuery(
            f"q{i}",
            n.AGENT_NAMESPACE,
            "TokensPerSecond",
            ((n.TRIAL_DIMENSION, TRIAL), (n.HOST_DIMENSION, f"node-{i}")),
        )
        for i in range(1200)
    ]
    counting = Counting(cw)
    reader = MetricsReader("us-east-1", client=counting)
    series = reader.read(queries, at(0), at(10))
    assert reader.calls == len(counting.requests) == 3  # ⌈1,200 / 500⌉ × 1 page
    sizes = [len(r["MetricDataQueries"]) for r in counting.requests]
    assert sizes == [400, 400, 400] and max(sizes) <= 500
    assert all(r["ScanBy"] == "TimestampAscending" for r in counting.requests)
    assert series["q2"].values == (3000.0,) * 5
    assert series["q3"].values == ()
    assert series["q0"].timestamps[0] == at(0) and series["q0"].timestamps[0].tzinfo == UTC


def test_aggregates_stay_whole_in_a_call():
    hosts = [{"ClusterName": "c", "InstanceId": f"i-{i}", "NodeName": f"n{i}"} for i in range(64)]
    specs = [n.CONTAINER_INSIGHTS_NEURON.utilization] * 8
    aggs = [
        MetricAggregate(f"m{k}", "AVG", a.members)
        for k, a in enumerate(n.host_aggregates(specs, hosts))
    ]
    calls = plan_calls(aggs)
    # 8 aggregates × (64 members + 1 expression) = 520 structures → 2 calls of 4 aggregates.
    assert [len(c) for c in calls] == [4, 4]
    assert [sum(a.size for a in c) for c in calls] == [260, 260]
    api = aggs[0].api()
    assert all(q["ReturnData"] is False for q in api[:-1])
    assert api[-1]["Expression"].startswith("AVG([h0_0, h0_1, ") and api[-1]["Id"] == "m0"


# ---------------------------------------------------------------------------------------------
# Stubber: NextToken pages, PartialData, throttling.
# ---------------------------------------------------------------------------------------------
def stubbed() -> tuple[Any, Stubber]:
    client = boto3.client("cloudwatch", region_name="us-east-1")
    return client, Stubber(client)


def two_queries() -> list[MetricQuery]:
    trial = ((n.TRIAL_DIMENSION, TRIAL),)
    return [
        MetricQuery("tokens_per_second", n.AGENT_NAMESPACE, "TokensPerSecond", trial),
        MetricQuery("errors", n.AGENT_NAMESPACE, "Errors", trial, stat="Sum"),
    ]


def expected(token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "MetricDataQueries": [q.api() for q in two_queries()],
        "StartTime": at(0),
        "EndTime": at(5),
        "ScanBy": "TimestampAscending",
    }
    if token:
        params["NextToken"] = token
    return params


def test_next_token_pages_are_merged_per_query():
    client, stub = stubbed()
    stub.add_response(
        "get_metric_data",
        {
            "MetricDataResults": [
                {
                    "Id": "tokens_per_second",
                    "Label": "TokensPerSecond",
                    "Timestamps": [at(0), at(1), at(2)],
                    "Values": [10.0, 11.0, 12.0],
                    "StatusCode": "PartialData",
                }
            ],
            "NextToken": "page-2",
            "Messages": [],
        },
        expected(),
    )
    stub.add_response(
        "get_metric_data",
        {
            "MetricDataResults": [
                {
                    "Id": "tokens_per_second",
                    "Label": "TokensPerSecond",
                    "Timestamps": [at(3), at(4)],
                    "Values": [13.0, 14.0],
                    "StatusCode": "Complete",
                },
                {
                    "Id": "errors",
                    "Label": "Errors",
                    "Timestamps": [at(2)],
                    "Values": [1.0],
                    "StatusCode": "Complete",
                },
            ],
        },
        expected("page-2"),
    )
    reader = MetricsReader("us-east-1", client=client)
    with stub:
        series = reader.read(two_queries(), at(0), at(4.5))
    stub.assert_no_pending_responses()
    assert reader.calls == 2
    tps = series["tokens_per_second"]
    assert tps.complete and tps.values == (10.0, 11.0, 12.0, 13.0, 14.0)
    assert list(tps.timestamps) == [at(m) for m in range(5)]
    assert series["errors"].values == (1.0,) and series["errors"].complete


def test_partial_data_left_at_the_end_is_not_complete():
    client, stub = stubbed()
    stub.add_response(
        "get_metric_data",
        {
            "MetricDataResults": [
                {
                    "Id": "tokens_per_second",
                    "Timestamps": [at(0)],
                    "Values": [10.0],
                    "StatusCode": "PartialData",
                    "Messages": [{"Code": "MaxQueryTimeRangeExceed", "Value": "range too long"}],
                },
                {"Id": "errors", "Timestamps": [], "Values": [], "StatusCode": "InternalError"},
            ],
            "Messages": [{"Code": "Throttled", "Value": "some data skipped"}],
        },
        expected(),
    )
    reader = MetricsReader("us-east-1", client=client)
    with stub:
        series = reader.read(two_queries(), at(0), at(5))
    assert not series["tokens_per_second"].complete
    assert series["tokens_per_second"].messages == ("MaxQueryTimeRangeExceed: range too long",)
    assert series["errors"].status == "InternalError"
    assert reader.messages == ["Throttled: some data skipped"]


def test_throttling_is_retried(aws, monkeypatch):
    backoff = record_backoff(monkeypatch)  # botocore's delays at their ceiling, not slept
    client = aws_client("cloudwatch", "us-east-1")  # trncost's retry policy, on moto
    reader = MetricsReader("us-east-1", client=client)
    with failing_first(client, 2, "ThrottlingException", query_code="Throttling") as attempts:
        series = reader.read(two_queries(), at(0), at(5))
    assert attempts == ["GetMetricData"] * 3  # two throttled, then moto's answer
    assert backoff == [1.0, 2.0]  # full jitter at its top: 1 s × 2^retry
    assert reader.calls == 1 and series["errors"].values == ()


def test_throttling_that_never_ends_raises(aws, monkeypatch):
    record_backoff(monkeypatch)
    client = aws_client("cloudwatch", "us-east-1")
    reader = MetricsReader("us-east-1", client=client)
    throttled = failing_first(client, MAX_ATTEMPTS, "ThrottlingException", query_code="Throttling")
    with throttled as attempts, pytest.raises(Exception, match="Throttling"):
        reader.read(two_queries(), at(0), at(5))
    assert len(attempts) == MAX_ATTEMPTS  # every attempt of the one policy, then the error


def test_window_is_widened_to_whole_periods():
    client, stub = stubbed()
    stub.add_response(
        "get_metric_data",
        {"MetricDataResults": []},
        {**expected(), "StartTime": at(0), "EndTime": at(5), "MetricDataQueries": ANY},
    )
    with stub:
        MetricsReader("us-east-1", client=client).read(
            two_queries(), at(0) + timedelta(seconds=42), at(4) + timedelta(seconds=1)
        )
    stub.assert_no_pending_responses()


# ---------------------------------------------------------------------------------------------
# DescribeTrainingJob: moto (what it fills in), then Stubber with a real-format response.
# ---------------------------------------------------------------------------------------------
IMAGE = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
    "pytorch-training-neuronx:2.9.0-neuronx-py311-sdk2.27.0-ubuntu22.04"
)


def test_describe_training_job_on_moto(aws):
    sm = boto3.client("sagemaker")
    sm.create_training_job(
        TrainingJobName="llama31-8b-trn2-baseline-01",
        AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "FastFile"},
        RoleArn="arn:aws:iam::123456789012:role/trncost-training",
        OutputDataConfig={"S3OutputPath": "s3://team-artifacts/llama31-8b/"},
        ResourceConfig={
            "InstanceType": "ml.trn1.32xlarge",
            "InstanceCount": 2,
            "VolumeSizeInGB": 500,
        },
        StoppingCondition={"MaxRuntimeInSeconds": 86400},
        HyperParameters={"max_steps": "600"},
    )
    reader = TrainingJobReader("us-east-1", client=sm)
    facts = reader.describe("llama31-8b-trn2-baseline-01")
    assert reader.calls == 1
    assert facts.status == "Completed"
    assert (facts.instance_type, facts.instance_count) == ("ml.trn1.32xlarge", 2)
    assert facts.hyperparameters == {"max_steps": "600"}
    assert (facts.framework, facts.framework_version, facts.neuron_sdk_version) == (
        "pytorch",
        "2.9.0",
        "2.27.0",
    )
    # moto sets no BillableTimeInSeconds: the billed figure stays unknown, never invented.
    assert facts.billable_seconds is None and facts.billed_instance_seconds is None
    assert facts.training_window is None  # moto's only transition is a zero-length Starting
    assert facts.creation_time is not None and facts.creation_time.tzinfo == UTC


def real_description() -> dict[str, Any]:
    """The sample event's detail as DescribeTrainingJob returns it: datetimes, not epoch-ms
    strings; plus the fields the event lacks (billable and training seconds)."""
    d = load_event("sagemaker_training_job_completed")["detail"]
    d.pop("Tags")
    for key in ("CreationTime", "TrainingStartTime", "TrainingEndTime", "LastModifiedTime"):
        d[key] = to_utc(d[key])
    for t in d["SecondaryStatusTransitions"]:
        for key in ("StartTime", "EndTime"):
            if key in t:
                t[key] = to_utc(t[key])
    d["ModelArtifacts"] = {"S3ModelArtifacts": "s3://team-artifacts/llama31-8b/model.tar.gz"}
    d["TrainingTimeInSeconds"] = 4144
    d["BillableTimeInSeconds"] = 4144
    d["FinalMetricDataList"] = [
        {"MetricName": "eval_loss", "Value": 1.93, "Timestamp": d["TrainingEndTime"]}
    ]
    return d


def test_describe_training_job_stubbed():
    client = boto3.client("sagemaker", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_response(
        "describe_training_job",
        real_description(),
        {"TrainingJobName": "llama31-8b-trn2-baseline-01"},
    )
    with stub:
        facts = TrainingJobReader("us-east-1", client=client).describe(
            "llama31-8b-trn2-baseline-01"
        )
    # Billed = 4,144 s × 2 instances = 8,288 instance-seconds.
    assert facts.billed_instance_seconds == 8_288
    # Starting 14:00:00–14:03:02 = 182 s; Downloading 60 s; Training 3,964 s; Uploading 120 s.
    assert facts.phase_seconds == {
        "starting": 182,
        "downloading": 60,
        "training": 3_964,
        "uploading": 120,
    }
    assert facts.final_metrics == {"eval_loss": 1.93}
    assert facts.training_window == (
        to_utc("1795871042000"),
        to_utc("1795875006000"),
    )
