"""Which series each figure of a trial record is read from, and the provenance of every
figure a record measured. Pure.

`FIGURE_KEYS` follows the rules of `metrics.record` / `metrics.quantities`: a figure is read
from the first of its keys that has a series (work in the record's unit first). A source of
series (the agent's metrics, a job's logs) says where each key's series came from
(`MeasuredIn`); `figure_provenance` turns that into one `trial_measurement` per measured
figure. A figure that is None (or an empty list) is not measured and gets none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trncost.metrics import names as n
from trncost.model.provenance import MeasuredIn, TrialMeasurement
from trncost.model.trial import TrialRun
from trncost.model.workload import WorkUnit

_RATE = {
    WorkUnit.tokens: n.TOKENS_PER_SECOND.key,
    WorkUnit.samples: n.SAMPLES_PER_SECOND.key,
    WorkUnit.steps: n.STEP_TIME.key,
}

FIGURE_KEYS: dict[str, tuple[str, ...]] = {
    "wall.compile_s": (n.COMPILE_SECONDS.key,),
    "wall.compile_cache_hit": (n.COMPILE_CACHE_HIT.key,),
    "wall.warmup_s": (n.WARMUP_SECONDS.key,),
    "wall.data_wait_s": (n.DATA_WAIT_SECONDS.key,),
    "wall.checkpoint_save_s": (n.CHECKPOINT_SAVE_SECONDS.key,),
    "wall.checkpoint_restore_s": (n.CHECKPOINT_RESTORE_SECONDS.key,),
    "wall.evaluation_s": (n.EVALUATION_SECONDS.key,),
    "wall.restart_s": (n.RESTART_SECONDS.key,),
    "quality.loss_finite": (n.TRAINING_LOSS.key, n.NON_FINITE_LOSS.key),
    "quality.value": (n.EVAL_METRIC.key,),
    "reliability.errors": (n.ERRORS.key, "execution_errors"),
    "reliability.failures": (n.FAILURES.key,),
    "checkpointing.saves": (n.CHECKPOINT_SAVES.key,),
    "checkpointing.size_gb": (n.CHECKPOINT_SIZE.key,),
    "checkpointing.restore_verified": (n.CHECKPOINT_RESTORE_OK.key,),
    "utilization.neuroncore": ("neuroncore_utilization",),
    "utilization.gpu": ("gpu_utilization",),
    "utilization.device_memory_gb": ("device_memory",),
    "usage.log_ingest_gb": (n.LOG_INGEST_BYTES.key,),
}
WORK_FIGURES = ("work.done", "work.quality_meeting", "steady_throughput_samples")
CLOCK_FIGURES = ("wall.steady_s",)
# The training loss: whether it stayed finite decides `status` (diverged) and which work is
# quality-meeting; without an evaluation result the record has no field to hold it, so it is
# listed under this name.
LOSS_FIGURE = "loss"
ALL_FIGURES = (
    *WORK_FIGURES,
    *CLOCK_FIGURES,
    *FIGURE_KEYS,
    LOSS_FIGURE,
    "billed_instance_seconds",
)


def _value(trial: TrialRun, figure: str) -> object:
    obj: object = trial
    for part in figure.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def work_keys(unit: WorkUnit, figure: str) -> tuple[str, ...]:
    """The keys the record reads a work figure from, in the order it reads them."""
    others = [u for u in (WorkUnit.tokens, WorkUnit.samples, WorkUnit.steps) if u != unit]
    if figure == "steady_throughput_samples":
        return (_RATE[unit], *(_RATE[u] for u in others))
    counters = n.WORK_QUALITY if figure == "work.quality_meeting" else n.WORK_DONE
    return (counters[unit].key, n.WORK_DONE[unit].key, _RATE[unit], *(_RATE[u] for u in others))


def figure_provenance(
    trial: TrialRun,
    sources: Mapping[str, Sequence[MeasuredIn]],
    *,
    clock: Sequence[MeasuredIn] = (),
    billing: Sequence[MeasuredIn] = (),
) -> dict[str, TrialMeasurement]:
    """One trial_measurement per figure the record measured, naming where it was read."""
    keys: dict[str, tuple[str, ...]] = {f: work_keys(trial.work.unit, f) for f in WORK_FIGURES}
    keys.update(FIGURE_KEYS)
    out: dict[str, TrialMeasurement] = {}

    def add(figure: str, where: Sequence[MeasuredIn]) -> None:
        if where:
            out[figure] = TrialMeasurement(
                trial_ids=[trial.trial_id],
                metric=figure,
                code_versions=[trial.code_version],
                dataset_ids=[trial.dataset_id],
                measured_in=list(where),
            )

    for figure, candidates in keys.items():
        value = _value(trial, figure)
        if value is None or value == [] or (figure.startswith("work.") and value == 0):
            continue
        found = next((sources[k] for k in candidates if sources.get(k)), None)
        if found:
            add(figure, found)
    loss = [w for k in FIGURE_KEYS["quality.loss_finite"] for w in sources.get(k, ())]
    if loss and "quality.loss_finite" not in out:
        add(LOSS_FIGURE, loss)
    if trial.wall.steady_s > 0:
        add("wall.steady_s", clock)
    if trial.billed_instance_seconds is not None:
        add("billed_instance_seconds", billing)
    return out


def not_measured(provenance: Mapping[str, TrialMeasurement]) -> list[str]:
    return [f for f in ALL_FIGURES if f not in provenance]
