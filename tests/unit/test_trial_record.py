"""build_trial_record: worked examples computed by hand (the arithmetic is in the comments),
what stays missing, and properties.

Given a finished job (its context, SageMaker facts when there are some, and the series the
ingest read from CloudWatch), when the record is built, then every figure matches the hand
computation and everything not measured stays None with a note saying so.
"""

from __future__ import annotations

import ast
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trncost.metrics.quantities as quantities_module
import trncost.metrics.readings as readings_module
import trncost.metrics.record as record_module
from tests.support.factories import workload
from trncost.errors import RecordError
from trncost.metrics import names as n
from trncost.metrics.cloudwatch import MetricQuery, Series
from trncost.metrics.jobs import JobContext, JobSource
from trncost.metrics.quantities import DEFAULT_WARMUP_EXCLUSION_S
from trncost.metrics.record import build_trial_record
from trncost.metrics.sagemaker import facts_from_description
from trncost.model import Phase, TimingScope, TrialStatus, WorkUnit

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
GIB = 2**30
ALL = TimingScope(compile=True, data_loading=True, checkpoints=True, evaluation=True)


def at(minute: float) -> datetime:
    return T0 + timedelta(minutes=minute)


def ms(minute: float) -> str:
    return str(int(at(minute).timestamp() * 1000))


def s(key: str, points: list[tuple[float, float]], period: int = 60, **kw) -> Series:
    """A complete series: (minute after T0, value) pairs."""
    return Series(
        key,
        period,
        tuple(at(m) for m, _ in points),
        tuple(float(v) for _, v in points),
        **kw,
    )


def ctx(
    source: JobSource = JobSource.agent,
    status: str = "completed",
    *,
    instance_type: str | None = "trn2.48xlarge",
    count: int | None = 4,
    start: float | None = 0,
    end: float | None = 120,
    scope: TimingScope = ALL,
    code_version: str | None = "git:abc123",
    dataset_id: str | None = "ds-1",
    phase: Phase = Phase.target,
) -> JobContext:
    return JobContext(
        source=source,
        job_id="job-1",
        job_arn=None,
        status=status,
        region="us-east-1",
        account="123456789012",
        event_time=at(200),
        workload_id="wl-1",
        phase=phase,
        trial_id="t-1",
        plan_id=None,
        run="1",
        code_version=code_version,
        dataset_id=dataset_id,
        timing_scope=scope,
        instance_type=instance_type,
        instance_count=count,
        started_at=None if start is None else at(start),
        ended_at=None if end is None else at(end),
    )


def sagemaker_description(status: str = "Completed", billable: int | None = 7380) -> dict:
    """Starting 180 s, Downloading 60 s, Training 7,200 s, Uploading 120 s."""
    d = {
        "TrainingJobName": "job-1",
        "TrainingJobArn": "arn:aws:sagemaker:us-east-1:123456789012:training-job/job-1",
        "TrainingJobStatus": status,
        "SecondaryStatus": status,
        "HyperParameters": {"max_steps": "600"},
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
            "pytorch-training-neuronx:2.9.0-neuronx-py311-sdk2.27.0-ubuntu22.04",
            "TrainingInputMode": "FastFile",
        },
        "ResourceConfig": {
            "InstanceType": "ml.trn1.32xlarge",
            "InstanceCount": 4,
            "VolumeSizeInGB": 500,
        },
        "CreationTime": ms(0),
        "TrainingStartTime": ms(3),
        "TrainingEndTime": ms(126),
        "SecondaryStatusTransitions": [
            {"Status": "Starting", "StartTime": ms(0), "EndTime": ms(3)},
            {"Status": "Downloading", "StartTime": ms(3), "EndTime": ms(4)},
            {"Status": "Training", "StartTime": ms(4), "EndTime": ms(124)},
            {"Status": "Uploading", "StartTime": ms(124), "EndTime": ms(126)},
            {"Status": status, "StartTime": ms(126)},
        ],
    }
    if billable is not None:
        d["BillableTimeInSeconds"] = billable
    return d


def eval_series(metric: str, points: list[tuple[float, float]]) -> Series:
    q = n.EVAL_METRIC.query({n.TRIAL_DIMENSION: "t-1", n.EVAL_METRIC_DIMENSION: metric})
    return s(n.EVAL_METRIC.key, points, query=q)


def every_minute(first: int, last: int, value) -> list[tuple[float, float]]:
    return [(m, value(m) if callable(value) else value) for m in range(first, last + 1)]


