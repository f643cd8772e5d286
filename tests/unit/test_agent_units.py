"""The trial agent's pure parts: the TRNCOST line protocol, neuron-monitor and nvidia-smi
parsing, the library API and PutMetricData batching (a fake publisher, no AWS)."""

from __future__ import annotations

import json
import math

import pytest

from trncost.errors import ProtocolError
from trncost.metrics import names as n
from trncost.settings import AgentSettings
from trncost_client.agent import AgentConfig, TrialAgent
from trncost_client.agent.monitors import parse_neuron_report, parse_nvidia_smi
from trncost_client.agent.protocol import line, parse_line
from trncost_client.agent.publish import MAX_VALUES_PER_CALL, Publisher


def test_protocol_lines_parse_and_other_lines_pass() -> None:
    assert parse_line("epoch 1 loss 2.3") is None
    ev = parse_line('TRNCOST {"event": "step", "tokens": 1234, "loss": 2.1}')
    assert ev.name == "step" and ev.number("tokens") == 1234
    assert math.isnan(parse_line(line("step", loss=float("nan"))).number("loss"))
    assert parse_line(line("eval", metric="eval_loss", value=1.9)).fields["metric"] == "eval_loss"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("TRNCOST {nope", "not JSON"),
        ('TRNCOST {"event": "dance"}', "unknown event"),
        ('TRNCOST {"event": "step", "colour": 1}', "unknown fields"),
        ('TRNCOST {"event": "compile"}', "missing fields"),
        ('TRNCOST {"event": "compile", "seconds": -1}', "finite number"),
        ('TRNCOST {"event": "eval", "metric": 3, "value": 1}', "metric"),
    ],
)
def test_bad_protocol_lines_say_why(text, why) -> None:
    with pytest.raises(ProtocolError, match=why):
        parse_line(text)


NEURON_REPORT = {
    "neuron_runtime_data": [
        {
            "pid": 1,
            "report": {
                "neuroncore_counters": {
                    "neuroncores_in_use": {
                        "0": {"neuroncore_utilization": 80.0},
                        "1": {"neuroncore_utilization": 60.0},
                    }
                },
                "memory_used": {"neuron_runtime_used_bytes": {"host": 5, "neuron_device": 1024}},
                "execution_stats": {
                    # issue 15: error_summary.generic is not a count of failed executions
                    "error_summary": {"generic": 23654, "numerical": 0, "hardware": 0},
                    "execution_summary": {
                        "completed": 120,
                        "completed_with_err": 1,
                        "completed_with_num_err": 0,
                        "timed_out": 2,
                        "incorrect_input": 0,
                        "failed_to_queue": 0,
                    },
                },
            },
        }
    ]
}


def test_neuron_monitor_report_fields() -> None:
    r = parse_neuron_report(json.dumps(NEURON_REPORT))
    assert (r.utilization_pct, r.memory_bytes, r.execution_errors) == (70.0, 1024.0, 3.0)
    assert parse_neuron_report('{"neuron_runtime_data": []}') is None
    assert parse_neuron_report("not json") is None


def test_nvidia_smi_csv() -> None:
    r = parse_nvidia_smi("40, 1000\n60, 3000\n[N/A], [N/A]\n")
    assert r.utilization_pct == 50.0 and r.memory_bytes == 4000 * 2**20
    assert parse_nvidia_smi("") is None


class Sink(Publisher):
    def __init__(self) -> None:
        super().__init__("us-east-1")
        self.metrics: list[dict] = []
        self.sent: list[dict] = []

    def put_metrics(self, data) -> None:
        self.metrics.extend(data)

    def put_event(self, detail) -> None:  # type: ignore[override]
        self.sent.append(detail)


def test_library_use_publishes_the_names_of_trncost_metrics_names() -> None:
    sink = Sink()
    config = AgentConfig(
        trial_id="t-lib",
        tags={"trncost:workload": "w", "trncost:phase": "fit"},
        instance_type="trn2.48xlarge",
        warmup_steps=1,
    )
    with TrialAgent(config, sink) as agent:
        agent.compile(12.0, cache_hit=True)
        agent.step(tokens=100, loss=2.0, seconds=0.5)
        agent.step(tokens=100, loss=float("inf"), seconds=0.5)  # diverges
        agent.step(tokens=100, loss=1.0, seconds=0.5)
        agent.accelerator(parse_neuron_report(json.dumps(NEURON_REPORT)), "neuron")
    published = {d["MetricName"] for d in sink.metrics}
    known = (
        {s.name for s in n.TRIAL_SPECS}
        | {n.EVAL_METRIC.name}
        | {s.name for s in n.AGENT_NEURON.specs()}
    )
    assert published <= known
    by = lambda name: [d["Value"] for d in sink.metrics if d["MetricName"] == name]  # noqa: E731
    assert sum(by("TokensDone")) == 300 and sum(by("TokensQualityMeeting")) == 100
    assert by("NonFiniteLoss") == [0.0, 1.0] and by("CompileCacheHit") == [1.0]
    assert all(math.isfinite(v) for d in sink.metrics for v in [d["Value"]])
    assert sink.sent[0]["status"] == "diverged"
    assert all(d["Dimensions"][0] == {"Name": "TrialId", "Value": "t-lib"} for d in sink.metrics)


