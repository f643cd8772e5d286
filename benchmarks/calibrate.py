"""`make calibrate`: are trncost's P10–P90 ranges calibrated on public multi-scale results?

Data: benchmarks/calibration/data/*.json — MLPerf Training results (one series per submitter,
system family, benchmark and round; each run one result file) and AWS Neuron's published trn1
throughput; each file names its repository, commit and paths. MLPerf Training v1.1 (NVIDIA) and
v2.0 (Azure) are held out for verification and are not in the data.

What is compared. MLPerf changes hyperparameters with scale: the global batch grows with the
node count and the number of epochs (samples) to converge grows with it. Time to train across
counts therefore mixes scaling with extra work, which trncost cannot know from a trial. So the
benchmark compares what trncost's scaling predicts — throughput, work per second (epochs,
samples or tokens, the benchmark's own unit) — as the time to a fixed amount of work: each run
of the counts used for fitting becomes a trial (its work and its run_start→run_stop seconds),
and the truth at the held-out count is the time that count's median throughput needs for the
same work. Failures are stated as 0 (MLPerf reports completed runs), so the range measures
scaling and run-to-run spread only.

Experiments per series:
  extrapolate  fit on the k smallest counts (k = 1, 2, …), predict every larger count
  leave-one-out  with ≥ 4 counts, drop each interior count, fit on the others, predict it
Regimes: by how many counts the fit had (≥ 3: the fit; 1–2: the published prior) and by how
far the predicted count is (interpolating; extrapolating ≤ 4× the largest measured; > 4×).

Honesty about tuning: the constants in layers/trncost/estimate/data/scaling_prior.json are fitted
with `--fit-priors` on the TUNING rounds only (MLPerf v0.7, v1.0, v2.1); the table reports the
REPORT rounds (v3.0, v3.1, v4.0, v4.1, Neuron) separately from the tuning rounds (in-sample).

    python benchmarks/calibrate.py              # the tables
    python benchmarks/calibrate.py --fit-priors # refit the priors on the tuning rounds
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np

from trncost.estimate import estimate, monte_carlo
from trncost.model import (
    Assumptions,
    Candidate,
    EstimateInput,
    PriceKey,
    PriceQuote,
    PriceSnapshot,
    PriceTier,
    TrialRun,
    Workload,
)

DATA = Path(__file__).resolve().parent / "calibration" / "data"
PRIOR_FILE = (
    Path(__file__).resolve().parent.parent
    / "layers"
    / "trncost"
    / "estimate"
    / "data"
    / "scaling_prior.json"
)
TUNING_ROUNDS = {"v0.5", "v0.6", "v0.7", "v1.0", "v2.1", "hpc-v0.7", "hpc-v1.0"}
INSTANCE = "trn2.48xlarge"  # a label: the benchmark reads times, not costs
REGION = "us-east-1"
SAMPLES = 4000
GOALS = {
    "fit: interpolate (leave-one-out)": 0.15,
    "fit: extrapolate ≤ 4×": 0.30,
    "prior (< 3 counts): extrapolate ≤ 4×": 0.30,
}


# -- data ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Series:
    id: str
    round: str
    runs: dict[int, list[tuple[float, float]]]  # count → [(work, seconds)]
    source: str

    @property
    def counts(self) -> list[int]:
        return sorted(self.runs)

    def throughput(self, count: int) -> float:
        return statistics.median(w / s for w, s in self.runs[count])

    @property
    def tuning(self) -> bool:
        return self.round in TUNING_ROUNDS


def load_series() -> list[Series]:
    out: list[Series] = []
    for path in sorted(DATA.glob("*.json")):
        d = json.loads(path.read_text())
        src = d["_source"]
        for s in d["series"]:
            runs: dict[int, list[tuple[float, float]]] = defaultdict(list)
            for r in s["runs"]:
                runs[int(r["nodes"])].append((float(r["work"]), float(r["seconds"])))
            out.append(
                Series(s["id"], s["round"], dict(runs), f"{src['repository']}@{src['commit'][:10]}")
            )
    # the same runs are re-published in later rounds: keep each set of runs once
    keys = [{(n, sec) for n, rs in s.runs.items() for _, sec in rs} for s in out]
    keep = []
    for i, s in enumerate(out):
        dup = any(
            j != i and keys[i] <= keys[j] and (len(keys[i]) < len(keys[j]) or j < i)
            for j in range(len(out))
        )
        if not dup:
            keep.append(s)
    return keep


# -- trncost inputs --------------------------------------------------------------------------
PRICES = PriceSnapshot(
    snapshot_id="calibration",
    taken_at="2026-01-01T00:00:00Z",
    source="query_api",
    publication_dates={"AmazonEC2": "2026-01-01T00:00:00Z"},
    quotes=[
        PriceQuote(
            key=PriceKey.for_instance(INSTANCE, REGION),
            status="official",
            unit="Hrs",
            tiers=[PriceTier(begin=Decimal(0), end=None, usd=Decimal("1"), rate_code="R.C.1")],
            sku="SKU-cal",
            snapshot_id="calibration",
        )
    ],
)


def _workload(amount: float) -> Workload:
    return Workload.model_validate(
        {
            "workload_id": "cal",
            "model": {"name": "mlperf", "parameters": 1e8},
            "code_version": "mlperf",
            "dataset_id": "mlperf",
            "target": {"unit": "samples", "amount": amount},
            "quality_gate": {"metric": "quality", "threshold": 0.0, "direction": "at_least"},
        }
    )


def _trial(i: int, count: int, work: float, seconds: float) -> TrialRun:
    return TrialRun.model_validate(
        {
            "trial_id": f"r{i}",
            "workload_id": "cal",
            "phase": "target",
            "status": "completed",
            "candidate": {"instance_type": INSTANCE, "instance_count": count, "region": REGION},
            "timing_scope": {"compile": False, "data_loading": True, "checkpoints": False,
                             "evaluation": False},
            "work": {"unit": "samples", "done": work, "quality_meeting": work},
            "wall": {"steady_s": seconds},
            "quality": {"metric": "quality", "value": 1.0},
            "code_version": "mlperf",
            "dataset_id": "mlperf",
        }
    )


@dataclass(frozen=True)
class Outcome:
    series: str
    tuning: bool
    regime: str
    fit_counts: tuple[int, ...]
    count: int
    truth_h: float
    p10: float | None
    p50: float | None
    p90: float | None
    p_infeasible: float

    @property
    def covered(self) -> bool:
        if self.p10 is None or self.p90 is None:
            return False
        return self.p10 <= self.truth_h <= self.p90

    @property
    def error(self) -> float:
        return (self.p50 / self.truth_h - 1) if self.p50 is not None else math.inf


def predict(s: Series, fit_counts: list[int], count: int, regime: str, seed: int) -> Outcome:
    trials = []
    for c in fit_counts:
        for w, sec in s.runs[c]:
            trials.append(_trial(len(trials), c, w, sec))
    work = statistics.median(w for w, _ in s.runs[count])
    truth_h = work / s.throughput(count) / 3600
    inp = EstimateInput(
        workload=_workload(work),
        candidate=Candidate(instance_type=INSTANCE, instance_count=count, region=REGION),
        trials=trials,
        prices=PRICES,
        assumptions=Assumptions.model_validate({"failure_rate_per_instance_hour": 0}),
    )
    r = monte_carlo(inp, samples=SAMPLES, seed=seed, est=estimate(inp))
    t = r.time_to_target_h
    assert t is not None
    return Outcome(
        s.id, s.tuning, regime, tuple(fit_counts), count, truth_h, t.p10, t.p50, t.p90,
        r.p_infeasible,
    )


def _regime(fit_counts: list[int], count: int) -> str:
    kind = "fit" if len(fit_counts) >= 3 else "prior (< 3 counts)"
    lo, hi = min(fit_counts), max(fit_counts)
    if lo < count < hi:
        return f"{kind}: interpolate (leave-one-out)"
    if count < lo:
        return f"{kind}: below the measured counts"
    return f"{kind}: extrapolate ≤ 4×" if count <= 4 * hi else f"{kind}: extrapolate > 4×"


def experiments(s: Series) -> list[tuple[list[int], int]]:
    counts = s.counts
    out = []
    for k in range(1, len(counts)):
        for target in counts[k:]:
            out.append((counts[:k], target))
    if len(counts) >= 4:
        for i in range(1, len(counts) - 1):
            out.append(([c for j, c in enumerate(counts) if j != i], counts[i]))
    return out


def run_all(series: list[Series], fit_counts: int | None = None) -> list[Outcome]:
    """Every experiment (or those with `fit_counts` measured counts) of every series."""
    outcomes = []
    for si, s in enumerate(series):
        for ei, (measured, target) in enumerate(experiments(s)):
            if fit_counts is not None and len(measured) != fit_counts:
                continue
            regime = _regime(measured, target)
            outcomes.append(predict(s, measured, target, regime, seed=1000 * si + ei))
    return outcomes


# -- tables ----------------------------------------------------------------------------------
def table(outcomes: list[Outcome], title: str) -> list[str]:
    by: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by[o.regime].append(o)
    lines = [
        title,
        f"  {'regime':<44} {'n':>4} {'series':>6} {'P10–P90 coverage':>17} "
        f"{'median |err| P50':>17} {'P50 bias':>9}  goal",
    ]
    order = sorted(by, key=lambda r: (not r.startswith("fit"), r))
    for regime in order:
        os_ = by[regime]
        cov = sum(o.covered for o in os_) / len(os_)
        errs = [abs(o.error) for o in os_]
        bias = statistics.median(o.error for o in os_)
        goal = GOALS.get(regime)
        verdict = (
            ("coverage " + ("met" if 0.75 <= cov <= 0.90 else "NOT met"))
            + (
                f", |err| ≤ {goal:.0%} " + ("met" if statistics.median(errs) <= goal else "NOT met")
                if goal is not None
                else ""
            )
        )
        lines.append(
            f"  {regime:<44} {len(os_):>4} {len({o.series for o in os_}):>6} {cov:>16.0%} "
            f"{statistics.median(errs):>16.1%} {bias:>+9.1%}  {verdict}"
        )
    return lines


# -- fitting the priors (tuning rounds only) -------------------------------------------------
def _loss(x: dict[int, float], a: int, b: int) -> float:
    """ln(1 − α) of the measured exponent between counts a < b (α ≥ 0.99 read as 0.99)."""
    alpha = math.log(x[b] / x[a]) / math.log(b / a)
    return math.log(max(1 - alpha, 0.01))


def _median_line(a: np.ndarray) -> tuple[float, float]:
    """(intercept, slope) of the least-absolute-deviations line of a[:, 1] on a[:, 0]
    (iteratively reweighted least squares)."""
    x = np.c_[np.ones(len(a)), a[:, 0]]
    y = a[:, 1]
    b = np.linalg.lstsq(x, y, rcond=None)[0]
    for _ in range(200):
        w = np.sqrt(1 / np.maximum(np.abs(y - x @ b), 1e-3))
        b = np.linalg.lstsq(x * w[:, None], y * w, rcond=None)[0]
    return float(b[0]), float(b[1])


def fit_priors(series: list[Series]) -> dict[str, object]:
    """The centres of the exponent priors, from the tuning rounds: the median of ln(1 − α) over
    every pair of counts of a series (one count), and the median (least absolute deviations)
    line of ln(1 − α₂₃) on ln(1 − α₁₂) over every triple (two counts). Medians, not means: the
    pairs that scale at or above linear sit at the 0.99 cap (ln 0.01), a pile a least-squares
    line bends toward. Their spreads are tuned on coverage next
    (tune_prior_spread): the pairs' own spread is not the predictive spread (a pile of
    near-linear pairs at the 0.99 cap stretches it)."""
    tuning = [s for s in series if s.tuning]
    losses, pairs = [], []
    for s in tuning:
        cs = s.counts
        x = {c: s.throughput(c) for c in cs}
        for i in range(len(cs)):
            for j in range(i + 1, len(cs)):
                losses.append(_loss(x, cs[i], cs[j]))
        for i in range(len(cs) - 2):
            for j in range(i + 1, len(cs) - 1):
                for k in range(j + 1, len(cs)):
                    pairs.append((_loss(x, cs[i], cs[j]), _loss(x, cs[j], cs[k])))
    intercept, slope = _median_line(np.array(pairs))
    return {
        "one_count": {"mu": round(float(np.median(losses)), 4), "pairs": len(losses)},
        "two_count": {
            "intercept": round(float(intercept), 4),
            "slope": round(float(slope), 4),
            "triples": len(pairs),
        },
    }


def write_prior(values: dict[str, object], series: list[Series]) -> None:
    tuning = sorted({s.source for s in series if s.tuning})
    ids = sorted(s.id for s in series if s.tuning)
    d = json.loads(PRIOR_FILE.read_text())
    for k, v in values.items():  # nested values merge (a refit keeps what it does not set)
        d[k] = {**d[k], **v} if isinstance(v, dict) and isinstance(d.get(k), dict) else v
    d["source"] = (
        f"MLPerf Training results, rounds {', '.join(sorted(TUNING_ROUNDS))} ({len(ids)} series: "
        f"{'; '.join(tuning)}), throughput per node count extracted by "
        "benchmarks/calibration/extract_mlperf.py"
    )
    d["fitted_on"] = ids
    d["_about"] = (
        "trncost's published scaling prior (estimate/scaling_prior.py). Written by "
        "`python benchmarks/calibrate.py --fit-priors` from the tuning rounds only; the "
        "calibration table reports the other rounds separately."
    )
    PRIOR_FILE.write_text(json.dumps(d, indent=1, ensure_ascii=False) + "\n")


def _coverage(outcomes: list[Outcome]) -> float:
    return sum(o.covered for o in outcomes) / len(outcomes) if outcomes else math.nan


def _width(outcomes: list[Outcome]) -> float:
    """Median ln(P90 / P10): how wide the ranges are (the sharpness)."""
    return statistics.median(
        math.log(o.p90 / o.p10) for o in outcomes if o.p10 and o.p90
    )


def _set_prior(**values: float) -> None:
    from trncost.estimate import scaling_prior

    for k, v in values.items():
        object.__setattr__(scaling_prior.PRIOR, k, v)


Candidate_ = tuple[dict[str, float], float, float]  # (values, coverage, width)


def _pick(tried: list[Candidate_], label: str) -> dict[str, float]:
    """The setting whose TUNING-round coverage is nearest 82.5 %, the middle of the 75–90 %
    goal (in-sample coverage flatters: aim at the middle, not at an edge); among settings as
    near (within one prediction's worth), the sharpest — the narrowest median range."""
    gap = min(abs(t[1] - 0.825) for t in tried)
    near = [t for t in tried if abs(t[1] - 0.825) <= gap + 0.01]
    best = min(near, key=lambda t: t[2])
    print(f"  {label}: {best[0]} (coverage {best[1]:.0%}, median ln(P90/P10) {best[2]:.2f})")
    _set_prior(**best[0])
    return best[0]


def _try(values: dict[str, float], outs: list[Outcome], label: str) -> Candidate_:
    cov, width = _coverage(outs), _width(outs)
    print(f"    {label} {values}: coverage {cov:.0%}, width {width:.2f} ({len(outs)})")
    return values, cov, width


def tune_fit_spread(series: list[Series]) -> dict[str, object]:
    """The fit's spread — the discrepancy prior (s₀, ν₀) and τ per doubling to the nearest
    measured count — jointly on the TUNING rounds' fit predictions, leave-one-out
    interpolations and extrapolations alike: the setting whose worse coverage of the two is
    nearest 82.5 %; among settings as near, the sharpest. The exponent priors are set first
    (they act on the extrapolations through the local power law, weight ½: not tuned, no
    preference between the global fit and the local one)."""
    tuning = [s for s in series if s.tuning and len(s.counts) >= 4]
    tried: list[Candidate_] = []
    for scale in (0.02, 0.03, 0.04, 0.05, 0.06, 0.08):
        for dof in (3.0, 5.0, 10.0):
            for tau in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3):
                v = {"discrepancy_scale": scale, "discrepancy_dof": dof,
                     "extrapolation_tau": tau}
                _set_prior(**v)
                outs = [o for o in run_all(tuning) if o.regime.startswith("fit:")]
                inside = [o for o in outs if "interpolate" in o.regime]
                outside = [o for o in outs if "extrapolate" in o.regime]
                ci, ce = _coverage(inside), _coverage(outside)
                worse = ci if abs(ci - 0.825) > abs(ce - 0.825) else ce
                print(f"    {v}: interpolation {ci:.0%} ({len(inside)}), extrapolation "
                      f"{ce:.0%} ({len(outside)}), width {_width(outs):.2f}")
                tried.append((v, worse, _width(outs)))
    best = _pick(tried, "fit spread")
    return {
        "discrepancy": {"scale": best["discrepancy_scale"], "dof": best["discrepancy_dof"]},
        "extrapolation_tau": best["extrapolation_tau"],
        "local_weight": 0.5,
    }


