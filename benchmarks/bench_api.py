"""API figures (issues #5, #17).

(a) Cold import of the API handler (lambdas/api/handler.py, loaded as the local runtime loads
    it) in a fresh interpreter with the API Lambda's environment, median of 10, against a bare
    `import boto3` measured the same way in the same run (runs interleaved).
    Goals: ≤ 400 ms, and ≤ 2.5× boto3 (validation kept). The X-Ray Tracer, the docs route, the
    schemas' validators and each route module are made on first use (#17), so the import no
    longer loads boto3: the second line also times what the first real request loads before
    it runs (the workloads routes, the table's store and boto3), against the same boto3.
    When a goal is missed, `python -X importtime` says what dominates (printed below).
(b) Warm in-process handler time of `POST /workloads/{id}/estimates` on moto (mock_aws,
    in-process), with a workload, two trials and a price snapshot from
    tests/events/pricelist/get_products_us_east_1.json seeded through the API.
    Goal: median ≤ 25 ms.

Prints the figures; asserts nothing, so a slow machine reports instead of failing the build.

    python benchmarks/bench_api.py [--runs 10] [--calls 60]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAVED_PRICE_LIST = ROOT / "tests" / "events" / "pricelist" / "get_products_us_east_1.json"
COLD_GOAL_S = 0.400
RATIO_GOAL = 2.5
WARM_GOAL_MS = 25.0
CATALOG = {"instance_types": ["trn2.48xlarge", "trn3.48xlarge"], "regions": ["us-east-1"]}

# What the API Lambda's environment holds (stacks/lambda_factory.py + the API stack), tracing
# off as in the issue, and fake credentials (importing needs none; the warm run uses moto).
LAMBDA_ENV = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_LAMBDA_FUNCTION_NAME": "trncost-api",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    "TRNCOST_TABLE": "trncost-bench",
    "TRNCOST_BUS": "trncost-bench",
    "TRNCOST_CATALOG": json.dumps(CATALOG),
    "TRNCOST_PRICE_LIST_REGION": "us-east-1",
    "POWERTOOLS_SERVICE_NAME": "api",
    "POWERTOOLS_METRICS_NAMESPACE": "trncost",
    "POWERTOOLS_LOG_LEVEL": "INFO",
    "POWERTOOLS_TRACE_DISABLED": "true",
}
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_SESSION_TOKEN": "bench",
}

HANDLER_CODE = (
    "import time; t = time.perf_counter(); "
    "from trncost_client.local.handlers import load_handler; load_handler('api'); "
    "print(time.perf_counter() - t)"
)
BOTO3_CODE = "import time; t = time.perf_counter(); import boto3; print(time.perf_counter() - t)"
# the import, then what a first GET /workloads loads before its route runs
FIRST_REQUEST_CODE = (
    "import time; t = time.perf_counter(); "
    "from trncost_client.local.handlers import load_handler; load_handler('api'); "
    "from trncost.api.app import _Routes; _Routes.include(_Routes.for_path('/workloads')); "
    "import trncost.store.records; "
    "print(time.perf_counter() - t)"
)


# -- (a) cold import ----------------------------------------------------------------------------
def _child_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(LAMBDA_ENV)
    return env


def _timed(code: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=_child_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"the child interpreter failed:\n{out.stderr.strip()}")
    return float(out.stdout.strip().splitlines()[-1])


def cold_import(runs: int) -> dict[str, Any]:
    for code in (HANDLER_CODE, BOTO3_CODE):  # warm-up: .pyc files, page cache
        _timed(code)
    handler, boto3, first = [], [], []
    for _ in range(runs):  # interleaved, so all see the same machine state
        handler.append(_timed(HANDLER_CODE))
        boto3.append(_timed(BOTO3_CODE))
        first.append(_timed(FIRST_REQUEST_CODE))
    h, b, f = statistics.median(handler), statistics.median(boto3), statistics.median(first)
    return {
        "handler_s": h,
        "boto3_s": b,
        "ratio": h / b,
        "handler_runs": sorted(handler),
        "first_s": f,
        "first_ratio": f / b,
    }


_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def importtime_breakdown(top: int = 12) -> None:
    """Where the handler's import time goes: self time per top-level package, and the heaviest
    imports by cumulative time (with who pulled them in)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", HANDLER_CODE],
        env=_child_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    rows: list[tuple[int, int, int, str]] = []
    for line in out.stderr.splitlines():
        m = _IMPORTTIME.match(line)
        if m:
            rows.append((int(m[1]), int(m[2]), len(m[3]) // 2, m[4]))
    if not rows:
        print("  (no -X importtime output)")
        return
    total = sum(r[0] for r in rows)
    by_package: dict[str, int] = defaultdict(int)
    for self_us, _, _, name in rows:
        by_package[name.split(".")[0]] += self_us
    print(f"  -X importtime: {total / 1e3:.0f} ms of imports (includes -X importtime overhead)")
    print("  self time by top-level package:")
    for name, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]:
        print(f"    {us / 1e3:7.1f} ms  {name}")
    # Parents: importtime lists children before their parent, one level deeper.
    parent: dict[int, str] = {}
    open_rows: list[tuple[int, int]] = []  # (row index, depth) still waiting for a parent
    for i, (_, _, depth, name) in enumerate(rows):
        while open_rows and open_rows[-1][1] > depth:
            parent[open_rows.pop()[0]] = name
        open_rows.append((i, depth))
    print("  heaviest imports outside trncost (cumulative ms ← imported by):")
    shown: list[str] = []
    for i in sorted(range(len(rows)), key=lambda i: -rows[i][1]):
        _, cum, depth, name = rows[i]
        if name.startswith(("trncost", "encodings", "site", "__editable__")) or depth > 3:
            continue
        if any(name.startswith(s + ".") or s.startswith(name + ".") for s in shown):
            continue  # a parent or child of one already shown
        by = parent.get(i, "lambdas/api/handler.py (or Tracer() running in it)")
        print(f"    {cum / 1e3:7.1f} ms  {name}  ← {by}")
        shown.append(name)
        if len(shown) >= top:
            break
    print("  heaviest trncost modules (cumulative ms, children included):")
    ours = [i for i, r in enumerate(rows) if r[3].startswith("trncost")]
    for i in sorted(ours, key=lambda i: -rows[i][1])[:8]:
        print(f"    {rows[i][1] / 1e3:7.1f} ms  {rows[i][3]}")


# -- (b) warm handler time --------------------------------------------------------------------
def warm_estimates(calls: int) -> dict[str, Any]:
    os.environ.update(LAMBDA_ENV)
    os.environ.update(FAKE_CREDENTIALS)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    sys.path.insert(0, str(ROOT))  # the tests package, as pytest sees it (pythonpath ".")
    import boto3
    from moto import mock_aws

    from tests.support.factories import trial, workload  # the same seed as the API tests
    from trncost.store.schema import TABLE
    from trncost_client.local.gateway import proxy_event
    from trncost_client.local.handlers import load_handler

    class Context:
        function_name = "trncost-api"
        memory_limit_in_mb = 1024
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:trncost-api"
        aws_request_id = "bench"

    with mock_aws():
        boto3.client("dynamodb").create_table(
            **TABLE.create_table_kwargs(LAMBDA_ENV["TRNCOST_TABLE"])
        )
        boto3.client("events").create_event_bus(Name=LAMBDA_ENV["TRNCOST_BUS"])
        handler = load_handler("api").handler

        def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
            raw = None if body is None else json.dumps(body).encode()
            event = proxy_event(method, path, "", {"Content-Type": "application/json"}, raw)
            response = handler(event, Context())
            return response["statusCode"], json.loads(response["body"])

        wl = workload(workload_id="wl-bench", dataset_gb=100).model_dump(mode="json")
        assert call("POST", "/workloads", wl)[0] == 201
        for tid in ("t-1", "t-2"):
            t = trial(tid, count=2, phase="target", workload_id="wl-bench")
            assert call("POST", "/workloads/wl-bench/trials", t.model_dump(mode="json"))[0] == 201
        saved = json.loads(SAVED_PRICE_LIST.read_text())
        status, taken = call("POST", "/prices/snapshots", {"saved_price_list": saved})
        assert status == 201, taken
        body = {
            "candidate": {
                "instance_type": "trn2.48xlarge",
                "instance_count": 2,
                "region": "us-east-1",
            },
            "assumptions": {"idle_fraction": {"value": 0.1, "note": "queueing"}},
            # an upload is used by its id (it is not the latest: the stage does not publish
            # uploads, as a deployed one does not)
            "snapshot_id": taken["snapshot_id"],
        }
        raw = json.dumps(body).encode()
        path = "/workloads/wl-bench/estimates"
        headers = {"Content-Type": "application/json"}
        first = None
        for _ in range(5):  # warm-up
            status, first = call("POST", path, body)
            assert status == 201 and first["estimate"]["status"] == "complete", first
        samples = []
        emf = io.StringIO()  # the EMF lines Lambda would write to its log: kept off the screen
        for _ in range(calls):
            event = proxy_event("POST", path, "", headers, raw)  # built outside the clock
            with contextlib.redirect_stdout(emf):
                t0 = time.perf_counter()
                response = handler(event, Context())
                samples.append(time.perf_counter() - t0)
            assert response["statusCode"] == 201, response["body"][:300]
    samples.sort()
    assert first is not None
    return {
        "median_ms": statistics.median(samples) * 1e3,
        "p90_ms": samples[int(len(samples) * 0.9)] * 1e3,
        "min_ms": samples[0] * 1e3,
        "line_items": len(first["estimate"]["line_items"]),
        "trials": 2,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="fresh interpreters per import")
    parser.add_argument("--calls", type=int, default=60, help="timed handler calls (≥ 50)")
    args = parser.parse_args(argv)

    cold = cold_import(args.runs)
    h_ms, b_ms, ratio = cold["handler_s"] * 1e3, cold["boto3_s"] * 1e3, cold["ratio"]
    abs_ok, ratio_ok = cold["handler_s"] <= COLD_GOAL_S, ratio <= RATIO_GOAL
    print(f"API handler cold import, fresh interpreter, median of {args.runs} (Lambda env)")
    print(
        f"  handler {h_ms:.0f} ms | bare `import boto3` {b_ms:.0f} ms | ratio {ratio:.2f}× "
        f"| handler min {min(cold['handler_runs']) * 1e3:.0f} ms, "
        f"max {max(cold['handler_runs']) * 1e3:.0f} ms"
    )
    print(
        f"  import + what a first GET /workloads loads (boto3 included) {cold['first_s'] * 1e3:.0f}"
        f" ms | ratio {cold['first_ratio']:.2f}× boto3"
    )
    print(f"  goal ≤ {COLD_GOAL_S * 1e3:.0f} ms: {'met' if abs_ok else 'NOT met'}")
    print(f"  goal ≤ {RATIO_GOAL}× boto3: {'met' if ratio_ok else 'NOT met'}")
    if not (abs_ok and ratio_ok):
        importtime_breakdown()

    warm = warm_estimates(max(args.calls, 50))
    print(
        f"POST /workloads/{{id}}/estimates, warm, in-process on moto ({warm['trials']} trials, "
        f"{warm['line_items']} line items), {max(args.calls, 50)} calls"
    )
    print(
        f"  median {warm['median_ms']:.2f} ms | p90 {warm['p90_ms']:.2f} ms | "
        f"min {warm['min_ms']:.2f} ms"
    )
    warm_ok = warm["median_ms"] <= WARM_GOAL_MS
    print(f"  goal ≤ {WARM_GOAL_MS:.0f} ms: {'met' if warm_ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
