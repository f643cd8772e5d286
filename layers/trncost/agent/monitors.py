"""Accelerator readings: neuron-monitor's JSON reports and nvidia-smi's CSV.

neuron-monitor (aws-neuron-tools) prints one JSON report per period. Fields read (Neuron user
guide, "neuron-monitor User Guide", report format):

- `neuron_runtime_data[].report.neuroncore_counters.neuroncores_in_use.<core>`
  `.neuroncore_utilization` (percent) → NeuronCoreUtilization = the mean over every core in use;
- `neuron_runtime_data[].report.memory_used.neuron_runtime_used_bytes.neuron_device` (bytes)
  → NeuronDeviceMemoryUsed = the sum over runtimes;
- `neuron_runtime_data[].report.execution_stats.error_summary.{generic, numerical, transient,
  model, runtime, hardware}` → NeuronExecutionErrors = their sum; taken as counts for the
  report's period (increments), as the guide describes execution_stats per period.

Missing parts are skipped (a report without a runtime yields nothing).

nvidia-smi: `nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits`
prints one line per GPU, "<percent>, <MiB>" → GPUUtilization = mean percent, GPUMemoryUsed =
sum of MiB × 2^20 bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

NVIDIA_SMI_COMMAND = [
    "nvidia-smi",
    "--query-gpu=utilization.gpu,memory.used",
    "--format=csv,noheader,nounits",
]
MIB = 2**20
NEURON_ERROR_KINDS = ("generic", "numerical", "transient", "model", "runtime", "hardware")


@dataclass(frozen=True)
class Reading:
    utilization_pct: float | None = None
    memory_bytes: float | None = None
    execution_errors: float | None = None


def parse_neuron_report(text: str) -> Reading | None:
    try:
        report = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(report, dict):
        return None
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
        summary = ((rep.get("execution_stats") or {}).get("error_summary")) or {}
        for kind in NEURON_ERROR_KINDS:
            if isinstance(summary.get(kind), int | float):
                errors += float(summary[kind])
                has_errors = True
    if not (utils or has_memory or has_errors):
        return None
    return Reading(
        utilization_pct=sum(utils) / len(utils) if utils else None,
        memory_bytes=memory if has_memory else None,
        execution_errors=errors if has_errors else None,
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
