"""The decision: continue trials, compare alternatives, pause the migration, or budget.

Rules (DESIGN.md principle 7 and the seed checklist's 繼續試跑 / 轉用其他實例比較 / 暫緩遷移);
every triggered reason is reported with its code, the action is the strongest one (pause >
compare > continue > ready):
- pause_migration: the fit is not passed (no completed run with a finite loss) or the current
  code hits unsupported ops: adapt (and cost the adaptation) or pause; or the estimate depends
  on unverified software changes, utilization or prices AND there is no reproducible trial
  data (≥ 2 completed baseline or target runs of the workload's code and dataset).
- compare_alternatives: the cost per target is not better than a comparable alternative (a
  cheaper comparable candidate, or a known part that alone already reaches the best comparable
  total: no price of what is PENDING makes it cheaper, and more trials can only add cost; or,
  once the evidence is otherwise verified, a PENDING price that cannot show it better: the
  break-even price says where it would), or key features are limited on this platform.
- continue_trials: the model runs, but representative load (a target-phase trial at the
  planned scale), quality, or restore/rerun behaviour is not verified, a measurement looks
  implausible or was excluded, the plan cannot finish as planned (checkpoint more often, or
  fewer instances), a price is not official, or the throughput is projected from another
  chip's trials (`projected`: DESIGN.md principle 11; its fit trial is the next trial).
- ready_to_budget: only when every condition of rule 1 holds (`RULE_ONE`), each missing one a
  reason: the estimate is complete and feasible; every priced line is `official`; a
  target-phase trial ran at the planned count, or the count lies inside the measured range of
  a scaling fit; the quality gate was reached; a checkpoint restore was verified; failures
  were observed (or a fleet failure record bounds the rate); the planned count is within the
  measured counts (any count beyond the largest is extrapolation).
"""

from __future__ import annotations

from collections.abc import Sequence

from trncost.estimate.admission import admit
from trncost.estimate.decide_cost import Standing, cost_reasons
from trncost.estimate.evidence import MIN_FIT_COUNTS
from trncost.model.analysis import Action, Decision, Reason
from trncost.model.basis import PriceBasis
from trncost.model.estimate import Estimate, EstimateInput
from trncost.model.trial import Phase, TrialRun, TrialStatus

PRECEDENCE = [
    Action.pause_migration,
    Action.compare_alternatives,
    Action.continue_trials,
    Action.ready_to_budget,
]

# estimate warning code → (reason code, action, what it means for the decision)
WARNING_RULES: dict[str, tuple[str, Action, str]] = {
    "no_target_phase_trial": (
        "representative_load_unverified",
        Action.continue_trials,
        "no target-phase trial: run one at near-production data size, parallelism and "
        "checkpointing",
    ),
    "quality_gate_not_verified": (
        "quality_unverified",
        Action.continue_trials,
        "no target-phase trial reached the quality gate: the cost is of work, not of a result",
    ),
    "restore_never_verified": (
        "restore_unverified",
        Action.continue_trials,
        "no trial verified a checkpoint restore: recovery from failures is assumed",
    ),
    "extrapolated_scale": (
        "scale_extrapolated",
        Action.continue_trials,
        "the planned instance count is beyond the largest measured one: run a trial at it",
    ),
    "mismatched_trials_pooled": (
        "evidence_from_other_versions",
        Action.continue_trials,
        "the figures pool trials of another dataset, code version or clock (the request's "
        "pool_mismatched_trials): repeat them on the workload's own",
    ),
    "implausible_mfu": (
        "implausible_measurement",
        Action.continue_trials,
        "a trial's throughput is above a plausible MFU: re-measure before budgeting on it",
    ),
    "data_loading_outside_clock": (
        "steady_state_only",
        Action.continue_trials,
        "the trials' clocks exclude data loading: the result holds for steady state only",
    ),
}


