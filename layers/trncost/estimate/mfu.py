"""MFU check: is a trial's throughput physically plausible on its chips?

    MFU = 6 × parameters × tokens/s ÷ (chips × dense peak FLOP/s at the trial's precision)

6·N FLOPs per token is the standard dense-transformer training estimate (forward 2N, backward
4N; attention FLOPs ignored, which makes the MFU a slight underestimate). Real large-model
training rarely exceeds ~0.5–0.6 of the dense peak, so a trial above PLAUSIBLE_MFU is most
likely a measurement error (tokens double counted, a clock that missed time, the wrong
instance count). Peaks are *dense* (no structured sparsity). One table, each entry with its
source; an instance type not in it gets "no peak on record", never a guess.
"""

from __future__ import annotations

from typing import TypedDict

from trncost.model.analysis import ChipPeak, MfuFinding
from trncost.model.trial import TrialRun
from trncost.model.workload import Workload

PLAUSIBLE_MFU = 0.6
DEFAULT_PRECISION = "bf16"

_NEURON = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware"
)
_TRN1 = ChipPeak(
    chip="Trainium",
    chips_per_instance=16,
    dense_flops={"bf16": 190e12, "fp8": 190e12},
    source=(
        f"{_NEURON}/trainium.html: 'Two NeuronCore-v2 delivering … 190 FP16/BF16/cFP8/TF32 "
        "TFLOPS' per chip; 'At the heart of the Trn1 instance are 16 x Trainium chips'"
    ),
)
_H100_SXM = {"bf16": 989e12, "fp8": 1979e12}
_H100_SOURCE = (
    "NVIDIA H100/H200 SXM datasheets (https://www.nvidia.com/en-us/data-center/h100/, "
    "/h200/): BF16 1,979 and FP8 3,958 TFLOPS 'with sparsity'; dense is half: 989 and 1,979"
)

CHIP_PEAKS: dict[str, ChipPeak] = {
    "trn1.32xlarge": _TRN1,
    "trn1n.32xlarge": _TRN1,
    "trn2.48xlarge": ChipPeak(
        chip="Trainium2",
        chips_per_instance=16,
        dense_flops={"bf16": 667e12, "fp8": 1299e12},
        source=(
            f"{_NEURON}/trainium2.html: 'Eight NeuronCore-v3 that collectively deliver: 1,299 "
            "FP8 TFLOPS, 667 BF16/FP16/TF32 TFLOPS' per chip; a trn2.48xlarge has 16 Trainium2 "
            "chips (Neuron training best practices)"
        ),
    ),
    "trn3.48xlarge": ChipPeak(
        chip="Trainium3",
        chips_per_instance=16,
        dense_flops={"bf16": 671e12, "fp8": 2517e12},
        source=(
            f"{_NEURON}/trainium3.html: 'Eight NeuronCore-v4 cores that collectively deliver: "
            "2,517 MXFP8/MXFP4 TFLOPS, 671 BF16/FP16/TF32 TFLOPS' per chip; cross-check: Trn3 "
            "UltraServer 362 FP8 PFLOPs / 144 chips = 2.51 PFLOP/s per chip (seeds/002, "
            "aboutamazon.com Trainium3 UltraServer announcement). 16 chips per instance: "
            f"{_NEURON}/trn3-arch.html 'Gen1 UltraServer consists of four servers with 16 "
            "Trainium3 devices per server' (trn3.48xlarge as the project's examples name it)"
        ),
    ),
    "p5.48xlarge": ChipPeak(
        chip="NVIDIA H100 SXM",
        chips_per_instance=8,
        dense_flops=_H100_SXM,
        source=f"https://aws.amazon.com/ec2/instance-types/p5/ (8× H100); {_H100_SOURCE}",
    ),
    "p5e.48xlarge": ChipPeak(
        chip="NVIDIA H200",
        chips_per_instance=8,
        dense_flops=_H100_SXM,
        source=f"https://aws.amazon.com/ec2/instance-types/p5/ (P5e: 8× H200); {_H100_SOURCE}",
    ),
    "p5en.48xlarge": ChipPeak(
        chip="NVIDIA H200",
        chips_per_instance=8,
        dense_flops=_H100_SXM,
        source=f"https://aws.amazon.com/ec2/instance-types/p5/ (P5en: 8× H200); {_H100_SOURCE}",
    ),
    "p6-b200.48xlarge": ChipPeak(
        chip="NVIDIA B200",
        chips_per_instance=8,
        dense_flops={"bf16": 2.25e15, "fp8": 4.5e15},
        source=(
            "https://aws.amazon.com/ec2/instance-types/p6/ (8× B200); NVIDIA HGX B200 "
            "(https://www.nvidia.com/en-us/data-center/hgx/): per GPU BF16 4.5 and FP8 9 "
            "PFLOPS 'with sparsity'; dense is half: 2.25 and 4.5"
        ),
    ),
}


def chip_peak(instance_type: str) -> ChipPeak | None:
    return CHIP_PEAKS.get(instance_type.removeprefix("ml."))


def trial_tokens_per_s(workload: Workload, trial: TrialRun) -> float | None:
    """All tokens processed per second at steady state (mean of the samples, else work/clock)."""
    per = workload.tokens_per(trial.work.unit)
    if per is None:
        return None
    samples = trial.steady_throughput_samples
    if samples:
        return per * sum(samples) / len(samples)
    clock = trial.wall.steady_s + (trial.wall.data_wait_s or 0.0)
    if clock <= 0 or trial.work.done <= 0:
        return None
    return per * trial.work.done / clock


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
    """The trial's model-FLOPs utilisation against its chips' dense peak.

    None when the trial measured no steady throughput at all. A finding without `mfu` says
    why (no peak on record, tokens unknown, no peak at that precision).
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
    assumed = precision is None
    prec = precision or (DEFAULT_PRECISION if DEFAULT_PRECISION in peak.dense_flops else "fp8")
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
        other = [p for p in peak.dense_flops if p != prec]
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
