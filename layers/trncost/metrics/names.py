"""Metric names, defined once: what the trncost trial agent publishes, which AWS-published
accelerator metrics can stand in for its own, and which queries the ingest reads for a trial.

## The agent's metrics

Namespace `trncost/Agent`. Every datapoint carries the dimension `TrialId` (the trial id of
`trncost.metrics.jobs`, so the ingest finds a job's series without listing anything).

Who publishes:

- **job-wide** metrics (throughput, loss, evaluation, phase seconds, work counters) are published
  once per interval by the leader process (global rank 0) with `{TrialId}` only: they describe
  the whole job, e.g. TokensPerSecond is the global rate over all instances;
- **per-host** metrics (accelerator utilization, device memory, execution errors, Errors) are
  published by every host with `{TrialId}`: CloudWatch pools the hosts' datapoints, so the
  Average is the mean over hosts, Sum the total, Maximum the peak.

`Host` is optional and off by default. With it on, per-host metrics are *also* published with
`{TrialId, Host}`, `Host` being `node-<node rank>` (0-based: SageMaker `algo-1` is `node-0`,
Batch multi-node `AWS_BATCH_JOB_NODE_INDEX`, torchrun `NODE_RANK`), so that the hosts of an
n-instance job are `node-0` … `node-(n-1)` and the ingest can name them without listing. It
costs one custom metric per host and metric; trial records never need it (they read the pooled
`{TrialId}` series); it is for per-node diagnosis, read with `host_aggregates`.

Counters are published as increments (the amount since the last datapoint, never a running
total); their Sum over the job window is the total. Counters that may stay at zero (Errors,
Failures, NonFiniteLoss) are published as 0 once at start, so that "none" is a measurement and
not a silence. Durations are published once per event
(one compile, one checkpoint save, one restart ...) in seconds; their Sum is the total and their
SampleCount the number of events. Flags are 1/0 per event, read with Minimum (1 only if every
event was a success). CloudWatch rejects NaN and ±Infinity, so a non-finite loss is published
as a NonFiniteLoss count, never as a loss value.

The evaluation result is `EvalMetric` with dimensions `{TrialId, Metric}`, `Metric` being the
metric's name exactly as the workload's quality gate spells it (e.g. `eval_loss`); the trial's
result is the last value of the job, not the best.

The agent's names are trncost's own: they are right by definition, as long as the agent
(`trncost/agent`, not in the Lambda layer) publishes them from this module.

## Accelerator metrics published by AWS tools (usable when the ingest knows the hosts)

- Container Insights with enhanced observability for Amazon EKS (namespace `ContainerInsights`):
  `node_neuroncore_utilization` (Percent), `node_neuroncore_memory_usage_total` (Bytes),
  `node_neuron_execution_errors_total` (Count), `node_neurondevice_hw_ecc_events_total` (Count),
  dimensions `ClusterName` or `ClusterName, InstanceId, NodeName`. Names, units and dimensions
  checked against the CloudWatch user guide ("Enhanced Container Insights (Classic) metric
  reference", AWS Neuron section) and the CloudWatch agent's EMF declarations. Whether
  `..._errors_total` arrives as per-interval increments (Sum) or as a running total is not
  stated there: assumed increments.
- CloudWatch agent NVIDIA GPU metrics (namespace `CWAgent` by default): `nvidia_smi_utilization_gpu`
  (percent, sent without a CloudWatch unit), `nvidia_smi_memory_used` (MiB, no unit); names
  checked against the CloudWatch user guide ("Collect NVIDIA GPU metrics"). Their dimensions
  (`host`, `index`, `name`, plus any `append_dimensions`) depend on the agent configuration:
  the caller passes them.
- `neuron-monitor | neuron-monitor-cloudwatch.py --namespace <ns>`: the namespace is whatever
  `--namespace` says, and the script's metric names and dimensions are not documented in the
  Neuron user guide (the script ships in `aws-neuron-tools` only). They are NOT assumed here:
  `neuron_monitor_source()` takes them from the team that runs the script.

All of these live in `ACCELERATOR_SOURCES` below, the one place to change when a name turns out
to differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from trncost.metrics.cloudwatch import AggregateFunction, Item, MetricAggregate, MetricQuery
from trncost.model.workload import WorkUnit

AGENT_NAMESPACE = "trncost/Agent"
TRIAL_DIMENSION = "TrialId"
HOST_DIMENSION = "Host"
EVAL_METRIC_DIMENSION = "Metric"
DEFAULT_PERIOD_S = 60
BYTES_PER_GB = 2**30  # AWS bills storage and memory in binary GB (GiB)


def host_name(node_rank: int) -> str:
    """The `Host` dimension value of the node with this 0-based rank."""
    if node_rank < 0:
        raise ValueError("node rank is 0-based and not negative")
    return f"node-{node_rank}"


class Publisher(StrEnum):
    leader = "leader"  # once per job (global rank 0), dimension {TrialId}
    every_host = "every_host"  # every host, dimension {TrialId} (pooled) [+ {TrialId, Host}]
    aws = "aws"  # published by an AWS tool, not by the agent


class Verified(StrEnum):
    own = "own"  # trncost's own name, published by the trncost agent from this module
    documented = "documented"  # checked against AWS documentation or AWS source
    assumed = "assumed"  # not found in AWS documentation: configurable, say so when used


@dataclass(frozen=True)
class MetricSpec:
    """One series the ingest reads: the CloudWatch name, the unit it is published with, and
    the statistic that turns a period's datapoints into the value the record needs."""

    key: str  # the query id and the key of the series the record reads
    name: str  # CloudWatch MetricName
    unit: str  # CloudWatch unit of the published values (documentation, not a filter)
    stat: str  # statistic read per period
    meaning: str
    namespace: str = AGENT_NAMESPACE
    publisher: Publisher = Publisher.leader
    verified: Verified = Verified.own

    def query(
        self,
        dimensions: Mapping[str, str],
        period: int = DEFAULT_PERIOD_S,
        query_id: str | None = None,
    ) -> MetricQuery:
        return MetricQuery(
            id=query_id or self.key,
            namespace=self.namespace,
            metric=self.name,
            dimensions=tuple(dimensions.items()),
            stat=self.stat,
            period=period,
        )