# The conditions of rule 1 (ready_to_budget), each with the reason code that says it is missing.
RULE_ONE: dict[str, str] = {
    "complete and feasible": "plan_cannot_finish | price_pending | unverified_prices | "
    "no_usable_trial",
    "every priced line official": "prices_not_official",
    "a target trial at the planned count, or inside a fitted range": "representative_load_"
    "unverified | target_not_at_planned_scale",
    "quality gate reached": "quality_unverified",
    "checkpoint restore verified": "restore_unverified",
    "failures observed or bounded": "rerun_unverified",
    "planned count within the measured counts": "scale_extrapolated | scale_outside_measured",
    "throughput measured on the candidate, not projected": "projected",
}

# admission reasons that say a trial's own record is wrong (a re-measurement is due)
MEASUREMENT_ERRORS = frozenset(
    {"impossible_throughput", "inconsistent_samples", "unconvertible_unit"}
)


def own_trials(inp: EstimateInput) -> list[TrialRun]:
    """The trials of `inp`'s instance type and platform, pooled or not (retracted ones left
    out: they count for nothing).

    Returns
    -------
    list[TrialRun]
    """
    c = inp.candidate
    return [
        t
        for t in inp.trials
        if t.candidate.instance_type == c.instance_type
        and t.candidate.platform == c.platform
        and t.retracted is None
    ]


def fit_passed(trials: Sequence[TrialRun]) -> bool:
    """Whether the fit is passed: some of `trials` completed with a loss that stayed finite
    (or was not reported as not finite).

    Returns
    -------
    bool
    """
    return any(
        t.status == TrialStatus.completed
        and (t.quality is None or t.quality.loss_finite is not False)
        for t in trials
    )


def pooled_trials(inp: EstimateInput) -> list[TrialRun]:
    """The trials of `inp`'s candidate the estimate pools (estimate/admission.py).

    Returns
    -------
    list[TrialRun]
    """
    return admit(
        inp.workload,
        inp.candidate,
        inp.trials,
        pool_mismatched=inp.assumptions.pool_mismatched_trials,
    ).pooled


def reproducible(inp: EstimateInput, trials: Sequence[TrialRun]) -> list[TrialRun]:
    """The reproducible data among `trials`: pooled, completed baseline/target runs with work,
    of `inp`'s workload's own code and dataset (≥ 2 needed).

    Returns
    -------
    list[TrialRun]
    """
    w = inp.workload
    pooled = {t.trial_id for t in pooled_trials(inp)}
    return [
        t
        for t in trials
        if t.trial_id in pooled
        and t.usable_for_throughput
        and t.code_version == w.code_version
        and t.dataset_id == w.dataset_id
    ]


def decide(
    inp: EstimateInput,
    est: Estimate | None,
    *,
    alternatives: Sequence[tuple[EstimateInput, Estimate]] = (),
    limited_features: Sequence[str] = (),
    error: str | None = None,
    candidate_id: str | None = None,
    standing: Standing | None = None,
) -> Decision:
    """The action for `inp`'s candidate and every reason that triggered it (module docstring).

    `est` is None when the estimate could not be made (`error` says why). `alternatives` are
    the other candidates; only comparable ones count. `limited_features` are key features the
    team found limited on this platform (e.g. "FP8 training"); `candidate_id` names it;
    `standing` is its place in the paired ranking (estimate/paired.py), when the comparison has
    ranges: "costlier" then means cheaper alternatives in at least CLOSE_CALL of the draws, and a
    close call is said as one.

    Returns
    -------
    Decision
        The strongest action, every reason (code, action, evidence) and a one-line summary.

    References
    ----------
    DESIGN.md, principle 7; seeds/000 (繼續試跑 / 轉用其他實例比較 / 暫緩遷移).
    """
    trials = own_trials(inp)
    repro = reproducible(inp, trials)
    warnings = {x.code for x in est.warnings} if est is not None else set()
    reasons = [
        *_fit_reasons(inp, trials),
        *_unverified_reasons(inp, est, trials, repro, warnings),
        *_evidence_gaps(inp, est, trials, warnings, error),
        *_plan_and_price_reasons(est),
        *_scale_reasons(inp, est),
        *_projection_reasons(est),
    ]
    gaps = any(r.action == Action.continue_trials for r in reasons)
    reasons += cost_reasons(
        inp, est, alternatives, standing, reproducible=len(repro) >= 2, gaps=gaps
    )
    reasons += _limited(inp, limited_features)
    return _decision(candidate_id or inp.candidate.label, reasons)


