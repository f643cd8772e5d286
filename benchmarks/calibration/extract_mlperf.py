"""Extract multi-scale series from MLPerf Training results repositories (git mirrors).

Not part of the build: run by hand against a local git copy of a public
mlcommons/training_results_vX.Y repository to (re)write benchmarks/calibration/data/
mlperf_<round>.json. Each series is one submitter's system family (the system name without
its `_nNN` node count) on one benchmark in one round, at ≥ 2 node counts; each point is one
result file (one run): nodes, accelerators, global batch size, work done (the largest
`epoch_num` / `trained_samples` logged up to `run_stop`: epochs, samples or tokens, whichever
unit the benchmark logs, the same within a series) and the seconds from `run_start` to
`run_stop`. Only runs whose `run_stop` says success are kept.

MLPerf Training v1.1 (NVIDIA) and v2.0 (Azure) are held out for verification: this script
refuses those rounds outright.

    python benchmarks/calibration/extract_mlperf.py /path/to/training_results_v0.7 v0.7
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HELD_OUT_ROUNDS = {"v1.1", "v2.0"}
RESULT = re.compile(r"^(?P<org>[^/]+)/results/(?P<system>[^/]+)/(?P<bench>[^/]+)/result_\d+\.txt$")
NODES = re.compile(r"_n(\d+)(?=_|$)")
SKIP_BENCH = {"minigo"}  # reinforcement learning: no work count comparable across scales


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


def records(text: str):
    for line in text.splitlines():
        if ":::MLLOG" in line:
            try:
                d = json.loads(line.split(":::MLLOG", 1)[1])
            except ValueError:
                continue
            yield d["key"], d.get("value"), d.get("metadata") or {}, float(d["time_ms"]) / 1e3
        elif line.startswith(":::MLL "):  # v0.6: ':::MLL <time> <key>: {json}'
            m = re.match(r":::MLL (\S+) (\w+): (.*)$", line)
            if not m:
                continue
            try:
                d = json.loads(m.group(3))
            except ValueError:
                continue
            yield m.group(2), d.get("value"), d.get("metadata") or {}, float(m.group(1))


def run(text: str) -> dict | None:
    start = stop = None
    status = None
    gbs = None
    work = 0.0
    trained = None
    for key, value, meta, t in records(text):
        if key == "run_start" and start is None:
            start = t
        elif key == "run_stop":
            stop = t
            status = meta.get("status")
            if status is None and isinstance(value, dict):
                status = value.get("status")
        elif key == "global_batch_size" and gbs is None:
            gbs = value
        elif key == "trained_samples" and isinstance(value, (int, float)):
            trained = float(value)
        if stop is None:
            for k in ("samples_count", "epoch_num"):
                v = meta.get(k)
                if isinstance(v, (int, float)) and v > work:
                    work = float(v)
    if start is None or stop is None or stop <= start or status not in ("success", None):
        return None
    if trained:
        work = trained
    if work <= 0:
        return None
    return {"seconds": round(stop - start, 3), "work": work, "global_batch_size": gbs}


def main(repo: Path, round_: str) -> int:
    if round_ in HELD_OUT_ROUNDS:
        raise SystemExit(f"{round_} is held out for verification: not extracted")
    commit = git(repo, "rev-parse", "HEAD").strip()
    date = git(repo, "log", "-1", "--format=%ad", "--date=short").strip()
    files = [f for f in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()]
    systems = {}
    for f in files:
        m = re.match(r"^([^/]+)/systems/([^/]+)\.json$", f)
        if m:
            systems[(m.group(1), m.group(2))] = f
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    missing: list[str] = []
    for f in files:
        m = RESULT.match(f)
        if not m or m.group("bench") in SKIP_BENCH:
            continue
        org, system, bench = m.group("org"), m.group("system"), m.group("bench")
        sysfile = systems.get((org, system))
        if sysfile is None:
            continue
        try:
            desc = json.loads(git(repo, "show", f"HEAD:{sysfile}"))
            nodes = int(str(desc.get("number_of_nodes") or "0").strip() or 0)
            per = int(str(desc.get("accelerators_per_node") or "0").strip() or 0)
        except (ValueError, subprocess.CalledProcessError):
            continue
        if nodes <= 0 or per <= 0:
            continue
        if desc.get("division", "closed") != "closed":
            continue
        try:
            text = git(repo, "show", f"HEAD:{f}")
        except subprocess.CalledProcessError:  # a file of 4 MiB or more is not in the copy
            missing.append(f)
            continue
        r = run(text)
        if r is None:
            continue
        family = NODES.sub("", system)
        groups[(org, family, bench)].append(
            {"nodes": nodes, "accelerators": nodes * per, "path": f, **r}
        )
    series = []
    for (org, family, bench), runs in sorted(groups.items()):
        counts = sorted({r["nodes"] for r in runs})
        if len(counts) < 2:
            continue
        accel = sorted({r["accelerators"] // r["nodes"] for r in runs})
        series.append(
            {
                "id": f"mlperf-{round_}/{org}/{family}/{bench}",
                "round": round_,
                "submitter": org,
                "system_family": family,
                "benchmark": bench,
                "accelerators_per_node": accel,
                "counts": counts,
                "runs": sorted(runs, key=lambda r: (r["nodes"], r["path"])),
            }
        )
    out = {
        "_source": {
            "repository": f"https://github.com/mlcommons/training_results_{round_}",
            "commit": commit,
            "commit_date": date,
            "files": "<org>/results/<system>/<benchmark>/result_*.txt (MLLOG) and "
            "<org>/systems/<system>.json (number_of_nodes, accelerators_per_node)",
            "not_in_copy": len(missing),
            "extracted_by": "benchmarks/calibration/extract_mlperf.py",
            "work_unit": "the benchmark's own logged unit (epochs, samples or tokens), the "
            "same within a series: throughput ratios across counts are unit-free",
        },
        "series": series,
    }
    dest = Path(__file__).resolve().parent / "data" / f"mlperf_{round_}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{dest}: {len(series)} series, {sum(len(s['runs']) for s in series)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