def _agent(
    key: str,
    name: str,
    unit: str,
    stat: str,
    meaning: str,
    publisher: Publisher = Publisher.leader,
) -> MetricSpec:
    return MetricSpec(key, name, unit, stat, meaning, publisher=publisher)


# -- throughput, loss, evaluation ---------------------------------------------------------
TOKENS_PER_SECOND = _agent(
    "tokens_per_second",
    "TokensPerSecond",
    "Count/Second",
    "Average",
    "global tokens per second over the interval since the last datapoint",
)
SAMPLES_PER_SECOND = _agent(
    "samples_per_second",
    "SamplesPerSecond",
    "Count/Second",
    "Average",
    "global samples per second over the interval since the last datapoint",
)
STEP_TIME = _agent(
    "step_time",
    "StepTimeSeconds",
    "Seconds",
    "Average",
    "wall seconds per optimizer step (one datapoint per step or per interval's mean)",
)
TRAINING_LOSS = _agent(
    "training_loss", "TrainingLoss", "None", "Average", "training loss (finite values only)"
)
NON_FINITE_LOSS = _agent(
    "non_finite_loss",
    "NonFiniteLoss",
    "Count",
    "Sum",
    "steps whose loss was NaN or infinite (CloudWatch cannot store the value itself)",
)
EVAL_METRIC = _agent(
    "eval_metric",
    "EvalMetric",
    "None",
    "Average",
    "evaluation result, dimension Metric = the quality gate's metric name; last value counts",
)

