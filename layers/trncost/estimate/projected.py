"""The evidence of a projected candidate (estimate/projection.py gives the model): its own
trials for cost, admission, failures and the fit trials that measure the per-chip ratio; the
source chip's trials for the time and usage figures and for X_src.

Each of the candidate's completed fit trials k (steady work yₖ on its steady clock, at nₖ
instances) is read as a measurement of the ratio::

    ln rₖ = ln(steady quality work / steady clock ÷ the source's throughput at the matched
    count), each with noise √(cv² + fit_trial_noise² + the source's spread²)

(cv: the trial's own sample spread; the source's spread at n'ₖ: `projection.source_log_sd`), and
ln r's posterior is the Normal–Normal update of the cross-chip prior with them
(`projection.update`). Rows: `projection:peak_ratio`, `projection:bandwidth_ratio`,
`projection:interconnect_ratio` (shown, weighs 0), `projection:fit_trials`, `projection:ratio`,
the source's throughput rows prefixed `source:`, and `throughput:n=<count>` (provenance
`published_reference`).

References
----------
estimate/projection.py; estimate/data/cross_chip.json; estimate/data/chips.json; DESIGN.md,
principle 11.
"""

from __future__ import annotations

import math

from trncost.errors import MissingEvidence
from trncost.estimate.admission import admit
from trncost.estimate.chips import DATA_FILE as CHIPS_FILE
from trncost.estimate.chips import chip_of
from trncost.estimate.evidence import Evidence
from trncost.estimate.failure_prior import Z90
from trncost.estimate.ledger import Ledger
from trncost.estimate.measured import Measured, measurement
from trncost.estimate.projection import (
    DATA_FILE,
    DEFAULT_PRECISION,
    SOURCE_PREFIX,
    SOURCE_WARNINGS,
    Projection,
    Ratio,
    Source,
    cross_chip,
    ratio_prior,
    sample_cv,
    source_for,
    source_log_sd,
    stated_precision,
    update,
)
from trncost.model.estimate import EstimateInput
from trncost.model.provenance import Derived, PublishedReference
from trncost.model.trial import Phase, TrialRun, TrialStatus


