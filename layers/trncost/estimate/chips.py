"""The chip table: each accelerator's dense peaks, memory bandwidth and interconnect, the AWS
instance types it ships in, and a source per figure (estimate/data/chips.json).

One table for the MFU check (estimate/mfu.py: is a trial's throughput physically plausible?)
and the cross-chip projection (estimate/projection.py: the per-chip ratio between two chips).
An instance type not in it has no chip on record: trncost never guesses one.

Pure Python, read once; units: peaks in FLOP/s per chip (the file's TFLOP/s × 10¹²), HBM
bandwidth in TB/s per chip, interconnect in GB/s per chip.

References
----------
estimate/data/chips.json (each chip's `sources`: AWS Neuron architecture pages, NVIDIA
datasheets, AWS instance-type pages; seeds/002 for Trainium3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

DATA_FILE = "trncost/estimate/data/chips.json"


@dataclass(frozen=True)
class Chip:
    """One accelerator: `peaks` dense FLOP/s per chip by precision, `hbm_tb_s` [TB/s],
    `interconnect_gb_s` [GB/s], `instance_types` (type → chips per instance), where each figure
    comes from (`sources`, field → URL), `peak_source` (the peaks in the source's words) and the
    researcher's `notes`."""

    id: str
    name: str
    accelerator: str  # neuron | gpu
    peaks: dict[str, float]
    hbm_tb_s: float | None
    interconnect_gb_s: float | None
    instance_types: dict[str, int]
    peak_source: str
    sources: dict[str, str]
    notes: tuple[str, ...]

    def source_of(self, field: str) -> str:
        """Where one figure comes from.

        Parameters
        ----------
        field : str
            `peak_dense_tflops`, `hbm`, `interconnect_gb_s` or `instance_types`.

        Returns
        -------
        str
            Its source (a URL and where on the page), else the peaks' source.
        """
        return self.sources.get(field) or self.peak_source


def _chip(d: dict[str, Any]) -> Chip:
    return Chip(
        id=str(d["id"]),
        name=str(d["name"]),
        accelerator=str(d["accelerator"]),
        peaks={k: float(v) * 1e12 for k, v in d["peak_dense_tflops"].items() if v is not None},
        hbm_tb_s=None if d.get("hbm_tb_s") is None else float(d["hbm_tb_s"]),
        interconnect_gb_s=(
            None if d.get("interconnect_gb_s") is None else float(d["interconnect_gb_s"])
        ),
        instance_types={str(k): int(v) for k, v in d["instance_types"].items()},
        peak_source=str(d["peak_source"]),
        sources={str(k): str(v) for k, v in d.get("sources", {}).items()},
        notes=tuple(str(n) for n in d.get("notes", [])),
    )


@cache
def chips() -> tuple[Chip, ...]:
    """Every chip of estimate/data/chips.json, read once.

    Returns
    -------
    tuple[Chip, ...]
    """
    text = resources.files("trncost.estimate").joinpath("data/chips.json").read_text()
    return tuple(_chip(d) for d in json.loads(text)["chips"])


def chip_of(instance_type: str) -> tuple[Chip, int] | None:
    """The chip of `instance_type` (a SageMaker `ml.` type as its EC2 twin) and its chips per
    instance.

    Returns
    -------
    tuple[Chip, int] or None
        (the chip, chips per instance [unitless]); None when the type is not on record.
    """
    name = instance_type.removeprefix("ml.")
    for chip in chips():
        if name in chip.instance_types:
            return chip, chip.instance_types[name]
    return None