# -- phases of the clock (seconds, one datapoint per event) --------------------------------
COMPILE_SECONDS = _agent(
    "compile_seconds",
    "CompileSeconds",
    "Seconds",
    "Sum",
    "graph compile wall seconds, one datapoint per compile (including recompiles)",
)
COMPILE_CACHE_HIT = _agent(
    "compile_cache_hit",
    "CompileCacheHit",
    "None",
    "Minimum",
    "1 when a compile was served from the compile cache, 0 when it compiled; per compile",
)
WARMUP_SECONDS = _agent(
    "warmup_seconds",
    "WarmupSeconds",
    "Seconds",
    "Sum",
    "seconds from the first training step until step time is steady (the agent's rule)",
)
CHECKPOINT_SAVE_SECONDS = _agent(
    "checkpoint_save_seconds",
    "CheckpointSaveSeconds",
    "Seconds",
    "Sum",
    "wall seconds training was blocked by a checkpoint save, one datapoint per save",
)
CHECKPOINT_SAVES = MetricSpec(
    "checkpoint_saves",
    "CheckpointSaveSeconds",
    "Seconds",
    "SampleCount",
    "number of checkpoint saves (SampleCount of CheckpointSaveSeconds)",
)
CHECKPOINT_SIZE = _agent(
    "checkpoint_size",
    "CheckpointSizeBytes",
    "Bytes",
    "Maximum",
    "bytes written by one checkpoint save, one datapoint per save",
)
CHECKPOINT_RESTORE_SECONDS = _agent(
    "checkpoint_restore_seconds",
    "CheckpointRestoreSeconds",
    "Seconds",
    "Sum",
    "wall seconds to load a checkpoint and resume, one datapoint per restore",
)
CHECKPOINT_RESTORE_OK = _agent(
    "checkpoint_restore_ok",
    "CheckpointRestoreOk",
    "None",
    "Minimum",
    "1 when a restored checkpoint was verified (state and loss match), 0 when it was not",
)
DATA_WAIT_SECONDS = _agent(
    "data_wait_seconds",
    "DataWaitSeconds",
    "Seconds",
    "Sum",
    "wall seconds the step loop waited for input data (the leader's wait)",
)
EVALUATION_SECONDS = _agent(
    "evaluation_seconds",
    "EvaluationSeconds",
    "Seconds",
    "Sum",
    "wall seconds spent in evaluation runs during training",
)

# -- reliability ----------------------------------------------------------------------------
ERRORS = _agent(
    "errors",
    "Errors",
    "Count",
    "Sum",
    "errors the training process caught and logged (not fatal), every host",
    publisher=Publisher.every_host,
)
FAILURES = _agent(
    "failures",
    "Failures",
    "Count",
    "Sum",
    "interruptions that needed a restart of the training processes",
)
RESTART_SECONDS = _agent(
    "restart_seconds",
    "RestartSeconds",
    "Seconds",
    "Sum",
    "wall seconds from a failure until training processes run again, not counting checkpoint "
    "restore or compile (published separately); one datapoint per restart",
)

# -- work ------------------------------------------------------------------------------------
_UNIT_WORD = {WorkUnit.tokens: "Tokens", WorkUnit.samples: "Samples", WorkUnit.steps: "Steps"}
WORK_DONE = {
    u: _agent(
        f"{u.value}_done",
        f"{w}Done",
        "Count",
        "Sum",
        f"{u.value} processed since the last datapoint (increments)",
    )
    for u, w in _UNIT_WORD.items()
}
WORK_WARMUP = {
    u: _agent(
        f"{u.value}_warmup",
        f"{w}Warmup",
        "Count",
        "Sum",
        f"{u.value} processed during the warm-up (WarmupSeconds), also counted in {w}Done: the "
        "steady throughput leaves them out with the warm-up seconds (increments)",
    )
    for u, w in _UNIT_WORD.items()
}
WORK_QUALITY = {
    u: _agent(
        f"{u.value}_quality_meeting",
        f"{w}QualityMeeting",
        "Count",
        "Sum",
        f"{u.value} that count toward the target: work rolled back after a failure or done "
        "after the loss diverged is not counted (increments)",
    )
    for u, w in _UNIT_WORD.items()
}
RATE_OF = {WorkUnit.tokens: TOKENS_PER_SECOND, WorkUnit.samples: SAMPLES_PER_SECOND}

# -- usage -----------------------------------------------------------------------------------
LOG_INGEST_BYTES = _agent(
    "log_ingest_bytes",
    "LogIngestBytes",
    "Bytes",
    "Sum",
    "bytes the job's processes wrote to their CloudWatch Logs streams, every host",
    publisher=Publisher.every_host,
)


# -- accelerators --------------------------------------------------------------------------
@dataclass(frozen=True)
class AcceleratorSource:
    """Where utilization, device memory and execution errors come from, and how to scale them:
    utilization in percent (0..100), memory as `memory_unit_bytes` per unit."""

    name: str
    accelerator: str  # "neuron" or "gpu", as Candidate.accelerator says
    utilization: MetricSpec
    memory: MetricSpec | None
    execution_errors: MetricSpec | None
    memory_unit_bytes: float = 1.0
    per_trial: bool = False  # True: one {TrialId} series; False: one series per host

    def specs(self) -> tuple[MetricSpec, ...]:
        return tuple(s for s in (self.utilization, self.memory, self.execution_errors) if s)


