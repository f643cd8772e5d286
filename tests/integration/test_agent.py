"""The trial agent wrapping a small fake training script (python -c, printing TRNCOST lines),
publishing to moto CloudWatch and EventBridge; its event parses as the ingest parses it and the
metrics it published, read back, make a sensible trial record (the loop with ingest closed)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import boto3
import pytest

from tests.support.factories import workload
from trncost.metrics.cloudwatch import MetricsReader
from trncost.metrics.events import parse_job_event
from trncost.metrics.names import AGENT_NAMESPACE, trial_queries
from trncost.metrics.record import build_trial_record
from trncost.model.trial import TrialStatus
from trncost_client.agent.__main__ import run
from trncost_client.agent.publish import Publisher

SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    def say(**kw):
        print("TRNCOST " + json.dumps(kw), flush=True)
    print("starting training")
    say(event="compile", seconds=0.01, cache_hit=False)
    for i in range(6):
        time.sleep(0.02)
        say(event="step", tokens=1000, loss=2.5 - i * 0.1)
    say(event="checkpoint_save", seconds=0.01, bytes=1048576)
    say(event="checkpoint_restore", seconds=0.01, ok=True)
    say(event="eval", metric="eval_loss", value=1.9, seconds=0.01)
    print("TRNCOST not json", file=sys.stderr)
    sys.exit(EXIT)
    """
)
TAGS = "trncost:workload=wl-1,trncost:phase=baseline,trncost:trial=trial-agent-1"


@pytest.fixture
def agent_env(aws, monkeypatch, tmp_path):
    monkeypatch.setenv("TRNCOST_TAGS", TAGS)
    monkeypatch.setenv("TRNCOST_INSTANCE_TYPE", "trn2.48xlarge")
    monkeypatch.setenv("TRNCOST_INSTANCE_COUNT", "1")
    monkeypatch.delenv("TRNCOST_TRIAL_ID", raising=False)
    monkeypatch.delenv("NODE_RANK", raising=False)
    events, sqs = boto3.client("events"), boto3.client("sqs")
    events.create_event_bus(Name="trncost-agent")
    url = sqs.create_queue(QueueName="agent-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(
        Name="agent",
        EventBusName="trncost-agent",
        EventPattern=json.dumps({"source": ["trncost.agent"]}),
    )
    events.put_targets(
        Rule="agent", EventBusName="trncost-agent", Targets=[{"Id": "q", "Arn": arn}]
    )
    return {"queue": url, "buffer": tmp_path / "buffer.jsonl"}


def _script(exit_code: int) -> list[str]:
    return [sys.executable, "-c", SCRIPT.replace("EXIT", str(exit_code))]


def _received(url: str) -> list[dict]:
    msgs = boto3.client("sqs").receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    return [json.loads(m["Body"]) for m in msgs.get("Messages", [])]


def test_wrapped_training_publishes_metrics_and_an_event_the_ingest_understands(
    agent_env, capsys
) -> None:
    code = run(
        [
            "--bus",
            "trncost-agent",
            "--warmup-steps",
            "2",
            "--gpu",
            "off",
            "--buffer",
            str(agent_env["buffer"]),
            "--",
            *_script(0),
        ]
    )
    assert code == 0
    out = capsys.readouterr()
    assert "starting training" in out.out and "TRNCOST" in out.out  # passed through
    assert "ignored a bad TRNCOST line" in out.err
    # the event: exactly as the ingest parses it
    (event,) = _received(agent_env["queue"])
    ctx = parse_job_event(event)
    assert ctx.trial_id == "trial-agent-1" and ctx.workload_id == "wl-1"
    assert ctx.status == "completed" and ctx.instance_type == "trn2.48xlarge"
    assert ctx.instance_count == 1 and ctx.started_at < ctx.ended_at
    # the metrics: read back with the ingest's queries, into a trial record
    cw = boto3.client("cloudwatch")
    names = {m["MetricName"] for m in cw.list_metrics(Namespace=AGENT_NAMESPACE)["Metrics"]}
    assert {
        "TokensDone",
        "TokensPerSecond",
        "CompileSeconds",
        "EvalMetric",
        "CheckpointRestoreOk",
        "WarmupSeconds",
        "Errors",
        "NonFiniteLoss",
    } <= names
    reader = MetricsReader("us-east-1", client=cw)
    series = reader.read(
        trial_queries(ctx.trial_id, "eval_loss", "neuron"), ctx.started_at, ctx.ended_at
    )
    record = build_trial_record(ctx, workload(), series)
    t = record.trial
    assert t.status == TrialStatus.completed
    assert t.work.done == 6000 and t.work.quality_meeting == 6000
    assert t.quality is not None and t.quality.value == 1.9 and t.quality.loss_finite is True
    assert t.checkpointing.saves == 1 and t.checkpointing.restore_verified is True
    assert t.wall.compile_s == pytest.approx(0.01)
    assert t.reliability.errors == 1  # the bad protocol line
    assert not agent_env["buffer"].exists()