# ---------------------------------------------------------------------------------------------
# Example 1: a clean SageMaker target run, every metric published.
#
# Training phase 12:04–14:04 = 7,200 s; other phases 180 + 60 + 120 = 360 s (other_s).
# Agent: compile 900 s (one compile, cache miss), warm-up 300 s, data wait 12 × 10 = 120 s,
# 4 checkpoint saves × 30 s = 120 s, one restore 60 s (verified), 2 evaluations × 90 = 180 s.
# steady = 7,200 − (900 + 300 + 120 + 120 + 60 + 180) = 7,200 − 1,680 = 5,520 s.
# Throughput: first step at 12:19 (after the compile), 50,000 tok/s during the 5 warm-up
# minutes 12:19–12:23, then 98,000 / 102,000 alternating from 12:24 to 14:03 (100 minutes).
# Tokens done = 100,000 × 5,520 (steady) + 50,000 × 300 (warm-up) = 567,000,000, all counted.
# Effective throughput = 567,000,000 / (7,200 + 360) = 75,000 tok/s.
# Billed = 7,380 s × 4 instances = 29,520 instance-seconds.
# ---------------------------------------------------------------------------------------------
def clean_series() -> dict[str, Series]:
    rate = every_minute(19, 23, 50_000) + every_minute(
        24, 123, lambda m: 98_000 if m % 2 == 0 else 102_000
    )
    return {
        n.COMPILE_SECONDS.key: s(n.COMPILE_SECONDS.key, [(4, 900)]),
        n.COMPILE_CACHE_HIT.key: s(n.COMPILE_CACHE_HIT.key, [(4, 0)]),
        n.WARMUP_SECONDS.key: s(n.WARMUP_SECONDS.key, [(24, 300)]),
        n.TOKENS_PER_SECOND.key: s(n.TOKENS_PER_SECOND.key, rate),
        n.DATA_WAIT_SECONDS.key: s(n.DATA_WAIT_SECONDS.key, every_minute(30, 41, 10)),
        n.CHECKPOINT_SAVE_SECONDS.key: s(
            n.CHECKPOINT_SAVE_SECONDS.key, [(40, 30), (60, 30), (80, 30), (100, 30)]
        ),
        n.CHECKPOINT_SAVES.key: s(n.CHECKPOINT_SAVES.key, [(40, 1), (60, 1), (80, 1), (100, 1)]),
        n.CHECKPOINT_SIZE.key: s(n.CHECKPOINT_SIZE.key, [(40, 16 * GIB), (100, 16 * GIB)]),
        n.CHECKPOINT_RESTORE_SECONDS.key: s(n.CHECKPOINT_RESTORE_SECONDS.key, [(41, 60)]),
        n.CHECKPOINT_RESTORE_OK.key: s(n.CHECKPOINT_RESTORE_OK.key, [(41, 1)]),
        n.EVALUATION_SECONDS.key: s(n.EVALUATION_SECONDS.key, [(70, 90), (122, 90)]),
        n.ERRORS.key: s(n.ERRORS.key, [(30, 0)]),
        n.FAILURES.key: s(n.FAILURES.key, [(30, 0)]),
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, every_minute(20, 123, 2.1)),
        n.NON_FINITE_LOSS.key: s(n.NON_FINITE_LOSS.key, [(20, 0)]),
        n.WORK_DONE[WorkUnit.tokens].key: s(
            n.WORK_DONE[WorkUnit.tokens].key, [(60, 300_000_000), (123, 267_000_000)]
        ),
        n.WORK_QUALITY[WorkUnit.tokens].key: s(
            n.WORK_QUALITY[WorkUnit.tokens].key, [(60, 300_000_000), (123, 267_000_000)]
        ),
        n.EVAL_METRIC.key: eval_series("eval_loss", [(70, 2.3), (122, 1.95)]),
        "neuroncore_utilization": s("neuroncore_utilization", [(30, 80), (90, 90)]),
        "device_memory": s("device_memory", [(30, 60 * GIB), (90, 64 * GIB)]),
        "execution_errors": s("execution_errors", [(90, 0)]),
    }


def test_clean_sagemaker_target_run():
    facts = facts_from_description(sagemaker_description())
    c = ctx(JobSource.sagemaker, "Completed", instance_type="ml.trn1.32xlarge", start=None)
    trial, notes = build_trial_record(c, workload(), clean_series(), facts)

    assert trial.status == TrialStatus.completed
    assert trial.candidate.platform == "sagemaker"
    assert trial.candidate.instance_type == "ml.trn1.32xlarge"
    assert trial.candidate.instance_count == 4
    assert (trial.framework_version, trial.neuron_sdk_version) == ("2.9.0", "2.27.0")
    w = trial.wall
    assert (w.compile_s, w.compile_cache_hit, w.warmup_s) == (900, False, 300)
    assert (w.data_wait_s, w.checkpoint_save_s, w.checkpoint_restore_s) == (120, 120, 60)
    assert (w.evaluation_s, w.restart_s, w.other_s) == (180, 0, 360)  # no restart transition
    assert w.steady_s == 5_520
    assert w.total_s == 7_560
    assert trial.work.unit == WorkUnit.tokens
    assert trial.work.done == trial.work.quality_meeting == 567_000_000
    assert trial.work.quality_meeting / w.total_s == 75_000
    # Steady samples: the 100 minutes from 12:24 (12:19 + 300 s warm-up); never the 50,000s.
    assert len(trial.steady_throughput_samples) == 100
    assert set(trial.steady_throughput_samples) == {98_000, 102_000}
    assert trial.utilization.neuroncore == pytest.approx(0.85)  # (80 + 90) / 2 / 100
    assert trial.utilization.gpu is None
    assert trial.utilization.device_memory_gb == 64
    assert trial.checkpointing.saves == 4
    assert trial.checkpointing.size_gb == 16
    assert trial.checkpointing.restore_verified is True
    assert trial.reliability.errors == 0 and trial.reliability.failures == 0
    assert trial.quality is not None
    assert (trial.quality.metric, trial.quality.value) == ("eval_loss", 1.95)  # last, not best
    assert trial.quality.loss_finite is True
    assert trial.billed_instance_seconds == 29_520
    assert trial.usable_for_throughput
    assert "eval_loss = 1.95: gate at_most 2 met" in notes
    assert not [x for x in notes if "not published" in x or "not measured" in x]


def test_the_agents_warm_up_work_goes_apart_with_the_warm_up_seconds():
    # one clock (issue 13): 50,000 tok/s × 300 s = 15,000,000 warm-up tokens, counted apart
    series = clean_series()
    key = n.WORK_WARMUP[WorkUnit.tokens].key
    series[key] = s(key, [(23, 15_000_000)])
    facts = facts_from_description(sagemaker_description())
    c = ctx(JobSource.sagemaker, "Completed", instance_type="ml.trn1.32xlarge", start=None)
    trial, _ = build_trial_record(c, workload(), series, facts)
    assert trial.work.done == 567_000_000 and trial.work.warmup == 15_000_000
    # steady: (567,000,000 − 15,000,000) / (5,520 steady + 120 data-wait s) = 97,872.3 tok/s;
    # before, the warm-up's tokens over a clock without its seconds: 567e6 / 5,640 = 100,532
    assert trial.steady_work / trial.steady_clock_s == pytest.approx(552e6 / 5640)
    # without the counter, the warm-up's seconds join the clock: 567e6 / 5,940 = 95,454.5
    plain, _ = build_trial_record(c, workload(), clean_series(), facts)
    assert plain.work.warmup is None
    assert plain.steady_work / plain.steady_clock_s == pytest.approx(567e6 / 5940)