class ProjectedEvidence(Evidence):
    """The evidence of a candidate without a throughput trial of its own: its own trials (cost,
    admission, failures, the fit trials that update the ratio) and the source's (the time and
    usage figures the readers take, and X_src). See the module docstring.

    Parameters
    ----------
    inp : EstimateInput
        The candidate's request.
    ledger : Ledger
        Receives the rows and warnings (the source's throughput rows prefixed `source:`).
    source : Source
        The other chip's trials (`source_for`).
    """

    projected = True

    def __init__(self, inp: EstimateInput, ledger: Ledger, source: Source) -> None:
        self.workload, self.candidate, self.ledger = inp.workload, inp.candidate, ledger
        self.source = source
        pool = inp.assumptions.pool_mismatched_trials
        self.admission = admit(inp.workload, inp.candidate, inp.trials, pool_mismatched=pool)
        self.all_trials = self.admission.own
        self.own_pooled = self.admission.pooled
        self._scratch = Ledger(inp.prices)
        self.src = Evidence(
            inp.workload, source.candidate, inp.trials, self._scratch, pool_mismatched=pool
        )
        self.trials, self.usable = self.src.trials, self.src.usable
        self._factor = dict(self.src._factor)
        for t in self.own_pooled:
            self._factor.setdefault(t.trial_id, inp.workload.units_per(t.work.unit) or 0.0)
        self._fit = None
        self._ratio: Ratio | None = None
        self._record_admission()
        self._target_warnings()

    # -- what the candidate's own trials say --------------------------------------------------
    @property
    def failure_trials(self) -> list[TrialRun]:
        """The candidate's own pooled trials: failures on another chip are not its own."""
        return self.own_pooled

    def measured_counts(self) -> list[int]:
        """The candidate's own measured counts: none (it is projected) [instances]."""
        return []

    def fit_observations(self) -> list[TrialRun]:
        """The candidate's own completed fit trials with steady work: measurements of r."""
        return [
            t
            for t in self.own_pooled
            if t.phase == Phase.fit
            and t.status == TrialStatus.completed
            and t.steady_work > 0
            and t.steady_clock_s > 0
            and self._factor.get(t.trial_id)
        ]

    def fit_count(self) -> int:
        """Where the candidate's fit trial says most: the count whose matched source count is
        the smallest the source measured (its throughput there is measured, not scaled), else 1
        [instances]."""
        src = self.source
        for m in self.src.measured_counts():
            exact = m * src.chips / src.target_chips
            if exact >= 1 and exact == int(exact):
                return int(exact)
        return 1

    def _target_warnings(self) -> None:
        led, c, w = self.ledger, self.candidate, self.workload
        own = self.own_pooled
        src = self.source.candidate.instance_type
        if not any(t.phase == Phase.target for t in own):
            led.warn(
                "no_target_phase_trial",
                f"no target-phase trial of {c.instance_type}: the estimate rests on another "
                "chip's trials, not on near-production data size, parallelism and checkpointing",
            )
        if not any(t.checkpointing.restore_verified for t in own):
            led.warn(
                "restore_never_verified",
                f"no trial of {c.instance_type} verified a checkpoint restore: failure recovery "
                "is assumed, not shown",
            )
        gate = w.quality_gate
        led.warn(
            "quality_gate_not_verified",
            f"no trial of {c.instance_type} reached the quality gate {gate.metric} "
            f"{gate.direction} {gate.threshold:g}: the cost is of work done, not of a model "
            "that meets it",
        )
        if not any(t.timing_scope.data_loading for t in self.usable):
            led.warn(
                "data_loading_outside_clock",
                "the trials' clocks exclude data loading: the time holds for steady state only",
            )
        led.warn(
            "figures_from_other_chip",
            f"compile, warm-up, setup, checkpoint, evaluation, restart and usage figures are "
            f"the {src} trials' ({', '.join(t.trial_id for t in self.trials)}): stand-ins until "
            f"trials of {c.instance_type} measure them",
        )

    # -- the ratio ----------------------------------------------------------------------------
    def ratio(self) -> Ratio:
        """The per-chip ratio's prior and its update by the candidate's fit trials (cached).

        Returns
        -------
        Ratio
        """
        if self._ratio is not None:
            return self._ratio
        src = self.source
        stated_src = stated_precision([t.precision for t in self.src.usable])
        target_prec = self.candidate.precision.value if self.candidate.precision else None
        assumed: list[str] = []
        if target_prec is None:
            target_prec = stated_src
            if target_prec is None:
                target_prec = DEFAULT_PRECISION
                assumed.append("target")
        source_prec = stated_src
        if source_prec is None:
            source_prec = DEFAULT_PRECISION
            assumed.append("source")
        mu0, sd0, peak, bw, link = ratio_prior(src.chip, src.target, source_prec, target_prec)
        observed: list[tuple[str, float, float]] = []
        for t in self.fit_observations():
            n_src, scale = src.count(t.candidate.instance_count)
            x_src = self.src.throughput(n_src).value * scale
            y = self.quality_work(t) / t.steady_clock_s
            cv = sample_cv(t)
            sigma = math.sqrt(
                cv**2 + cross_chip().fit_trial_noise ** 2 + source_log_sd(self.src, n_src) ** 2
            )
            observed.append((t.trial_id, math.log(y / x_src), sigma))
        mu, sd = update(mu0, sd0, [(v, s) for _, v, s in observed])
        self._ratio = Ratio(
            peak=peak,
            bandwidth=bw,
            interconnect=link,
            source_precision=source_prec,
            target_precision=target_prec,
            assumed=tuple(assumed),
            prior_mu=mu0,
            prior_sd=sd0,
            mu=mu,
            sd=sd,
            observations=tuple(observed),
        )
        self._ratio_rows(self._ratio)
        return self._ratio

    def _ratio_rows(self, r: Ratio) -> None:
        led, src = self.ledger, self.source
        a, b = src.chip, src.target
        chip_sources = [
            f"{b.name} {r.target_precision} peak: {b.source_of('peak_dense_tflops')}",
            f"{a.name} {r.source_precision} peak: {a.source_of('peak_dense_tflops')}",
            f"{b.name} HBM: {b.source_of('hbm')}",
            f"{a.name} HBM: {a.source_of('hbm')}",
        ]
        rows = [
            led.row(
                "projection:peak_ratio",
                f"dense peak ratio, {b.name} {r.target_precision} over {a.name} "
                f"{r.source_precision}",
                r.peak,
                None,
                PublishedReference(
                    sources=chip_sources[:2],
                    figure=f"{b.peaks[r.target_precision] / 1e12:g} / "
                    f"{a.peaks[r.source_precision] / 1e12:g} TFLOP/s per chip",
                    data_file=CHIPS_FILE,
                ),
            ),
            led.row(
                "projection:bandwidth_ratio",
                f"HBM bandwidth ratio, {b.name} over {a.name}",
                r.bandwidth,
                None,
                PublishedReference(
                    sources=chip_sources[2:],
                    figure=f"{b.hbm_tb_s:g} / {a.hbm_tb_s:g} TB/s per chip",
                    data_file=CHIPS_FILE,
                ),
            ),
        ]
        if r.interconnect is not None:
            led.row(
                "projection:interconnect_ratio",
                f"interconnect ratio, {b.name} over {a.name} (shown; weighs 0 in the ratio)",
                r.interconnect,
                None,
                PublishedReference(
                    sources=[
                        f"{b.name}: {b.source_of('interconnect_gb_s')}",
                        f"{a.name}: {a.source_of('interconnect_gb_s')}",
                    ],
                    figure=f"{b.interconnect_gb_s:g} / {a.interconnect_gb_s:g} GB/s per chip; "
                    "MLPerf pairs at matched counts do not identify its weight "
                    "(estimate/data/cross_chip.json, interconnect_note)",
                    data_file=CHIPS_FILE,
                ),
            )
        if r.observations:
            fits = [t for t in self.fit_observations()]
            rows.append(
                led.row(
                    "projection:fit_trials",
                    f"ln r measured by the {self.candidate.instance_type} fit trial(s)",
                    sum(v for _, v, _ in r.observations) / len(r.observations),
                    None,
                    measurement(
                        fits,
                        "ln(steady quality work / steady clock ÷ the source's throughput at the "
                        "matched count), each with noise √(cv² + fit_trial_noise² + the source's "
                        "spread²)",
                    ),
                )
            )
        p = cross_chip()
        led.row(
            "projection:ratio",
            f"per-chip ratio {b.name} over {a.name}: P10–P90 {r.quantile(-Z90):.3g}–"
            f"{r.quantile(Z90):.3g}×, the value exp(E[ln r])",
            r.point,
            None,
            PublishedReference(
                sources=[*p.sources, *chip_sources],
                figure=r.describe() + f" (from rows {', '.join(rows)})",
                data_file=DATA_FILE,
            ),
        )
        if r.assumed:
            whose = {
                "target": f"the candidate ({self.candidate.instance_type})",
                "source": f"the {src.candidate.instance_type} trials",
            }
            led.warn(
                "projection_precision_assumed",
                f"{' and '.join(whose[w] for w in r.assumed)} state no precision: the peak "
                f"ratio is {r.target_precision} over {r.source_precision} (another precision "
                "gives another ratio: state candidate.precision)",
            )

    # -- throughput ---------------------------------------------------------------------------
    def projection(self, count: int) -> Projection:
        """The projected throughput at `count` (estimate/projection.py gives the model), its
        rows in the ledger.

        Parameters
        ----------
        count : int
            The candidate's instance count [instances].

        Returns
        -------
        Projection
        """
        r = self.ratio()
        n_src, scale = self.source.count(count)
        src_rate = self.src.throughput(n_src)
        self._forward_source()
        return Projection(count, n_src, scale, src_rate.value, SOURCE_PREFIX + src_rate.row_id, r)

    def throughput(self, count: int) -> Measured[float]:
        """Projected throughput at `count`: X̂_src(n')·(n'_exact/n')·exp(E[ln r]) [target
        units/s] (the module docstring gives the model); its row `throughput:n=<count>` has the
        provenance `published_reference`.

        Parameters
        ----------
        count : int
            Instances [instances].

        Returns
        -------
        Measured[float]
            The throughput [target units/s] and its input row.
        """
        p = self.projection(count)
        r, c = p.ratio, self.candidate
        src = self.source.candidate.instance_type
        unit = self.workload.target.unit
        lo, hi = r.quantile(-Z90), r.quantile(Z90)
        matched = f"{p.source_count} {src}" + (f" × {p.scale:.3g}" if p.scale != 1 else "")
        row = self.ledger.row(
            f"throughput:n={count}",
            f"throughput at {count} instances (PROJECTED from {matched}: ratio {r.point:.3g}×)",
            p.value,
            f"{unit}/s",
            PublishedReference(
                sources=list(cross_chip().sources),
                figure=f"projected, not measured: X(n={count}) = X_{src}(n={p.source_count}) "
                f"{'× ' + format(p.scale, '.4g') + ' ' if p.scale != 1 else ''}× r (rows "
                f"{p.source_row}, projection:ratio); {r.describe()}",
                data_file=DATA_FILE,
            ),
        )
        self.ledger.warn(
            "projected_throughput",
            f"no throughput trial of {c.instance_type}: its throughput is PROJECTED from the "
            f"{src} trials × a published per-chip ratio {r.point:.3g}× (P10–P90 {lo:.3g}–"
            f"{hi:.3g}×, from MLPerf chip-generation pairs): a planning range, never a budget — "
            f"the fit trial of {c.instance_type} measures it",
        )
        return Measured(p.value, row)

    def _forward_source(self) -> None:
        """The source's throughput rows (prefixed `source:`) and its scale warnings, in the
        candidate's ledger."""
        led, src = self.ledger, self.source.candidate.instance_type
        for rid, row in self._scratch.rows.items():
            if not rid.startswith(("throughput", "scaling:", "effective_throughput")):
                continue
            prov = row.provenance
            if isinstance(prov, Derived):
                prov = Derived(
                    formula=prov.formula, inputs=[SOURCE_PREFIX + i for i in prov.inputs]
                )
            led.row(SOURCE_PREFIX + rid, f"{src}: {row.label}", row.value, row.unit, prov)
        for w in self._scratch.warnings:
            if w.code in SOURCE_WARNINGS:
                led.warn(w.code, f"the {src} trials the projection rests on: {w.message}")


def project(inp: EstimateInput, ledger: Ledger, missing: MissingEvidence) -> ProjectedEvidence:
    """The projected evidence of `inp`'s candidate, else `missing` (raised again, saying why no
    projection is possible).

    Parameters
    ----------
    inp : EstimateInput
        The candidate's request.
    ledger : Ledger
        Receives its rows and warnings.
    missing : MissingEvidence
        Why it has no evidence of its own.

    Returns
    -------
    ProjectedEvidence

    Raises
    ------
    MissingEvidence
        No chip on record for the candidate, no other chip's usable trial, or no peak at a
        precision.
    """
    source = source_for(inp)
    if source is None:
        why = (
            f"no chip on record for {inp.candidate.instance_type}"
            if chip_of(inp.candidate.instance_type) is None
            else "no usable trial of another chip on record to project from"
        )
        raise MissingEvidence(
            f"{missing}; no cross-chip projection: {why}", missing=missing.missing
        )
    return ProjectedEvidence(inp, ledger, source)
