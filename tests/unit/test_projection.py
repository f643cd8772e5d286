"""Projected, not measured (DESIGN.md principle 11; estimate/projection.py): a candidate without a
throughput trial of its own gets a planning range from another chip's trials × a published
per-chip ratio — status `projected`, provenance `published_reference`, a wide range that says
so, never `ready_to_budget`, its fit trial the next trial worth running."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial
from trncost.estimate import analyse, decide, estimate, monte_carlo
from trncost.estimate.chips import chip_of
from trncost.estimate.evidence import Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.projected import ProjectedEvidence
from trncost.estimate.projection import cross_chip, ratio_prior, source_for, update
from trncost.estimate.uncertainty import draw_all, prepare

ROOT = Path(__file__).resolve().parents[2]
PRICES = snapshot(instance_quote("trn2.48xlarge", "36"), instance_quote("p5.48xlarge", "80"))
OK = {"metric": "eval_loss", "value": 1.9}


def trn2_trials(rate: float = 1e5) -> list:
    """Two trn2 baselines and a target at 2 instances (rate tokens/s), with samples."""
    samples = [rate * f for f in (0.98, 1.0, 1.02)]
    return [
        trial(f"trn2-{i}", work=rate * 3600, steady_throughput_samples=samples) for i in range(2)
    ] + [
        trial(
            "trn2-target",
            phase="target",
            work=rate * 3600,
            wall={"steady_s": 3600, "checkpoint_save_s": 40, "restart_s": 300},
            checkpointing={"saves": 4, "size_gb": 10, "restore_verified": True},
            reliability={"failures": 1},
            quality=OK,
        )
    ]


def trn3(count: int = 2, **over) -> object:
    return candidate("trn3.48xlarge", count, **over)


def projected_input(trials=None, count=2, prices=PRICES, **over):
    return inputs(cand=trn3(count, **over), trials=trials or trn2_trials(), prices=prices)


def test_a_trainium3_candidate_without_trials_is_projected_from_trainium2():
    # Given trn2 trials only, and a trn3 candidate (its price PENDING: none in the snapshot)
    inp = projected_input()
    est = estimate(inp)
    rows = {r.id: r for r in est.inputs}
    # Then it is projected: its throughput row is a published reference, said as PROJECTED
    assert est.status == "projected" and est.projected and est.incomplete
    row = rows["throughput:n=2"]
    assert row.provenance.kind == "published_reference" and "PROJECTED" in row.label
    assert "projected, not measured" in row.provenance.figure
    # And its value is the trn2 throughput at the same chips × exp(E[ln r])
    ratio = rows["projection:ratio"]
    assert est.steady_throughput == pytest.approx(rows["source:throughput:n=2"].value * ratio.value)
    mu, sd, peak, bw, _ = ratio_prior(
        chip_of("trn2.48xlarge")[0], chip_of("trn3.48xlarge")[0], "bf16", "bf16"
    )
    assert ratio.value == pytest.approx(math.exp(mu))
    assert peak == pytest.approx(671 / 667) and bw == pytest.approx(4.9 / 2.9)
    assert sd == cross_chip().sd
    # And the total stays known + quantity × P, never a number for the PENDING price
    assert est.total_usd is None and "× P[AmazonEC2/us-east-1/trn3.48xlarge/on_demand]" in (
        est.total_formula
    )
    assert {"projected_throughput", "figures_from_other_chip"} <= {w.code for w in est.warnings}


def test_the_projection_is_one_model_its_point_the_geometric_mean_of_its_draws():
    # Given a projected estimate
    inp = projected_input()
    prepared = prepare(inp)
    est, model, items = prepared
    # When the throughput is drawn 20,000 times
    draws = draw_all(items, seed=3, samples=20_000, spread=1.0)[model.rate_row]
    # Then the point is exp(E[ln X]) of the draws, inside P10–P90, and the range is wide
    assert math.exp(np.mean(np.log(draws))) == pytest.approx(est.steady_throughput, rel=0.01)
    p10, p90 = np.percentile(draws, [10, 90])
    assert p10 < est.steady_throughput < p90
    assert (p90 - p10) / est.steady_throughput > 0.5  # wide, and the range's notes say why
    rng = monte_carlo(inp, samples=4000, seed=1)
    assert any("PROJECTED" in n for n in rng.notes)
    assert any("cross-chip projection" in b or "projected" in b for b in rng.basis)


def test_a_zero_spread_range_reproduces_the_projected_estimate():
    inp = projected_input(prices=snapshot(*PRICES.quotes, instance_quote("trn3.48xlarge", "50")))
    est = estimate(inp)
    assert est.status == "projected" and est.total_usd is not None
    rng = monte_carlo(inp, samples=200, spread=0.0)
    assert rng.total_usd is not None and rng.total_usd.p50 == pytest.approx(
        est.total_usd, abs=Decimal("0.01")
    )


def test_a_projection_is_never_ready_to_budget_and_names_its_fit_trial():
    # Given a trn3 candidate with its price known and everything else verified on trn2
    prices = snapshot(*PRICES.quotes, instance_quote("trn3.48xlarge", "30"))
    inp = projected_input(prices=prices)
    est = estimate(inp)
    d = decide(inp, est)
    # Then the decision is continue_trials, with the projection as a reason
    assert d.action == "continue_trials"
    projected = next(r for r in d.reasons if r.code == "projected")
    assert (
        "fit trial of trn3.48xlarge" in projected.message and "never a budget" in projected.message
    )


def test_the_next_trial_is_the_fit_trial_with_its_cost_and_how_much_it_narrows():
    # Given trn2 trials, a priced p5 alternative and a PENDING trn3
    p5 = inputs(
        cand=candidate("p5.48xlarge", 2),
        trials=[trial("p5-a", instance_type="p5.48xlarge", work=1.2e5 * 3600)],
        prices=PRICES,
    )
    trials = [*trn2_trials(), *p5.trials]
    trn3_inp = projected_input(trials=trials)
    p5_inp = p5.model_copy(update={"trials": trials})
    a = analyse([trn3_inp, p5_inp], samples=4000, seed=2)
    c = a.candidates[0]
    # Then the next trial worth running is trn3's fit trial, at the count matched to the
    # smallest count trn2 measured, its instance-hours × the PENDING price, and it narrows
    best = c.next_trial.best
    assert best is not None and best.phase == "fit" and best.instance_count == 2
    assert best.expected_cost_usd is None and best.pending_price_key.endswith(
        "trn3.48xlarge/on_demand"
    )
    assert best.narrower_by > 0.3
    # And the break-even price against p5 has its range over the paired draws
    be = next(b for b in a.comparison.break_evens if b.candidate_id == c.candidate_id)
    assert be.price_range is not None and be.price_range.p10 <= be.price_range.p90
    assert 0 <= be.p_no_price_cheaper <= 1
    row = next(r for r in a.comparison.by_cost if r.candidate_id == c.candidate_id)
    assert row.status == "projected" and row.cost_rank is None and "PROJECTED" in row.note


def test_a_fit_trial_of_the_candidate_moves_and_narrows_the_ratio():
    # Given the projection alone, then with a fit trial of trn3 faster than the projection
    before = estimate(projected_input())
    rate = before.steady_throughput * 1.3
    fit = trial(
        "trn3-fit",
        instance_type="trn3.48xlarge",
        phase="fit",
        work=rate * 900,
        wall={"steady_s": 900},
        steady_throughput_samples=[rate * 0.99, rate, rate * 1.01],
    )
    inp = projected_input(trials=[*trn2_trials(), fit])
    after = estimate(inp)
    ev = Evidence.of(inp, Ledger(inp.prices))
    # Then it is still projected, its throughput moved toward the fit trial's, not all the way
    assert after.status == "projected" and isinstance(ev, ProjectedEvidence)
    assert before.steady_throughput < after.steady_throughput < rate
    r = ev.ratio()
    assert r.sd < 0.5 * r.prior_sd and len(r.observations) == 1
    assert any(row.id == "projection:fit_trials" for row in after.inputs)


def test_a_usable_trial_of_its_own_makes_it_measured():
    own = trial("trn3-base", instance_type="trn3.48xlarge", work=1.4e5 * 3600)
    est = estimate(projected_input(trials=[*trn2_trials(), own]))
    assert est.status == "incomplete" and not est.projected
    assert est.inputs and next(
        r for r in est.inputs if r.id == "throughput:n=2"
    ).provenance.kind == ("trial_measurement")


def test_the_source_is_trainium_first_else_a_gpu_matched_by_chips():
    # Given trn2 and p5 trials: a trn3 candidate projects from trn2 (same family)
    p5 = [trial("p5-a", instance_type="p5.48xlarge", count=4, work=2e5 * 3600)]
    both = projected_input(trials=[*trn2_trials(), *p5])
    assert source_for(both).candidate.instance_type == "trn2.48xlarge"
    # And with p5 trials alone it projects from p5: 2 trn3 (32 chips) = 4 p5 (8 chips each)
    gpu = projected_input(trials=p5)
    src = source_for(gpu)
    assert src.candidate.instance_type == "p5.48xlarge" and src.count(2) == (4, 1.0)
    est = estimate(gpu)
    assert est.status == "projected" and "source:throughput:n=4" in {r.id for r in est.inputs}


def test_the_peak_ratio_is_at_the_precision_each_side_runs():
    # Given a trn3 candidate stated at mxfp8 and trn2 trials at bf16
    inp = projected_input(precision="mxfp8")
    rows = {r.id: r for r in estimate(inp).inputs}
    # Then the peak ratio is Trainium3's MXFP8 peak over Trainium2's bf16 one
    assert rows["projection:peak_ratio"].value == pytest.approx(2517 / 667)
    bf16 = {r.id: r for r in estimate(projected_input()).inputs}
    assert rows["projection:ratio"].value > 1.5 * bf16["projection:ratio"].value


def test_the_normal_update_is_the_precision_weighted_mean():
    mu, sd = update(0.0, 0.2, [(0.4, 0.1)])
    assert mu == pytest.approx(0.4 * (1 / 0.01) / (1 / 0.04 + 1 / 0.01))
    assert sd == pytest.approx(math.sqrt(1 / (1 / 0.04 + 1 / 0.01)))
    assert update(0.3, 0.2, []) == (pytest.approx(0.3), pytest.approx(0.2))


def test_the_cross_chip_prior_file_is_a_fresh_fit_with_its_sources():
    data = json.loads((ROOT / "layers/trncost/estimate/data/cross_chip.json").read_text())
    assert data["fit"]["same_round_only"] and data["fit"]["transitions"] >= 15
    assert all("github.com/mlcommons/training_results_v" in s for s in data["sources"])
    assert not any(r in s for s in data["sources"] for r in ("_v1.1", "_v2.0"))  # held out
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/cross_chip.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