# ---------------------------------------------------------------------------------------------
# Example 2: failures and restarts (agent event, EC2), no data-wait or evaluation published.
#
# Clock 01:00–03:00 = 7,200 s (the event's start and end; no other_s).
# compile 600, warm-up 300, 2 restores × 120 = 240, 2 restarts × 180 = 360, 6 saves × 20 = 120.
# steady = 7,200 − (600 + 300 + 240 + 360 + 120) = 7,200 − 1,620 = 5,580 s.
# Tokens done 500,000,000; 50,000,000 rolled back twice → quality-meeting 450,000,000.
# Restart time per failure (the engine's Σ restart / Σ failures) = 360 / 2 = 180 s.
# ---------------------------------------------------------------------------------------------
def test_failures_and_restarts():
    series = {
        n.COMPILE_SECONDS.key: s(n.COMPILE_SECONDS.key, [(0, 600)]),
        n.WARMUP_SECONDS.key: s(n.WARMUP_SECONDS.key, [(15, 300)]),
        n.CHECKPOINT_RESTORE_SECONDS.key: s(
            n.CHECKPOINT_RESTORE_SECONDS.key, [(50, 120), (90, 120)]
        ),
        n.CHECKPOINT_RESTORE_OK.key: s(n.CHECKPOINT_RESTORE_OK.key, [(50, 1), (90, 1)]),
        n.RESTART_SECONDS.key: s(n.RESTART_SECONDS.key, [(50, 180), (90, 180)]),
        n.FAILURES.key: s(n.FAILURES.key, [(47, 1), (87, 1)]),
        n.CHECKPOINT_SAVE_SECONDS.key: s(
            n.CHECKPOINT_SAVE_SECONDS.key, [(m, 20) for m in (20, 35, 60, 75, 100, 115)]
        ),
        n.CHECKPOINT_SAVES.key: s(
            n.CHECKPOINT_SAVES.key, [(m, 1) for m in (20, 35, 60, 75, 100, 115)]
        ),
        n.TOKENS_PER_SECOND.key: s(n.TOKENS_PER_SECOND.key, every_minute(10, 119, 80_000)),
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, every_minute(10, 119, 2.5)),
        n.WORK_DONE[WorkUnit.tokens].key: s(n.WORK_DONE[WorkUnit.tokens].key, [(119, 5e8)]),
        n.WORK_QUALITY[WorkUnit.tokens].key: s(n.WORK_QUALITY[WorkUnit.tokens].key, [(119, 4.5e8)]),
    }
    trial, notes = build_trial_record(ctx(), workload(), series)

    assert trial.status == TrialStatus.completed
    assert trial.candidate.platform == "ec2"
    assert trial.reliability.failures == 2
    assert trial.wall.restart_s == 360
    assert trial.wall.checkpoint_restore_s == 240
    assert trial.wall.checkpoint_save_s == 120 and trial.checkpointing.saves == 6
    assert trial.checkpointing.restore_verified is True
    assert trial.wall.steady_s == 5_580
    assert trial.wall.total_s == 7_200
    assert trial.wall.other_s is None
    assert (trial.work.done, trial.work.quality_meeting) == (5e8, 4.5e8)
    assert trial.wall.restart_s / trial.reliability.failures == 180
    assert trial.wall.data_wait_s is None and trial.wall.evaluation_s is None
    assert "data wait seconds not published: not measured" in notes
    assert "evaluation seconds not published: not measured" in notes
    assert trial.billed_instance_seconds is None
    assert "no billing record for agent jobs: billed time not known" in notes
    assert trial.usable_for_throughput


def test_sagemaker_interruptions_count_as_failures_and_restart_time():
    # Spot: Training 12:04–13:00, Interrupted 13:00–13:05 (300 s), Starting 13:05–13:08 (180 s),
    # Training 13:08–14:04. Agent published no Failures and no RestartSeconds.
    # failures = 1 (one Interrupted), restart_s = 300, other_s = 180 + 60 + 120 + 180 = 540,
    # training clock = 56 + 56 minutes = 6,720 s.
    d = sagemaker_description()
    d["SecondaryStatusTransitions"] = [
        {"Status": "Starting", "StartTime": ms(0), "EndTime": ms(3)},
        {"Status": "Downloading", "StartTime": ms(3), "EndTime": ms(4)},
        {"Status": "Training", "StartTime": ms(4), "EndTime": ms(60)},
        {"Status": "Interrupted", "StartTime": ms(60), "EndTime": ms(65)},
        {"Status": "Starting", "StartTime": ms(65), "EndTime": ms(68)},
        {"Status": "Training", "StartTime": ms(68), "EndTime": ms(124)},
        {"Status": "Uploading", "StartTime": ms(124), "EndTime": ms(126)},
        {"Status": "Completed", "StartTime": ms(126)},
    ]
    facts = facts_from_description(d)
    c = ctx(JobSource.sagemaker, "Completed", instance_type="ml.trn1.32xlarge", start=None)
    trial, _ = build_trial_record(c, workload(), {}, facts)
    assert trial.reliability.failures == 1
    assert trial.wall.restart_s == 300
    assert trial.wall.other_s == 540
    assert trial.wall.steady_s == 6_720
    assert trial.wall.total_s == 300 + 540 + 6_720


