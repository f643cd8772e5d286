"""Which trials count (DESIGN.md principle 8): every trial of the candidate's instance type and
platform is `pooled` into the estimate's figures or `excluded` with its reasons.

Excluded, whatever the request says:
- `retracted`              the record was retracted (by hand, or superseded by a corrected one):
                           it stays stored but counts for nothing, not even as cost (a corrected
                           record carries the cost of the run it describes);
- `not_completed`          a status other than completed (failed, diverged, stopped);
- `non_finite_loss`        the loss went non-finite (a completed record saying so is diverged);
- `no_work`                no work done at all;
- `unconvertible_unit`     work counted in a unit the workload cannot convert to its target's
                           (tokens per sample, samples per step);
- `impossible_throughput`  MFU above 1 against the chip's peak at the trial's precision (at the
                           highest peak on record when the trial does not state its precision),
                           or steady time 0 with work done;
- `inconsistent_samples`   the steady throughput samples disagree with work ÷ steady time by more
                           than INCONSISTENCY_LIMIT×: one of the two is wrong.

Excluded by default, pooled when the request sets `assumptions.pool_mismatched_trials` (the
estimate then says so in its warnings):
- `other_dataset`, `other_code_version`: not the workload's dataset or code version;
- `other_timing_scope`:    a clock that includes other parts than the workload's timing scope
                           (or, when the workload states none, than the clock most of this
                           candidate's admissible trials ran on; ties: the fuller clock).

An excluded trial still counts as cost (its instance-seconds are an adaptation & reruns line):
it ran and was billed; a retracted one does not (the record itself is what was wrong).
Admission depends only on the workload, the request's flag and this candidate's own trials:
another candidate's trials never change it.

References
----------
DESIGN.md, principles 2, 5 and 8; seeds/000 (每次試跑記錄...程式碼版本、執行環境和資料集識別資訊;
兩邊需使用相同的訓練目標、資料、品質門檻和計時範圍).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from trncost.estimate.mfu import IMPOSSIBLE_MFU, impossible_mfu
from trncost.model.candidate import Candidate
from trncost.model.estimate import AdmissionReason, TrialAdmission
from trncost.model.trial import Phase, TrialRun, TrialStatus
from trncost.model.workload import TimingScope, Workload

INCONSISTENCY_LIMIT = 2.0  # samples vs work ÷ steady time, either way


@dataclass(frozen=True)
class Admission:
    """The candidate's own trials, split: `pooled` feed the figures, every one counts as cost."""

    own: list[TrialRun]
    pooled: list[TrialRun]
    records: list[TrialAdmission]
    scope: TimingScope | None  # the clock trials are held to (None: no admissible trial)
    mismatches_pooled: list[TrialAdmission]  # pooled only because the request opted in

    @property
    def excluded(self) -> list[TrialAdmission]:
        """The records of the excluded trials, in trial order."""
        return [r for r in self.records if r.admission == "excluded"]

    def summary(self, detail: bool = False, retracted: bool = True) -> str:
        """The excluded trials and their reason codes, in one line (the retracted ones too
        unless `retracted` is False; with `detail`, each reason's message).

        Returns
        -------
        str
            `t-1 (no_work), t-2 (not_completed)` (with `detail`, each reason's message too);
            empty when nothing is excluded.
        """
        return ", ".join(
            f"{r.trial_id} ("
            + "; ".join(f"{x.code}: {x.message}" if detail else x.code for x in r.reasons)
            + ")"
            for r in self.excluded
            if retracted or r.reasons[0].code != "retracted"
        )


def own_trials(
    candidate: Candidate, trials: Sequence[TrialRun], *, retracted: bool = False
) -> list[TrialRun]:
    """The `trials` of `candidate`'s instance type and platform (any count, any status), the
    retracted ones left out unless `retracted`.

    Returns
    -------
    list[TrialRun]
        In the order given.
    """
    return [
        t
        for t in trials
        if t.candidate.instance_type == candidate.instance_type
        and t.candidate.platform == candidate.platform
        and (retracted or t.retracted is None)
    ]