def _reason(code: str, action: Action, message: str, evidence: Sequence[str] = ()) -> Reason:
    return Reason(code=code, action=action, message=message, evidence=list(evidence))


def _fit_reasons(inp: EstimateInput, trials: Sequence[TrialRun]) -> list[Reason]:
    """No trial yet, no run that completed with a finite loss, or unsupported ops."""
    w = inp.workload
    reasons: list[Reason] = []
    if not trials:
        reasons.append(
            _reason(
                "no_trials",
                Action.continue_trials,
                f"no trial of {inp.candidate.instance_type}: start with a fit trial",
            )
        )
    elif not fit_passed(trials):
        reasons.append(
            _reason(
                "fit_not_passed",
                Action.pause_migration,
                "no run completed with a finite loss: adapt the code (and cost the adaptation) "
                "or pause the migration",
                [f"{t.trial_id} ({t.phase}, {t.status})" for t in trials],
            )
        )
    ops = sorted(
        {
            op
            for t in trials
            if t.code_version == w.code_version
            for op in t.reliability.unsupported_ops
        }
    )
    if ops:
        reasons.append(
            _reason(
                "unsupported_ops",
                Action.pause_migration,
                f"the workload's code ({w.code_version}) hits unsupported ops ({', '.join(ops)}): "
                "adapt them (and cost the work) or pause the migration",
                [t.trial_id for t in trials if t.reliability.unsupported_ops],
            )
        )
    return reasons


def _unverified_reasons(
    inp: EstimateInput,
    est: Estimate | None,
    trials: Sequence[TrialRun],
    repro: Sequence[TrialRun],
    warnings: set[str],
) -> list[Reason]:
    """Dependencies not verified in a trial (software changes, utilization, prices) while
    there is no reproducible trial data (fewer than 2 runs of the workload's code and data)."""
    if not trials or len(repro) >= 2:
        return []
    w = inp.workload
    why = (
        f"and no reproducible trial data ({len(repro)} completed baseline/target run(s) of "
        f"code {w.code_version} on dataset {w.dataset_id}; ≥ 2 needed)"
    )
    reasons: list[Reason] = []
    eng = inp.assumptions.engineering_hours
    changes = [t.trial_id for t in trials if t.reliability.unsupported_ops]
    if (eng is not None and eng.value > 0) or changes or "code_version_mismatch" in warnings:
        reasons.append(
            _reason(
                "unverified_software_changes",
                Action.pause_migration,
                f"the estimate depends on software changes not yet verified in a trial {why}",
                changes or ["assumption:engineering_hours"],
            )
        )
    measured_util = [
        t.trial_id
        for t in trials
        if t.utilization.neuroncore is not None or t.utilization.gpu is not None
    ]
    if not measured_util:
        reasons.append(
            _reason(
                "unverified_utilization",
                Action.pause_migration,
                f"no trial measured accelerator utilization {why}",
                [t.trial_id for t in trials],
            )
        )
    pending = est is not None and est.incomplete
    if pending or "example_prices" in warnings:
        reasons.append(
            _reason(
                "unverified_prices",
                Action.pause_migration,
                f"a price is PENDING or not official {why}",
                [t.price_key for t in est.pending_terms] if est is not None else [],
            )
        )
    return reasons


