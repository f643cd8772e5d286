"""Forward-chaining (time-ordered) validation inside the TUNING rounds: which way of building
the scaling priors' centres and spreads predicts the NEXT round best. Used to choose the method
that `python benchmarks/calibrate.py --fit-priors` applies; the report rounds play no part.

    python benchmarks/calibrate.py --forward

Each fold predicts one tuning round from what the rounds published before it give: its centres
from those rounds only, its spreads by the candidate's rule. Folds, by MLCommons publication
date: v0.7 (from v0.5, v0.6), HPC v0.7, v1.0, HPC v1.0, v2.1 (from all before). The first fold
only ever trains a spread (a rule that reads earlier folds' errors has none before it), so
every candidate is scored on the later four alike. (The fit between measured counts has
interior counts in v0.6, v0.7 and v2.1 only: its folds are v0.7 and v2.1.)

The result, and the method chosen from it, are in docs/estimates.md ("How that method was
chosen"); `calibrate.py` applies that method (PER_ROUND, HALF_LIFE and tune_spreads).

Score: the interval score of the P10–P90 range in ln(time) (Gneiting & Raftery 2007, α = 0.2:
width + 10 × how far the truth falls outside), a proper score: lowest for a range that is
calibrated (80 %) and as narrow as that allows; coverage, median |error| and bias beside it.

Candidates, exponent priors (< 3 counts):
  centres  each count pair alike (the method so far), or each round as one (its pairs share
           its weight); either also weighted 2^(−age/h) for a half-life h of 1 or 2 years, the
           age from the newest round trained on (4 years was tried too: the same as none);
  spreads  (LORO) σ whose leave-one-round-out coverage on the earlier rounds is nearest
           82.5 % (the method so far), or σ from the earlier folds' forward predictions —
           errors that include the drift from one round to the next — with the least interval
           score (fwd score) or the coverage nearest 82.5 % (fwd cov).
Candidates, the fit between measured counts (leave-one-out): the discrepancy prior (s₀, and
ν₀ down to 1: a small ν₀ is the textbook t with m − k degrees of freedom) and τ_in picked on
the earlier rounds' interpolations by coverage nearest 82.5 % (the method so far) or by
interval score; each with the bootstrap's noise the counts' own, or the counts' own and the
fit's discrepancy (a fit that misses its points has less certain parameters).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

FOLDS = ("v0.7", "hpc-v0.7", "v1.0", "hpc-v1.0", "v2.1")  # in publication order
SIGMAS = [x / 10 for x in range(3, 14)]
HALF_LIVES: tuple[float | None, ...] = (None, 2.0, 1.0)
CENTRES = [(h, per) for per in (False, True) for h in HALF_LIVES]
ALPHA = 0.2  # the P10–P90 range is the 80 % central interval


def interval_score(o: Any) -> float:
    lo, hi, y = math.log(o.p10), math.log(o.p90), math.log(o.truth_h)
    return (hi - lo) + (2 / ALPHA) * (max(lo - y, 0.0) + max(y - hi, 0.0))


def summary(outs: list[Any]) -> str:
    if not outs:
        return "—"
    cov = sum(o.covered for o in outs) / len(outs)
    err = statistics.median(abs(o.error) for o in outs)
    bias = statistics.median(o.error for o in outs)
    score = statistics.mean(interval_score(o) for o in outs)
    return f"{len(outs):>4} {cov:>5.0%} {err:>7.1%} {bias:>+7.1%} {score:>6.3f}"


HEAD = f"{'n':>4} {'cov':>5} {'|err|':>7} {'bias':>7} {'score':>6}"


def _before(cal: Any, r: str) -> set[str]:
    return {t for t in cal.TUNING_ROUNDS if cal.ROUND_DATES[t] < cal.ROUND_DATES[r]}


# -- the exponent priors ---------------------------------------------------------------------
def _prior_keep(k: int) -> Callable[[list[int], int], bool]:
    return lambda m, t: len(m) == k


def _forward_grid(
    cal: Any, series: list[Any], k: int, h: float | None, per: bool
) -> dict[str, dict]:
    """fold → σ → the fold's k-count predictions, centres from the rounds before it."""
    attr = "one_count_sigma" if k == 1 else "two_count_sigma"
    out: dict[str, dict] = {}
    for r in FOLDS:
        cal._set_prior(
            **cal._centres(
                cal.fit_priors(series, rounds=_before(cal, r), half_life=h, per_round=per)
            )
        )
        target = [s for s in series if s.round == r]
        out[r] = {}
        for sg in SIGMAS:
            cal._set_prior(**{attr: sg})
            out[r][sg] = cal.run_all(target, keep=_prior_keep(k))
    return out


def _loro_sigma(
    cal: Any, series: list[Any], k: int, h: float | None, per: bool, rounds: set[str]
) -> float:
    """σ whose leave-one-round-out coverage over `rounds` is nearest 82.5 % (the sharpest
    within a point of it): the method so far, inside the rounds before a fold."""
    attr = "one_count_sigma" if k == 1 else "two_count_sigma"
    outs: dict[float, list[Any]] = {sg: [] for sg in SIGMAS}
    for r in sorted(rounds):
        cal._set_prior(
            **cal._centres(cal.fit_priors(series, rounds=rounds - {r}, half_life=h, per_round=per))
        )
        target = [s for s in series if s.round == r]
        for sg in SIGMAS:
            cal._set_prior(**{attr: sg})
            outs[sg] += cal.run_all(target, keep=_prior_keep(k))
    tried = [(sg, cal._coverage(o), cal._width(o)) for sg, o in outs.items() if o]
    gap = min(abs(c - cal.TARGET) for _, c, _ in tried)
    return min((t for t in tried if abs(t[1] - cal.TARGET) <= gap + 0.01), key=lambda t: t[2])[0]