def retraction_record(t: TrialRun) -> TrialAdmission:
    """The admission record of the retracted trial `t`: excluded, `retracted`, with who,
    when and why.

    Returns
    -------
    TrialAdmission
        Excluded, with the one reason `retracted`.
    """
    r = t.retracted
    assert r is not None
    by = f" by {r.by}" if r.by else ""
    instead = f"; corrected by {r.superseded_by}" if r.superseded_by else ""
    return TrialAdmission(
        trial_id=t.trial_id,
        phase=str(t.phase),
        status=str(t.status),
        instance_count=t.candidate.instance_count,
        admission="excluded",
        reasons=[_r("retracted", f"retracted{by} at {r.at}: {r.reason}{instead}")],
    )


def admit(
    workload: Workload,
    candidate: Candidate,
    trials: Sequence[TrialRun],
    *,
    pool_mismatched: bool = False,
) -> Admission:
    """Pool or exclude each of `candidate`'s trials, with the reasons.

    A trial is excluded for any intrinsic reason (`intrinsic_reasons`), and, unless
    `pool_mismatched`, for a mismatch with the `workload` (`mismatch_reasons`) against the
    workload's timing scope, else the clock most of the candidate's admissible trials ran on.

    Parameters
    ----------
    trials : Sequence[TrialRun]
        Every trial of the request (the candidate's own are picked out: `own_trials`).
    pool_mismatched : bool
        `assumptions.pool_mismatched_trials`: pool the trials of another dataset, code version
        or clock (they are then listed in `mismatches_pooled`).

    Returns
    -------
    Admission
        The candidate's own trials, the pooled ones, one record per own trial (pooled or
        excluded, with its reasons), the clock held to and the mismatches pooled on request.

    References
    ----------
    DESIGN.md, principle 8 (only admissible trials count; excluded trials still count as
    cost) and principle 2 (one clock); seeds/000 (有效吞吐要按照實際訓練目標定義).
    """
    own = own_trials(candidate, trials)
    intrinsic = {t.trial_id: intrinsic_reasons(workload, t) for t in own}
    scope = workload.timing_scope or _majority_scope(
        [t for t in own if not intrinsic[t.trial_id]], workload
    )
    pooled: list[TrialRun] = []
    records: list[TrialAdmission] = []
    let_in: list[TrialAdmission] = []
    for t in own:
        mismatch = mismatch_reasons(workload, t, scope)
        excluded = intrinsic[t.trial_id] + ([] if pool_mismatched else mismatch)
        record = TrialAdmission(
            trial_id=t.trial_id,
            phase=str(t.phase),
            status=str(t.status),
            instance_count=t.candidate.instance_count,
            admission="excluded" if excluded else "pooled",
            reasons=excluded or mismatch,
        )
        records.append(record)
        if not excluded:
            pooled.append(t)
            if mismatch:
                let_in.append(record)
    records += [
        retraction_record(t)
        for t in own_trials(candidate, trials, retracted=True)
        if t.retracted is not None
    ]
    return Admission(own, pooled, records, scope, let_in)


def intrinsic_reasons(workload: Workload, t: TrialRun) -> list[AdmissionReason]:
    """What makes trial `t` unusable whatever the request says, for `workload`: not completed,
    a non-finite loss, no work, an unconvertible unit, impossible throughput (MFU > 1, or
    work in 0 steady seconds) or inconsistent samples (mean sample ÷ (work ÷ steady clock)
    outside [1/2, 2]).

    Returns
    -------
    list[AdmissionReason]
        Empty when the trial may be pooled.
    """
    out: list[AdmissionReason] = []
    if t.status != TrialStatus.completed:
        out.append(_r("not_completed", f"status {t.status}: a run that did not complete"))
    if t.quality is not None and t.quality.loss_finite is False:
        out.append(_r("non_finite_loss", "the loss went non-finite"))
    if t.work.done <= 0:
        out.append(_r("no_work", f"no work done ({t.work.done:g} {t.work.unit})"))
        return out
    if workload.units_per(t.work.unit) is None:
        need = "workload.tokens_per_sample" + (
            " and workload.samples_per_step"
            if "steps" in (t.work.unit, workload.target.unit)
            else ""
        )
        out.append(
            _r(
                "unconvertible_unit",
                f"work counted in {t.work.unit}, the target in {workload.target.unit}: "
                f"set {need} to convert it",
            )
        )
    out += _physical_reasons(workload, t)
    return out


