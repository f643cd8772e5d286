"""Accelerator readings: neuron-monitor's JSON reports and nvidia-smi's CSV.

neuron-monitor (aws-neuron-tools) prints one JSON report per period, on one line; a saved or
`jq`-formatted report is pretty-printed over many (`ReportReader` takes either). Fields read
(Neuron user guide, "neuron-monitor User Guide", the JSON output format):

- `neuron_runtime_data[].report.neuroncore_counters.neuroncores_in_use.<core>`
  `.neuroncore_utilization` (percent) → NeuronCoreUtilization = the mean over every core in use;
- `neuron_runtime_data[].report.memory_used.neuron_runtime_used_bytes.neuron_device` (bytes)
  → NeuronDeviceMemoryUsed = the sum over runtimes;
- `neuron_runtime_data[].report.execution_stats` → NeuronExecutionErrors = the larger of two
  views of the period's errors: `execution_summary`'s failed executions (completed_with_err +
  completed_with_num_err + timed_out + incorrect_input + failed_to_queue) and
  `error_summary`'s typed errors (numerical + transient + model + runtime + hardware). Its
  `generic` count is not read: it is not a count of errors (a healthy report carries
  thousands). A report whose executions all completed can still carry hardware or runtime
  errors: they are kept, never published as 0;
- `instance_info.instance_type` (cross-checked against the trial's instance type: a mismatch
  is a note on the record) and `neuron_hardware_info` (neuron_device_count,
  neuroncore_per_device_count, neuron_device_memory_size: bytes per device).

Missing parts are skipped (a report without a runtime yields only the instance facts).

nvidia-smi: `nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits`
prints one line per GPU, "<percent>, <MiB>" → GPUUtilization = mean percent, GPUMemoryUsed =
sum of MiB × 2^20 bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

NVIDIA_SMI_COMMAND = [
    "nvidia-smi",
    "--query-gpu=utilization.gpu,memory.used",
    "--format=csv,noheader,nounits",
]
MIB = 2**20
# execution_summary outcomes that are failed executions (the guide's definitions)
FAILED_EXECUTIONS = (
    "completed_with_err",
    "completed_with_num_err",
    "timed_out",
    "incorrect_input",
    "failed_to_queue",
)
# error_summary's typed errors (its `generic` count is not an error count)
TYPED_ERRORS = ("numerical", "transient", "model", "runtime", "hardware")
GIB = 2**30


@dataclass(frozen=True)
class Hardware:
    """What neuron-monitor says about the instance and its Neuron devices."""

    instance_type: str | None = None
    device_type: str | None = None
    device_count: int | None = None
    cores_per_device: int | None = None
    device_memory_bytes: float | None = None

    def describe(self) -> str:
        parts = []
        if self.device_count is not None:
            kind = f" {self.device_type}" if self.device_type else ""
            parts.append(f"{self.device_count}{kind} device(s)")
        if self.cores_per_device is not None:
            parts.append(f"{self.cores_per_device} NeuronCores each")
        if self.device_memory_bytes is not None:
            parts.append(f"{self.device_memory_bytes / GIB:g} GiB device memory each")
        return ", ".join(parts)


@dataclass(frozen=True)
class Reading:
    utilization_pct: float | None = None
    memory_bytes: float | None = None
    execution_errors: float | None = None
    hardware: Hardware | None = None


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _hardware(report: dict[str, Any]) -> Hardware | None:
    info = report.get("instance_info") or {}
    hw = report.get("neuron_hardware_info") or {}
    if not isinstance(info, dict) or not isinstance(hw, dict):
        return None
    memory = hw.get("neuron_device_memory_size")
    found = Hardware(
        instance_type=str(info["instance_type"]) if info.get("instance_type") else None,
        device_type=str(hw["neuron_device_type"]) if hw.get("neuron_device_type") else None,
        device_count=_int(hw.get("neuron_device_count")),
        cores_per_device=_int(hw.get("neuroncore_per_device_count")),
        device_memory_bytes=float(memory) if isinstance(memory, int | float) else None,
    )
    return found if found != Hardware() else None


def cross_check(hardware: Hardware | None, instance_type: str | None) -> list[str]:
    """Notes for the record: the instance neuron-monitor saw, and a mismatch with the trial's."""
    if hardware is None:
        return []
    notes = []
    seen = hardware.instance_type
    if seen and instance_type and seen != instance_type.removeprefix("ml."):
        notes.append(
            f"neuron-monitor reports instance type {seen}, the trial says {instance_type}: "
            "check which one ran"
        )
    described = hardware.describe()
    if described:
        notes.append(f"neuron-monitor: {seen or 'instance'} with {described}")
    return notes


