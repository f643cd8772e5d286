"""Fit trncost's cross-chip prior from MLPerf Training chip-generation pairs.

    python benchmarks/cross_chip.py            # writes layers/trncost/estimate/data/cross_chip.json
    python benchmarks/cross_chip.py --check    # fails when the file differs from a fresh fit

The evidence (benchmarks/calibration/cross_chip/cross_generation_pairs.json): same-submitter
pairs of an older accelerator and its successor on one MLPerf Training benchmark at a matched
accelerator count, each with the measured per-chip speed-up and the ratios of the two chips'
dense peaks and HBM bandwidths. The model trncost projects a candidate without trials with
(layers/trncost/estimate/projection.py):

    ln(speed-up) = a·ln(peak ratio) + b·ln(bandwidth ratio) + ε,    ε ~ Normal(m, s²)

the peak ratio at the precision each side runs. Fitted on the same-round pairs only (a pair of
two rounds credits the newer chip with newer software), by least squares through the origin
(two identical chips: speed-up 1), each TRANSITION weighing as one (OEM partners re-run NVIDIA's
code: the pairs of one transition are not independent; 18 transitions, not 118 pairs, is the
sample size). m and s are the mean and standard deviation of the leave-one-TRANSITION-out
residuals, each transition weighing as one: how far the fit misses a chip generation it has
never seen, which is what a Trainium2 → Trainium3 projection is (no Trainium pair is in MLPerf).

Standard library only. The leave-one-pair-out spread (smaller: a transition's other pairs stay
in the fit) is written beside it for comparison, never used.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "benchmarks/calibration/cross_chip/cross_generation_pairs.json"
OUT = ROOT / "layers/trncost/estimate/data/cross_chip.json"
PEAK = "peak_ratio_precision_used"
FIT_TRIAL_NOISE = 0.10  # an assumption, stated in the output (see its note)


def _fit(rows: list[dict[str, Any]], weight: dict[str, float]) -> tuple[float, float]:
    """Weighted least squares through the origin: ln y = a·ln P + b·ln B."""
    s11 = s12 = s22 = s1y = s2y = 0.0
    for p in rows:
        w = weight[p["transition"]]
        x1, x2 = math.log(p[PEAK]), math.log(p["hbm_bw_ratio"])
        y = math.log(p["measured_speedup_per_chip"])
        s11 += w * x1 * x1
        s12 += w * x1 * x2
        s22 += w * x2 * x2
        s1y += w * x1 * y
        s2y += w * x2 * y
    det = s11 * s22 - s12 * s12
    return (s22 * s1y - s12 * s2y) / det, (s11 * s2y - s12 * s1y) / det


def _residual(p: dict[str, Any], a: float, b: float) -> float:
    return (
        math.log(p["measured_speedup_per_chip"])
        - a * math.log(p[PEAK])
        - b * math.log(p["hbm_bw_ratio"])
    )


def _weighted(values: list[tuple[float, float]]) -> dict[str, float]:
    """Weighted mean, sd and the P10/P50/P90 of (value, weight) pairs."""
    total = sum(w for _, w in values)
    mean = sum(v * w for v, w in values) / total
    sd = math.sqrt(sum(w * (v - mean) ** 2 for v, w in values) / total)
    ordered = sorted(values)
    out = {"mean": round(mean, 4), "sd": round(sd, 4)}
    for q in (0.1, 0.5, 0.9):
        acc = 0.0
        for v, w in ordered:
            acc += w
            if acc >= q * total:
                out[f"p{int(q * 100)}"] = round(v, 4)
                break
    return out


def fit() -> dict[str, Any]:
    data = json.loads(PAIRS.read_text())
    rows = [p for p in data["pairs"] if not p["cross_round"]]
    count = Counter(p["transition"] for p in rows)
    weight = {t: 1 / n for t, n in count.items()}
    a, b = _fit(rows, weight)
    out_of_transition: list[tuple[float, float]] = []
    for t in sorted(count):
        at, bt = _fit([p for p in rows if p["transition"] != t], weight)
        out_of_transition += [
            (_residual(p, at, bt), weight[t]) for p in rows if p["transition"] == t
        ]
    one_out = []
    for i, p in enumerate(rows):
        ai, bi = _fit(rows[:i] + rows[i + 1 :], weight)
        one_out.append((_residual(p, ai, bi), 1.0))
    rounds = data["rounds"]
    sources = [
        f"MLPerf Training {r} results, closed division: {v['repository']}@{v['commit'][:10]}"
        for r, v in rounds.items()
    ]
    return {
        "_about": (
            "trncost's cross-chip prior (estimate/projection.py): how a candidate without trials "
            "gets a planning throughput from another chip's trials. Written by `python "
            "benchmarks/cross_chip.py` from "
            "benchmarks/calibration/cross_chip/cross_generation_pairs.json (same-submitter MLPerf "
            "Training chip-generation pairs); the chips' peaks and bandwidths are in "
            "estimate/data/chips.json with their sources."
        ),
        "model": (
            "ln(per-chip speed-up) = a·ln(dense peak ratio at the precision each side runs) + "
            "b·ln(HBM bandwidth ratio) + ε, ε ~ Normal(residual.mean, residual.sd²); at a matched "
            "accelerator count"
        ),
        "a_peak": round(a, 4),
        "b_bandwidth": round(b, 4),
        "interconnect_weight": 0.0,
        "interconnect_note": (
            "the scale-up interconnect ratio is shown beside the others but weighs 0: the pairs "
            "compare chips at a matched count, mostly within one node, and do not identify it; "
            "scaling across instances is the source chip's own (its trials or the published "
            "scaling prior), a caveat of every projection"
        ),
        "residual": _weighted(out_of_transition),
        "residual_note": (
            "leave-one-transition-out residuals of the same-round pairs, each transition weighing "
            "as one: how far the fit misses a chip generation it has not seen (no Trainium pair "
            "is in MLPerf, so a Trainium projection is exactly that)"
        ),
        "leave_one_pair_out": _weighted(one_out),
        "fit": {
            "pairs": len(rows),
            "transitions": len(count),
            "same_round_only": True,
            "weighting": "each transition weighs as one (its pairs share code and are correlated)",
            "by_transition": dict(sorted(count.items())),
        },
        "fit_trial_noise": FIT_TRIAL_NOISE,
        "fit_trial_noise_note": (
            "an ASSUMPTION, not a published figure: the log noise of one fit trial's throughput "
            "read as a measurement of the per-chip ratio (a fit trial's steady window is minutes, "
            "run before tuning; trncost never pools it into throughput). 0.10 is twice the "
            "calibrated run-to-run discrepancy of the published scaling prior (0.05, "
            "scaling_prior.json): one fit trial narrows the ratio's spread from the residual's to "
            "about this, never to a baseline's. Added in quadrature to the trial's own sample "
            "spread and the source's spread at that count"
        ),
        "caveats": data["caveats"],
        "sources": sources,
        "evidence_file": "benchmarks/calibration/cross_chip/cross_generation_pairs.json",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the file is stale")
    args = parser.parse_args()
    text = json.dumps(fit(), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if OUT.read_text() != text:
            print(f"{OUT} differs from a fresh fit: run python benchmarks/cross_chip.py")
            return 1
        print(f"{OUT} is current")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
