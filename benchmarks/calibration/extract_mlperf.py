"""Extract multi-scale series from MLPerf Training and MLPerf HPC results (git mirrors).

Not part of the build: run by hand against a local git copy of a public
mlcommons/training_results_vX.Y (or mlcommons/hpc_results_vX.Y) repository to (re)write
benchmarks/calibration/data/mlperf_<round>.json (mlperf_hpc_<round>.json).

A series is one submitter's system family on one benchmark in one round, at ≥ 2 scales; each
point is one result file (one run): its scale, the global batch size, the work done (see run():
epochs, samples or tokens, whichever unit the benchmark logs, the same within a series) and the
seconds from `run_start` to `run_stop`. Only runs whose `run_stop` says success are kept,
closed division only; MLPerf HPC: the strong-scaling (time-to-train) runs only.

The family is the system's name with its scale token taken out: `dgxh100_n64_ngc23.04_mxnet` →
`dgxh100_n#_ngc23.04_mxnet`, `16xXE8545x4A100-SXM-40GB` → `#xXE8545x4A100-SXM-40GB` (a name
without a scale token is the one-node member: `XE8545x4A100-SXM-40GB` joins that family),
`HLS-Gaudi2-N32-PT`, `tpu-v3-512`, `cloud-tpu-trillium-1024-maxtext`, `1536xBM.GPU.H100.8`,
`8-nodes-SPR-pytorch`, … (SCALE_TOKENS below). The scale is the system's accelerator total
(system JSON: number_of_nodes × accelerators_per_node; v0.5 entry.json and v0.6's key: value
files likewise) over the smallest accelerators-per-node in the series: the node count for a
fleet of identical nodes, and a proportional count where a submitter describes one pod as "one
node" (Google's TPU slices in v0.6).

MLPerf Training v1.1 and v2.0 are held out for verification: this script refuses those rounds
outright (and does not read them: no such mirror is needed).

    python benchmarks/calibration/extract_mlperf.py /path/to/training_results_v0.7 v0.7
    python benchmarks/calibration/extract_mlperf.py /path/to/hpc_results_v1.0 v1.0 --hpc
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HELD_OUT_ROUNDS = {"v1.1", "v2.0"}  # MLPerf Training (verification data): never extracted
# <prefix/><org>/results/<system>/[strong/]<benchmark>/result_N.txt
RESULT = re.compile(
    r"^(?:v0\.5\.0/)?(?P<org>[^/]+)/(?P<sub>(?:[^/]+/)*?)results/(?P<system>[^/]+)/"
    r"(?:(?P<mode>strong|weak)/)?(?P<bench>[^/]+)/result_\d+\.txt$"
)
SKIP_BENCH = {"minigo", "ncf"}  # reinforcement learning / a recommender with no scale series
# A scale token in a system name, tried in order; the first that matches is taken out (so the
# one-node member, whose name has no token, joins its family).
SCALE_TOKENS = [
    re.compile(p)
    for p in (
        r"_ngpu(\d+)(?=_|$)",
        r"_n(\d+)(?=_|$)",
        r"^(\d+)x(?=[A-Za-z])",
        r"^(\d+)-nodes?-",
        r"[-_]N(\d+)(?=[-_]|$)",
        r"_(\d+)N(?=_|$)",
        r"[-_](\d+)node(?=s?[-_]|s?$)",
        r"(?<=tpu-v\d)-(\d+)",
        r"(?<=tpu-v\d[a-z])-(\d+)",
        r"(?<=trillium)-(\d+)",
        r"(?<=tpuv\d)-(\d+)",
        r"(?<=pod)(\d+)",
        r"^(?:modelarts|CloudBrainII)_(\d+)",
        r"_(\d+)x(?=V100|A64FX)",
        r"(?<=perlmutter)_(\d+)x4",
        r"-(\d+)$",
        r"_(\d+)$",
        r"_(\d+)x$",
        r"_multi(?=_)",
    )
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


def family(system: str) -> str:
    for pattern in SCALE_TOKENS:
        m = pattern.search(system)
        if m:
            a, b = m.span()
            joined = (
                system[:a]
                + (
                    "_"
                    if 0 < a and b < len(system) and system[a] in "_-" and system[b - 1] in "_-"
                    else ""
                )
                + system[b:]
            )
            return joined.strip("_-")
    return system


# -- the logs --------------------------------------------------------------------------------
V05 = re.compile(r"^:::MLPv0\.5\.0 \S+ (?P<t>[\d.]+) \([^)]*\) (?P<key>\w+)(?:: (?P<v>.*))?$")


def records(text: str):
    """(key, value, metadata, seconds) of each MLPerf log line, in order (v0.5 to v5.x)."""
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
        elif line.startswith(":::MLPv0.5.0"):  # v0.5: ':::MLPv0.5.0 <bench> <t> (<src>) key: v'
            m = V05.match(line)
            if not m:
                continue
            raw = m.group("v")
            try:
                value = json.loads(raw) if raw is not None else None
            except ValueError:
                value = raw
            meta: dict[str, Any] = {}
            if m.group("key") == "train_epoch" and isinstance(value, (int, float)):
                meta["epoch_num"] = value
            elif isinstance(value, dict) and isinstance(value.get("epoch"), (int, float)):
                meta["epoch_num"] = value["epoch"]
            if m.group("key") == "run_stop" and isinstance(value, dict):
                meta["status"] = "success" if str(value.get("success")) == "true" else "aborted"
            yield m.group("key"), value, meta, float(m.group("t"))


def run(text: str) -> dict | None:
    """One run's seconds (run_start → run_stop) and work: the samples it trained when the log
    says (`train_samples` / `trained_samples` after its last evaluation or at its stop; logged
    earlier it is the dataset's size), else the progress at its last
    evaluation (`samples_count` or `epoch_num` of the last `eval_accuracy`: an epoch that was
    only started does not count), else the largest `samples_count` / `epoch_num` logged."""
    start = stop = None
    status = None
    gbs = None
    most = 0.0
    at_eval = None
    trained = None
    evals = 0
    for key, value, meta, t in records(text):
        if key == "run_start" and start is None:
            start = t
        elif key == "run_stop" and stop is None:
            stop = t
            status = meta.get("status")
            if status is None and isinstance(value, dict):
                status = value.get("status")
        elif key in ("global_batch_size", "input_batch_size") and gbs is None:
            gbs = value
        elif key in ("trained_samples", "train_samples") and isinstance(value, (int, float)):
            trained = (float(value), evals, stop is not None)
        if stop is None and start is not None:
            progress = [
                float(v)
                for k in ("samples_count", "epoch_num")
                if isinstance(v := meta.get(k), (int, float))
            ]
            if progress:
                most = max(most, progress[0])
                if key == "eval_accuracy":
                    at_eval = progress[0]
        if key == "eval_accuracy":
            evals += 1
    if start is None or stop is None or stop <= start or status not in ("success", None):
        return None
    final = trained is not None and (trained[2] or (evals > 0 and trained[1] == evals))
    work = (trained[0] if final and trained is not None else None) or at_eval or most
    if not work or work <= 0:
        return None
    return {"seconds": round(stop - start, 3), "work": work, "global_batch_size": gbs}


# -- the systems -----------------------------------------------------------------------------
def _int(v: object) -> int:
    try:
        return int(str(v).strip() or 0)
    except ValueError:
        return 0


def accelerators(text: str) -> tuple[int, int, str] | None:
    """(nodes, accelerators per node, division) from a system description, any round's form."""
    try:
        d = json.loads(text)
    except ValueError:
        d = None
    if isinstance(d, dict) and "number_of_nodes" in d:
        return (
            _int(d.get("number_of_nodes")),
            _int(d.get("accelerators_per_node")),
            str(d.get("division", "closed")),
        )
    if isinstance(d, dict) and isinstance(d.get("nodes"), list) and d["nodes"]:  # v0.5 entry
        n = d["nodes"][0]
        nodes, acc = _int(n.get("num_nodes")), _int(n.get("num_accelerators"))
        if "tpu" in str(n.get("accelerator", "")).lower() and nodes:
            # TPU pods: num_accelerators is the slice's total (tpuv3-512: 512)
            return nodes, acc // nodes, str(d.get("division", "closed"))
        return nodes, acc, str(d.get("division", "closed"))
    # v0.6 NVIDIA: 'key: {json}' lines, the node list a Python literal inside `entry`
    nodes_m = re.search(r"'num_nodes': '(\d+)'", text)
    acc_m = re.search(r"'num_accelerators': '(\d+)'", text)
    div = re.search(r'division: \{"value": "(\w+)"', text)
    if nodes_m and acc_m:
        return int(nodes_m.group(1)), int(acc_m.group(1)), div.group(1) if div else "closed"
    try:  # a last resort: a Python-literal dict
        lit = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if isinstance(lit, dict) and "number_of_nodes" in lit:
        return _int(lit["number_of_nodes"]), _int(lit.get("accelerators_per_node")), "closed"
    return None


def system_files(files: list[str]) -> dict[tuple[str, str], str]:
    out = {}
    for f in files:
        m = re.match(r"^([^/]+)/systems/([^/]+)\.json$", f)
        if m:
            out[(m.group(1), m.group(2))] = f
        m = re.match(r"^v0\.5\.0/([^/]+)/(?:[^/]+/)*results/([^/]+)/entry\.json$", f)
        if m:  # v0.5: one entry.json beside each system's results
            out[(m.group(1), f.rsplit("/", 1)[0])] = f
    return out


def main(repo: Path, round_: str, hpc: bool = False) -> int:
    if round_ in HELD_OUT_ROUNDS and not hpc:
        raise SystemExit(f"MLPerf Training {round_} is held out for verification: not extracted")
    commit = git(repo, "rev-parse", "HEAD").strip()
    date = git(repo, "log", "-1", "--format=%ad", "--date=short").strip()
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    systems = system_files(files)
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    missing: list[str] = []
    for f in files:
        m = RESULT.match(f)
        if not m or m.group("bench") in SKIP_BENCH or m.group("mode") == "weak":
            continue
        org, system, bench = m.group("org"), m.group("system"), m.group("bench")
        key = (org, f.rsplit("/", 2)[0]) if f.startswith("v0.5.0/") else (org, system)
        sysfile = systems.get(key)
        if sysfile is None:
            continue
        try:
            desc = accelerators(git(repo, "show", f"HEAD:{sysfile}"))
        except subprocess.CalledProcessError:
            continue
        if desc is None:
            continue
        nodes, per, division = desc
        if nodes <= 0 or per <= 0 or division != "closed":
            continue
        try:
            text = git(repo, "show", f"HEAD:{f}")
        except subprocess.CalledProcessError:  # a file of 4 MiB or more is not in the copy
            missing.append(f)
            continue
        r = run(text)
        if r is None:
            continue
        # v0.5: Google names each slice in the folder above results/ (…/resnet-tpuv3-512/)
        sub = m.group("sub").strip("/").rsplit("/", 1)[-1]
        name = sub if f.startswith("v0.5.0/google/") else system
        groups[(org, family(name), bench)].append(
            {"system": name, "system_nodes": nodes, "accelerators": nodes * per, "path": f, **r}
        )
    series = []
    suite = "hpc" if hpc else "training"
    for (org, fam, bench), runs in sorted(groups.items()):
        per_node = min(r["accelerators"] // r["system_nodes"] for r in runs)
        for r in runs:
            r["nodes"] = r["accelerators"] // per_node
        counts = sorted({r["nodes"] for r in runs})
        if len(counts) < 2 or any(
            len({r["system"] for r in runs if r["nodes"] == c}) > 1 for c in counts
        ):
            continue  # one scale: no series; two systems at one scale: not one family
        series.append(
            {
                "id": f"mlperf{'-hpc' if hpc else ''}-{round_}/{org}/{fam}/{bench}",
                "round": f"hpc-{round_}" if hpc else round_,
                "suite": suite,
                "submitter": org,
                "system_family": fam,
                "benchmark": bench,
                "accelerators_per_count": per_node,
                "counts": counts,
                "runs": sorted(runs, key=lambda r: (r["nodes"], r["path"])),
            }
        )
    repo_name = f"{'hpc' if hpc else 'training'}_results_{round_}"
    out = {
        "_source": {
            "repository": f"https://github.com/mlcommons/{repo_name}",
            "commit": commit,
            "commit_date": date,
            "files": "<org>/results/<system>/[strong/]<benchmark>/result_*.txt (MLPerf log) and "
            "<org>/systems/<system>.json (number_of_nodes, accelerators_per_node; v0.5: "
            "entry.json beside the results)",
            "not_in_copy": len(missing),
            "extracted_by": "benchmarks/calibration/extract_mlperf.py",
            "work_unit": "the benchmark's own logged unit (epochs, samples or tokens), the "
            "same within a series: throughput ratios across counts are unit-free",
            "count": "the run's accelerators over the series' smallest accelerators per node "
            "('nodes' in each run; 'system_nodes' is what the system file says)",
        },
        "series": series,
    }
    stem = f"mlperf_hpc_{round_}" if hpc else f"mlperf_{round_}"
    dest = Path(__file__).resolve().parent / "data" / f"{stem}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(
        f"{dest}: {len(series)} series, {sum(len(s['runs']) for s in series)} runs, "
        f"{len(missing)} result files not in the copy"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], hpc="--hpc" in sys.argv[3:]))
