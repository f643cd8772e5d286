"""Projected, not measured: a planning throughput for a candidate without a throughput trial of
its own, from the team's trials on another chip and a published per-chip ratio.

    X(n)  = X_src(n') · r,     n' = n · chips per instance / the source's chips per instance
    ln r  ~ Normal(μ, s²),     μ₀ = a·ln(P_t / P_s) + b·ln(B_t / B_s) + m,   s₀ = the residual sd

X_src is the source's own throughput model at n' (its trials at that count, a scaling fit, or
the published scaling prior: estimate/evidence.py), P the chips' dense peaks at the precision
each runs, B their HBM bandwidths (estimate/data/chips.json), and a, b, m, s₀ the cross-chip
prior fitted on MLPerf Training chip-generation pairs (estimate/data/cross_chip.json, by
benchmarks/cross_chip.py): the residual's spread is how far the fit misses a chip generation it
has not seen. The candidate's own fit trials (completed, with steady work) update ln r as
measurements, Normal–Normal: each reads ln rₖ = ln yₖ − ln X̂_src(n'ₖ) with a log noise
√(cvₖ² + fit_trial_noise² + s_src(n'ₖ)²), so

    1/s² = 1/s₀² + Σ 1/σₖ²,     μ = s²·(μ₀/s₀² + Σ ln rₖ/σₖ²)

one continuous model: the published ratio is the prior, the team's own fit trials move it (no
switch). The point value is exp(E[ln X]) = X̂_src(n')·exp(μ), the geometric mean of the draws
the range is made of (estimate/draws.py), as for every throughput (DESIGN.md, principle 10).
The first usable baseline or target trial of the candidate makes it measured (its own
throughput then holds: one hour of steady samples weighs over fifty times the prior's spread).

A projected estimate has status `projected`, its throughput row the provenance
`published_reference`, and its decision is never `ready_to_budget` (DESIGN.md, principle 11).
Compile, warm-up, setup, checkpoint, evaluation, restart and usage figures are the source
trials' (stand-ins, said so); the failure rate is the candidate's own prior updated with its own
trials.

The source: among the workload's other instance types whose chip is on record and that have a
usable trial, the same accelerator family first (Trainium from Trainium, else a GPU), then the
nearest chip (|ln peak ratio| + |ln bandwidth ratio|), then the most usable trials.

Pure Python (no numpy): the engine's point value uses it at cold start.

References
----------
estimate/data/cross_chip.json and benchmarks/calibration/cross_chip/cross_generation_pairs.json
(MLPerf Training results, each pair with its result directories); estimate/data/chips.json (the
chips' figures and sources); Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.5 (the normal
model with known variance); DESIGN.md, principles 6, 10 and 11.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from trncost.errors import MissingEvidence
from trncost.estimate.admission import admit
from trncost.estimate.chips import Chip, chip_of
from trncost.estimate.evidence import Evidence
from trncost.estimate.failure_prior import Z90
from trncost.model.candidate import Candidate
from trncost.model.estimate import EstimateInput
from trncost.model.trial import TrialRun

DATA_FILE = "trncost/estimate/data/cross_chip.json"
DEFAULT_PRECISION = "bf16"  # a precision no trial or candidate states is taken as bf16, said so
SOURCE_PREFIX = "source:"  # the source's own rows, as they appear in the input table
# the source's warnings that bear on the projected throughput (forwarded, said whose)
SOURCE_WARNINGS = frozenset(
    {"unmeasured_instance_count", "extrapolated_scale", "mixed_timing_scopes", "implausible_mfu"}
)


@dataclass(frozen=True)
class CrossChipPrior:
    """The cross-chip prior's constants (estimate/data/cross_chip.json): ln r = a·ln(peak
    ratio) + b·ln(bandwidth ratio) + ε, ε ~ Normal(`mean`, `sd`²) [unitless]; one fit trial's
    log noise `fit_trial_noise` [unitless] (an assumption); what it was fitted on."""

    a_peak: float
    b_bandwidth: float
    mean: float
    sd: float
    fit_trial_noise: float
    pairs: int
    transitions: int
    sources: tuple[str, ...]


@cache
def cross_chip() -> CrossChipPrior:
    """The prior, read once from estimate/data/cross_chip.json.

    Returns
    -------
    CrossChipPrior
    """
    text = resources.files("trncost.estimate").joinpath("data/cross_chip.json").read_text()
    d = json.loads(text)
    return CrossChipPrior(
        a_peak=float(d["a_peak"]),
        b_bandwidth=float(d["b_bandwidth"]),
        mean=float(d["residual"]["mean"]),
        sd=float(d["residual"]["sd"]),
        fit_trial_noise=float(d["fit_trial_noise"]),
        pairs=int(d["fit"]["pairs"]),
        transitions=int(d["fit"]["transitions"]),
        sources=tuple(str(s) for s in d["sources"]),
    )


@dataclass(frozen=True)
class Source:
    """The trials a projection rests on: their instance type and platform (`candidate`, at the
    matched count once chosen), the two chips and their chips per instance."""

    candidate: Candidate
    chip: Chip
    chips: int
    target: Chip
    target_chips: int
    usable: int  # its usable trials [trials]

    def count(self, n: int) -> tuple[int, float]:
        """The source's instance count at `n` of the candidate's, matched by chips::

            n'_exact = n × chips per instance / the source's chips per instance

        Parameters
        ----------
        n : int
            The candidate's instance count [instances].

        Returns
        -------
        tuple[int, float]
            (n' rounded to a whole count ≥ 1 [instances], n'_exact / n' [unitless]: the
            per-chip factor for the fraction).
        """
        exact = n * self.target_chips / self.chips
        whole = max(1, round(exact))
        return whole, exact / whole


def _distance(a: Chip, b: Chip) -> float:
    peak = math.log(a.peaks.get("bf16", 1.0) / b.peaks.get("bf16", 1.0))
    bw = math.log((a.hbm_tb_s or 1.0) / (b.hbm_tb_s or 1.0))
    return abs(peak) + abs(bw)


def source_for(inp: EstimateInput) -> Source | None:
    """The other chip a projection of `inp`'s candidate rests on (module docstring: the same
    accelerator family first, then the nearest chip, then the most usable trials).

    Returns
    -------
    Source or None
        None when the candidate's chip is not on record or no other instance type of the
        workload has a usable trial on a chip that is.
    """
    c = inp.candidate
    found = chip_of(c.instance_type)
    if found is None:
        return None
    target, target_chips = found
    seen: dict[tuple[str, str], TrialRun] = {}
    for t in inp.trials:
        key = (t.candidate.instance_type, str(t.candidate.platform))
        if key != (c.instance_type, str(c.platform)) and key not in seen:
            seen[key] = t
    options: list[tuple[tuple[bool, float, int, str], Source]] = []
    for (itype, _), first in seen.items():
        chip = chip_of(itype)
        if chip is None:
            continue
        cand = first.candidate.model_copy(update={"instance_count": 1})
        pooled = admit(
            inp.workload, cand, inp.trials, pool_mismatched=inp.assumptions.pool_mismatched_trials
        ).pooled
        usable = sum(t.usable_for_throughput for t in pooled)
        if not usable:
            continue
        src = Source(cand, chip[0], chip[1], target, target_chips, usable)
        same_family = cand.accelerator == c.accelerator
        key2 = (not same_family, _distance(chip[0], target), -usable, itype)
        options.append((key2, src))
    return min(options, key=lambda o: o[0])[1] if options else None


@dataclass(frozen=True)
class Ratio:
    """The per-chip ratio r (target over source) and its distribution: ln r ~ Normal(`mu`,
    `sd`²) after the candidate's own fit trials (`prior_mu`, `prior_sd` before them); the
    ratios it is built from [unitless], the precisions read and whether each was assumed."""

    peak: float
    bandwidth: float
    interconnect: float | None
    source_precision: str
    target_precision: str
    assumed: tuple[str, ...]  # which precisions were not stated
    prior_mu: float
    prior_sd: float
    mu: float
    sd: float
    observations: tuple[tuple[str, float, float], ...] = ()  # (trial id, ln rₖ, σₖ)

    @property
    def point(self) -> float:
        """exp(E[ln r]) [unitless]: the ratio of the point value."""
        return math.exp(self.mu)

    def quantile(self, z: float) -> float:
        """The ratio at a standard normal quantile, exp(μ + s·z).

        Parameters
        ----------
        z : float
            The quantile [unitless] (±1.2816 for P90 and P10).

        Returns
        -------
        float
            r [unitless].
        """
        return math.exp(self.mu + self.sd * z)

    def describe(self) -> str:
        """The ratio in words, for the input table and the range's basis [text]."""
        p = cross_chip()
        text = (
            f"ln r ~ Normal({self.prior_mu:.3g}, {self.prior_sd:.3g}²): {p.a_peak:.3g}·ln(peak "
            f"ratio {self.peak:.3g}, {self.target_precision} over {self.source_precision}) + "
            f"{p.b_bandwidth:.3g}·ln(HBM bandwidth ratio {self.bandwidth:.3g}) + {p.mean:.3g}, "
            f"sd {p.sd:.3g} (leave-one-transition-out over {p.transitions} MLPerf Training chip "
            f"generations, {p.pairs} same-round pairs)"
        )
        if self.observations:
            text += (
                f"; updated with {len(self.observations)} fit trial(s) of the candidate: "
                f"Normal({self.mu:.3g}, {self.sd:.3g}²)"
            )
        lo, hi = self.quantile(-Z90), self.quantile(Z90)
        return text + f"; r = {self.point:.3g}× (P10–P90 {lo:.3g}–{hi:.3g})"