def tune_prior_spread(series: list[Series]) -> dict[str, float]:
    """σ of ln(1 − α) with one and with two measured counts, on the TUNING rounds' predictions
    from that many counts (all distances pooled)."""
    tuning = [s for s in series if s.tuning]
    out: dict[str, float] = {}
    for k, attr in ((1, "one_count_sigma"), (2, "two_count_sigma")):
        tried = []
        for sigma in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2):
            _set_prior(**{attr: sigma})
            tried.append(_try({attr: sigma}, run_all(tuning, fit_counts=k), f"{k} count(s)"))
        out.update(_pick(tried, f"{k} count(s)"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit-priors", action="store_true", help="refit the priors (tuning rounds)")
    args = ap.parse_args()
    series = load_series()
    if args.fit_priors:
        values: dict[str, object] = dict(fit_priors(series))
        write_prior(values, series)
        from trncost.estimate import scaling_prior

        scaling_prior.load.cache_clear()
        fresh = scaling_prior.load()
        _set_prior(**{k: getattr(fresh, k) for k in (
            "one_count_mu", "two_count_intercept", "two_count_slope")})
        _set_prior(local_weight=0.5)
        # the exponent priors' spreads and the fit's spread act on each other (the local power
        # law past the measured counts; the discrepancy in the prior's draws): prior, fit,
        # prior again
        tune_prior_spread(series)
        values.update(tune_fit_spread(series))
        spread = tune_prior_spread(series)
        values["one_count"]["sigma"] = spread["one_count_sigma"]  # type: ignore[index]
        values["two_count"]["sigma"] = spread["two_count_sigma"]  # type: ignore[index]
        write_prior(values, series)
        print(json.dumps(values, indent=1))
        return 0
    t0 = time.perf_counter()
    outcomes = run_all(series)
    report = [o for o in outcomes if not o.tuning]
    tuning = [o for o in outcomes if o.tuning]
    n_rep = len({s.id for s in series if not s.tuning})
    n_tun = len({s.id for s in series if s.tuning})
    print(
        f"calibration: {len(series)} series ({n_rep} report, {n_tun} tuning), "
        f"{len(outcomes)} predictions, {SAMPLES:,} draws each, "
        f"{time.perf_counter() - t0:.0f} s"
    )
    print("goals: P10–P90 coverage 75–90 %; median |err| of P50 ≤ 15 % interpolating, ≤ 30 % "
          "extrapolating up to 4×")
    for line in table(report, "REPORT rounds (MLPerf v3.0, v3.1, v4.0, v4.1; Neuron trn1) — "
                      "not used to fit the priors:"):
        print(line)
    for line in table(tuning, "TUNING rounds (MLPerf v0.7, v1.0, v2.1) — in-sample, the "
                      "priors were fitted on them:"):
        print(line)
    for line in table(outcomes, "ALL rounds:"):
        print(line)
    worst = sorted(report, key=lambda o: -abs(o.error))[:5]
    print("largest P50 errors (report rounds):")
    for o in worst:
        print(
            f"  {o.series}: fit on {list(o.fit_counts)} → {o.count}: truth {o.truth_h:.4g} h, "
            f"P10/P50/P90 {o.p10:.4g}/{o.p50:.4g}/{o.p90:.4g} h ({o.error:+.0%})"
        )
    infeasible = [o for o in outcomes if o.p_infeasible > 0]
    print(f"predictions with infeasible draws: {len(infeasible)} (failures stated 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