def test_the_warm_up_steps_work_is_counted_apart_on_the_warm_up_clock() -> None:
    # issue 13: the warm-up's tokens were work while its seconds were out of the steady clock
    sink = Sink()
    config = AgentConfig(trial_id="t-w", tags={"trncost:workload": "w"}, warmup_steps=3)
    with TrialAgent(config, sink) as agent:
        for _ in range(5):
            agent.step(tokens=100, loss=2.0, seconds=0.5)
    by = lambda name: [d["Value"] for d in sink.metrics if d["MetricName"] == name]  # noqa: E731
    # steps 1-3 are the warm-up (WarmupSeconds ends with step 3): 300 of the 500 tokens
    assert sum(by("TokensDone")) == 500 and sum(by("TokensWarmup")) == 300
    assert sum(by("StepsWarmup")) == 3 and len(by("WarmupSeconds")) == 1


def test_put_metric_data_calls_hold_at_most_1000_values() -> None:
    calls: list[int] = []

    class CW:
        def put_metric_data(self, Namespace, MetricData):  # noqa: N803
            assert Namespace == n.AGENT_NAMESPACE
            calls.append(len(MetricData))

    p = Publisher("us-east-1", cloudwatch=CW())
    p.put_metrics([{"MetricName": "Errors", "Value": 0.0}] * 2500)
    assert calls == [MAX_VALUES_PER_CALL, MAX_VALUES_PER_CALL, 500]


def test_non_leaders_publish_only_per_host_metrics() -> None:
    sink = Sink()
    config = AgentConfig(trial_id="t-2", node_rank=1, host_dimension=True)
    with TrialAgent(config, sink) as agent:
        agent.step(tokens=10, seconds=0.1)
        agent.compile(3.0)
    names = {d["MetricName"] for d in sink.metrics}
    assert names == {"Errors"}
    hosts = [d["Dimensions"] for d in sink.metrics if len(d["Dimensions"]) == 2]
    assert hosts and hosts[0][1] == {"Name": "Host", "Value": "node-1"}
    assert sink.sent == []


def test_config_from_the_environment_named_in_settings_with_flags_winning() -> None:
    env = {
        "TRNCOST_TAGS": "trncost:trial=t-env, trncost:workload=wl-1,junk",
        "SM_CURRENT_INSTANCE_TYPE": "ml.trn2.48xlarge",
        "TRNCOST_INSTANCE_COUNT": "4",
        "NODE_RANK": "",
        "AWS_BATCH_JOB_NODE_INDEX": "2",
        "AWS_DEFAULT_REGION": "us-west-2",
        "TRNCOST_SEND_EVENT": "No",
        "TRNCOST_BUS": "trncost-dev",
    }
    settings = AgentSettings.from_env(env)
    assert settings.bus_name == "trncost-dev" and settings.tags["trncost:workload"] == "wl-1"
    config = AgentConfig.from_env(env)
    assert config.trial_id == "t-env" and config.instance_type == "ml.trn2.48xlarge"
    assert (config.instance_count, config.node_rank, config.region) == (4, 2, "us-west-2")
    assert config.send_event is False and not config.leader
    flagged = AgentConfig.from_env(
        {**env, "TRNCOST_INSTANCE_COUNT": "many", "NODE_RANK": "x"},
        trial_id="t-flag",
        instance_count=8,
        region="eu-west-1",
        send_event=True,
    )
    assert (flagged.trial_id, flagged.instance_count, flagged.region) == ("t-flag", 8, "eu-west-1")
    assert flagged.tags["trncost:trial"] == "t-env"  # the job's tag stays as it was
    assert flagged.send_event is True and flagged.node_rank == 0
    with pytest.raises(ValueError, match="TRNCOST_TRIAL_ID"):
        AgentConfig.from_env({})