# ---------------------------------------------------------------------------------------------
# Example 3: a diverged run. SageMaker says Failed; the agent published 3 non-finite losses.
# Work done 100,000,000 tokens; no quality-meeting counter → 0 counted; the trial is diverged,
# its eval result 5.2 is recorded with loss_finite false, and it is unusable for throughput.
# ---------------------------------------------------------------------------------------------
def test_diverged_run():
    facts = facts_from_description(sagemaker_description("Failed", billable=7380))
    series = {
        n.NON_FINITE_LOSS.key: s(n.NON_FINITE_LOSS.key, [(60, 1), (61, 2)]),
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, every_minute(10, 59, 3.0)),
        n.WORK_DONE[WorkUnit.tokens].key: s(n.WORK_DONE[WorkUnit.tokens].key, [(61, 1e8)]),
        n.EVAL_METRIC.key: eval_series("eval_loss", [(50, 5.2)]),
    }
    c = ctx(JobSource.sagemaker, "Failed", instance_type="ml.trn1.32xlarge", start=None)
    trial, notes = build_trial_record(c, workload(), series, facts)
    assert trial.status == TrialStatus.diverged
    assert "the loss went non-finite: recorded as diverged (job: Failed)" in notes
    assert (trial.work.done, trial.work.quality_meeting) == (1e8, 0)
    assert trial.quality is not None and trial.quality.loss_finite is False
    assert trial.quality.value == 5.2
    assert not trial.usable_for_throughput
    assert any(x.startswith("not usable for throughput: status diverged") for x in notes)


def test_failed_job_with_finite_loss_stays_failed():
    facts_reason = {**sagemaker_description("Failed", billable=None), "FailureReason": "OOM"}
    facts = facts_from_description(facts_reason)
    series = {n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, [(10, 2.0)])}
    c = ctx(JobSource.sagemaker, "Failed", instance_type="ml.trn1.32xlarge", start=None)
    trial, notes = build_trial_record(c, workload(), series, facts)
    assert trial.status == TrialStatus.failed
    assert trial.billed_instance_seconds is None
    assert "DescribeTrainingJob has no BillableTimeInSeconds: billed time not known" in notes
    assert "SageMaker failure reason: OOM" in notes


# ---------------------------------------------------------------------------------------------
# Example 4: the agent published no work counters (Batch job, GPU-less detail irrelevant).
#
# Clock 12:00–14:00 = 7,200 s; compile 600 s published; SamplesPerSecond 2,000 every minute
# from 12:10 to 13:59 = 110 periods = 6,600 s. Missing 7,200 − 6,600 = 600 s ≤ compile 600 +
# 2 × 60 = 720 s allowed → covered. Work = 2,000 × 60 × 110 = 13,200,000 samples, all counted
# (completed, finite loss, no failures). The workload's target is in tokens: the record keeps
# the series' own unit (samples); the engine converts with tokens_per_sample.
# ---------------------------------------------------------------------------------------------
def no_counter_series(first: int = 10, last: int = 119, gap: range = range(0)):
    rate = [(m, 2_000) for m in range(first, last + 1) if m not in gap]
    return {
        n.COMPILE_SECONDS.key: s(n.COMPILE_SECONDS.key, [(0, 600)]),
        n.SAMPLES_PER_SECOND.key: s(n.SAMPLES_PER_SECOND.key, rate),
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, [(m, 2.2) for m, _ in rate]),
        n.FAILURES.key: s(n.FAILURES.key, [(10, 0)]),
    }


def test_no_work_counters_rate_covers_the_clock():
    c = ctx(JobSource.batch, "SUCCEEDED", instance_type="p5.48xlarge", count=2)
    trial, notes = build_trial_record(c, workload(), no_counter_series())
    assert trial.work.unit == WorkUnit.samples
    assert trial.work.done == trial.work.quality_meeting == 13_200_000
    # steady = 7,200 − 600 = 6,600 s; samples: 110 periods minus the first 10 minutes (no
    # warm-up published) = 100 samples of 2,000.
    assert trial.wall.steady_s == 6_600
    assert trial.steady_throughput_samples == [2_000.0] * 100
    assert any(x.startswith("work not counted by the agent: Σ rate × period") for x in notes)
    assert any("first 10 minutes" in x for x in notes)
    assert trial.usable_for_throughput


def test_no_work_counters_and_a_gap_means_unusable():
    # A 30-minute hole (12:40–13:09): 80 periods = 4,800 s, missing 2,400 s > 720 s allowed.
    c = ctx(JobSource.batch, "SUCCEEDED", instance_type="p5.48xlarge", count=2)
    trial, notes = build_trial_record(c, workload(), no_counter_series(gap=range(40, 70)))
    assert trial.work.done == 0 and trial.work.quality_meeting == 0
    assert not trial.usable_for_throughput
    assert any("does not cover the training clock" in x for x in notes)
    assert trial.steady_throughput_samples  # the samples themselves are still measured


def test_no_work_and_no_rate_at_all():
    trial, notes = build_trial_record(ctx(), workload(), {})
    assert trial.work.done == 0 and not trial.usable_for_throughput
    assert any(x.startswith("no work counter and no throughput series") for x in notes)