def stated_precision(stated: Sequence[str | None]) -> str | None:
    """The one precision the trials agree on.

    Parameters
    ----------
    stated : Sequence[str or None]
        Each trial's precision (None: not stated).

    Returns
    -------
    str or None
        The precision every stated value agrees on; None when none is stated or they differ.
    """
    values = {s for s in stated if s is not None}
    return values.pop() if len(values) == 1 else None


def ratio_prior(
    source: Chip, target: Chip, source_precision: str, target_precision: str
) -> tuple[float, float, float, float, float | None]:
    """The cross-chip prior of ln r for two chips::

        μ₀ = a·ln(P_t / P_s) + b·ln(B_t / B_s) + m,   s₀ = sd

    Parameters
    ----------
    source, target : Chip
        The chips (their dense peaks [FLOP/s], HBM bandwidth [TB/s], interconnect [GB/s]).
    source_precision, target_precision : str
        The precision each runs at (bf16, fp8, mxfp8, …).

    Returns
    -------
    tuple
        (μ₀, s₀ [unitless], peak ratio, bandwidth ratio, interconnect ratio or None
        [unitless]).

    Raises
    ------
    MissingEvidence
        A chip has no peak at its precision, or no bandwidth on record.

    References
    ----------
    estimate/data/cross_chip.json (a, b, m, sd; benchmarks/cross_chip.py); estimate/data/
    chips.json.
    """
    for chip, prec in ((source, source_precision), (target, target_precision)):
        if prec not in chip.peaks:
            raise MissingEvidence(
                f"no {prec} peak on record for {chip.name}: no cross-chip projection",
                missing=["trial"],
            )
        if not chip.hbm_tb_s:
            raise MissingEvidence(
                f"no HBM bandwidth on record for {chip.name}: no cross-chip projection",
                missing=["trial"],
            )
    p = cross_chip()
    peak = target.peaks[target_precision] / source.peaks[source_precision]
    bw = (target.hbm_tb_s or 1.0) / (source.hbm_tb_s or 1.0)
    link = (
        target.interconnect_gb_s / source.interconnect_gb_s
        if target.interconnect_gb_s and source.interconnect_gb_s
        else None
    )
    mu = p.a_peak * math.log(peak) + p.b_bandwidth * math.log(bw) + p.mean
    return mu, p.sd, peak, bw, link


