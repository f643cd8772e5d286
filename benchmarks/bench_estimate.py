"""Median wall time of one deterministic estimate: 12 trials, all six cost components.

Goal (issue #2): ≤ 2 ms on the project's CI machine (2 cores). Prints the figures; asserts
nothing, so a slow machine reports instead of failing the build.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from trncost.estimate import estimate
from trncost.model import Component, EstimateInput
from trncost_client.requestfile import load_request_file, request_inputs

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "llama-8b" / "estimate.json"


def bench_input() -> EstimateInput:
    """The trn2 example candidate with its six trials doubled to twelve."""
    request = load_request_file(EXAMPLE)
    inp = next(i for i in request_inputs(request) if i.candidate.instance_type == "trn2.48xlarge")
    trn2 = [t for t in inp.trials if t.candidate.instance_type == "trn2.48xlarge"]
    twelve = trn2 + [t.model_copy(update={"trial_id": t.trial_id + "-r"}) for t in trn2]
    assert len(twelve) == 12
    return inp.model_copy(update={"trials": twelve})


def main(runs: int = 2000) -> int:
    inp = bench_input()
    est = estimate(inp)
    used = {li.component for li in est.line_items}
    assert used == set(Component), f"components missing: {set(Component) - used}"
    assert est.status == "complete"
    for _ in range(100):  # warm-up
        estimate(inp)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        estimate(inp)
        samples.append(time.perf_counter() - t0)
    samples.sort()
    tracemalloc.start()
    estimate(inp)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median_ms = statistics.median(samples) * 1e3
    print(
        f"estimate (12 trials, {len(est.line_items)} line items, {len(est.inputs)} input rows, "
        f"6 components), {runs} runs"
    )
    print(
        f"  median {median_ms:.3f} ms | p90 {samples[int(runs * 0.9)] * 1e3:.3f} ms | "
        f"min {samples[0] * 1e3:.3f} ms | peak alloc {peak / 1024:.0f} KiB"
    )
    print(f"  goal ≤ 2 ms: {'met' if median_ms <= 2.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
