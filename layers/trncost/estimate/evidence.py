"""What the trials say about a candidate: throughput, compile, checkpoints, failures, usage.

Only quality-meeting work counts as work; failed or diverged runs count as cost, never as
throughput. A figure no trial measured stays missing and raises a warning: it is never filled
in with a default. Each trial's admission is an input row whose provenance is the trial
measurement "admission (estimate/admission.py)".

References
----------
DESIGN.md, principles 2 (effective throughput), 6 (conclusions stay inside the evidence) and 8
(only admissible trials count); seeds/000 (有效吞吐...以符合品質要求的訓練工作量除以端到端耗時;
不要把暖機後的短暫最佳值當成整個任務的平均表現).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from trncost.errors import DomainError, MissingEvidence
from trncost.estimate.admission import admit
from trncost.estimate.ledger import Ledger
from trncost.estimate.measured import Measured, measurement
from trncost.estimate.mfu import mfu_check
from trncost.estimate.readings import TrialReadings
from trncost.model.analysis import ScalingFit
from trncost.model.candidate import Candidate
from trncost.model.estimate import EstimateInput
from trncost.model.provenance import Derived, PublishedReference
from trncost.model.trial import Phase, TrialRun
from trncost.model.workload import Workload

MIN_FIT_COUNTS = 3  # instance counts a scaling fit needs (trncost.estimate.scaling uses it)

# Any count beyond the largest measured one is extrapolation (principle 6): the estimate says so
# and the decision is never ready_to_budget on it. (A multiple of the largest count, kept as a
# factor for the readers of this name.)
EXTRAPOLATION_LIMIT = 1.0


class Evidence(TrialReadings):
    """The trials of one workload on one instance type and platform, read for the engine.

    `all_trials` are the candidate's own trials (each one counts as cost); `trials` are the
    pooled ones (estimate/admission.py), the only ones any figure is read from; `usable` the
    pooled ones that measure throughput (completed baseline/target runs with work and steady
    time). Raises MissingEvidence when the candidate has no trial, or no usable one.

    Parameters
    ----------
    workload : Workload
        The target, its unit and conversions, dataset, code version and timing scope.
    candidate : Candidate
        Whose trials (its instance type and platform) are read.
    trials : Sequence[TrialRun]
        Every trial of the request (all of `workload`'s; DomainError for another's).
    ledger : Ledger
        Receives one input row per trial's admission and the evidence warnings.
    pool_mismatched : bool
        Pool the trials of another dataset, code version or clock (with a warning).
    """

    projected = False  # a ProjectedEvidence (estimate/projection.py) says True

    def __init__(
        self,
        workload: Workload,
        candidate: Candidate,
        trials: Sequence[TrialRun],
        ledger: Ledger,
        *,
        pool_mismatched: bool = False,
    ) -> None:
        self.workload = workload
        self.candidate = candidate
        self.ledger = ledger
        for t in trials:
            if t.workload_id != workload.workload_id:
                raise DomainError(
                    f"trial {t.trial_id} belongs to workload {t.workload_id}, "
                    f"not {workload.workload_id}"
                )
        self.admission = admit(workload, candidate, trials, pool_mismatched=pool_mismatched)
        self.all_trials = self.admission.own
        self.trials = self.admission.pooled
        if not self.all_trials:
            raise MissingEvidence(
                f"no trial of {candidate.instance_type} ({candidate.platform}) for workload "
                f"{workload.workload_id}: run a fit and a baseline trial first; "
                "trncost never guesses a throughput",
                missing=["trial"],
            )
        self._factor = {t.trial_id: self._units_factor(t) for t in self.trials}
        self.usable = [t for t in self.trials if t.usable_for_throughput]
        if not self.usable:
            seen = ", ".join(
                f"{t.trial_id} ({t.phase}, {t.status}, "
                f"quality-meeting work {t.work.quality_meeting:g})"
                for t in self.trials
            )
            excluded = self.admission.summary(detail=True)
            raise MissingEvidence(
                f"no usable trial of {candidate.instance_type} for workload "
                f"{workload.workload_id}: throughput needs a completed baseline or target run "
                f"with quality-meeting work and steady time; have: {seen or 'none pooled'}"
                + (f"; excluded: {excluded}" if excluded else ""),
                missing=["completed baseline or target trial with quality-meeting work"],
            )
        self._fit: ScalingFit | None = None
        self._record_admission()
        self._check_consistency()

    @classmethod
    def of(cls, inp: EstimateInput, ledger: Ledger) -> Evidence:
        """The evidence of `inp`'s candidate, admitted as its request says, its rows in
        `ledger`.

        A candidate without a usable trial of its own is projected from another chip's
        trials when it can be (estimate/projection.py: status `projected`).

        Returns
        -------
        Evidence
            Its own evidence, or a ProjectedEvidence.

        Raises
        ------
        MissingEvidence
            No usable trial of its own, and no projection possible (it says why).
        """
        try:
            return cls(
                inp.workload,
                inp.candidate,
                inp.trials,
                ledger,
                pool_mismatched=inp.assumptions.pool_mismatched_trials,
            )
        except MissingEvidence as missing:
            from trncost.estimate.projected import project

            return project(inp, ledger, missing)

    # -- admission -------------------------------------------------------------------------
    def _record_admission(self) -> None:
        """One input row per trial (pooled or excluded, why), and the warnings that say it."""
        led = self.ledger
        by_id = {t.trial_id: t for t in self.all_trials}
        retracted = [r for r in self.admission.excluded if r.trial_id not in by_id]
        for rec in self.admission.records:
            t = by_id.get(rec.trial_id)
            if t is None:
                continue  # retracted: listed in the admission and the warning below, no row
            why = "; ".join(f"{r.code}: {r.message}" for r in rec.reasons)
            led.row(
                f"admission:{rec.trial_id}",
                f"trial {rec.trial_id} ({rec.phase}, {rec.status}, {rec.instance_count} instances)",
                rec.admission + (f" ({why})" if why else ""),
                None,
                measurement([t], "admission (estimate/admission.py)"),
            )
        if len(self.admission.excluded) > len(retracted):
            led.warn(
                "trials_excluded",
                f"trials left out of the figures: {self.admission.summary(retracted=False)}; "
                "they still count as cost (adaptation & reruns)",
            )
        if retracted:
            led.warn(
                "trials_retracted",
                "retracted trials, left out of the figures and of the cost: "
                + "; ".join(f"{r.trial_id} ({r.reasons[0].message})" for r in retracted),
            )
        if self.admission.mismatches_pooled:
            pooled = ", ".join(
                f"{r.trial_id} ({', '.join(x.code for x in r.reasons)})"
                for r in self.admission.mismatches_pooled
            )
            led.warn(
                "mismatched_trials_pooled",
                f"pooled at the request's pool_mismatched_trials: {pooled}: the figures rest on "
                "trials of another dataset, code version or clock than the workload's",
            )

    # -- work units ------------------------------------------------------------------------
    def _units_factor(self, t: TrialRun) -> float:
        factor = self.workload.units_per(t.work.unit)
        if factor is None:  # admission excludes such a trial: never reached for a pooled one
            raise DomainError(
                f"trial {t.trial_id} counts work in {t.work.unit} but the workload's target is "
                f"in {self.workload.target.unit}; set workload.tokens_per_sample"
            )
        return factor

    def quality_work(self, t: TrialRun) -> float:
        """Quality-meeting work of trial `t` on the steady clock, in the target's unit.

        Returns
        -------
        float
            `t.steady_work` × units per trial unit [target units].
        """
        return t.steady_work * self._factor[t.trial_id]

    # -- checks that become warnings -------------------------------------------------------
    def _check_consistency(self) -> None:
        w, led = self.workload, self.ledger
        scopes = {t.timing_scope for t in self.trials}
        if len(scopes) > 1:
            first = self.trials[0].timing_scope
            diffs = sorted({d for t in self.trials for d in first.differences(t.timing_scope)})
            led.warn(
                "mixed_timing_scopes",
                "trials with different timing scopes are pooled (they differ in: "
                + ", ".join(diffs)
                + "); their times are not on the same clock",
            )
        c = self.candidate
        for field, expected in (
            ("parallelism", c.parallelism),
            ("neuron_sdk_version", c.neuron_sdk_version),
            ("framework_version", c.framework_version),
            ("precision", c.precision),
        ):
            if expected is None:
                continue
            differing = sorted(
                t.trial_id for t in self.usable if getattr(t.candidate, field) != expected
            )
            if differing:
                led.warn(
                    f"{field}_mismatch",
                    f"trials {', '.join(differing)} ran a different {field} than the candidate: "
                    "their throughput may not transfer",
                )
        for field, expected in (("code_version", w.code_version), ("dataset_id", w.dataset_id)):
            other = sorted({getattr(t, field) for t in self.trials} - {expected})
            if other:
                led.warn(
                    f"{field}_mismatch",
                    f"some trials ran {field} {', '.join(other)}, not the workload's {expected}",
                )
        if not any(t.phase == Phase.target for t in self.trials):
            led.warn(
                "no_target_phase_trial",
                "no target-phase trial: the estimate rests on baseline runs, not on "
                "near-production data size, parallelism and checkpointing",
            )
        if not any(t.checkpointing.restore_verified for t in self.trials):
            led.warn(
                "restore_never_verified",
                "no trial verified a checkpoint restore: failure recovery is assumed, not shown",
            )
        if not self._quality_verified():
            gate = w.quality_gate
            led.warn(
                "quality_gate_not_verified",
                f"no trial reached the quality gate {gate.metric} {gate.direction} "
                f"{gate.threshold:g}: the cost is of work done, not of a model that meets it",
            )
        if not any(t.timing_scope.data_loading for t in self.usable):
            led.warn(
                "data_loading_outside_clock",
                "the trials' clocks exclude data loading: the time holds for steady state only",
            )

        for t in self.usable:
            finding = mfu_check(w, t)
            if finding is not None and finding.implausible:
                led.warn("implausible_mfu", finding.note)

    def _quality_verified(self) -> bool:
        gate = self.workload.quality_gate
        return any(
            t.quality is not None
            and t.quality.metric == gate.metric
            and t.quality.loss_finite
            and gate.passes(t.quality.value)
            for t in self.trials
            if t.phase == Phase.target
        )

    # -- throughput ------------------------------------------------------------------------
    def throughput(self, count: int) -> Measured[float]:
        """Steady throughput at `count` instances, from the trials there, else a scaling fit
        (≥ 3 measured counts), else the published scaling prior from the nearest count(s).

        Measured at `count` (the target-phase trials there, else the baseline ones)::

            Σ steady quality-meeting work / Σ (steady + data-wait seconds), warm-up out of both
            (or in both, when its work was not counted apart)

        with, beside it, the rows "stdev / mean of steady samples" (its CV [unitless]) and
        "Σ quality-meeting work / Σ end-to-end wall seconds" (the trials' effective
        throughput). Away from the measured counts the value is the point of the same model
        the range draws from: exp(E[ln X]), the posterior mean on the log scale throughput is
        modelled on (so it lies inside the range's P10–P90; DESIGN.md, principle 10). A fit
        (estimate/scaling_predictive.py): the BIC-weighted geometric mean X̂(n) of linear,
        Amdahl and USL at `count` between the measured counts, and past them
        exp((1 − w)·ln X̂(n) + w·(ln X(n₀) + E[α]·ln(n/n₀))), E[α] = 1 − exp(μ + σ²/2), the
        fit's share blended with the local power law of the two nearest measured counts. The
        prior, with one or two measured counts: throughput(n=n₀) × (n / n₀)^α at the prior's
        mean α, E[α] = 1 − exp(μ + σ²/2), or, between two measured counts, their own exponent
        ln(X(n₂)/X(n₁)) / ln(n₂/n₁) (estimate/scaling_prior.py). Past the largest measured
        count the estimate warns `extrapolated_scale`.

        Parameters
        ----------
        count : int
            Instances [instances].

        Returns
        -------
        Measured[float]
            The throughput [target units/s] and its input row (`throughput:n=<count>`).

        References
        ----------
        DESIGN.md, "The cost model" (throughput(n) from trials at that count, or a scaling
        fit over several counts, flagged when extrapolated) and principles 2 and 6; seeds/000
        (有效吞吐); Gunther's USL and Amdahl's law, see estimate/scaling.py.
        """
        counts = self.measured_counts()
        if count in counts:
            return self._rate_at(count)
        if len(counts) >= MIN_FIT_COUNTS:
            return self._fitted(count, counts)
        return self._from_prior(count, counts)

    def _from_prior(self, count: int, counts: list[int]) -> Measured[float]:
        """Below 3 measured counts: the published scaling prior from the nearest count(s)
        (estimate/scaling_prior.py): linear is its upper bound, never its centre."""
        from trncost.estimate.scaling_prior import PRIOR, exponent_prior

        led, unit = self.ledger, self.workload.target.unit
        rates = {m: self._rate_at(m) for m in counts}
        prior = exponent_prior([(m, r.value) for m, r in rates.items()], count)
        alpha = prior.mean_exponent
        if prior.fixed is None:
            exponent_row = led.row(
                "scaling:exponent",
                "scaling exponent α (published prior mean, the point value's; 1 = linear)",
                alpha,
                None,
                PublishedReference(
                    sources=[PRIOR.source],
                    figure=prior.describe(),
                    data_file="trncost/estimate/data/scaling_prior.json",
                ),
            )
        else:
            exponent_row = led.derived(
                "scaling:exponent",
                "scaling exponent α between the two measured counts",
                alpha,
                None,
                "ln(X(n₂)/X(n₁)) / ln(n₂/n₁)",
                [rates[m].row_id for m in counts],
            )
        measured = ", ".join(map(str, counts))
        led.warn(
            "unmeasured_instance_count",
            f"no trial at {count} instances (measured: {measured}); throughput scaled from "
            f"{prior.anchor} by (n/{prior.anchor})^α with α = {alpha:.3g} "
            + (
                "(the published scaling prior's mean, E[α] = 1 − exp(μ + σ²/2): linear "
                "scaling, α = 1, is its upper bound; run a trial at ≥ 3 counts for a fit)"
                if prior.fixed is None
                else "(the exponent measured between the two counts)"
            ),
        )
        if count > EXTRAPOLATION_LIMIT * max(counts):
            led.warn(
                "extrapolated_scale",
                f"{count} instances is beyond the largest measured count ({max(counts)}): the "
                "estimate reaches past its evidence",
            )
        value = prior.point
        row = led.derived(
            f"throughput:n={count}",
            f"throughput at {count} instances (scaled from {prior.anchor}, α = {alpha:.3g})",
            value,
            f"{unit}/s",
            f"throughput(n={prior.anchor}) × ({count} / {prior.anchor})^α",
            [rates[prior.anchor].row_id, exponent_row],
        )
        return Measured(value, row)

    def measured_counts(self) -> list[int]:
        """Instance counts with at least one usable (throughput) trial, ascending.

        Returns
        -------
        list[int]
            [instances]
        """
        return sorted({t.candidate.instance_count for t in self.usable})

    def scaling_fit(self) -> ScalingFit:
        """The linear/Amdahl/USL fit over every measured count, each count's noise from its
        trials' spread (`scaling.noise_per_count`); DomainError below 3 counts. Cached.

        Returns
        -------
        ScalingFit
        """
        if self._fit is not None:
            return self._fit
        counts = self.measured_counts()
        rates = [(m, self._rate_at(m)) for m in counts]
        from trncost.estimate.scaling import fit_scaling, noise_per_count  # numpy: on demand

        noise = noise_per_count(
            [self.spread_at(m) for m in counts], [len(self._used_at(m)) for m in counts], counts
        )
        self._fit = fit_scaling(
            [(m, r.value) for m, r in rates], [r.row_id for _, r in rates], noise
        )
        return self._fit

    def spread_at(self, count: int) -> float | None:
        """The relative spread of throughput at `count`: between the trials there, or (one
        trial) between its steady samples; stdev (n − 1) / mean.

        Parameters
        ----------
        count : int
            Instances [instances].

        Returns
        -------
        float or None
            The coefficient of variation [unitless]; None when it cannot be measured.
        """
        rates = self.rates_by_trial(count)
        values = rates if len(rates) >= 2 else self.samples_at(count)
        if len(values) < 2:
            return None
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
        return math.sqrt(var) / mean if mean > 0 else None

    def _fitted(self, count: int, counts: list[int]) -> Measured[float]:
        from trncost.estimate.scaling_predictive import (
            LOCAL_POINT_FORMULA,
            local_prior,
            predictive_point,
        )
        from trncost.estimate.scaling_prior import PRIOR

        led, unit = self.ledger, self.workload.target.unit
        fit = self.scaling_fit()
        p = fit.parameters
        inputs = [pt.row_id for pt in fit.points]
        formula = f"{fit.method}; {fit.choice}"
        param_rows = [
            led.derived(f"scaling:{name}", label, value, u, formula, inputs)
            for name, label, value, u in (
                ("lambda", "scaling fit λ (one instance's throughput)", p.lam, f"{unit}/s"),
                ("sigma", "scaling fit σ (contention)", p.sigma, None),
                ("kappa", "scaling fit κ (coherency)", p.kappa, None),
            )
        ]
        led.row(
            "scaling:weights",
            "scaling model weights (BIC): what the throughput's point value rests on",
            _weights(fit),
            None,
            Derived(formula=fit.choice, inputs=inputs),
        )
        led.warn(
            "unmeasured_instance_count",
            f"no trial at {count} instances (measured: {', '.join(map(str, counts))}); "
            f"throughput from the scaling fit over {len(counts)} counts ({_weights(fit)}; "
            f"{fit.model}: λ={p.lam:.6g}, σ={p.sigma:.4g}, κ={p.kappa:.4g})",
        )
        if count > EXTRAPOLATION_LIMIT * max(counts):
            led.warn(
                "extrapolated_scale",
                f"{count} instances is beyond the largest measured count ({max(counts)}): the "
                "scaling fit reaches past its evidence",
            )
        value = predictive_point(fit, count)
        local = local_prior(fit, count)
        if local is None:
            row = led.derived(
                f"throughput:n={count}",
                f"throughput at {count} instances (scaling fit: {_weights(fit)})",
                value,
                f"{unit}/s",
                f"BIC-weighted geometric mean of linear, Amdahl and USL at n={count} "
                f"({_weights(fit)})",
                param_rows,
            )
        else:
            anchors = [pt.row_id for pt in fit.points if pt.count in dict(local.measured)]
            row = led.derived(
                f"throughput:n={count}",
                f"throughput at {count} instances (scaling fit: {_weights(fit)}; "
                f"{PRIOR.local_weight:.0%} local power law from {local.anchor})",
                value,
                f"{unit}/s",
                f"{LOCAL_POINT_FORMULA}: X̂ the BIC-weighted geometric mean of linear, Amdahl "
                f"and USL at n={count} ({_weights(fit)}), w = {PRIOR.local_weight:g}, n₀ = "
                f"{local.anchor} (the local power law of the two nearest measured counts)",
                [*param_rows, *anchors],
            )
        return Measured(value, row)

    def rates_by_trial(self, count: int) -> list[float]:
        """Per-trial steady rates of the trials the throughput at `count` pools.

        Parameters
        ----------
        count : int
            Instances [instances].

        Returns
        -------
        list[float]
            Steady quality-meeting work / steady clock, per trial [target units/s].
        """
        return [self.quality_work(t) / t.steady_clock_s for t in self._used_at(count)]

    def samples_at(self, count: int) -> list[float]:
        """The steady throughput samples of the trials the throughput at `count` pools.

        Parameters
        ----------
        count : int
            Instances [instances].

        Returns
        -------
        list[float]
            Every sample, in the target's unit [target units/s].
        """
        return [
            s * self._factor[t.trial_id]
            for t in self._used_at(count)
            for s in t.steady_throughput_samples
        ]

    def _used_at(self, count: int) -> list[TrialRun]:
        at = [t for t in self.usable if t.candidate.instance_count == count]
        return [t for t in at if t.phase == Phase.target] or at

    def _rate_at(self, count: int) -> Measured[float]:
        at = [t for t in self.usable if t.candidate.instance_count == count]
        target = [t for t in at if t.phase == Phase.target]
        used = target or at
        work = sum(self.quality_work(t) for t in used)
        clock = sum(t.steady_clock_s for t in used)
        value = work / clock
        unit = self.workload.target.unit
        phase = "target" if target else "baseline"
        row = self.ledger.row(
            f"throughput:n={count}",
            f"throughput at {count} instances ({phase} trials)",
            value,
            f"{unit}/s",
            measurement(
                used,
                "Σ steady quality-meeting work / Σ (steady + data-wait seconds), warm-up out of "
                "both (or in both, when its work was not counted apart)",
            ),
        )
        samples = [s * self._factor[t.trial_id] for t in used for s in t.steady_throughput_samples]
        if len(samples) >= 2:
            mean = sum(samples) / len(samples)
            var = sum((s - mean) ** 2 for s in samples) / (len(samples) - 1)
            cv = math.sqrt(var) / mean
            self.ledger.row(
                f"throughput_cv:n={count}",
                "steady throughput variation (CV)",
                cv,
                None,
                measurement(used, "stdev / mean of steady samples"),
            )
        effective = sum(t.work.quality_meeting * self._factor[t.trial_id] for t in used) / sum(
            t.wall.total_s for t in used
        )
        self.ledger.row(
            f"effective_throughput:n={count}",
            "trial effective throughput (quality work / end-to-end wall)",
            effective,
            f"{unit}/s",
            measurement(used, "Σ quality-meeting work / Σ end-to-end wall seconds"),
        )
        return Measured(value, row)


def _weights(fit: ScalingFit) -> str:
    return ", ".join(
        f"{m} {w:.0%}" for m, w in sorted(fit.weights.items(), key=lambda t: -t[1]) if w >= 0.005
    )
