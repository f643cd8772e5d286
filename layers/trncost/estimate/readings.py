"""What the trials measured of the time around the steady state and of the bill's other
quantities: compile, warm-up, checkpoints, evaluation, failures and restarts, usage.

`Evidence` (estimate/evidence.py) inherits these readers; each reads the trials it names, writes
its input-table row to the ledger and returns the figure, or `None` when no trial measured it
(never a default). Each returns `Measured`: the value (None when not measured) and its
input-table row.

References
----------
DESIGN.md, "The cost model" (compile and warm-up, checkpoint saves with the measured save time,
evaluation, failures from trial records, usage scaled from the trials' rates); seeds/000 (the
fields each trial records: 暖機和編譯時間、失敗重跑次數與重跑時長、檢查點保存及恢復結果、儲存容量、
資料傳輸、日誌用量).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from trncost.estimate.failure_prior import posterior
from trncost.estimate.ledger import Ledger
from trncost.estimate.measured import (
    MaybeMeasured,
    Measured,
    measured_values,
    measurement,
    not_measured,
)
from trncost.model.assumptions import FleetFailurePrior
from trncost.model.candidate import Candidate
from trncost.model.trial import TrialRun


class TrialReadings:
    """The readers of the time and usage figures; `trials`, `usable` and `ledger` are set by
    `Evidence`."""

    trials: list[TrialRun]
    usable: list[TrialRun]
    candidate: Candidate
    ledger: Ledger

    @property
    def failure_trials(self) -> list[TrialRun]:
        """The trials whose failures and exposure the failure rate reads: the pooled ones (a
        projected candidate: its own, never another chip's)."""
        return self.trials

    # -- one-time and periodic costs in time ----------------------------------------------
    def compile_s(self, expect_cache_hit: bool) -> MaybeMeasured:
        """One-time compile: the mean measured compile of the pooled trials whose clock
        includes it, those with the expected cache outcome (`expect_cache_hit`) first; every
        measured compile, with a warning, when none matches.

        Returns
        -------
        MaybeMeasured
            Seconds [s] (row `time:compile_s`); None when no trial measured it (warning).
        """
        measured = [
            t for t in self.trials if t.timing_scope.compile and t.wall.compile_s is not None
        ]
        matching = [t for t in measured if t.wall.compile_cache_hit is expect_cache_hit]
        label = "hit" if expect_cache_hit else "miss"
        if measured and not matching:
            self.ledger.warn(
                "compile_cache_unmatched",
                f"no trial measured a compile with a cache {label}; using every measured compile",
            )
        used = matching or measured
        return self._mean(
            used,
            lambda t: t.wall.compile_s,
            "time:compile_s",
            f"one-time compile (cache {label})",
            "s",
            "compile_not_measured",
            "compile time",
        )

    def warmup_s(self) -> MaybeMeasured:
        """One-time warm-up: the mean measured warm-up of the pooled trials.

        Returns
        -------
        MaybeMeasured
            Seconds [s] (row `time:warmup_s`); None when no trial measured it (warning).
        """
        used = [t for t in self.trials if t.wall.warmup_s is not None]
        return self._mean(
            used,
            lambda t: t.wall.warmup_s,
            "time:warmup_s",
            "one-time warm-up",
            "s",
            "warmup_not_measured",
            "warm-up time",
        )

    def other_s(self) -> MaybeMeasured:
        """Per-run setup outside the training clock (SageMaker starting, downloading,
        uploading): once per run, and again per restart. The mean of the pooled trials'
        `wall.other_s`.

        Returns
        -------
        MaybeMeasured
            Seconds [s] (row `time:other_s`); None when no trial measured it (no warning:
            most clocks have no such part).
        """
        used = [t for t in self.trials if t.wall.other_s is not None]
        if not used:
            return Measured(
                None,
                self.ledger.row(
                    "time:other_s",
                    "per-run setup (starting, downloading, uploading)",
                    None,
                    "s",
                    not_measured("per-run setup time"),
                ),
            )
        return self._mean(
            used,
            lambda t: t.wall.other_s,
            "time:other_s",
            "per-run setup (starting, downloading, uploading), once per run and per restart",
            "s",
            "other_not_measured",
            "per-run setup time",
        )

    def _mean(
        self,
        used: Sequence[TrialRun],
        get: Callable[[TrialRun], float | None],
        row_id: str,
        label: str,
        unit: str,
        warn_code: str,
        metric: str,
    ) -> MaybeMeasured:
        """The mean of what `get` reads from `used` (trials that measured it)."""
        if not used:
            self.ledger.warn(warn_code, f"{metric} not measured in any trial: left out of the time")
            return Measured(None, self.ledger.row(row_id, label, None, unit, not_measured(metric)))
        value = statistics.fmean(measured_values(used, get))
        return Measured(
            value, self.ledger.row(row_id, label, value, unit, measurement(used, f"mean {metric}"))
        )

    def checkpoint_save_s(self) -> MaybeMeasured:
        """Seconds per checkpoint save, over the pooled trials that saved and whose clock
        includes checkpoints: Σ checkpoint save seconds / Σ saves.

        Returns
        -------
        MaybeMeasured
            Seconds per save [s] (row `checkpoint:save_s`); None when not measured.
        """
        used = [
            t
            for t in self.trials
            if t.checkpointing.saves > 0
            and t.wall.checkpoint_save_s is not None
            and t.timing_scope.checkpoints
        ]
        if not used:
            return Measured(
                None,
                self.ledger.row(
                    "checkpoint:save_s",
                    "seconds per checkpoint save",
                    None,
                    "s",
                    not_measured("checkpoint save time"),
                ),
            )
        value = sum(measured_values(used, lambda t: t.wall.checkpoint_save_s)) / sum(
            t.checkpointing.saves for t in used
        )
        return Measured(
            value,
            self.ledger.row(
                "checkpoint:save_s",
                "seconds per checkpoint save",
                value,
                "s",
                measurement(used, "Σ checkpoint save seconds / Σ saves"),
            ),
        )

    def checkpoint_interval_s(self) -> MaybeMeasured:
        """The checkpoint interval the usable trials ran: Σ steady-clock seconds / Σ saves.

        Returns
        -------
        MaybeMeasured
            Seconds [s] (row `checkpoint:interval_s`); None when no usable trial saved.
        """
        used = [t for t in self.usable if t.checkpointing.saves > 0]
        if not used:
            return Measured(
                None,
                self.ledger.row(
                    "checkpoint:interval_s",
                    "checkpoint interval",
                    None,
                    "s",
                    not_measured("checkpoint interval"),
                ),
            )
        value = sum(t.steady_clock_s for t in used) / sum(t.checkpointing.saves for t in used)
        return Measured(
            value,
            self.ledger.row(
                "checkpoint:interval_s",
                "checkpoint interval",
                value,
                "s",
                measurement(used, "Σ steady-clock seconds / Σ saves"),
            ),
        )

    def checkpoint_size_gb(self) -> MaybeMeasured:
        """One checkpoint's size: the mean the pooled trials measured.

        Returns
        -------
        MaybeMeasured
            [GB] (row `checkpoint:size_gb`); None when not measured (warning).
        """
        used = [t for t in self.trials if t.checkpointing.size_gb is not None]
        return self._mean(
            used,
            lambda t: t.checkpointing.size_gb,
            "checkpoint:size_gb",
            "checkpoint size",
            "GB",
            "checkpoint_size_not_measured",
            "checkpoint size",
        )

    def evaluation_fraction(self) -> MaybeMeasured:
        """Evaluation seconds per steady second, over the usable trials whose clock includes
        evaluation: Σ evaluation seconds / Σ steady-clock seconds.

        Returns
        -------
        MaybeMeasured
            [unitless] (row `time:evaluation_fraction`); None when not measured (warning).
        """
        used = [
            t for t in self.usable if t.timing_scope.evaluation and t.wall.evaluation_s is not None
        ]
        if not used:
            self.ledger.warn(
                "evaluation_not_measured",
                "evaluation time not measured in any trial: left out of the time",
            )
            return Measured(
                None,
                self.ledger.row(
                    "time:evaluation_fraction",
                    "evaluation seconds per steady second",
                    None,
                    None,
                    not_measured("evaluation time"),
                ),
            )
        value = sum(measured_values(used, lambda t: t.wall.evaluation_s)) / sum(
            t.steady_clock_s for t in used
        )
        return Measured(
            value,
            self.ledger.row(
                "time:evaluation_fraction",
                "evaluation seconds per steady second",
                value,
                None,
                measurement(used, "Σ evaluation seconds / Σ steady-clock seconds"),
            ),
        )

    # -- failures --------------------------------------------------------------------------
    def failure_rate(self, fleet: FleetFailurePrior | None = None) -> Measured[float]:
        """Failures per instance-hour: the POSTERIOR MEAN of the failure prior updated with the
        pooled trials' failures f and exposure H [instance-hours] (estimate/failure_prior.py)::

            E[λ | f, H] = λ₀ · E[m | f, H],  log m ~ N(−σ²/2, σ²),  f ~ Poisson(λ₀·m·H)
            (f + ½) / H   (no prior: Jeffreys' posterior mean)

        the same posterior the range draws from. Trials whose failures are not known add no
        exposure. Rows `failure:observed`, `failure:prior`, `failure:rate`; warnings
        `no_failure_prior`, `failure_prior_conflict` (more failures than the prior's own
        predictive makes plausible: the posterior leans toward the trials, smoothly),
        `no_failures_observed`, `failures_not_known`.

        Parameters
        ----------
        fleet : FleetFailurePrior or None
            The request's `assumptions.failure_prior`: the fleet's own record in place of the
            published prior.

        Returns
        -------
        Measured[float]
            λ [1/instance-hour] and its row.

        References
        ----------
        estimate/data/failure_prior.json; Gelman et al., Bayesian Data Analysis, 3rd ed.
        (2013), §5 and §2.6; DESIGN.md, "The cost model" (rate λ per instance-hour from trial
        records).
        """
        trials = self.failure_trials
        post = posterior(trials, self.candidate.instance_type, fleet)
        failures, hours = post.failures, post.hours
        known = [t for t in trials if t.reliability.failures is not None]
        observed = self.ledger.row(
            "failure:observed",
            "failures per instance-hour in the trials",
            failures / hours if hours > 0 else 0.0,
            "1/instance-hour",
            measurement(
                known or trials,
                f"Σ failures ({failures}) / Σ instance-hours ({hours:.4g}) of the trials whose "
                "failures are known",
            )
            if trials
            else not_measured("failures"),
        )
        if post.unknown_trials:
            self.ledger.warn(
                "failures_not_known",
                f"{post.unknown_trials} trial(s) do not know their failures (read without the "
                "trial agent): they add no exposure to the failure rate",
            )
        prior = post.prior
        if prior is None:
            self.ledger.warn(
                "no_failure_prior",
                f"no failure prior for {self.candidate.instance_type} (its accelerators per "
                "instance are not on record): the failure rate rests on the trials alone",
            )
            inputs = [observed]
            formula = "(Σ failures + ½) / Σ instance-hours: Jeffreys' posterior mean (no prior)"
        else:
            prior_row = self.ledger.row(
                "failure:prior",
                prior.label,
                prior.mean,
                "1/instance-hour",
                prior.provenance,
            )
            inputs = [prior_row, observed]
            formula = (
                f"prior mean {prior.mean:.6g} × E[m | Σ failures, Σ instance-hours], log m ~ "
                f"Normal({prior.mu:.4g}, {prior.log_sd:.4g}²), failures ~ Poisson(rate × "
                "instance-hours): the posterior mean"
            )
            if post.conflict_p is not None:
                self.ledger.warn(
                    "failure_prior_conflict",
                    f"{failures} failures in {hours:.3g} instance-hours is more than fleets "
                    f"like the published ones make plausible (prior mean {prior.mean:.3g} per "
                    f"instance-hour, P = {post.conflict_p:.2g}): the posterior leans toward "
                    f"the trials (mean {post.point:.3g}, {post.mean_of_m():.3g}× the prior's)",
                )
        if failures == 0:
            self.ledger.warn(
                "no_failures_observed",
                f"no failure in {hours:.1f} measured instance-hours: the failure rate is the "
                f"posterior mean, {post.point:.3g} per instance-hour"
                + (" (the failure prior, barely moved: long runs do fail)" if prior else ""),
            )
        row = self.ledger.derived(
            "failure:rate",
            "failures per instance-hour",
            post.point,
            "1/instance-hour",
            formula,
            inputs,
        )
        return Measured(post.point, row)

    def restart_s(self) -> MaybeMeasured:
        """Seconds per restart after a failure, over the pooled trials that failed and
        measured it: Σ restart seconds / Σ failures. Else the mean measured checkpoint
        restore, a lower bound (warning `restart_not_measured`).

        Returns
        -------
        MaybeMeasured
            Seconds [s] (row `failure:restart_s`); None when neither was measured.
        """
        used = [
            t
            for t in self.trials
            if (t.reliability.failures or 0) > 0 and t.wall.restart_s is not None
        ]
        if not used:
            restores = [t for t in self.trials if t.wall.checkpoint_restore_s is not None]
            if restores:
                # A restart at least restores the checkpoint: a measured lower bound, flagged.
                self.ledger.warn(
                    "restart_not_measured",
                    "no trial measured a restart after a failure: each restart is taken as "
                    "the measured checkpoint restore alone, a lower bound",
                )
                return self._mean(
                    restores,
                    lambda t: t.wall.checkpoint_restore_s,
                    "failure:restart_s",
                    "seconds per restart (checkpoint restore only)",
                    "s",
                    "restart_not_measured",
                    "checkpoint restore time",
                )
            return Measured(
                None,
                self.ledger.row(
                    "failure:restart_s",
                    "seconds per restart",
                    None,
                    "s",
                    not_measured("restart time"),
                ),
            )
        restart_s = measured_values(used, lambda t: t.wall.restart_s)
        value = sum(restart_s) / sum(t.reliability.failures or 0 for t in used)
        return Measured(
            value,
            self.ledger.row(
                "failure:restart_s",
                "seconds per restart",
                value,
                "s",
                measurement(used, "Σ restart seconds / Σ failures"),
            ),
        )

    # -- usage -----------------------------------------------------------------------------
    def usage_per_instance_hour(self, field: str, label: str, unit: str) -> MaybeMeasured:
        """The pooled trials' usage `field` (`label`, in `unit`) per instance-hour:
        Σ usage / Σ instance-hours (reruns included), over the trials that measured it.

        Returns
        -------
        MaybeMeasured
            [unit per instance-hour] (row `usage:<field>_per_instance_hour`); None when no
            trial measured it.
        """
        used = [t for t in self.trials if getattr(t.usage, field) is not None]
        row_id = f"usage:{field}_per_instance_hour"
        if not used:
            return Measured(
                None,
                self.ledger.row(
                    row_id, f"{label} per instance-hour", None, unit, not_measured(label)
                ),
            )
        hours = sum(t.instance_hours for t in used)
        value = sum(getattr(t.usage, field) for t in used) / hours
        return Measured(
            value,
            self.ledger.row(
                row_id,
                f"{label} per instance-hour",
                value,
                unit,
                measurement(used, f"Σ {field} / Σ instance-hours"),
            ),
        )

    def usage_max(self, field: str, label: str, unit: str) -> MaybeMeasured:
        """The largest value of usage `field` (`label`, in `unit`) any pooled trial measured
        (a count or a stock, not a rate).

        Returns
        -------
        MaybeMeasured
            In `unit` [unit of the figure] (row `usage:<field>`); None when not measured.
        """
        used = [t for t in self.trials if getattr(t.usage, field) is not None]
        row_id = f"usage:{field}"
        if not used:
            return Measured(None, self.ledger.row(row_id, label, None, unit, not_measured(label)))
        value = float(max(getattr(t.usage, field) for t in used))
        return Measured(
            value, self.ledger.row(row_id, label, value, unit, measurement(used, f"max {field}"))
        )