AGENT_NEURON = AcceleratorSource(
    "agent-neuron",
    "neuron",
    _agent(
        "neuroncore_utilization",
        "NeuronCoreUtilization",
        "Percent",
        "Average",
        "mean NeuronCore utilization of the host (neuron-monitor neuroncore_counters)",
        publisher=Publisher.every_host,
    ),
    _agent(
        "device_memory",
        "NeuronDeviceMemoryUsed",
        "Bytes",
        "Maximum",
        "Neuron device memory in use on the host (neuron-monitor memory_used)",
        publisher=Publisher.every_host,
    ),
    _agent(
        "execution_errors",
        "NeuronExecutionErrors",
        "Count",
        "Sum",
        "Neuron runtime execution errors on the host (neuron-monitor execution_stats)",
        publisher=Publisher.every_host,
    ),
    per_trial=True,
)
AGENT_GPU = AcceleratorSource(
    "agent-gpu",
    "gpu",
    _agent(
        "gpu_utilization",
        "GPUUtilization",
        "Percent",
        "Average",
        "mean GPU utilization of the host's GPUs (nvidia-smi utilization.gpu)",
        publisher=Publisher.every_host,
    ),
    _agent(
        "device_memory",
        "GPUMemoryUsed",
        "Bytes",
        "Maximum",
        "GPU memory in use on the host, all GPUs (nvidia-smi memory.used)",
        publisher=Publisher.every_host,
    ),
    None,
    per_trial=True,
)


def _aws(
    key: str,
    namespace: str,
    name: str,
    unit: str,
    stat: str,
    meaning: str,
    verified: Verified = Verified.documented,
) -> MetricSpec:
    return MetricSpec(
        key,
        name,
        unit,
        stat,
        meaning,
        namespace=namespace,
        publisher=Publisher.aws,
        verified=verified,
    )


CONTAINER_INSIGHTS_NAMESPACE = "ContainerInsights"
CONTAINER_INSIGHTS_NEURON = AcceleratorSource(
    "container-insights-neuron",
    "neuron",
    _aws(
        "neuroncore_utilization",
        CONTAINER_INSIGHTS_NAMESPACE,
        "node_neuroncore_utilization",
        "Percent",
        "Average",
        "NeuronCore utilization of the node",
    ),
    _aws(
        "device_memory",
        CONTAINER_INSIGHTS_NAMESPACE,
        "node_neuroncore_memory_usage_total",
        "Bytes",
        "Maximum",
        "device memory used by the node's NeuronCores",
    ),
    _aws(
        "execution_errors",
        CONTAINER_INSIGHTS_NAMESPACE,
        "node_neuron_execution_errors_total",
        "Count",
        "Sum",
        "execution errors on the node (generic, numerical, transient, model, "
        "runtime, hardware); increments assumed",
    ),
)
CWAGENT_NAMESPACE = "CWAgent"
CWAGENT_GPU = AcceleratorSource(
    "cwagent-gpu",
    "gpu",
    _aws(
        "gpu_utilization",
        CWAGENT_NAMESPACE,
        "nvidia_smi_utilization_gpu",
        "None",
        "Average",
        "percent of time one or more GPU kernels ran (sent without a unit)",
    ),
    _aws(
        "device_memory",
        CWAGENT_NAMESPACE,
        "nvidia_smi_memory_used",
        "None",
        "Maximum",
        "GPU memory used, MiB (sent without a unit)",
    ),
    None,
    memory_unit_bytes=2**20,
)


def neuron_monitor_source(
    namespace: str,
    utilization_metric: str,
    memory_metric: str | None = None,
    errors_metric: str | None = None,
    memory_unit_bytes: float = 1.0,
) -> AcceleratorSource:
    """Neuron metrics sent by `neuron-monitor-cloudwatch.py --namespace <namespace>`: its
    metric names are not documented, so whoever runs it names them here (marked assumed)."""

    def spec(key: str, name: str, unit: str, stat: str, meaning: str) -> MetricSpec:
        return _aws(key, namespace, name, unit, stat, meaning, Verified.assumed)

    return AcceleratorSource(
        "neuron-monitor-cloudwatch",
        "neuron",
        spec("neuroncore_utilization", utilization_metric, "Percent", "Average", "utilization"),
        spec("device_memory", memory_metric, "Bytes", "Maximum", "memory")
        if memory_metric
        else None,
        spec("execution_errors", errors_metric, "Count", "Sum", "execution errors")
        if errors_metric
        else None,
        memory_unit_bytes=memory_unit_bytes,
    )