def update(
    prior_mu: float, prior_sd: float, observed: Sequence[tuple[float, float]]
) -> tuple[float, float]:
    """The Normal–Normal update of ln r with measurements (ln rₖ, σₖ)::

        1/s² = 1/s₀² + Σ 1/σₖ²,   μ = s²·(μ₀/s₀² + Σ ln rₖ/σₖ²)

    Parameters
    ----------
    prior_mu, prior_sd : float
        μ₀, s₀ [unitless].
    observed : Sequence[tuple[float, float]]
        Each measurement's ln rₖ and its noise σₖ > 0 [unitless].

    Returns
    -------
    tuple[float, float]
        (μ, s) [unitless].

    References
    ----------
    Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.5.
    """
    precision = 1 / prior_sd**2
    weighted = prior_mu * precision
    for value, sigma in observed:
        precision += 1 / sigma**2
        weighted += value / sigma**2
    return weighted / precision, math.sqrt(1 / precision)


@dataclass(frozen=True)
class Projection:
    """The projected throughput at one count: the source's count n' and the fraction factor,
    the source's point X̂_src(n') [target units/s] and its row, the ratio, the value."""

    count: int
    source_count: int
    scale: float
    source_rate: float
    source_row: str
    ratio: Ratio

    @property
    def value(self) -> float:
        """X̂_src(n')·scale·exp(μ) [target units/s]: exp(E[ln X])."""
        return self.source_rate * self.scale * self.ratio.point


