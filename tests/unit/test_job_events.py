"""Job state-change events (AWS's documented shapes) → JobContext, or a reason why not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.support.events import load_event
from trncost.errors import UnusableEvent
from trncost.metrics.events import parse_job_event
from trncost.metrics.jobs import JobSource
from trncost.model.trial import Phase


def test_a_completed_sagemaker_job_with_epoch_ms_strings():
    ctx = parse_job_event(load_event("sagemaker_training_job_completed"))
    assert ctx.source == JobSource.sagemaker and ctx.status == "Completed"
    assert ctx.job_id == "llama31-8b-trn2-baseline-01"
    assert (ctx.workload_id, ctx.phase, ctx.run) == ("llama31-8b-cpt", Phase.baseline, "1")
    assert ctx.trial_id == "sagemaker-llama31-8b-trn2-baseline-01"
    assert (ctx.instance_type, ctx.instance_count) == ("ml.trn1.32xlarge", 2)
    assert ctx.started_at == datetime.fromtimestamp(1795870982, tz=UTC)
    assert ctx.ended_at == datetime.fromtimestamp(1795875126, tz=UTC)
    assert ctx.code_version == "git:4f2a9c1"
    assert all(ctx.timing_scope.model_dump().values())  # default: the clock includes all
    assert ctx.dedup_key == "sagemaker#us-east-1#llama31-8b-trn2-baseline-01#Completed"


def test_a_failed_sagemaker_job_with_epoch_ms_numbers():
    ctx = parse_job_event(load_event("sagemaker_training_job_failed"))
    assert ctx.status == "Failed" and ctx.run == "2"
    assert ctx.started_at == datetime.fromtimestamp(1795870982, tz=UTC)


def test_a_batch_job_joins_through_its_parameters():
    ctx = parse_job_event(load_event("batch_job_succeeded"))
    assert ctx.source == JobSource.batch and ctx.status == "SUCCEEDED"
    assert (ctx.workload_id, ctx.phase) == ("llama31-8b-cpt", Phase.target)
    assert (ctx.instance_type, ctx.instance_count) == ("p5.48xlarge", 4)
    assert ctx.job_id == "4c7599ae-0a82-49aa-ba5a-4727fcce14a8"


def test_the_agent_event_names_its_trial():
    ctx = parse_job_event(load_event("agent_trial_run_completed"))
    assert ctx.source == JobSource.agent and ctx.trial_id == "trn3-base-01"
    assert (ctx.instance_type, ctx.instance_count, ctx.region) == ("trn3.48xlarge", 1, "us-east-2")


def test_a_scope_tag_says_what_the_clock_includes():
    e = load_event("sagemaker_training_job_completed")
    e["detail"]["Tags"]["trncost:scope"] = "data_loading,checkpoints"
    scope = parse_job_event(e).timing_scope
    assert (scope.compile, scope.data_loading, scope.checkpoints, scope.evaluation) == (
        False,
        True,
        True,
        False,
    )


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda e: e["detail"]["Tags"].pop("trncost:workload"), "has no trncost:workload tag"),
        (lambda e: e["detail"]["Tags"].update({"trncost:phase": "warmup"}), "use fit, baseline"),
        (lambda e: e["detail"]["Tags"].update({"trncost:scope": "compile,naps"}), "unknown parts"),
        (lambda e: e["detail"].update(TrainingJobStatus="InProgress"), "not finished"),
        (lambda e: e.update(source="aws.ec2"), "unknown event"),
        (lambda e: e.pop("detail"), "not an EventBridge event"),
        (lambda e: e["detail"].update(TrainingStartTime="yesterday"), "neither epoch"),
        (lambda e: e["detail"]["ResourceConfig"].update(InstanceCount=0), "at least 1"),
    ],
)
def test_unusable_events_say_why(mutate, reason):
    e = load_event("sagemaker_training_job_completed")
    mutate(e)
    with pytest.raises(UnusableEvent, match=reason):
        parse_job_event(e)


def test_an_untagged_job_is_not_ours():
    with pytest.raises(UnusableEvent, match="no trncost:workload tag"):
        parse_job_event(load_event("sagemaker_training_job_untagged"))
