"""The gates between trial phases. Pure: trial records in, a verdict with reasons out.

- **fit** (each check the plan asks for, on the candidate's fit run(s)):
  `ran` the run completed; `compiled` compile time was measured or steps ran (work > 0);
  `loss_finite` the run did not diverge and no quality result says the loss went non-finite
  (when no result checked the loss, only the run status speaks for it: said in the reasons);
  `checkpoint_saved` at least one save; `checkpoint_restored` a restore was verified;
  `no_unsupported_ops` the record lists no unsupported operator.
- **baseline**: at least `repeats` completed runs usable for throughput, and the coefficient of
  variation (sample standard deviation / mean) of their effective throughput (quality-meeting
  work / (steady + data-wait seconds), the engine's definition) below `cv_limit`.
- **target**: at every planned instance count, a completed run whose quality result meets the
  quality gate, whose loss stayed finite, and whose checkpoint restore was verified.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from trncost.model.plan import FitCheck, GateResult
from trncost.model.trial import Phase, TrialRun, TrialStatus
from trncost.model.workload import QualityGate


def _fit_checks(t: TrialRun, checks: Sequence[FitCheck]) -> tuple[list[str], list[str]]:
    fails: list[str] = []
    notes: list[str] = []
    tid = t.trial_id
    for check in checks:
        if check == FitCheck.ran and t.status != TrialStatus.completed:
            fails.append(f"{tid}: ran: the run ended {t.status}, not completed")
        elif check == FitCheck.compiled:
            if t.wall.compile_s is None and t.wall.compile_cache_hit is None and t.work.done <= 0:
                fails.append(f"{tid}: compiled: no compile measured and no step ran")
        elif check == FitCheck.loss_finite:
            if t.status == TrialStatus.diverged:
                fails.append(f"{tid}: loss_finite: the loss went non-finite (diverged)")
            elif t.quality is not None and t.quality.loss_finite is False:
                fails.append(f"{tid}: loss_finite: the quality result says the loss was not finite")
            elif t.quality is None or t.quality.loss_finite is None:
                notes.append(
                    f"{tid}: loss_finite: no result checked the loss; the run did not diverge"
                )
        elif check == FitCheck.checkpoint_saved and t.checkpointing.saves < 1:
            fails.append(f"{tid}: checkpoint_saved: no checkpoint save recorded")
        elif check == FitCheck.checkpoint_restored and t.checkpointing.restore_verified is not True:
            what = "failed" if t.checkpointing.restore_verified is False else "not verified"
            fails.append(f"{tid}: checkpoint_restored: checkpoint restore {what}")
        elif check == FitCheck.no_unsupported_ops and t.reliability.unsupported_ops:
            ops = ", ".join(t.reliability.unsupported_ops[:10])
            fails.append(f"{tid}: no_unsupported_ops: unsupported operators {ops}")
    return fails, notes


def fit_gate(trials: Sequence[TrialRun], checks: Sequence[FitCheck]) -> GateResult:
    ids = [t.trial_id for t in trials]
    if not trials:
        return GateResult(phase=Phase.fit, passed=False, reasons=["no fit run was recorded"])
    fails: list[str] = []
    notes: list[str] = []
    for t in trials:
        f, n = _fit_checks(t, checks)
        fails += f
        notes += n
    return GateResult(phase=Phase.fit, passed=not fails, reasons=fails + notes, trial_ids=ids)


def effective_throughput(t: TrialRun) -> float | None:
    """Quality-meeting work per second of steady + data-wait time (None: not usable)."""
    if not t.usable_for_throughput:
        return None
    seconds = t.wall.steady_s + (t.wall.data_wait_s or 0.0)
    return t.work.quality_meeting / seconds if seconds > 0 else None


def coefficient_of_variation(values: Sequence[float]) -> float:
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean > 0 else math.inf


def baseline_gate(trials: Sequence[TrialRun], repeats: int, cv_limit: float) -> GateResult:
    reasons: list[str] = []
    rates: list[float] = []
    for t in trials:
        rate = effective_throughput(t)
        if rate is None:
            reasons.append(
                f"{t.trial_id}: not usable for throughput (status {t.status}, "
                f"quality-meeting work {t.work.quality_meeting:g}, steady {t.wall.steady_s:g} s)"
            )
        else:
            rates.append(rate)
    ids = [t.trial_id for t in trials]
    if len(rates) < max(repeats, 3):
        reasons.insert(
            0, f"{len(rates)} usable baseline run(s) of the {max(repeats, 3)} needed for a variance"
        )
        return GateResult(phase=Phase.baseline, passed=False, reasons=reasons, trial_ids=ids)
    cv = coefficient_of_variation(rates)
    measures = {"throughput_cv": cv, "throughput_mean": statistics.fmean(rates), "runs": len(rates)}
    if not cv < cv_limit:
        reasons.insert(
            0, f"throughput CV {cv:.4f} over {len(rates)} runs is not below the limit {cv_limit:g}"
        )
        return GateResult(
            phase=Phase.baseline, passed=False, reasons=reasons, trial_ids=ids, measures=measures
        )
    reasons.insert(0, f"throughput CV {cv:.4f} over {len(rates)} runs < {cv_limit:g}")
    return GateResult(
        phase=Phase.baseline, passed=True, reasons=reasons, trial_ids=ids, measures=measures
    )


def target_gate(
    trials: Sequence[TrialRun], gate: QualityGate, instance_counts: Sequence[int]
) -> GateResult:
    reasons: list[str] = []
    measures: dict[str, float] = {}
    passed = True
    by_count: dict[int, list[TrialRun]] = {}
    for t in trials:
        by_count.setdefault(t.candidate.instance_count, []).append(t)
    for count in instance_counts:
        runs = by_count.get(count, [])
        if not runs:
            passed = False
            reasons.append(f"{count} instance(s): no target run recorded")
            continue
        ok_run = None
        for t in runs:
            why: list[str] = []
            if t.status != TrialStatus.completed:
                why.append(f"ended {t.status}")
            if t.quality is None or t.quality.metric != gate.metric:
                why.append(f"no {gate.metric} result")
            else:
                measures[f"{gate.metric}@{count}"] = t.quality.value
                if not gate.passes(t.quality.value):
                    why.append(
                        f"{gate.metric} {t.quality.value:g} does not meet "
                        f"{gate.direction} {gate.threshold:g}"
                    )
                if t.quality.loss_finite is False:
                    why.append("the loss was not finite")
            if t.checkpointing.restore_verified is not True:
                why.append("checkpoint restore not verified")
            if not why:
                ok_run = t
                break
            reasons.append(f"{count} instance(s), {t.trial_id}: " + "; ".join(why))
        if ok_run is None:
            passed = False
    return GateResult(
        phase=Phase.target,
        passed=passed,
        reasons=reasons,
        trial_ids=[t.trial_id for t in trials],
        measures=measures,
    )