# ---------------------------------------------------------------------------------------------
# Example 5: a GPU run (EC2, agent). GPUUtilization 70, 80, 90 → mean 0.80; GPUMemoryUsed peak
# 600 GiB over the host's 8 GPUs; steps counted (workload in steps, 512 samples per step):
# StepsDone 1,000, StepTimeSeconds 6.0 every minute → 1/6 step/s per sample.
# ---------------------------------------------------------------------------------------------
def test_gpu_run():
    wl = workload(target={"unit": "steps", "amount": 10_000}, samples_per_step=512)
    series = {
        n.STEP_TIME.key: s(n.STEP_TIME.key, every_minute(5, 104, 6.0)),
        n.WARMUP_SECONDS.key: s(n.WARMUP_SECONDS.key, [(10, 120)]),
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, [(50, 1.8)]),
        n.FAILURES.key: s(n.FAILURES.key, [(5, 0)]),
        n.WORK_DONE[WorkUnit.steps].key: s(n.WORK_DONE[WorkUnit.steps].key, [(104, 1000)]),
        "gpu_utilization": s("gpu_utilization", [(20, 70), (40, 80), (60, 90)]),
        "device_memory": s("device_memory", [(20, 500 * GIB), (60, 600 * GIB)]),
    }
    c = ctx(instance_type="p5.48xlarge", count=2)
    trial, notes = build_trial_record(c, wl, series)
    assert trial.candidate.accelerator == "gpu"
    assert trial.utilization.gpu == pytest.approx(0.80)
    assert trial.utilization.neuroncore is None
    assert trial.utilization.device_memory_gb == 600
    assert trial.work.unit == WorkUnit.steps
    assert trial.work.done == trial.work.quality_meeting == 1000
    # Warm-up 120 s from the first step (minute 5) → samples from minute 7: 98 of 1/6.
    assert len(trial.steady_throughput_samples) == 98
    assert trial.steady_throughput_samples[0] == pytest.approx(1 / 6)
    assert "gpu utilization not published (agent-gpu)" not in notes


def test_without_a_failure_count_no_work_is_assumed_quality_meeting():
    # Same as above but the agent did not say how many failures it had: rolled-back work is
    # unknown, so none of the 1,000 steps is counted toward the target.
    wl = workload(target={"unit": "steps", "amount": 10_000}, samples_per_step=512)
    series = {
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, [(50, 1.8)]),
        n.WORK_DONE[WorkUnit.steps].key: s(n.WORK_DONE[WorkUnit.steps].key, [(104, 1000)]),
    }
    trial, notes = build_trial_record(ctx(instance_type="p5.48xlarge", count=2), wl, series)
    assert (trial.work.done, trial.work.quality_meeting) == (1000, 0)
    assert not trial.usable_for_throughput
    assert any("failures unknown: none counted" in x for x in notes)


# ---------------------------------------------------------------------------------------------
# Missing stays missing.
# ---------------------------------------------------------------------------------------------
def test_missing_metrics_stay_none():
    trial, notes = build_trial_record(ctx(), workload(), {})
    w = trial.wall
    for part in ("compile_s", "compile_cache_hit", "warmup_s", "data_wait_s"):
        assert getattr(w, part) is None, part
    for part in ("checkpoint_save_s", "checkpoint_restore_s", "evaluation_s", "restart_s"):
        assert getattr(w, part) is None, part
    assert w.other_s is None
    assert w.steady_s == 7_200  # the whole clock: nothing else was measured
    u = trial.utilization
    assert (u.neuroncore, u.gpu, u.device_memory_gb) == (None, None, None)
    assert trial.checkpointing.size_gb is None and trial.checkpointing.restore_verified is None
    assert trial.quality is None
    assert (trial.usage.log_ingest_gb, trial.usage.custom_metrics) == (None, None)
    assert trial.billed_instance_seconds is None
    assert trial.steady_throughput_samples == []
    for expected in (
        "compile seconds not published: not measured",
        "warm-up seconds not published: not measured",
        "neuron utilization not published (agent-neuron)",
        "no eval_loss result published: quality not measured",
        "errors not published: recorded as 0",
        "failures not published: not known (recorded as null: the trial adds no exposure to "
        "the failure rate)",
        "training loss not published: its finiteness was not checked",
    ):
        assert expected in notes


def test_incomplete_series_is_not_measured():
    partial = s(n.COMPILE_SECONDS.key, [(0, 100)], status="PartialData", messages=("cut",))
    trial, notes = build_trial_record(ctx(), workload(), {n.COMPILE_SECONDS.key: partial})
    assert trial.wall.compile_s is None
    assert "compile_seconds: CloudWatch returned PartialData (cut); treated as not measured" in (
        notes
    )


def test_timing_scope_excludes_a_measured_part():
    scope = TimingScope(compile=False, data_loading=True, checkpoints=True, evaluation=True)
    series = {n.COMPILE_SECONDS.key: s(n.COMPILE_SECONDS.key, [(0, 600)])}
    trial, notes = build_trial_record(ctx(scope=scope), workload(), series)
    assert trial.wall.compile_s is None
    assert trial.wall.steady_s == 7_200 - 600  # the clock no longer holds the compile
    assert any("timing scope excludes it" in x for x in notes)


def test_code_version_and_dataset_fall_back_to_the_workload():
    trial, notes = build_trial_record(ctx(code_version=None, dataset_id=None), workload(), {})
    assert (trial.code_version, trial.dataset_id) == ("git:abc123", "ds-1")
    assert "job has no code version tag: the workload's git:abc123 assumed" in notes


def test_eval_metric_of_another_name_is_ignored():
    series = {n.EVAL_METRIC.key: eval_series("accuracy", [(10, 0.9)])}
    trial, notes = build_trial_record(ctx(), workload(), series)
    assert trial.quality is None
    assert any("the gate is on 'eval_loss'" in x for x in notes)


def test_sagemaker_final_metric_is_the_fallback_quality():
    d = {
        **sagemaker_description(),
        "FinalMetricDataList": [{"MetricName": "eval_loss", "Value": 1.8}],
    }
    c = ctx(JobSource.sagemaker, "Completed", instance_type="ml.trn1.32xlarge", start=None)
    trial, notes = build_trial_record(c, workload(), {}, facts_from_description(d))
    assert trial.quality is not None and trial.quality.value == 1.8
    assert "eval_loss from SageMaker's FinalMetricDataList (not the agent)" in notes


