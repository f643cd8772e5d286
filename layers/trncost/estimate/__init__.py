"""The pure estimate engine (no I/O, no clock, no boto3).

The analysis functions (numpy: ranges, tornado, scaling fit) load on first use, so estimating
alone — the API's cold start — does not import numpy.

Each public function states its model, pvlib-style: what it computes, its formula, its
parameters and what it returns, the unit of every number in square brackets ([s], [h], [USD],
[USD/instance-hour], [target units/s] — the workload's target unit per second —,
[1/instance-hour], [unitless]) and its sources (DESIGN.md's cost model, the seed checklist
seeds/000, the data files in estimate/data/, the papers). tests/unit/test_engine_docstrings.py
keeps it so, and checks that the formulas the engine writes into an estimate's input table are
the ones its docstrings state. Where to start: `engine.estimate`, `timing.time_to_target`,
`costs.py`.
"""

from typing import Any

from trncost.estimate.compare import best_comparable, candidate_ids, comparability, rank
from trncost.estimate.credits import credits_runway
from trncost.estimate.decide import decide
from trncost.estimate.engine import break_even_price, estimate, known_part_exceeds, total_formula
from trncost.estimate.mfu import CHIP_PEAKS, mfu_check

_LAZY = {
    "analyse": "trncost.estimate.analysis",
    "estimate_each": "trncost.estimate.analysis",
    "fit_scaling": "trncost.estimate.scaling",
    "tornado": "trncost.estimate.sensitivity",
    "monte_carlo": "trncost.estimate.uncertainty",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'trncost.estimate' has no attribute {name!r}")


__all__ = [
    "CHIP_PEAKS",
    "analyse",
    "best_comparable",
    "break_even_price",
    "known_part_exceeds",
    "candidate_ids",
    "comparability",
    "credits_runway",
    "decide",
    "estimate",
    "estimate_each",
    "fit_scaling",
    "mfu_check",
    "monte_carlo",
    "rank",
    "tornado",
    "total_formula",
]
