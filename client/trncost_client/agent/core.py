"""The trial agent as a library: `with TrialAgent(config) as agent: agent.step(...)`.

What it measures and how it publishes (names from trncost.metrics.names, the one definition):

- **throughput and work** (leader, i.e. node rank 0): per interval, TokensDone / SamplesDone /
  StepsDone increments, the same as <Unit>QualityMeeting while the loss has stayed finite (work
  after the first non-finite loss does not count), TokensPerSecond / SamplesPerSecond over the
  interval's wall time, StepTimeSeconds (mean), TrainingLoss (mean of finite losses),
  NonFiniteLoss (count, 0 at start);
- **warm-up**: WarmupSeconds, from the start of the first step to the end of step
  `warmup_steps` (default 3), or until the script says `warmup_done`; the work of those steps
  also as <Unit>Warmup increments (it is in <Unit>Done too), so the steady throughput can leave
  the warm-up's work out together with its seconds (one clock);
- **one datapoint per event**: CompileSeconds (+ CompileCacheHit), DataWaitSeconds,
  CheckpointSaveSeconds (+ CheckpointSizeBytes), CheckpointRestoreSeconds (+ CheckpointRestoreOk),
  EvaluationSeconds, EvalMetric {TrialId, Metric}, RestartSeconds (+ Failures);
- **per host** (every node): Errors (0 at start), NeuronCoreUtilization / NeuronDeviceMemoryUsed
  / NeuronExecutionErrors or GPUUtilization / GPUMemoryUsed from the monitors.

Datapoints are published in batches at each interval and at the end; the "Trial Run Completed"
event (leader only, when `send_event`) follows the last batch.
"""

from __future__ import annotations

import math
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trncost import __version__
from trncost.metrics import names as n
from trncost.metrics.jobs import INSTANCE_COUNT_TAG, INSTANCE_TYPE_TAG, TRIAL_TAG
from trncost.model.workload import WorkUnit
from trncost.settings import AGENT_TRIAL_ID_ENV, AgentSettings
from trncost_client.agent.monitors import Reading, cross_check
from trncost_client.agent.protocol import Event
from trncost_client.agent.publish import Publisher


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class AgentConfig:
    trial_id: str
    tags: dict[str, str] = field(default_factory=dict)
    instance_type: str | None = None
    instance_count: int = 1
    region: str | None = None
    node_rank: int = 0
    interval_s: float = 60.0
    warmup_steps: int = 3
    send_event: bool = True
    host_dimension: bool = False

    @property
    def leader(self) -> bool:
        return self.node_rank == 0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **over: Any) -> AgentConfig:
        """From the environment (`env`, default os.environ), the flags in `over` winning."""
        return cls.from_settings(AgentSettings.from_env(env), **over)

    @classmethod
    def from_settings(cls, settings: AgentSettings, **over: Any) -> AgentConfig:
        tags = dict(settings.tags)
        tags.update(over.pop("tags", None) or {})
        trial_id = over.pop("trial_id", None) or settings.trial_id or tags.get(TRIAL_TAG)
        if not trial_id:
            raise ValueError(
                f"no trial id: set {AGENT_TRIAL_ID_ENV}, --trial-id or a trncost:trial tag"
            )
        tags.setdefault(TRIAL_TAG, trial_id)
        itype = (
            over.pop("instance_type", None) or settings.instance_type or tags.get(INSTANCE_TYPE_TAG)
        )
        count = (
            over.pop("instance_count", None)
            or settings.instance_count
            or tags.get(INSTANCE_COUNT_TAG)
        )
        return cls(
            trial_id=trial_id,
            tags=tags,
            instance_type=itype,
            instance_count=int(count or 1),
            region=over.pop("region", None) or settings.region,
            node_rank=settings.node_rank,
            send_event=over.pop("send_event", settings.send_event),
            **over,
        )


@dataclass
class _Interval:
    started: float
    work: dict[WorkUnit, float] = field(default_factory=dict)
    quality: dict[WorkUnit, float] = field(default_factory=dict)
    warmup: dict[WorkUnit, float] = field(default_factory=dict)  # work of the warm-up steps
    step_seconds: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    non_finite: int = 0