def _evidence_gaps(
    inp: EstimateInput,
    est: Estimate | None,
    trials: Sequence[TrialRun],
    warnings: set[str],
    error: str | None,
) -> list[Reason]:
    """What the trials have not shown yet: each gap says which trial to run next."""
    reasons: list[Reason] = _excluded_measurements(inp, trials)
    if est is None and trials and fit_passed(trials):
        reasons.append(
            _reason(
                "no_usable_trial", Action.continue_trials, error or "no usable throughput trial"
            )
        )
    for code in sorted(warnings):
        if code in WARNING_RULES:
            rcode, action, message = WARNING_RULES[code]
            reasons.append(_reason(rcode, action, message, [code]))
    if (
        est is not None
        and "unmeasured_instance_count" in warnings
        and any(
            r.id == "scaling:exponent" and r.provenance.kind == "published_reference"
            for r in est.inputs
        )
    ):
        reasons.append(
            _reason(
                "scale_from_prior",
                Action.continue_trials,
                "throughput at the planned count comes from the published scaling prior (fewer "
                "than 3 measured counts): measure that count, or ≥ 3 counts for a scaling fit",
                ["scaling:exponent"],
            )
        )
    pooled = pooled_trials(inp)
    if (
        trials
        and inp.assumptions.failure_prior is None
        and not any(
            ((t.reliability.failures or 0) > 0 and t.wall.restart_s is not None)
            or t.reliability.reruns > 0
            for t in pooled
        )
    ):
        reasons.append(
            _reason(
                "rerun_unverified",
                Action.continue_trials,
                "no trial went through a failure and restart (or a rerun), and no fleet failure "
                "record bounds the rate: rerun behaviour and its time are not verified; inject "
                "a failure in a target trial",
            )
        )
    return reasons


def _excluded_measurements(inp: EstimateInput, trials: Sequence[TrialRun]) -> list[Reason]:
    """Trials excluded because their own record is wrong: re-measure them."""
    if not trials:
        return []
    adm = admit(
        inp.workload,
        inp.candidate,
        inp.trials,
        pool_mismatched=inp.assumptions.pool_mismatched_trials,
    )
    wrong = [
        f"{r.trial_id}: {x.code}"
        for r in adm.excluded
        for x in r.reasons
        if x.code in MEASUREMENT_ERRORS
    ]
    if not wrong:
        return []
    return [
        _reason(
            "measurement_excluded",
            Action.continue_trials,
            "a trial's record is physically impossible or inconsistent and was excluded "
            "(" + "; ".join(wrong) + "): re-measure it, or fix its work unit",
            wrong,
        )
    ]


def _plan_and_price_reasons(est: Estimate | None) -> list[Reason]:
    """The plan cannot finish as planned; a priced line is not official."""
    if est is None:
        return []
    reasons: list[Reason] = []
    if est.status == "infeasible":
        reasons.append(
            _reason(
                "plan_cannot_finish",
                Action.continue_trials,
                "the plan cannot finish as planned: "
                + (est.infeasible_reason or "failures outpace the work")
                + " — checkpoint more often, restart faster or use fewer instances, then "
                "estimate again",
                ["time:total_h"],
            )
        )
    weaker = [
        li
        for li in est.line_items
        if li.priced and li.price_basis is not None and li.price_basis != PriceBasis.official
    ]
    if weaker:
        bases = sorted({str(li.price_basis) for li in weaker})
        reasons.append(
            _reason(
                "prices_not_official",
                Action.continue_trials,
                f"priced lines rest on {', '.join(bases)} prices, not official ones: take an "
                "official Price List snapshot (POST /prices/snapshots) before budgeting",
                sorted({str(li.price_key) for li in weaker}),
            )
        )
    return reasons