def _physical_reasons(workload: Workload, t: TrialRun) -> list[AdmissionReason]:
    out: list[AdmissionReason] = []
    clock = t.steady_clock_s
    if clock <= 0 and t.phase != Phase.fit:
        out.append(
            _r(
                "impossible_throughput",
                f"{t.work.done:g} {t.work.unit} done in 0 steady seconds",
            )
        )
        return out
    finding = impossible_mfu(workload, t)
    if finding is not None:
        out.append(
            _r(
                "impossible_throughput",
                f"MFU {finding.mfu:.3g} > {IMPOSSIBLE_MFU:g}: {finding.note}",
            )
        )
    samples = t.steady_throughput_samples
    if samples and clock > 0:
        mean = sum(samples) / len(samples)
        rate = (t.work.done - (t.work.warmup or 0.0)) / clock  # the samples' window
        ratio = mean / rate if rate > 0 else float("inf")
        if ratio > INCONSISTENCY_LIMIT or ratio < 1 / INCONSISTENCY_LIMIT:
            out.append(
                _r(
                    "inconsistent_samples",
                    f"steady samples average {mean:,.4g} {t.work.unit}/s but work ÷ steady "
                    f"time is {rate:,.4g} {t.work.unit}/s ({ratio:.3g}×, beyond "
                    f"{INCONSISTENCY_LIMIT:g}×): the work or the clock is wrong",
                )
            )
    return out


def mismatch_reasons(
    workload: Workload, t: TrialRun, scope: TimingScope | None
) -> list[AdmissionReason]:
    """Whether trial `t` ran another dataset, code version or clock than the `workload`'s
    (the clock compared with `scope`: the workload's, or the majority clock; None: none).

    Returns
    -------
    list[AdmissionReason]
        `other_dataset`, `other_code_version`, `other_timing_scope`; empty when it matches.
    """
    out: list[AdmissionReason] = []
    if t.dataset_id != workload.dataset_id:
        out.append(
            _r("other_dataset", f"dataset {t.dataset_id}, not the workload's {workload.dataset_id}")
        )
    if t.code_version != workload.code_version:
        out.append(
            _r(
                "other_code_version",
                f"code {t.code_version}, not the workload's {workload.code_version}",
            )
        )
    if scope is not None and t.timing_scope != scope:
        whose = "the workload's" if workload.timing_scope is not None else "most trials'"
        diffs = ", ".join(t.timing_scope.differences(scope))
        out.append(_r("other_timing_scope", f"its clock differs from {whose} in: {diffs}"))
    return out


def _majority_scope(trials: Sequence[TrialRun], workload: Workload) -> TimingScope | None:
    """The clock most admissible trials ran on: baseline/target runs of the workload's code and
    dataset first; ties go to the fuller clock (principle 2: end to end), then field order."""
    same = [
        t
        for t in trials
        if t.code_version == workload.code_version and t.dataset_id == workload.dataset_id
    ]
    pool = [t for t in same if t.phase != Phase.fit] or same or list(trials)
    if not pool:
        return None
    counts = Counter(t.timing_scope for t in pool)

    def key(s: TimingScope) -> tuple[int, int, tuple[bool, ...]]:
        flags = tuple(bool(v) for v in s.model_dump().values())
        return counts[s], sum(flags), flags

    return max(counts, key=key)


def _r(code: str, message: str) -> AdmissionReason:
    return AdmissionReason(code=code, message=message)