class TrialAgent:
    def __init__(
        self,
        config: AgentConfig,
        publisher: Publisher | None = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.config = config
        self.publisher = publisher or Publisher(config.region)
        self.monotonic = monotonic
        self.clock = clock
        self._lock = threading.RLock()
        self._pending: list[dict[str, Any]] = []
        self._interval = _Interval(monotonic())
        self._last_step_end: float | None = None
        self._first_step_start: float | None = None
        self._steps = 0
        self._warmup_published = False
        self._diverged = False
        self.started_at: datetime | None = None
        self.ended_at: datetime | None = None
        self.errors: list[str] = []
        self.notes: list[str] = []  # for the record (the completion event carries them)
        self.unsupported_ops: list[str] = []
        self.totals: dict[str, float] = {}
        self.eval_results: dict[str, float] = {}
        self.restore_ok: bool | None = None

    # -- datapoints --------------------------------------------------------------------------
    def _dims(self, extra: Mapping[str, str] | None = None) -> list[dict[str, str]]:
        dims = {n.TRIAL_DIMENSION: self.config.trial_id, **(extra or {})}
        return [{"Name": k, "Value": v} for k, v in dims.items()]

    def _datum(
        self, spec: n.MetricSpec, value: float, extra: Mapping[str, str] | None = None
    ) -> None:
        if not math.isfinite(value):
            return  # CloudWatch rejects NaN and ±Inf
        unit = spec.unit if spec.unit != "None" else "None"
        with self._lock:
            self._pending.append(
                {
                    "MetricName": spec.name,
                    "Dimensions": self._dims(extra),
                    "Timestamp": self.clock(),
                    "Value": float(value),
                    "Unit": unit,
                }
            )
            if spec.publisher == n.Publisher.every_host and self.config.host_dimension:
                host = {n.HOST_DIMENSION: n.host_name(self.config.node_rank), **(extra or {})}
                self._pending.append({**self._pending[-1], "Dimensions": self._dims(host)})
            self.totals[spec.name] = self.totals.get(spec.name, 0.0) + float(value)

    def _leader(self, spec: n.MetricSpec, value: float, **extra: str) -> None:
        if self.config.leader:
            self._datum(spec, value, extra or None)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> TrialAgent:
        self.started_at = self.clock()
        self._interval = _Interval(self.monotonic())
        # counters that may stay 0 are published once, so "none" is a measurement
        self._datum(n.ERRORS, 0)
        self._leader(n.FAILURES, 0)
        self._leader(n.NON_FINITE_LOSS, 0)
        return self

    def __enter__(self) -> TrialAgent:
        return self.start()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            status = "completed"
        elif issubclass(exc_type, KeyboardInterrupt):
            status = "stopped"
        else:
            self.error(f"{exc_type.__name__}: {exc}")
            status = "failed"
        self.finish(status)

    # -- measurements ------------------------------------------------------------------------
    def step(
        self,
        tokens: float | None = None,
        samples: float | None = None,
        loss: float | None = None,
        seconds: float | None = None,
        data_wait: float | None = None,
    ) -> None:
        now = self.monotonic()
        with self._lock:
            if seconds is None:
                seconds = now - (self._last_step_end if self._last_step_end is not None else now)
            if self._first_step_start is None:
                self._first_step_start = now - seconds
            self._last_step_end = now
            self._steps += 1
            iv = self._interval
            iv.step_seconds.append(seconds)
            if loss is not None:
                if math.isfinite(loss):
                    iv.losses.append(float(loss))
                else:
                    iv.non_finite += 1
                    self._diverged = True
            for unit, amount in (
                (WorkUnit.tokens, tokens),
                (WorkUnit.samples, samples),
                (WorkUnit.steps, 1.0),
            ):
                if amount is None:
                    continue
                iv.work[unit] = iv.work.get(unit, 0.0) + amount
                if not self._warmup_published:  # this step is inside WarmupSeconds
                    iv.warmup[unit] = iv.warmup.get(unit, 0.0) + amount
                if not self._diverged:
                    iv.quality[unit] = iv.quality.get(unit, 0.0) + amount
            if data_wait:
                self._leader(n.DATA_WAIT_SECONDS, data_wait)
            if not self._warmup_published and self._steps >= max(1, self.config.warmup_steps):
                self.warmup_done(now - self._first_step_start)
        if now - self._interval.started >= self.config.interval_s:
            self.flush()

    def warmup_done(self, seconds: float | None = None) -> None:
        with self._lock:
            if self._warmup_published:
                return
            if seconds is None:
                start = self._first_step_start
                seconds = 0.0 if start is None else self.monotonic() - start
            self._warmup_published = True
            self._leader(n.WARMUP_SECONDS, seconds)

    def compile(self, seconds: float, cache_hit: bool | None = None) -> None:
        self._leader(n.COMPILE_SECONDS, seconds)
        if cache_hit is not None:
            self._leader(n.COMPILE_CACHE_HIT, 1.0 if cache_hit else 0.0)

    def data_wait(self, seconds: float) -> None:
        self._leader(n.DATA_WAIT_SECONDS, seconds)

    def checkpoint_save(self, seconds: float, size_bytes: float | None = None) -> None:
        self._leader(n.CHECKPOINT_SAVE_SECONDS, seconds)
        if size_bytes is not None:
            self._leader(n.CHECKPOINT_SIZE, size_bytes)

    def checkpoint_restore(self, seconds: float, ok: bool) -> None:
        self._leader(n.CHECKPOINT_RESTORE_SECONDS, seconds)
        self._leader(n.CHECKPOINT_RESTORE_OK, 1.0 if ok else 0.0)
        self.restore_ok = ok if self.restore_ok is None else (self.restore_ok and ok)

    def eval(self, metric: str, value: float, seconds: float | None = None) -> None:
        if seconds is not None:
            self._leader(n.EVALUATION_SECONDS, seconds)
        if math.isfinite(value):
            self._leader(n.EVAL_METRIC, value, **{n.EVAL_METRIC_DIMENSION: metric})
            self.eval_results[metric] = value

    def error(self, message: str, unsupported_op: str | None = None) -> None:
        self.errors.append(message[:500])
        if unsupported_op:
            self.unsupported_ops.append(unsupported_op)
        self._datum(n.ERRORS, 1)

    def restart(self, seconds: float) -> None:
        self._leader(n.FAILURES, 1)
        self._leader(n.RESTART_SECONDS, seconds)

    def accelerator(self, reading: Reading, kind: str) -> None:
        source = n.AGENT_NEURON if kind == "neuron" else n.AGENT_GPU
        if reading.hardware is not None and not self.notes:
            # neuron-monitor's instance facts, once: a mismatch becomes a note on the record
            self.notes.extend(cross_check(reading.hardware, self.config.instance_type))
        if reading.utilization_pct is not None:
            self._datum(source.utilization, reading.utilization_pct)
        if reading.memory_bytes is not None and source.memory is not None:
            self._datum(source.memory, reading.memory_bytes)
        if reading.execution_errors is not None and source.execution_errors is not None:
            self._datum(source.execution_errors, reading.execution_errors)

    def handle(self, event: Event) -> None:
        f = event.fields
        num = event.number
        name = event.name
        if name == "step":
            self.step(num("tokens"), num("samples"), num("loss"), num("seconds"), num("data_wait"))
        elif name == "compile":
            self.compile(num("seconds") or 0.0, f.get("cache_hit"))
        elif name == "warmup_done":
            self.warmup_done(num("seconds"))
        elif name == "data_wait":
            self.data_wait(num("seconds") or 0.0)
        elif name == "checkpoint_save":
            self.checkpoint_save(num("seconds") or 0.0, num("bytes"))
        elif name == "checkpoint_restore":
            self.checkpoint_restore(num("seconds") or 0.0, bool(f.get("ok")))
        elif name == "eval":
            self.eval(str(f["metric"]), num("value") or 0.0, num("seconds"))
        elif name == "error":
            self.error(str(f["message"]), f.get("unsupported_op"))
        elif name == "restart":
            self.restart(num("seconds") or 0.0)

    # -- publishing ----------------------------------------------------------------------------
    def _close_interval(self) -> None:
        now = self.monotonic()
        iv, self._interval = self._interval, _Interval(now)
        wall = max(now - iv.started, 1e-6)
        if not self.config.leader:
            return
        for unit, amount in iv.work.items():
            self._datum(n.WORK_DONE[unit], amount)
            self._datum(n.WORK_QUALITY[unit], iv.quality.get(unit, 0.0))
            if unit in iv.warmup:
                self._datum(n.WORK_WARMUP[unit], iv.warmup[unit])
            if unit in n.RATE_OF:
                self._datum(n.RATE_OF[unit], amount / wall)
        if iv.step_seconds:
            self._datum(n.STEP_TIME, sum(iv.step_seconds) / len(iv.step_seconds))
        if iv.losses:
            self._datum(n.TRAINING_LOSS, sum(iv.losses) / len(iv.losses))
        if iv.non_finite:
            self._datum(n.NON_FINITE_LOSS, iv.non_finite)

    def flush(self) -> None:
        with self._lock:
            self._close_interval()
            batch, self._pending = self._pending, []
        if batch:
            self.publisher.put_metrics(batch)

    def finish(self, status: str = "completed") -> dict[str, Any]:
        """Publish what is left and (leader, send_event) the "Trial Run Completed" event."""
        if self._diverged and status == "completed":
            status = "diverged"
        self.flush()
        self.ended_at = self.clock()
        detail = self.event_detail(status)
        if self.config.leader and self.config.send_event:
            self.publisher.put_event(detail)
        return detail

    def event_detail(self, status: str) -> dict[str, Any]:
        tags = dict(self.config.tags)
        if self.config.instance_type:
            tags.setdefault(INSTANCE_TYPE_TAG, self.config.instance_type)
        tags.setdefault(INSTANCE_COUNT_TAG, str(self.config.instance_count))
        host = socket.gethostname().split(".")[0] or "host"
        started = self.started_at or self.clock()
        return {
            "run_id": f"{self.config.trial_id}-{host}-{int(started.timestamp())}",
            "status": status,
            "instance_type": self.config.instance_type,
            "instance_count": self.config.instance_count,
            "started_at": started.isoformat().replace("+00:00", "Z"),
            "ended_at": (self.ended_at or self.clock()).isoformat().replace("+00:00", "Z"),
            "agent_version": __version__,
            "tags": tags,
            "errors": self.errors[-10:],
            "unsupported_ops": sorted(set(self.unsupported_ops)),
            "notes": self.notes[:10],
        }


def warn(message: str) -> None:
    print(f"trncost agent: {message}", file=sys.stderr, flush=True)
