"""Forward-chaining (time-ordered) validation inside the TUNING rounds: which way of building
the scaling priors' centres and spreads predicts the NEXT round best. Used to choose the method
that `python benchmarks/calibrate.py --fit-priors` applies; the report rounds play no part.

    python benchmarks/calibrate.py --forward

Each fold predicts one tuning round from what the rounds published before it give: its centres
from those rounds only, its spreads by the candidate's rule. Folds, by MLCommons publication
date: v0.7 (from v0.5, v0.6), HPC v0.7, v1.0, HPC v1.0, v2.1 (from all before). The first fold
only ever trains a spread (a rule that reads earlier folds' errors has none before it), so
every candidate is scored on the later four alike. (The ≥ 3-count series are in v0.6, v0.7
and v2.1 only: the fit's folds are v0.7 and v2.1.)

The result, and the method chosen from it, are in docs/estimates.md ("How that method was
chosen", "The fit's spreads"); `calibrate.py` applies that method (PER_ROUND, HALF_LIFE,
FIT_RULE and tune_spreads).

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
Candidates, the fit's spreads (fit_table; folds v0.7 and v2.1, the tuning rounds after the
first with ≥ 3-count series; each fold's exponent-prior centres from the rounds before it, for
the local power law past the measured counts): the method before issue 22 (no single-instance
noise; the discrepancy prior s₀, ν₀ and τ_in on the interpolations, then τ_out on the
extrapolations, each by coverage nearest 82.5 %) against the single-instance noise s₁ and
τ_out picked together on every fit prediction, then s₀, ν₀, τ_in on the interpolations, each
step by coverage or by interval score. Scored on every fit prediction: leave-one-out,
extrapolations ≤ 4× and > 4×, and their summed interval score.
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


# -- the fit's spreads -----------------------------------------------------------------------
FIT_BEFORE = {  # the published fit spreads before this choice (issue 14's third pass)
    "single_instance_noise": 0.0,
    "extrapolation_tau": 0.35,
    "discrepancy_scale": 0.05,
    "discrepancy_dof": 5.0,
    "interpolation_tau": 0.0,
}
FIT_FOLDS = ("v0.7", "v2.1")  # the tuning rounds after the first with ≥ 3-count series


def _regime_of(kind: str) -> Callable[[Any], bool]:
    return {
        "all": lambda o: True,
        "interp": lambda o: "interpolate" in o.regime,
        "extrap": lambda o: "extrapolate" in o.regime,
    }[kind]


def _fit_methods(cal: Any) -> dict[str, list[tuple[list[dict[str, float]], str, str]]]:
    """Each candidate method: its steps (grid, the predictions it reads, the rule)."""
    tau_only = [{"single_instance_noise": 0.0, "extrapolation_tau": x / 20} for x in range(11)]
    return {
        "before: s₁ 0; s₀ ν₀ τ_in (LOO), τ_out (past) by coverage": [
            (cal.DISCREPANCY_GRID, "interp", "coverage"),
            (tau_only, "extrap", "coverage"),
        ],
        "s₁ τ_out (all fits), s₀ ν₀ τ_in (LOO) by coverage": [
            (cal.FIT_NOISE_GRID, "all", "coverage"),
            (cal.DISCREPANCY_GRID, "interp", "coverage"),
        ],
        "s₁ τ_out by score, s₀ ν₀ τ_in by coverage": [
            (cal.FIT_NOISE_GRID, "all", "score"),
            (cal.DISCREPANCY_GRID, "interp", "coverage"),
        ],
        "s₁ τ_out, s₀ ν₀ τ_in by score (chosen)": [
            (cal.FIT_NOISE_GRID, "all", "score"),
            (cal.DISCREPANCY_GRID, "interp", "score"),
        ],
    }


def _best(cal: Any, tried: list[tuple[int, list[Any]]], rule: str) -> int:
    if rule == "score":
        return min(tried, key=lambda t: statistics.mean(interval_score(o) for o in t[1]))[0]
    cov = [(i, cal._coverage(o), cal._width(o)) for i, o in tried]
    gap = min(abs(c - cal.TARGET) for _, c, _ in cov)
    return min((t for t in cov if abs(t[1] - cal.TARGET) <= gap + 0.01), key=lambda t: t[2])[0]


def fit_table(cal: Any, series: list[Any]) -> list[str]:
    """The fit's spread methods (module docstring), each fold predicted with the settings its
    method picks on the tuning rounds before it (their exponent-prior centres too, for the local
    power law past the measured counts). Every fit prediction: leave-one-out interpolations,
    extrapolations ≤ 4× and > 4×."""
    lines = [
        f"fit spreads, forward folds {', '.join(FIT_FOLDS)} (tuning rounds only):",
        f"  {'method':<54} {'LOO: ' + HEAD:<40} {'≤ 4×: ' + HEAD:<40} > 4×: {HEAD}   Σ score",
    ]
    cache: dict[tuple[str, tuple[tuple[str, float], ...]], list[Any]] = {}

    def outs(fold: str, rounds: set[str], setting: dict[str, float]) -> list[Any]:
        key = (fold, tuple(sorted(setting.items())))
        if key not in cache:
            before = _before(cal, fold)
            cal._set_prior(**cal._centres(cal.fit_priors(series, rounds=before)))
            cal._set_prior(**setting)
            every = [s for s in series if s.round in before | {fold}]
            cache[key] = cal.run_all(every, keep=cal._fitting)
        return [o for o in cache[key] if o.series.split("/")[0].removeprefix("mlperf-") in rounds]

    for name, steps in _fit_methods(cal).items():
        res: list[Any] = []
        picks = []
        for fold in FIT_FOLDS:
            train = _before(cal, fold)
            cur = dict(FIT_BEFORE)
            for grid, kind, rule in steps:
                keep = _regime_of(kind)
                tried = [(i, [o for o in outs(fold, train, {**cur, **g}) if keep(o)])
                         for i, g in enumerate(grid)]  # fmt: skip
                cur |= grid[_best(cal, [t for t in tried if t[1]], rule)]
            picks.append(f"{fold}: " + ",".join(f"{v:g}" for v in cur.values()))
            res += outs(fold, {fold}, cur)
        loo = [o for o in res if "interpolate" in o.regime]
        near = [o for o in res if "≤ 4×" in o.regime]
        far = [o for o in res if "> 4×" in o.regime]
        total = sum(interval_score(o) for o in res)
        lines.append(
            f"  {name:<54} {summary(loo):<40} {summary(near):<40} {summary(far)}   {total:.1f}"
            f"   ({'; '.join(picks)})"
        )
        print(lines[-1], flush=True)
    cal._set_prior(**FIT_BEFORE)
    return lines
