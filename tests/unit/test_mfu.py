"""MFU check: 6 × parameters × tokens/s against the chips' dense peak, from one sourced table."""

from __future__ import annotations

import pytest

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.estimate import CHIP_PEAKS, estimate, mfu_check

WL = workload()  # 8e9 parameters, tokens


def test_hand_checked_mfu_on_trn2():
    t = trial("t-1", count=2, steady_throughput_samples=[0.9e5, 1e5, 1.1e5])
    f = mfu_check(WL, t)
    # 6 × 8e9 × 1e5 tokens/s = 4.8e15 FLOP/s; 2 × 16 Trainium2 × 667e12 = 2.1344e16 → 0.2249
    assert f.chips == 32 and f.precision == "bf16" and f.precision_assumed
    assert f.mfu == pytest.approx(4.8e15 / 2.1344e16)
    assert not f.implausible
    # at fp8: 4.8e15 / (32 × 1299e12) = 0.115
    assert "at fp8 it would be 0.12" in f.note


def test_an_implausible_trial_is_flagged_on_the_estimate():
    # 177,866.7 tokens/s on one trn2: 6 × 8e9 × 177,866.7 = 8.5376e15 / (16 × 667e12) = 0.80 >
    # 0.6, yet possible (at fp8, 0.41): pooled, with the warning
    t = trial("t-1", count=1, phase="target", work=6.4032e8)
    f = mfu_check(WL, t)
    assert f.mfu == pytest.approx(0.8) and f.implausible
    est = estimate(inputs(trials=[t], prices=snapshot(instance_quote("trn2.48xlarge", "36"))))
    (w,) = [w for w in est.warnings if w.code == "implausible_mfu"]
    assert "likely a measurement error" in w.message
    assert [a.admission for a in est.admission] == ["pooled"]


def test_an_impossible_trial_is_excluded_not_warned_about():
    # 1e6 tokens/s on one trn2: 4.8e16 / (16 × 667e12) = 4.50 at bf16, and 2.31 even at the
    # highest peak on record (fp8, 1,299e12): above 1, physically impossible
    t = trial("t-1", count=1, phase="target", work=3.6e9)
    assert mfu_check(WL, t).mfu == pytest.approx(4.8e16 / 1.0672e16)
    ok = trial("t-2", count=1, phase="target", work=3.6e8)
    est = estimate(
        inputs(
            cand=candidate(count=1),
            trials=[t, ok],
            prices=snapshot(instance_quote("trn2.48xlarge", "36")),
        )
    )
    excluded = {a.trial_id: a for a in est.admission if a.admission == "excluded"}
    assert list(excluded) == ["t-1"]
    (reason,) = excluded["t-1"].reasons
    assert reason.code == "impossible_throughput" and "MFU 2.31" in reason.message
    assert "implausible_mfu" not in {w.code for w in est.warnings}
    assert est.steady_throughput == pytest.approx(1e5)  # t-2 alone


def test_explicit_precision_and_the_trn3_peak_agree_with_the_seed():
    t = trial("t-1", instance_type="trn3.48xlarge", count=1, work=3.6e8)
    f = mfu_check(WL, t, precision="fp8")
    # 16 × 2,517e12 = 4.0272e16; 4.8e15 / 4.0272e16 = 0.1192
    assert f.mfu == pytest.approx(4.8e15 / 4.0272e16) and not f.precision_assumed
    # seeds/002: 362 FP8 PFLOPs per 144-chip UltraServer = 2.514 PFLOP/s per chip
    assert CHIP_PEAKS["trn3.48xlarge"].dense_flops["fp8"] == pytest.approx(362e15 / 144, rel=0.01)
    assert all(p.source for p in CHIP_PEAKS.values())


def test_an_unknown_instance_type_has_no_peak_on_record_not_a_guess():
    f = mfu_check(WL, trial("t-1", instance_type="g5.48xlarge"))
    assert f.mfu is None and "no peak on record for g5.48xlarge" in f.note


def test_unknown_tokens_or_precision_are_said_not_guessed():
    steps = workload(target={"unit": "steps", "amount": 1000}, tokens_per_sample=None)
    t = trial("t-1", work=100, wall={"steady_s": 3600})
    t = t.model_copy(update={"work": t.work.model_copy(update={"unit": "steps"})})
    assert "MFU not checked" in mfu_check(steps, t).note
    assert "no fp4 peak on record" in mfu_check(WL, trial("t-2"), precision="fp4").note


def test_a_trial_without_steady_throughput_gives_no_finding():
    t = trial("t-1", phase="fit", status="failed", work=0, wall={"steady_s": 0})
    assert mfu_check(WL, t) is None
