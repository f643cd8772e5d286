"""The failure rate: a published reference prior, updated with the trials' own failures.

Trials are short: minutes to hours of instance time, usually with no failure at all. Read alone
(a Jeffreys posterior, Gamma(½, H)), that says "anything up to ~1/H per instance-hour", which
makes long plans on many instances look impossible. Large training runs have published their
interruption counts (estimate/data/failure_prior.json: what was counted, on how many
accelerators, over how many days, by whom and when). trncost pools them into a rate per
accelerator-hour, r̄ = Σ interruptions / Σ accelerator-hours, and takes as prior for a candidate
with A accelerators per instance

    λ ~ Gamma(shape α₀, rate β₀)   per instance-hour,   mean α₀/β₀ = A·r̄

α₀ (the file's `shape`, 1: an exponential, the maximum-entropy law of a positive rate with a
known mean) is the prior's strength: worth about α₀ failures of evidence, i.e. β₀ = α₀ / (A·r̄)
instance-hours of pseudo-exposure. With f failures in H instance-hours of trials the posterior
is Gamma(α₀ + f, β₀ + H) (Gamma–Poisson). The range draws from it; the estimate's point value is
its mode, (α₀ + f − 1) / (β₀ + H): the most probable rate, 0 when no trial failed (the range
carries the prior's mass, and the estimate warns `no_failures_observed`).

Prior–data conflict: when the trials show more failures than the prior makes plausible (its
predictive, a negative binomial, gives P(F ≥ f) < 1 %), this fleet is not like the published
ones: the prior is set aside with a warning and the trials speak alone (point f/H, range
Gamma(f + ½, H)). A user replaces the published prior with their own fleet's record through
`assumptions.failure_prior` (interruptions over accelerator-hours, and its source), or the rate
itself through `assumptions.failure_rate_per_instance_hour`. An instance type whose accelerator
count trncost does not know gets no prior (the trials alone, with a warning).

References
----------
The sources in estimate/data/failure_prior.json (Llama 3 405B, arXiv:2407.21783 §3.3.4;
Lablup's 504-GPU B200 report, arXiv:2605.09370; OPT-175B's logbook); the Gamma–Poisson
conjugate update and its negative-binomial predictive, and the Jeffreys prior of a Poisson
rate: A. Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.6 and §2.8. DESIGN.md,
"The cost model" (failure rate λ per instance-hour) and principle 9.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from trncost.estimate.mfu import CHIP_PEAKS
from trncost.model.assumptions import FleetFailurePrior
from trncost.model.provenance import PublishedReference, UserAssumption
from trncost.model.trial import TrialRun

DATA_FILE = "trncost/estimate/data/failure_prior.json"


@cache
def published() -> dict[str, Any]:
    """The published failure prior as data (estimate/data/failure_prior.json, read once).

    Returns
    -------
    dict[str, Any]
        `shape`, `conflict_p` and `sources` (each: what was counted, `interruptions`,
        `accelerators`, `days`, title, URL, publication date).
    """
    text = resources.files("trncost.estimate").joinpath("data/failure_prior.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def per_accelerator_hour() -> tuple[float, float, float]:
    """The published sources pooled::

        r̄ = Σ interruptions / Σ (accelerators × days × 24)

    Returns
    -------
    tuple[float, float, float]
        r̄ [1/accelerator-hour], Σ interruptions [interruptions], Σ accelerator-hours
        [accelerator-hours].
    """
    srcs = published()["sources"]
    failures = float(sum(s["interruptions"] for s in srcs))
    hours = float(sum(s["accelerators"] * s["days"] * 24 for s in srcs))
    return failures / hours, failures, hours


@dataclass(frozen=True)
class GammaPrior:
    """λ ~ Gamma(shape, rate) per instance-hour, and where it comes from: `shape` [unitless]
    (the prior's strength, in failures of evidence), `rate` [instance-hours] (its
    pseudo-exposure), `accelerators` per instance, its provenance and label."""

    shape: float
    rate: float  # pseudo-exposure, instance-hours
    accelerators: int
    provenance: PublishedReference | UserAssumption
    label: str

    @property
    def mean(self) -> float:
        """shape / rate: the prior's mean failure rate [1/instance-hour]."""
        return self.shape / self.rate