class ReportReader:
    """neuron-monitor's output, line by line, into whole reports (a report may span lines)."""

    MAX_CHARS = 8 * 2**20  # a report larger than this is dropped, never buffered for ever

    def __init__(self) -> None:
        self._buf: list[str] = []
        self._depth = 0
        self._chars = 0

    def feed(self, line: str) -> Reading | None:
        if not self._buf and not line.lstrip().startswith("{"):
            return None
        self._buf.append(line)
        self._chars += len(line)
        self._depth += line.count("{") - line.count("}")
        if self._depth > 0 and self._chars < self.MAX_CHARS:
            return None
        text = "".join(self._buf)
        self._buf, self._depth, self._chars = [], 0, 0
        return parse_neuron_report(text)


def parse_neuron_report(text: str) -> Reading | None:
    try:
        report = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(report, dict):
        return None
    return reading_of(report)


def _counts(summary: Any, kinds: tuple[str, ...]) -> float | None:
    """Σ of the `kinds` counts a summary holds (None when it holds none of them)."""
    if not isinstance(summary, dict):
        return None
    found = [
        float(v)
        for k in kinds
        if isinstance(v := summary.get(k), int | float) and math.isfinite(v) and v >= 0
    ]
    return sum(found) if found else None


def reading_of(report: dict[str, Any]) -> Reading | None:  # noqa: C901 - one block per group
    utils: list[float] = []
    memory = 0.0
    has_memory = False
    errors = 0.0
    has_errors = False
    for runtime in report.get("neuron_runtime_data") or []:
        rep = (runtime or {}).get("report") or {}
        cores = ((rep.get("neuroncore_counters") or {}).get("neuroncores_in_use")) or {}
        for core in cores.values():
            value = (core or {}).get("neuroncore_utilization")
            if isinstance(value, int | float) and math.isfinite(value):
                utils.append(float(value))
        used = ((rep.get("memory_used") or {}).get("neuron_runtime_used_bytes")) or {}
        if isinstance(used.get("neuron_device"), int | float):
            memory += float(used["neuron_device"])
            has_memory = True
        stats = rep.get("execution_stats") or {}
        failed, typed = (
            _counts(stats.get("execution_summary"), FAILED_EXECUTIONS),
            _counts(stats.get("error_summary"), TYPED_ERRORS),
        )
        if failed is not None or typed is not None:
            errors += max(failed or 0.0, typed or 0.0)
            has_errors = True
    hardware = _hardware(report)
    if not (utils or has_memory or has_errors or hardware):
        return None
    return Reading(
        utilization_pct=sum(utils) / len(utils) if utils else None,
        memory_bytes=memory if has_memory else None,
        execution_errors=errors if has_errors else None,
        hardware=hardware,
    )


def parse_nvidia_smi(text: str) -> Reading | None:
    utils: list[float] = []
    memory = 0.0
    for row in text.strip().splitlines():
        parts = [p.strip() for p in row.split(",")]
        if len(parts) != 2:
            continue
        try:
            util, mem = float(parts[0]), float(parts[1])
        except ValueError:  # "[N/A]"
            continue
        utils.append(util)
        memory += mem * MIB
    if not utils:
        return None
    return Reading(utilization_pct=sum(utils) / len(utils), memory_bytes=memory)