def test_inconsistent_split_gives_no_steady_time():
    series = {n.COMPILE_SECONDS.key: s(n.COMPILE_SECONDS.key, [(0, 9_000)])}  # > 7,200 s clock
    trial, notes = build_trial_record(ctx(), workload(), series)
    assert trial.wall.steady_s == 0 and not trial.usable_for_throughput
    assert any("the split is inconsistent" in x for x in notes)


@pytest.mark.parametrize(
    ("source", "status", "expected"),
    [
        (JobSource.sagemaker, "Completed", TrialStatus.completed),
        (JobSource.sagemaker, "Failed", TrialStatus.failed),
        (JobSource.sagemaker, "Stopped", TrialStatus.stopped),
        (JobSource.batch, "SUCCEEDED", TrialStatus.completed),
        (JobSource.batch, "FAILED", TrialStatus.failed),
        (JobSource.agent, "completed", TrialStatus.completed),
        (JobSource.agent, "Diverged", TrialStatus.diverged),
    ],
)
def test_status_mapping(source, status, expected):
    trial, _ = build_trial_record(ctx(source, status), workload(), {})
    assert trial.status == expected


@pytest.mark.parametrize(
    ("source", "status"), [(JobSource.sagemaker, "InProgress"), (JobSource.batch, "RUNNING")]
)
def test_non_terminal_status_is_an_error(source, status):
    with pytest.raises(RecordError, match="not a terminal status"):
        build_trial_record(ctx(source, status), workload(), {})


def test_unknown_instance_type_is_an_error():
    with pytest.raises(RecordError, match="instance type and count unknown"):
        build_trial_record(ctx(instance_type=None), workload(), {})


def test_custom_metrics_and_log_bytes_are_usage():
    series = {n.LOG_INGEST_BYTES.key: s(n.LOG_INGEST_BYTES.key, [(10, GIB), (20, GIB)])}
    trial, _ = build_trial_record(ctx(), workload(), series, custom_metrics=31)
    assert (trial.usage.log_ingest_gb, trial.usage.custom_metrics) == (2, 31)


# ---------------------------------------------------------------------------------------------
# Rules the worked examples above do not reach (found by the characterization run of issue 11:
# each holds on the record builder before and after its split).
# ---------------------------------------------------------------------------------------------
def sagemaker_ctx(**kw) -> JobContext:
    kw.setdefault("instance_type", "ml.trn1.32xlarge")
    return ctx(JobSource.sagemaker, kw.pop("status", "Completed"), start=None, **kw)


def test_an_incomplete_series_is_noted_once():
    # The rate series is looked for several times (own unit, then converted): one note.
    partial = s(n.TOKENS_PER_SECOND.key, [(10, 1_000)], status="PartialData")
    trial, notes = build_trial_record(ctx(), workload(), {n.TOKENS_PER_SECOND.key: partial})
    note = (
        "tokens_per_second: CloudWatch returned PartialData (no message); treated as not measured"
    )
    assert notes.count(note) == 1
    assert trial.work.done == 0 and trial.steady_throughput_samples == []


def test_describe_training_job_overrides_the_event_and_says_so():
    facts = facts_from_description(sagemaker_description("Failed"))
    c = sagemaker_ctx(instance_type="ml.trn1.2xlarge", count=2)
    trial, notes = build_trial_record(c, workload(), {}, facts)
    assert (trial.candidate.instance_type, trial.candidate.instance_count) == (
        "ml.trn1.32xlarge",
        4,
    )
    assert trial.status == TrialStatus.completed  # the event's status is recorded
    assert (
        "the event says Completed but DescribeTrainingJob says Failed; recorded the event's status"
        in notes
    )
    assert (
        "instance type: the event says ml.trn1.2xlarge, DescribeTrainingJob ml.trn1.32xlarge; "
        "used DescribeTrainingJob's" in notes
    )
    assert (
        "instance count: the event says 2, DescribeTrainingJob 4; used DescribeTrainingJob's"
        in notes
    )


def test_a_heterogeneous_cluster_is_an_error():
    d = sagemaker_description()
    d["ResourceConfig"] = {
        "InstanceGroups": [
            {"InstanceType": "ml.trn1.32xlarge", "InstanceCount": 3},
            {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 1},
        ]
    }
    with pytest.raises(RecordError, match="heterogeneous cluster"):
        build_trial_record(sagemaker_ctx(), workload(), {}, facts_from_description(d))


def test_an_invalid_candidate_is_an_error():
    with pytest.raises(RecordError, match="not a valid candidate"):
        build_trial_record(ctx(instance_type="trn2 48xlarge"), workload(), {})


def test_a_job_for_another_workload_is_an_error():
    with pytest.raises(RecordError, match="is for wl-1, not wl-2"):
        build_trial_record(ctx(), workload(workload_id="wl-2"), {})


def test_a_record_that_does_not_validate_is_an_error():
    # A blank code version tag is not absent (no fallback) and not a valid name either.
    with pytest.raises(RecordError, match="the record does not validate"):
        build_trial_record(ctx(code_version="  "), workload(), {})


def test_without_an_ended_training_transition_the_event_clock_is_used():
    d = sagemaker_description()
    d["SecondaryStatusTransitions"] = [
        {"Status": "Starting", "StartTime": ms(0), "EndTime": ms(3)},
        {"Status": "Training", "StartTime": ms(3)},
    ]
    c = ctx(JobSource.sagemaker, "Completed", instance_type="ml.trn1.32xlarge")
    trial, notes = build_trial_record(c, workload(), {}, facts_from_description(d))
    assert "DescribeTrainingJob has no ended Training transition" in notes
    assert (trial.wall.steady_s, trial.wall.other_s) == (7_200, None)  # the event's 12:00–14:00


