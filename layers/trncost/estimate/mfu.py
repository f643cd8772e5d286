"""MFU check: is a trial's throughput physically plausible on its chips?

    MFU = 6 × parameters × tokens/s ÷ (chips × dense peak FLOP/s at the trial's precision)

6·N FLOPs per token is the standard dense-transformer training estimate (forward 2N, backward
4N; attention FLOPs ignored, which makes the MFU a slight underestimate). Real large-model
training rarely exceeds ~0.5–0.6 of the dense peak, so a trial above PLAUSIBLE_MFU is most
likely a measurement error (tokens double counted, a clock that missed time, the wrong
instance count). Peaks are *dense* (no structured sparsity). One table (estimate/chips.py,
estimate/data/chips.json), each figure with its source; an instance type not in it gets "no
peak on record", never a guess.

References
----------
J. Kaplan et al., "Scaling Laws for Neural Language Models", arXiv:2001.08361 (2020), §2.1
(C ≈ 6N FLOPs per training token); A. Chowdhery et al., "PaLM: Scaling Language Modeling with
Pathways", arXiv:2204.02311 (2022), §4.1 and appendix B (model FLOPs utilization); each
chip's peak: its `source` in CHIP_PEAKS, from estimate/data/chips.json (AWS Neuron
architecture pages, seeds/002, NVIDIA datasheets). DESIGN.md, "Analysis on top" (an MFU check
flags implausible trial throughput).
"""

from __future__ import annotations

from typing import TypedDict

from trncost.estimate.chips import chips
from trncost.model.analysis import ChipPeak, MfuFinding
from trncost.model.trial import TrialRun
from trncost.model.workload import Workload

PLAUSIBLE_MFU = 0.6
IMPOSSIBLE_MFU = 1.0  # above the chip's peak: the trial is excluded (estimate/admission.py)
DEFAULT_PRECISION = "bf16"  # the plausibility check's assumption when a trial states none


def _peaks() -> dict[str, ChipPeak]:
    """Every instance type of the chip table (estimate/chips.py) as its ChipPeak."""
    return {
        instance_type: ChipPeak(
            chip=chip.name,
            chips_per_instance=count,
            dense_flops=dict(chip.peaks),
            source=chip.peak_source,
        )
        for chip in chips()
        for instance_type, count in chip.instance_types.items()
    }


# instance type → chip, chips per instance, dense peak FLOP/s per chip by precision, source
CHIP_PEAKS: dict[str, ChipPeak] = _peaks()


def chip_peak(instance_type: str) -> ChipPeak | None:
    """The chip table's entry for `instance_type` (an `ml.` type as its EC2 type).

    Returns
    -------
    ChipPeak or None
        Chip, chips per instance, dense peak FLOP/s per chip at each precision, source; None
        when it is not on record.
    """
    return CHIP_PEAKS.get(instance_type.removeprefix("ml."))


def trial_tokens_per_s(workload: Workload, trial: TrialRun) -> float | None:
    """All tokens `trial` processed per second at steady state: the mean of its steady
    samples, else (work done − warm-up work) ÷ the steady clock (one window:
    trncost.model.trial.TrialRun.steady_clock_s), times the `workload`'s tokens per unit.

    Returns
    -------
    float or None
        [tokens/s]; None when the workload cannot convert the trial's unit to tokens, or
        nothing was measured.
    """
    per = workload.tokens_per(trial.work.unit)
    if per is None:
        return None
    samples = trial.steady_throughput_samples
    if samples:
        return per * sum(samples) / len(samples)
    clock = trial.steady_clock_s
    done = trial.work.done - (trial.work.warmup or 0.0)
    if clock <= 0 or done <= 0:
        return None
    return per * done / clock


class _FindingHead(TypedDict):
    """The fields every MFU finding has."""

    trial_id: str
    instance_type: str
    plausible_max: float


