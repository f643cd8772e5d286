"""Time to target: steady work, one-time compile and warm-up, checkpoints, evaluation,
expected failures (a fixed point) and the idle share of held time.

    T_base = setup + compile + warm-up + steady + checkpoint saves + evaluation
    T      = T_base / (1 − λ·n·(t_restart + setup + interval/2))
    held   = T / (1 − idle fraction)

T_base, T and held are in hours in the input table (`time:base_h`, `time:total_h`,
`time:held_h`); λ is in failures per instance-hour, n in instances, and t_restart, setup and
the checkpoint interval are seconds turned into hours, so λ·n·(…) is unitless: the share of the
time lost to failures. `setup` is the trials' per-run time outside the training clock
(`wall.other_s`: SageMaker starting, downloading, uploading): once per run, and again per
restart.

If the failure denominator is ≤ 0 the plan never finishes: failures arrive faster than the
work between checkpoints can be kept. That is reported, never papered over.

References
----------
DESIGN.md, "The cost model" (time to target); the seed checklist (seeds/000) on warm-up,
compile, data loading and checkpoint time (若正式任務也需要這些流程，估算就應納入). The failure
term is the first-order model behind J. W. Young, "A first order approximation to the optimum
checkpoint interval", Commun. ACM 17(9):530–531, 1974 (and J. T. Daly, "A higher order
estimate of the optimum checkpoint interval for restart dumps", Future Generation Computer
Systems 22(3):303–312, 2006): failures a Poisson process, each losing a restart and on average
half a checkpoint interval of work.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from trncost.estimate.evidence import Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.measured import MaybeMeasured, Measured
from trncost.model.assumptions import Assumed, Assumptions
from trncost.model.estimate import TimeToTarget
from trncost.model.provenance import Derived, UserAssumption

Number = TypeVar("Number", bound=float)  # an assumed number: float, int or bool


@dataclass(frozen=True)
class TimeModel:
    """What `time_to_target` found.

    Attributes
    ----------
    time : TimeToTarget or None
        Every part of the time to target, each field in hours [h]; None when the plan cannot
        finish (then `infeasible_reason` says why).
    infeasible_reason : str or None
        Why the plan cannot finish; None when it can.
    held_row, total_row : str
        Input-table row ids of the instance-held time and of the expected time to target
        (the same row when the plan cannot finish).
    steady_rate : float
        Steady throughput at the candidate's instance count [target units/s].
    rate_row : str
        Its input-table row id (`throughput:n=<count>`).
    """

    time: TimeToTarget | None
    infeasible_reason: str | None
    held_row: str
    total_row: str
    steady_rate: float
    rate_row: str


def _assumed(
    ledger: Ledger,
    row_id: str,
    label: str,
    assumed: Assumed[Number] | None,
    unit: str | None,
    measured: Callable[[], MaybeMeasured] | None = None,
) -> MaybeMeasured | None:
    """A user assumption overrides a measurement; it is recorded as a user_assumption row.

    The measurement is read only when no assumption replaces it, so the input table and the
    warnings speak of what the estimate actually used.
    """
    if assumed is None:
        return measured() if measured is not None else None
    row = ledger.row(
        f"assumption:{row_id}",
        label,
        assumed.value,
        unit,
        UserAssumption(name=row_id, note=assumed.note),
    )
    return Measured(float(assumed.value), row)


def time_to_target(ev: Evidence, assumptions: Assumptions, ledger: Ledger) -> TimeModel:
    """Expected wall time to one completed training target on the candidate's n instances,
    and the time the instances are held. Each term is a row of the input table::

        steady      target / throughput(n)                                          [h]
        checkpoints floor(steady / interval) × save seconds                         [h]
        evaluation  steady × evaluation fraction                                    [h]
        T_base      setup + compile + warm-up + steady + checkpoints + evaluation   [h]
        T           T_base / (1 − λ·n·(t_restart + setup + interval/2))             [h]
        held        T / (1 − idle fraction)                                         [h]

    When the denominator is ≤ 0 the plan cannot finish: no time is returned, only the reason,
    and the row `time:total_h` reads T_base / (1 − λ·n·(t_restart + setup + interval/2)) ≤ 0.

    Parameters
    ----------
    ev : Evidence
        The candidate's pooled trials, read for the engine: the throughput at n (measured at
        n, a scaling fit over ≥ 3 counts, or the published scaling prior), and the measured
        compile, warm-up, setup, checkpoint, evaluation, failure and restart figures.
    assumptions : Assumptions
        What the user states in place of a measurement: `expect_compile_cache_hit`,
        `checkpoint_interval_s` [s], `failure_rate_per_instance_hour` [1/instance-hour],
        `restart_s` [s], `idle_fraction` [unitless], and `failure_prior` (a fleet's record
        that replaces the published failure prior).
    ledger : Ledger
        Receives every input row and warning.

    Returns
    -------
    TimeModel
        The time to target (`TimeToTarget`, every part in [h]) or, when the plan cannot
        finish, None and the reason; the steady throughput at n [target units/s].

    Notes
    -----
    - target: the workload's amount of work [target units]; throughput(n) [target units/s].
    - compile [s]: the mean measured compile of the trials whose clock includes it, those with
      the expected cache outcome first (`expect_compile_cache_hit`, default a miss); warm-up
      [s] and setup [s]: the mean measured. Not measured: 0, with a warning (none for setup:
      most clocks have no such part).
    - Warm-up: when a trial's warm-up work is not counted apart (`work.warmup`), its warm-up
      seconds are on the steady clock the throughput is read on, so the warm-up weighs twice:
      in the throughput and as the one-time term (the conservative side).
    - checkpoints: the interval [s] is assumed or measured (Σ steady-clock seconds / Σ saves);
      the save [s] measured (Σ save seconds / Σ saves). Saves are counted over the steady time
      only. Without a measured save, or without any interval, checkpoints cost 0, with a
      warning.
    - evaluation fraction [unitless]: Σ evaluation seconds / Σ steady-clock seconds.
    - failures: λ [1/instance-hour] is assumed or `Evidence.failure_rate` (the published
      failure prior updated with the trials: its mode); t_restart [s] assumed or measured
      (else the measured checkpoint restore, a lower bound; else 0, with a warning when
      failures are expected). Each
      failure costs t_restart + setup + half an interval; with no interval, half of T_base:
      a failure then loses on average half the run. From T = T_base + λ·n·T·(loss per
      failure): the expected failures in T, each costing its loss.
    - idle fraction [unitless]: stated (`idle_fraction`), else 0.
    - A time past `MAX_HELD_HOURS` is made infeasible by `engine.estimate`, not here.

    References
    ----------
    DESIGN.md, "The cost model" (time to target); seeds/000 (the trial phases, warm-up,
    compile, data loading and checkpoints in the time); Young (1974), Daly (2006): see the
    module docstring. trncost costs the interval it is given; it does not choose one (Young's
    optimum would be √(2 × save time × MTBF), with MTBF = 1 / (λ·n)).
    """
    w, c = ev.workload, ev.candidate
    n = c.instance_count
    unit = w.target.unit
    target_row = ledger.row(
        "workload:target",
        f"training target ({w.quality_gate.metric} "
        f"{w.quality_gate.direction} {w.quality_gate.threshold:g})",
        w.target.amount,
        unit,
        UserAssumption(name="workload target", note=w.dataset_id),
    )
    count_row = ledger.row(
        "candidate:instance_count",
        f"{c.instance_type} instances",
        n,
        "instances",
        UserAssumption(name="candidate instance count"),
    )

    rate = ev.throughput(n)
    assert rate.value is not None and rate.value > 0
    steady_s = w.target.amount / rate.value
    steady_row = ledger.derived(
        "time:steady_h",
        "steady time to target",
        steady_s / 3600,
        "h",
        "target / throughput(n)",
        [target_row, rate.row_id],
    )

    hit = _assumed(
        ledger,
        "expect_compile_cache_hit",
        "expect a compile cache hit",
        assumptions.expect_compile_cache_hit,
        None,
    )
    compile_ = ev.compile_s(bool(hit.value) if hit is not None else False)
    warmup = ev.warmup_s()

    # Checkpoints: the interval (assumed or as the trials ran) and the measured save time.
    interval = _assumed(
        ledger,
        "checkpoint_interval_s",
        "checkpoint interval",
        assumptions.checkpoint_interval_s,
        "s",
        ev.checkpoint_interval_s,
    )
    save = ev.checkpoint_save_s()
    checkpoint_s, ckpt_inputs = 0.0, [steady_row]
    if interval is not None and interval.value is not None:
        if save.value is not None:
            saves = math.floor(steady_s / interval.value)
            checkpoint_s = saves * save.value
            ckpt_inputs = [steady_row, interval.row_id, save.row_id]
        else:
            ledger.warn(
                "checkpoint_save_not_measured",
                "checkpoints are planned but no trial measured a save: their time is left out",
            )
    else:
        ledger.warn(
            "no_checkpoint_evidence",
            "no checkpoint interval measured or assumed: a failure loses the whole run "
            "so far, and checkpoint time is left out",
        )
    ckpt_row = ledger.derived(
        "time:checkpoint_h",
        "checkpoint saves",
        checkpoint_s / 3600,
        "h",
        "floor(steady / interval) × save seconds",
        ckpt_inputs,
    )

    evaluation = ev.evaluation_fraction()
    eval_s = steady_s * (evaluation.value or 0.0)
    eval_row = ledger.derived(
        "time:evaluation_h",
        "evaluation",
        eval_s / 3600,
        "h",
        "steady × evaluation fraction",
        [steady_row, evaluation.row_id],
    )

    other = ev.other_s()
    compile_s, warmup_s = compile_.value or 0.0, warmup.value or 0.0
    other_s = other.value or 0.0
    base_s = other_s + compile_s + warmup_s + steady_s + checkpoint_s + eval_s
    base_row = ledger.derived(
        "time:base_h",
        "time before failures",
        base_s / 3600,
        "h",
        "setup + compile + warm-up + steady + checkpoints + evaluation",
        [other.row_id, compile_.row_id, warmup.row_id, steady_row, ckpt_row, eval_row],
    )

    # Failures: λ per instance-hour, each costing a restart and half an interval of lost work.
    lam = _assumed(
        ledger,
        "failure_rate_per_instance_hour",
        "failures per instance-hour",
        assumptions.failure_rate_per_instance_hour,
        "1/instance-hour",
        lambda: ev.failure_rate(assumptions.failure_prior),
    )
    restart = _assumed(
        ledger, "restart_s", "seconds per restart", assumptions.restart_s, "s", ev.restart_s
    )
    assert lam is not None and lam.value is not None
    restart_value = restart.value if restart is not None and restart.value is not None else None
    if lam.value > 0 and restart_value is None:
        ledger.warn(
            "restart_not_measured",
            "failures are expected but no restart time was measured or assumed: each "
            "failure costs only its lost work here",
        )
    lost_interval_s = interval.value if interval is not None and interval.value else base_s
    loss_per_failure_h = ((restart_value or 0.0) + other_s + lost_interval_s / 2) / 3600
    denominator = 1 - lam.value * n * loss_per_failure_h
    failure_inputs = [
        base_row,
        lam.row_id,
        count_row,
        *(r.row_id for r in (restart, interval) if r is not None),
        *([other.row_id] if other.value else []),
    ]
    if denominator <= 0:
        reason = (
            f"the plan cannot finish: {lam.value:g} failures per instance-hour × {n} instances × "
            f"{loss_per_failure_h:.3f} h lost per failure (restart, setup and half a checkpoint "
            f"interval) = {1 - denominator:.3f} ≥ 1 "
            "(failures arrive faster than checkpointed work is kept); checkpoint more often, "
            "restart faster or use fewer instances"
        )
        total_row = ledger.row(
            "time:total_h",
            "expected time to target",
            None,
            "h",
            Derived(
                formula="T_base / (1 − λ·n·(t_restart + setup + interval/2)) ≤ 0",
                inputs=failure_inputs,
            ),
        )
        return TimeModel(None, reason, total_row, total_row, rate.value, rate.row_id)
    total_s = base_s / denominator
    total_row = ledger.derived(
        "time:total_h",
        "expected time to target",
        total_s / 3600,
        "h",
        "T_base / (1 − λ·n·(t_restart + setup + interval/2))",
        failure_inputs,
    )

    idle = _assumed(
        ledger, "idle_fraction", "idle / queue share of held time", assumptions.idle_fraction, None
    )
    idle_value = idle.value if idle is not None and idle.value is not None else 0.0
    held_s = total_s / (1 - idle_value)
    held_row = ledger.derived(
        "time:held_h",
        "instance-held time",
        held_s / 3600,
        "h",
        "T / (1 − idle fraction)",
        [total_row, *([idle.row_id] if idle else [])],
    )
    time = TimeToTarget(
        setup_h=other_s / 3600,
        steady_h=steady_s / 3600,
        compile_h=compile_s / 3600,
        warmup_h=warmup_s / 3600,
        checkpoint_h=checkpoint_s / 3600,
        evaluation_h=eval_s / 3600,
        base_h=base_s / 3600,
        failure_overhead_h=(total_s - base_s) / 3600,
        total_h=total_s / 3600,
        held_h=held_s / 3600,
    )
    return TimeModel(time, None, held_row, total_row, rate.value, rate.row_id)
