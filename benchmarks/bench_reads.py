"""Reads that do not grow with the workload: an estimate's report and a page of the workload's
estimates, timed over HTTP against the local runtime (`make run`: the embedded AWS, the real API
handler), with 3, 200 and 1,000 estimates in the example workload.

The example workload is seeded as `make run` seeds it (three estimates: trn2 complete, trn3
waiting on a PENDING price, p5 complete); the other estimates are copies of those three under
new ids (their definition and latest version written to the table as the service writes them,
then the workload's standings stored once, as a refresh does), so the figures measure reading,
not computing. Timed: `GET /estimates/{id}/report` of the PENDING trn3 estimate (the one whose
report needs a break-even against the workload's estimates) and of the complete trn2 one, and
`GET /workloads/{id}/estimates` (one page, the default 50), each the median of `--calls` calls
after one warm-up call.

Goal: each ≤ 150 ms with 1,000 estimates. Prints the figures; asserts nothing.

    python benchmarks/bench_reads.py [--sizes 3,200,1000] [--calls 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers"), str(ROOT / "client")]
GOAL_MS = 150.0


def _get_ms(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        assert response.status == 200, (url, response.status)
    return (time.perf_counter() - start) * 1000


def _median_ms(url: str, calls: int) -> float:
    _get_ms(url)  # warm: the route's modules loaded, the caches of a warm Lambda
    return statistics.median(_get_ms(url) for _ in range(calls))


def _copy(runtime, n_total: int) -> None:
    """Copies of the seeded estimates until the workload holds `n_total`."""
    from trncost.services.estimates import EstimateService  # noqa: F401  (loads the service)

    service = runtime.services.estimates
    records = service.records
    workload_id = runtime.workload_id
    seeded = list(runtime.estimates.values())
    have = len(records.estimate_definitions(workload_id))
    originals = [(records.get_estimate_definition(eid), records.get_version(eid)) for eid in seeded]
    i = 0
    while have < n_total:
        definition, version = originals[i % len(originals)]
        eid = f"est-bench{have:07d}"
        records.put_estimate_definition(definition.model_copy(update={"estimate_id": eid}))
        records.put_version(version.model_copy(update={"estimate_id": eid, "version": 1}))
        have += 1
        i += 1
    restand = getattr(service, "restand", None)
    if restand is not None:  # the standings a refresh stores once per workload
        restand(workload_id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="3,200,1000")
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args(argv)
    os.environ.setdefault("TRNCOST_LOG_LEVEL", "WARNING")
    from trncost_client.local.runtime import Runtime

    sizes = [int(s) for s in args.sizes.split(",")]
    runtime = Runtime(port=0, seed_demo=False).start()
    try:
        base = runtime.url
        trn3 = runtime.estimates["trn3.48xlarge"]
        trn2 = runtime.estimates["trn2.48xlarge"]
        rows = []
        for n in sizes:
            _copy(runtime, n)
            rows.append(
                (
                    n,
                    _median_ms(f"{base}/estimates/{trn3}/report", args.calls),
                    _median_ms(f"{base}/estimates/{trn2}/report", args.calls),
                    _median_ms(f"{base}/workloads/{runtime.workload_id}/estimates", args.calls),
                )
            )
        print(
            f"reads over HTTP, local runtime (median of {args.calls} calls; goal ≤ {GOAL_MS:g} ms)"
        )
        head = ("estimates", "report (PENDING)", "report (complete)", "list (50)")
        print(f"{head[0]:>10} {head[1]:>18} {head[2]:>18} {head[3]:>10}")
        for n, pending, complete, listing in rows:
            print(f"{n:>10,} {pending:>15.1f} ms {complete:>15.1f} ms {listing:>7.1f} ms")
        worst = max(max(r[1:]) for r in rows if r[0] == max(sizes))
        print(f"at {max(sizes):,} estimates the slowest read: {worst:.1f} ms "
              f"({'within' if worst <= GOAL_MS else 'over'} the goal)")  # fmt: skip
    finally:
        runtime.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