def mfu_check(
    workload: Workload,
    trial: TrialRun,
    *,
    precision: str | None = None,
    plausible_max: float = PLAUSIBLE_MFU,
) -> MfuFinding | None:
    """The `trial`'s model-FLOPs utilisation against its chips' dense peak::

        MFU = 6 × parameters × tokens/s ÷ (chips × dense peak FLOP/s at the precision)

    with the `workload`'s model parameters, `trial_tokens_per_s`, chips = chips per instance
    × the trial's instance count, and the precision `precision`, else the trial's own, else
    DEFAULT_PRECISION (bf16; said to be assumed).

    Parameters
    ----------
    plausible_max : float
        The MFU above which the finding is implausible [unitless] (0.6; 1 for impossible).

    Returns
    -------
    MfuFinding or None
        The MFU [unitless], model and peak FLOP/s [FLOP/s], tokens/s [tokens/s] and the
        note; a finding without `mfu` says why (no peak on record, tokens unknown, no peak
        at that precision). None when the trial measured no steady throughput at all.

    References
    ----------
    Kaplan et al. (2020) §2.1; Chowdhery et al. (2022) appendix B; CHIP_PEAKS' sources.
    """
    it = trial.candidate.instance_type
    base = _FindingHead(trial_id=trial.trial_id, instance_type=it, plausible_max=plausible_max)
    if trial.wall.steady_s <= 0 and not trial.steady_throughput_samples:
        return None
    peak = chip_peak(it)
    if peak is None:
        return MfuFinding(
            **base, note=f"no peak on record for {it}: MFU not checked (trncost never guesses)"
        )
    chips = peak.chips_per_instance * trial.candidate.instance_count
    tps = trial_tokens_per_s(workload, trial)
    if tps is None:
        return MfuFinding(
            **base,
            chips=chips,
            source=peak.source,
            note=(
                f"trial {trial.trial_id} counts work in {trial.work.unit} and the workload "
                "does not say how many tokens that is: MFU not checked"
            ),
        )
    stated = precision or trial.precision
    assumed = stated is None
    prec = stated or (DEFAULT_PRECISION if DEFAULT_PRECISION in peak.dense_flops else "fp8")
    if prec not in peak.dense_flops:
        return MfuFinding(
            **base,
            chips=chips,
            precision=prec,
            tokens_per_s=tps,
            source=peak.source,
            note=f"no {prec} peak on record for {peak.chip}: MFU not checked",
        )
    model_flops = 6 * workload.model.parameters * tps
    peak_flops = chips * peak.dense_flops[prec]
    mfu = model_flops / peak_flops
    implausible = mfu > plausible_max
    note = (
        f"trial {trial.trial_id}: 6 × {workload.model.parameters:.4g} parameters × "
        f"{tps:,.0f} tokens/s = {model_flops:.4g} FLOP/s on {chips} {peak.chip} chips × "
        f"{peak.dense_flops[prec]:.4g} dense {prec} FLOP/s = MFU {mfu:.2f}"
    )
    if assumed:
        note += f" ({prec} assumed: the trial does not record its precision"
        other = [p for p in ("fp8", "mxfp8") if p in peak.dense_flops and p != prec][:1]
        if other:
            o = other[0]
            note += f"; at {o} it would be {model_flops / (chips * peak.dense_flops[o]):.2f}"
        note += ")"
    if implausible:
        note += (
            f", above a plausible {plausible_max:g}: likely a measurement error (tokens counted "
            "twice, a clock that missed time, or the wrong instance count)"
        )
    return MfuFinding(
        **base,
        chips=chips,
        precision=prec,
        precision_assumed=assumed,
        tokens_per_s=tps,
        model_flops_per_s=model_flops,
        peak_flops_per_s=peak_flops,
        mfu=mfu,
        implausible=implausible,
        source=peak.source,
        note=note,
    )


def impossible_mfu(workload: Workload, trial: TrialRun) -> MfuFinding | None:
    """The finding when `trial`'s throughput is physically impossible for `workload`'s model:
    MFU above IMPOSSIBLE_MFU (1) at its stated precision, or (precision not stated) even at
    the chip's highest peak on record.

    Returns
    -------
    MfuFinding or None
        None when it is possible, or cannot be checked.
    """
    peak = chip_peak(trial.candidate.instance_type)
    if peak is None:
        return None
    prec = trial.precision
    if prec is None:
        prec = max(peak.dense_flops, key=lambda p: peak.dense_flops[p])
    finding = mfu_check(workload, trial, precision=prec, plausible_max=IMPOSSIBLE_MFU)
    if finding is None or finding.mfu is None or finding.mfu <= IMPOSSIBLE_MFU:
        return None
    if trial.precision is None:
        finding = finding.model_copy(
            update={
                "precision_assumed": True,
                "note": finding.note + f" (at {prec}, the highest peak on record: the trial "
                "does not record its precision)",
            }
        )
    return finding