def _scale_reasons(inp: EstimateInput, est: Estimate | None) -> list[Reason]:
    """Rule 1's scale conditions: a target trial at the planned count (or the count inside a
    scaling fit's measured range), and the count within the measured counts."""
    if est is None:
        return []
    n = inp.candidate.instance_count
    usable = [t for t in pooled_trials(inp) if t.usable_for_throughput]
    counts = sorted({t.candidate.instance_count for t in usable})
    targets = sorted({t.candidate.instance_count for t in usable if t.phase == Phase.target})
    reasons: list[Reason] = []
    fitted = len(counts) >= MIN_FIT_COUNTS and counts[0] <= n <= counts[-1]
    if targets and n not in targets and not fitted:
        reasons.append(
            _reason(
                "target_not_at_planned_scale",
                Action.continue_trials,
                f"no target-phase trial at the planned {n} instances (target trials at "
                f"{', '.join(map(str, targets))}) and {n} is not inside a scaling fit's "
                f"measured range (≥ {MIN_FIT_COUNTS} counts): run the target trial at {n}",
                [f"candidate:instance_count={n}"],
            )
        )
    if counts and n < counts[0]:
        reasons.append(
            _reason(
                "scale_outside_measured",
                Action.continue_trials,
                f"the planned {n} instances is below the smallest measured count ({counts[0]}): "
                "the throughput there is not measured",
                [f"candidate:instance_count={n}"],
            )
        )
    return reasons


def _projection_reasons(est: Estimate | None) -> list[Reason]:
    """A projected estimate (estimate/projection.py): a planning range, never a budget."""
    if est is None or not est.projected:
        return []
    rows = {r.id: r for r in est.inputs}
    ratio = rows.get("projection:ratio")
    what = (
        f" of {float(ratio.value or 0):.3g}× ({ratio.label})"
        if ratio is not None and isinstance(ratio.value, int | float)
        else ""
    )
    it = est.candidate.instance_type
    return [
        _reason(
            "projected",
            Action.continue_trials,
            f"no throughput trial of {it}: its throughput is PROJECTED from another chip's "
            f"trials × a published per-chip ratio{what} — a planning range, never a budget; run "
            f"the fit trial of {it} next",
            [f"throughput:n={est.candidate.instance_count}", "projection:ratio"],
        )
    ]


def _limited(inp: EstimateInput, limited_features: Sequence[str]) -> list[Reason]:
    """Key features the team found limited on this platform (their statement)."""
    if not limited_features:
        return []
    return [
        _reason(
            "key_features_limited",
            Action.compare_alternatives,
            f"key features are limited on {inp.candidate.instance_type}: "
            + ", ".join(limited_features),
            limited_features,
        )
    ]


def _decision(candidate_id: str, reasons: list[Reason]) -> Decision:
    """The strongest action among `reasons` (pause > compare > continue > ready)."""
    reasons.sort(key=lambda r: (PRECEDENCE.index(r.action), r.code))
    action = reasons[0].action if reasons else Action.ready_to_budget
    summary = (
        f"{action}: " + "; ".join(r.code for r in reasons if r.action == action)
        if reasons
        else "ready_to_budget: fit passed, a target trial at the planned scale, quality, "
        "restore and reruns verified, every price official, and not beaten by a comparable "
        "alternative"
    )
    return Decision(candidate_id=candidate_id, action=action, reasons=reasons, summary=summary)


def migration_decision(decisions: Sequence[Decision], neuron_ids: set[str]) -> Decision | None:
    """The most favourable of `decisions` among the Trainium ones (`neuron_ids`, else all):
    ready > compare > continue > pause, ties by id; never a plan that cannot finish.

    Returns
    -------
    Decision or None
        None when no plan can finish.
    """
    feasible = [d for d in decisions if not any(r.code == "plan_cannot_finish" for r in d.reasons)]
    pool = [d for d in feasible if d.candidate_id in neuron_ids] or feasible
    if not pool:
        return None
    return min(pool, key=lambda d: (-PRECEDENCE.index(d.action), d.candidate_id))