def prior_for(instance_type: str, fleet: FleetFailurePrior | None) -> GammaPrior | None:
    """The failure prior for one instance of `instance_type`, with A accelerators (the MFU
    chip table's count) and a per-accelerator rate r (published pooled r̄, or the `fleet`'s
    interruptions / accelerator-hours: half an interruption when it recorded none)::

        λ ~ Gamma(α₀, β₀),   β₀ = α₀ / (A·r),   mean α₀/β₀ = A·r   [1/instance-hour]

    α₀ is the file's `shape` (1), or the fleet's own.

    Returns
    -------
    GammaPrior or None
        None when the instance type's accelerator count is not on record.

    References
    ----------
    estimate/data/failure_prior.json (its sources); DESIGN.md, principle 4
    (`published_reference`); Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.6.
    """
    peak = CHIP_PEAKS.get(instance_type)
    if peak is None:
        return None
    a = peak.chips_per_instance
    data = published()
    if fleet is not None:
        shape = fleet.shape if fleet.shape is not None else float(data["shape"])
        per_acc = fleet.interruptions / fleet.accelerator_hours
        if per_acc <= 0:
            per_acc = 0.5 / fleet.accelerator_hours  # no interruption recorded: half of one
        return GammaPrior(
            shape=shape,
            rate=shape / (a * per_acc),
            accelerators=a,
            provenance=UserAssumption(
                name="failure_prior",
                note=f"{fleet.interruptions:g} interruptions in {fleet.accelerator_hours:g} "
                f"accelerator-hours ({fleet.source})" + (f"; {fleet.note}" if fleet.note else ""),
            ),
            label=f"failure prior: your fleet's rate × {a} accelerators per instance",
        )
    rate, failures, hours = per_accelerator_hour()
    shape = float(data["shape"])
    sources = [
        f"{s['title']} ({s['published']}) {s['url']}: {s['counted']}" for s in data["sources"]
    ]
    return GammaPrior(
        shape=shape,
        rate=shape / (a * rate),
        accelerators=a,
        provenance=PublishedReference(
            sources=sources,
            figure=f"pooled {failures:g} interruptions / {hours:,.0f} accelerator-hours = "
            f"{rate:.3g} per accelerator-hour × {a} accelerators per {instance_type}; Gamma "
            f"shape {shape:g} (prior strength: about {shape:g} failures of evidence)",
            data_file=DATA_FILE,
        ),
        label=f"failure prior: published interruption rate × {a} accelerators per instance",
    )


def _nb_tail(failures: int, shape: float, rate: float, hours: float) -> float:
    """P(F ≥ failures) when F ~ Poisson(λ·hours), λ ~ Gamma(shape, rate): negative binomial."""
    if failures <= 0:
        return 1.0
    p = rate / (rate + hours)
    log_p, log_q = math.log(p), math.log1p(-p) if p < 1 else -math.inf
    below = 0.0
    for k in range(failures):
        log_pmf = (
            math.lgamma(k + shape)
            - math.lgamma(k + 1)
            - math.lgamma(shape)
            + shape * log_p
            + (k * log_q if k else 0.0)
        )
        below += math.exp(log_pmf)
    return max(0.0, 1.0 - below)


@dataclass(frozen=True)
class FailurePosterior:
    """What the range draws the failure rate from, and the point value the estimate uses:
    Gamma(`shape` [unitless], `rate` [instance-hours]), `point` [1/instance-hour], from
    `failures` in `hours` [instance-hours] of trials, the `prior` (None: none applies) and,
    when the trials contradict it, `conflict_p` (the prior predictive's P(F ≥ failures))."""

    shape: float
    rate: float  # instance-hours
    point: float
    failures: int
    hours: float
    prior: GammaPrior | None
    conflict_p: float | None = None  # set when the trials contradict the prior

    @property
    def uses_prior(self) -> bool:
        """Whether the prior is in the posterior (one applies and the trials agree with it)."""
        return self.prior is not None and self.conflict_p is None

    def describe(self) -> str:
        """The posterior in words, for the range's basis.

        Returns
        -------
        str
            `Gamma(shape α₀ + f, rate β₀ + H instance-h): …`, or (the trials alone)
            `Gamma(shape f + 0.5, rate H instance-h)`.
        """
        if self.uses_prior:
            assert self.prior is not None
            return (
                f"Gamma(shape {self.prior.shape:g} + {self.failures}, rate {self.prior.rate:.6g}"
                f" + {self.hours:.6g} instance-h): the failure prior updated with the trials"
            )
        return f"Gamma(shape {self.failures} + 0.5, rate {self.hours:.6g} instance-h)"


def posterior(
    trials: Sequence[TrialRun], instance_type: str, fleet: FleetFailurePrior | None
) -> FailurePosterior:
    """The failure rate of one `instance_type` instance after the `trials`: f failures in H
    instance-hours (Σ over the trials, reruns included) update the prior (`prior_for`, with
    the `fleet`'s record when given)::

        λ | trials ~ Gamma(α₀ + f, β₀ + H),   point = max(α₀ + f − 1, 0) / (β₀ + H)  (mode)

    When the prior predictive (negative binomial) gives P(F ≥ f) below the file's
    `conflict_p` (1 %), or no prior applies, the trials speak alone (Jeffreys):
    Gamma(f + ½, H), point f / H (0 with no exposure).

    Returns
    -------
    FailurePosterior
        The Gamma the range draws from, the point [1/instance-hour], the evidence (f, H) and
        the prior.

    References
    ----------
    Gelman et al., Bayesian Data Analysis, 3rd ed. (2013), §2.6 (Poisson model, Gamma
    conjugate prior, negative-binomial predictive); estimate/data/failure_prior.json;
    DESIGN.md, "The cost model" (λ per instance-hour from trial records).
    """
    failures = sum(t.reliability.failures for t in trials)
    hours = sum(t.instance_hours for t in trials)
    prior = prior_for(instance_type, fleet)
    measured = failures / hours if hours > 0 else 0.0
    if prior is None:
        return FailurePosterior(failures + 0.5, hours, measured, failures, hours, None)
    tail = _nb_tail(failures, prior.shape, prior.rate, hours)
    if tail < float(published()["conflict_p"]) and hours > 0:
        return FailurePosterior(failures + 0.5, hours, measured, failures, hours, prior, tail)
    shape, rate = prior.shape + failures, prior.rate + hours
    return FailurePosterior(shape, rate, max(shape - 1, 0.0) / rate, failures, hours, prior)
