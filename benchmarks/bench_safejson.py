"""The API body precheck's JSON check (trncost.safejson, issue 23): time against body size, up
to the API's limit (1 MiB), for the hostile bodies that made the old depth regex quadratic (65
brackets then an unclosed string of escaped quotes: 32 KB took 5.2 s, 80 KB 35.5 s) and for
the other shapes that stress a scanner. Goal: linear in size, 1 MiB well under a second.

Prints the figures (best of 5 per size); asserts nothing.

    python benchmarks/bench_safejson.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "layers"))

from trncost import safejson  # noqa: E402

SIZES = (32_000, 80_000, 256 * 1024, 1024 * 1024)
BODIES = {
    "65 brackets + unclosed escaped quotes": lambda n: "[" * 65 + '"' + '\\"' * ((n - 66) // 2),
    "open brackets": lambda n: "[" * n,
    "balanced pairs": lambda n: "[]" * (n // 2),
    "a bracket-filled string": lambda n: "[" * 65 + '"' + "[" * (n - 66),
    "many keys (valid JSON)": lambda n: json.dumps({f"k{i}": i for i in range(n // 13)})[:n],
}


def best_of(text: str, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        safejson.problem(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    print(f"{'body':40} " + " ".join(f"{s // 1000:>8} KB" for s in SIZES))
    for name, make in BODIES.items():
        times = [best_of(make(size)) for size in SIZES]
        print(f"{name:40} " + " ".join(f"{t * 1000:>9.1f}ms" for t in times))


if __name__ == "__main__":
    main()