def sample_cv(t: TrialRun) -> float:
    """A trial's relative sample spread: stdev / mean of its steady samples.

    Parameters
    ----------
    t : TrialRun
        The trial.

    Returns
    -------
    float
        [unitless]; 0 below two samples.
    """
    s = t.steady_throughput_samples
    if len(s) < 2:
        return 0.0
    mean = sum(s) / len(s)
    var = sum((x - mean) ** 2 for x in s) / (len(s) - 1)
    return math.sqrt(var) / mean if mean > 0 else 0.0


def source_log_sd(ev: Evidence, count: int) -> float:
    """The source's log spread at `count`, in closed form (the range draws it: estimate/draws.py)::

        a measured count:        its cv (between or within trials)
        ≥ 3 measured counts:     the fit's noise floor ⊕ a run's spread
        1–2 measured counts:     sd(α)·|ln(count/n₀)| ⊕ the prior's discrepancy ⊕ a run's spread

    (⊕: added in quadrature; sd(α) of the log-normal 1 − α). An approximation: it weighs a fit
    trial against the prior, where its exact value matters little.

    Parameters
    ----------
    ev : Evidence
        The source's evidence.
    count : int
        Its instance count [instances].

    Returns
    -------
    float
        [unitless]
    """
    from trncost.estimate.evidence import MIN_FIT_COUNTS
    from trncost.estimate.scaling_prior import PRIOR, exponent_prior

    counts = ev.measured_counts()
    spreads = [s for m in counts if (s := ev.spread_at(m)) is not None]
    run = math.sqrt(sum(s * s for s in spreads) / len(spreads)) if spreads else 0.0
    if count in counts:
        return ev.spread_at(count) or 0.0
    if len(counts) >= MIN_FIT_COUNTS:
        return math.hypot(PRIOR.model_floor, run)
    prior = exponent_prior([(m, ev.throughput(m).value) for m in counts], count)
    if prior.fixed is not None:
        sd_alpha = 0.0
    else:
        s2 = prior.sigma**2
        sd_alpha = math.sqrt((math.exp(s2) - 1) * math.exp(2 * prior.mu + s2))
    spread = sd_alpha * abs(math.log(count / prior.anchor))
    return math.sqrt(spread**2 + PRIOR.prior_discrepancy_scale**2 + run**2)