class Broken:
    def put_metric_data(self, **kwargs):
        raise RuntimeError("CloudWatch is down")

    def put_events(self, **kwargs):
        raise RuntimeError("EventBridge is down")


def test_publishing_failure_buffers_and_keeps_the_childs_exit_code(agent_env, capsys) -> None:
    publisher = Publisher(
        "us-east-1", cloudwatch=Broken(), events=Broken(), buffer_path=agent_env["buffer"]
    )
    code = run(["--gpu", "off", "--", *_script(3)], publisher=publisher)
    assert code == 3
    err = capsys.readouterr().err
    assert "could not publish metrics (RuntimeError: CloudWatch is down); buffered to" in err
    lines = [json.loads(x) for x in agent_env["buffer"].read_text().splitlines()]
    kinds = {x["kind"] for x in lines}
    assert kinds == {"metrics", "event"}
    event = next(x for x in lines if x["kind"] == "event")["payload"]
    assert json.loads(event["Detail"])["status"] == "failed"
    assert publisher.buffered > 0


def test_a_command_that_cannot_start_is_127_and_no_trial_id_still_runs(agent_env) -> None:
    assert run(["--offline", "--buffer", str(agent_env["buffer"]), "--", "/no/such/binary"]) == 127


def test_without_a_trial_id_the_command_runs_unmeasured(agent_env, monkeypatch) -> None:
    monkeypatch.delenv("TRNCOST_TAGS")
    assert run(["--", sys.executable, "-c", "raise SystemExit(5)"]) == 5


def test_neuron_monitor_execution_errors_reach_the_record_not_zero(agent_env) -> None:
    # Given neuron-monitor reporting 7 failed executions (2 completed_with_err, 1 with numerical
    # errors, 1 timed out, 3 failed to queue: tests/events/neuron_monitor/report_failures.json)
    report = Path(__file__).resolve().parents[1] / "events" / "neuron_monitor"
    command = f"cat {report / 'report_failures.json'}"
    # When a training runs under the agent with that monitor
    code = run(
        [
            "--bus",
            "trncost-agent",
            "--gpu",
            "off",
            "--neuron-monitor",
            command,
            "--buffer",
            str(agent_env["buffer"]),
            "--",
            *_script(0),
        ]
    )
    assert code == 0
    (event,) = _received(agent_env["queue"])
    ctx = parse_job_event(event)
    cw = boto3.client("cloudwatch")
    series = MetricsReader("us-east-1", client=cw).read(
        trial_queries(ctx.trial_id, "eval_loss", "neuron"), ctx.started_at, ctx.ended_at
    )
    t = build_trial_record(ctx, workload(), series).trial
    # Then the record keeps them: 7 execution errors + the 1 bad protocol line
    assert t.reliability.errors == 8
    assert t.utilization.neuroncore == pytest.approx(0.42015, rel=1e-3)