ACCELERATOR_SOURCES: dict[str, AcceleratorSource] = {
    s.name: s for s in (AGENT_NEURON, AGENT_GPU, CONTAINER_INSIGHTS_NEURON, CWAGENT_GPU)
}
DEFAULT_SOURCE = {"neuron": AGENT_NEURON, "gpu": AGENT_GPU}

# Every job-wide series a trial record reads, besides work, rates and the accelerator.
TRIAL_SPECS: tuple[MetricSpec, ...] = (
    TOKENS_PER_SECOND,
    SAMPLES_PER_SECOND,
    STEP_TIME,
    TRAINING_LOSS,
    NON_FINITE_LOSS,
    COMPILE_SECONDS,
    COMPILE_CACHE_HIT,
    WARMUP_SECONDS,
    CHECKPOINT_SAVE_SECONDS,
    CHECKPOINT_SAVES,
    CHECKPOINT_SIZE,
    CHECKPOINT_RESTORE_SECONDS,
    CHECKPOINT_RESTORE_OK,
    DATA_WAIT_SECONDS,
    EVALUATION_SECONDS,
    ERRORS,
    FAILURES,
    RESTART_SECONDS,
    LOG_INGEST_BYTES,
    *WORK_DONE.values(),
    *WORK_QUALITY.values(),
    *WORK_WARMUP.values(),
)

# How per-host series are pooled into one, by the statistic they are read with.
POOL: dict[str, AggregateFunction] = {
    "Average": "AVG",
    "Sum": "SUM",
    "SampleCount": "SUM",
    "Minimum": "MIN",
    "Maximum": "MAX",
}


def host_aggregates(
    specs: Sequence[MetricSpec],
    hosts: Sequence[Mapping[str, str]],
    period: int = DEFAULT_PERIOD_S,
) -> list[MetricAggregate]:
    """One server-side aggregate per spec over one query per host (`hosts`: each host's exact
    dimensions). Member ids are `h<spec index>_<host index>`: short, so the expression fits."""
    out = []
    for si, spec in enumerate(specs):
        members = tuple(
            spec.query(dims, period, query_id=f"h{si}_{hi}") for hi, dims in enumerate(hosts)
        )
        out.append(MetricAggregate(spec.key, POOL[spec.stat], members))
    return out


def trial_queries(
    trial_id: str,
    eval_metric: str,
    accelerator: str,
    *,
    period: int = DEFAULT_PERIOD_S,
    source: AcceleratorSource | None = None,
    hosts: Sequence[Mapping[str, str]] | None = None,
) -> list[Item]:
    """The queries whose series `build_trial_record` reads for one trial.

    `accelerator` is the candidate's ("neuron" or "gpu"). The accelerator `source` defaults to
    the agent's own pooled series; an AWS source needs `hosts`, the exact dimensions of each of
    the job's hosts (e.g. `{"ClusterName": c, "InstanceId": i, "NodeName": n}`)."""
    trial = {TRIAL_DIMENSION: trial_id}
    items: list[Item] = [s.query(trial, period) for s in TRIAL_SPECS]
    items.append(EVAL_METRIC.query({**trial, EVAL_METRIC_DIMENSION: eval_metric}, period))
    src = source or DEFAULT_SOURCE[accelerator]
    if src.accelerator != accelerator:
        raise ValueError(f"source {src.name} measures {src.accelerator}, not {accelerator}")
    if src.per_trial:
        items.extend(s.query(trial, period) for s in src.specs())
    else:
        if not hosts:
            raise ValueError(f"source {src.name} is per host: pass each host's dimensions")
        items.extend(host_aggregates(src.specs(), hosts, period))
    return items


def agent_host_dimensions(trial_id: str, instance_count: int) -> list[dict[str, str]]:
    """`{TrialId, Host}` of each host of an n-instance job (agent with `Host` on)."""
    return [
        {TRIAL_DIMENSION: trial_id, HOST_DIMENSION: host_name(i)} for i in range(instance_count)
    ]