def test_without_start_and_end_there_is_no_clock_to_cover():
    series = {n.TOKENS_PER_SECOND.key: s(n.TOKENS_PER_SECOND.key, every_minute(0, 119, 1_000))}
    trial, notes = build_trial_record(ctx(start=None, end=None), workload(), series)
    assert (
        "the job's start and end are unknown: no wall clock, steady time 0 (unusable for "
        "throughput)" in notes
    )
    assert trial.wall.steady_s == 0 and trial.work.done == 0
    assert any("no training clock to cover; work 0" in x for x in notes)
    assert not trial.usable_for_throughput


def test_an_agent_that_says_diverged_gets_no_second_note():
    series = {n.NON_FINITE_LOSS.key: s(n.NON_FINITE_LOSS.key, [(60, 1)])}
    trial, notes = build_trial_record(ctx(status="diverged"), workload(), series)
    assert trial.status == TrialStatus.diverged
    assert not any(x.startswith("the loss went non-finite") for x in notes)


def test_work_counted_in_another_unit_with_a_converted_rate():
    # Target in tokens, work counted in steps; the only rate is in samples: 1,024 samples/s
    # = 2 steps/s at 512 samples per step (factor 4,096 / (512 × 4,096) = 1/512).
    wl = workload(samples_per_step=512)
    series = {
        n.WORK_DONE[WorkUnit.steps].key: s(n.WORK_DONE[WorkUnit.steps].key, [(119, 14_000)]),
        n.SAMPLES_PER_SECOND.key: s(n.SAMPLES_PER_SECOND.key, every_minute(0, 119, 1_024)),
        n.TRAINING_LOSS.key: s(n.TRAINING_LOSS.key, [(60, 2.0)]),
        n.FAILURES.key: s(n.FAILURES.key, [(60, 0)]),
    }
    trial, notes = build_trial_record(ctx(), wl, series)
    assert "work counted in steps (no tokens counter published)" in notes
    assert trial.work.unit == WorkUnit.steps
    assert trial.work.done == trial.work.quality_meeting == 14_000
    assert trial.steady_throughput_samples == [2.0] * 110  # minutes 10–119 (10 min warm-up)


def test_zero_rate_periods_are_dropped_and_counted():
    rate = every_minute(0, 119, lambda m: 0 if m in (30, 31, 32) else 1_000)
    series = {
        n.TOKENS_PER_SECOND.key: s(n.TOKENS_PER_SECOND.key, rate),
        n.WARMUP_SECONDS.key: s(n.WARMUP_SECONDS.key, [(0, 60)]),
    }
    trial, notes = build_trial_record(ctx(), workload(), series)
    assert "3 steady period(s) at zero rate dropped" in notes
    assert trial.steady_throughput_samples == [1_000.0] * 116  # 119 after the warm-up, − 3


def test_sagemaker_billed_zero_is_not_known():
    facts = facts_from_description(sagemaker_description(billable=0))
    trial, notes = build_trial_record(sagemaker_ctx(), workload(), {}, facts)
    assert trial.billed_instance_seconds is None
    assert "SageMaker billed 0 s: recorded as not known (the record needs > 0)" in notes


def test_a_fit_phase_trial_is_not_usable_for_throughput():
    facts = facts_from_description(sagemaker_description())
    trial, notes = build_trial_record(
        sagemaker_ctx(phase=Phase.fit), workload(), clean_series(), facts
    )
    assert trial.status == TrialStatus.completed and trial.work.quality_meeting > 0
    assert "not usable for throughput: fit phase" in notes


# ---------------------------------------------------------------------------------------------
# Properties.
# ---------------------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    minutes=st.integers(min_value=1, max_value=110),
    warmup_s=st.one_of(st.none(), st.floats(min_value=0, max_value=7_000)),
    rates=st.lists(st.floats(min_value=1, max_value=1e6), min_size=110, max_size=110),
)
def test_steady_samples_never_include_the_warmup_window(minutes, warmup_s, rates):
    # Periods inside the warm-up carry a marker value ≥ 1e12 that must never come out.
    first = 10
    exclusion = DEFAULT_WARMUP_EXCLUSION_S if warmup_s is None else warmup_s
    points = []
    for i in range(minutes):
        in_warmup = i * 60.0 < exclusion  # the period starts before the warm-up ends
        points.append((first + i, 1e12 + i if in_warmup else rates[i]))
    series = {n.TOKENS_PER_SECOND.key: s(n.TOKENS_PER_SECOND.key, points)}
    if warmup_s is not None:
        series[n.WARMUP_SECONDS.key] = s(n.WARMUP_SECONDS.key, [(first, warmup_s)])
    trial, _ = build_trial_record(ctx(), workload(), series)
    assert all(v < 1e12 for v in trial.steady_throughput_samples)
    assert len(trial.steady_throughput_samples) == sum(1 for _, v in points if v < 1e12)


seconds = st.one_of(st.none(), st.floats(min_value=0, max_value=3_000))