def forward_sigma(grid: dict[str, dict], folds: tuple[str, ...], by: str) -> float:
    """σ over `folds`' forward predictions: the least mean interval score (by "score"), or
    the coverage nearest 82.5 % (by "coverage"; the sharpest within a point of it)."""

    def outs(sg: float) -> list[Any]:
        return [o for r in folds for o in grid[r][sg]]

    if by == "score":
        return min(SIGMAS, key=lambda sg: statistics.mean(interval_score(o) for o in outs(sg)))
    cov = {sg: sum(o.covered for o in outs(sg)) / len(outs(sg)) for sg in SIGMAS}
    gap = min(abs(c - 0.825) for c in cov.values())
    return min(sg for sg in SIGMAS if abs(cov[sg] - 0.825) <= gap + 0.01)


def prior_table(cal: Any, series: list[Any], loro: bool = True) -> list[str]:
    """The exponent priors' candidates (each row printed as soon as it is known)."""
    lines = [
        f"exponent priors, forward folds {', '.join(FOLDS[1:])} (tuning rounds only):",
        f"  {'k':>1} {'centres':<22} {'spread':<10} {'≤ 4×: ' + HEAD:<42}  > 4×: {HEAD}",
    ]
    print("\n".join(lines), flush=True)
    for k in (1, 2):
        for h, per in CENTRES:
            grid = _forward_grid(cal, series, k, h, per)
            rules: dict[str, dict[str, float]] = {"fwd score": {}, "fwd cov": {}, "LORO": {}}
            for j, r in enumerate(FOLDS[1:], start=1):
                rules["fwd score"][r] = forward_sigma(grid, FOLDS[:j], "score")
                rules["fwd cov"][r] = forward_sigma(grid, FOLDS[:j], "coverage")
                if loro:
                    rules["LORO"][r] = _loro_sigma(cal, series, k, h, per, _before(cal, r))
            name = ("rounds" if per else "pairs") + " alike" + ("" if h is None else f", h {h:g} y")
            for rule, sig in rules.items():
                if not sig:
                    continue
                outs = [o for r in FOLDS[1:] for o in grid[r][sig[r]]]
                near = [o for o in outs if "≤ 4×" in o.regime]
                far = [o for o in outs if "> 4×" in o.regime]
                sigmas = "/".join(f"{sig[r]:g}" for r in FOLDS[1:])
                lines.append(
                    f"  {k} {name:<22} {rule:<10} {summary(near):<42}  {summary(far)}   σ {sigmas}"
                )
            print("\n".join(lines[-sum(1 for v in rules.values() if v) :]), flush=True)
    return lines


# -- the fit between measured counts ---------------------------------------------------------
INTERP_GRID = [
    {"discrepancy_scale": sc, "discrepancy_dof": dof, "interpolation_tau": tau}
    for sc in (0.02, 0.03, 0.04, 0.05, 0.06, 0.08)
    for dof in (1.0, 2.0, 3.0, 5.0, 10.0)
    for tau in (0.0, 0.025, 0.05, 0.075, 0.1, 0.15)
]


def fit_table(cal: Any, series: list[Any]) -> list[str]:
    interp = [s for s in series if s.tuning]
    folds = [
        r
        for r in FOLDS
        if any(
            cal._interpolating(m, t) for s in interp if s.round == r for m, t in cal.experiments(s)
        )
    ]
    lines = [
        f"fit, interpolating (leave-one-out), forward folds {', '.join(folds)}:",
        f"  {'bootstrap noise':<24} {'pick by':<9} {HEAD}   settings per fold",
    ]
    for boot in (0.0, 1.0):
        cal._set_prior(bootstrap_discrepancy=boot)
        per: dict[str, list[tuple[dict, list[Any]]]] = {}
        for r in sorted({s.round for s in interp}, key=cal.ROUND_DATES.__getitem__):
            target = [s for s in interp if s.round == r]
            per[r] = []
            for v in INTERP_GRID:
                cal._set_prior(**v)
                per[r].append((v, cal.run_all(target, keep=cal._interpolating)))
        for rule in ("coverage", "score"):
            outs, picks = [], []
            for r in folds:
                train = [rr for rr in per if cal.ROUND_DATES[rr] < cal.ROUND_DATES[r]]
                tried = []
                for i in range(len(per[r])):
                    o = [x for rr in train for x in per[rr][i][1]]
                    if not o:
                        continue
                    s = statistics.mean(interval_score(x) for x in o)
                    tried.append((i, cal._coverage(o), cal._width(o), s))
                if not tried:
                    continue
                if rule == "coverage":
                    gap = min(abs(t[1] - cal.TARGET) for t in tried)
                    best = min(
                        (t for t in tried if abs(t[1] - cal.TARGET) <= gap + 0.01),
                        key=lambda t: t[2],
                    )
                else:
                    best = min(tried, key=lambda t: t[3])
                picks.append(f"{r}: " + ",".join(f"{x:g}" for x in per[r][best[0]][0].values()))
                outs += per[r][best[0]][1]
            label = "counts' own" if boot == 0 else "counts' own + discrepancy"
            lines.append(f"  {label:<24} {rule:<9} {summary(outs)}   {'; '.join(picks)}")
    cal._set_prior(bootstrap_discrepancy=0.0)
    return lines