@settings(max_examples=200, deadline=None)
@given(
    compile_s=seconds,
    warmup_s=seconds,
    wait_s=seconds,
    save_s=seconds,
    eval_s=seconds,
    done=st.floats(min_value=0, max_value=1e12),
    quality=st.one_of(st.none(), st.floats(min_value=0, max_value=2e12)),
    failures=st.integers(min_value=0, max_value=3),
    status=st.sampled_from(["completed", "failed", "stopped"]),
    non_finite=st.integers(min_value=0, max_value=2),
)
def test_record_invariants(
    compile_s, warmup_s, wait_s, save_s, eval_s, done, quality, failures, status, non_finite
):
    series = {
        n.WORK_DONE[WorkUnit.tokens].key: s(n.WORK_DONE[WorkUnit.tokens].key, [(100, done)]),
        n.FAILURES.key: s(n.FAILURES.key, [(50, failures)]),
        n.NON_FINITE_LOSS.key: s(n.NON_FINITE_LOSS.key, [(50, non_finite)]),
    }
    for spec, v in (
        (n.COMPILE_SECONDS, compile_s),
        (n.WARMUP_SECONDS, warmup_s),
        (n.DATA_WAIT_SECONDS, wait_s),
        (n.CHECKPOINT_SAVE_SECONDS, save_s),
        (n.EVALUATION_SECONDS, eval_s),
    ):
        if v is not None:
            series[spec.key] = s(spec.key, [(5, v)])
    if quality is not None:
        key = n.WORK_QUALITY[WorkUnit.tokens].key
        series[key] = s(key, [(100, quality)])
    trial, _ = build_trial_record(ctx(status=status), workload(), series)

    # Quality-meeting work never exceeds work done.
    assert 0 <= trial.work.quality_meeting <= trial.work.done
    # The split is a partition of the clock whenever the parts fit in it.
    parts = sum(v for v in (compile_s, warmup_s, wait_s, save_s, eval_s) if v is not None)
    if parts <= 7_200:
        assert trial.wall.total_s == pytest.approx(7_200)
    # Effective throughput (over the whole wall) never exceeds the engine's steady throughput
    # (quality-meeting work over steady + data-wait seconds).
    clock = trial.wall.steady_s + (trial.wall.data_wait_s or 0.0)
    if clock > 0 and trial.wall.total_s > 0:
        assert trial.work.quality_meeting / trial.wall.total_s <= (
            trial.work.quality_meeting / clock * (1 + 1e-12)
        )
    # A non-finite loss always means diverged; diverged work is never counted unless published.
    if non_finite:
        assert trial.status == TrialStatus.diverged
        if quality is None:
            assert trial.work.quality_meeting == 0


# ---------------------------------------------------------------------------------------------
# House rule: the record builder is pure.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("module", [record_module, quantities_module, readings_module])
def test_record_module_is_pure(module):
    path = Path(module.__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    forbidden = {"boto3", "botocore", "os", "time", "random", "socket", "subprocess", "io"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not {a.name.split(".")[0] for a in node.names} & forbidden, node.lineno
        elif isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] not in forbidden, node.lineno
        elif isinstance(node, ast.Attribute):
            assert node.attr not in {"now", "utcnow", "today"}, node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "print", "input"}, node.lineno


def test_series_with_a_query_carries_its_metric_name():
    q = MetricQuery("eval_metric", n.AGENT_NAMESPACE, "EvalMetric", (("Metric", "x"),))
    assert q.dimension("Metric") == "x"
    assert math.isclose(n.BYTES_PER_GB, 1024**3)


# ---------------------------------------------------------------------------------------------
# The names: one definition, valid query ids, sources marked.
# ---------------------------------------------------------------------------------------------
def test_trial_queries_are_valid_and_unique():
    for accelerator in ("neuron", "gpu"):
        items = n.trial_queries("t-1", "eval_loss", accelerator)
        ids = [i.id for i in items]
        assert len(ids) == len(set(ids)) and len(ids) < 500
        assert all(dict(i.dimensions)[n.TRIAL_DIMENSION] == "t-1" for i in items)
    names = {(s.name, s.stat) for s in n.TRIAL_SPECS}
    assert len(names) == len(n.TRIAL_SPECS)
    assert all(s.namespace == "trncost/Agent" for s in n.TRIAL_SPECS)


def test_aws_sources_need_hosts_and_say_how_sure_they_are():
    hosts = [{"ClusterName": "c", "InstanceId": f"i-{i}", "NodeName": f"n{i}"} for i in range(2)]
    items = n.trial_queries(
        "t-1", "eval_loss", "neuron", source=n.CONTAINER_INSIGHTS_NEURON, hosts=hosts
    )
    util = next(i for i in items if i.id == "neuroncore_utilization")
    assert util.expression == "AVG([h0_0, h0_1])"
    assert util.members[0].namespace == "ContainerInsights"
    assert util.members[0].metric == "node_neuroncore_utilization"
    assert all(s.verified == "documented" for s in n.CONTAINER_INSIGHTS_NEURON.specs())
    assert n.CWAGENT_GPU.utilization.name == "nvidia_smi_utilization_gpu"
    custom = n.neuron_monitor_source("my_ns", "NeuronCoreUtil")
    assert custom.utilization.verified == "assumed" and custom.memory is None
    with pytest.raises(ValueError, match="per host"):
        n.trial_queries("t-1", "eval_loss", "neuron", source=n.CONTAINER_INSIGHTS_NEURON)
    with pytest.raises(ValueError, match="measures gpu"):
        n.trial_queries("t-1", "eval_loss", "neuron", source=n.CWAGENT_GPU, hosts=hosts)
    assert n.agent_host_dimensions("t-1", 2) == [
        {"TrialId": "t-1", "Host": "node-0"},
        {"TrialId": "t-1", "Host": "node-1"},
    ]


def test_a_week_of_per_minute_throughput_keeps_every_kth_period_within_the_records_bound():
    # Given a 7-day job's throughput, one period a minute (10,080 periods), alternating 90/110
    from datetime import UTC, datetime, timedelta

    from trncost.metrics.quantities import steady_samples
    from trncost.model.trial import MAX_THROUGHPUT_SAMPLES

    start = datetime(2026, 11, 1, tzinfo=UTC)
    points = [(start + timedelta(minutes=i), 90.0 if i % 2 else 110.0) for i in range(20_161)]
    rate = type("Rate", (), {"points": points})()
    notes: list[str] = []
    # When its steady samples are taken (no warm-up)
    kept = steady_samples(rate, WorkUnit.tokens, 0.0, notes)
    # Then every 3rd period is kept (20,161 / 10,000 → k = 3), the spread of the periods stays
    # (not pooled away), and a note says so
    assert len(kept) <= MAX_THROUGHPUT_SAMPLES and len(kept) == 6_721
    assert {90.0, 110.0} == set(kept)
    assert any("one in every 3 kept as a sample" in n for n in notes)
