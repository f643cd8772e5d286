"""Billed actuals figures (issue #27): a 1,000,000-row FOCUS 1.2 export read as POST /actuals and
`trncost actuals import` read it. No AWS.

A FOCUS 1.2 CSV in AWS's 60 columns (FOCUS_1_2_AWS) is written to a temporary file from the rows
of the constructed sample (tests/events/billing/focus_1_2_sample.csv): each row a copy of a
sample row with its own resource id and day. `TAGGED` of the rows carry a `trncost:estimate-id`
tag (one of 50 estimates); the rest are someone else's. It is then read in a fresh process
(trncost.billing.files.read_bill_file: the CSV streamed, rows without a trncost key counted
and not parsed, the tagged ones summed per estimate and billing period), as the API and the CLI
read it. Goal: ≥ 200,000 rows/s and ≤ 500 MiB peak RSS. Also read: the same file gzipped (how AWS
delivers CSV), every row tagged (the worst case), and the same rows as Parquet (DuckDB).

Prints the figures; asserts nothing, so a slow machine reports instead of failing the build.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS = 1_000_000
TAGGED = 0.10  # a trncost run's share of a busy account's bill
ESTIMATES = 50
ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "events" / "billing" / "focus_1_2_sample.csv"


def write_focus(path: Path, rows: int = ROWS, tagged: float = TAGGED, compress: bool = False):
    """A FOCUS 1.2 file of `rows` rows, `tagged` of them tagged with an estimate."""
    with SAMPLE.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        samples = list(reader)
    tags_at, resource_at = header.index("Tags"), header.index("ResourceId")
    start_at, end_at = header.index("ChargePeriodStart"), header.index("ChargePeriodEnd")
    every = round(1 / tagged) if tagged else 0
    opener = gzip.open if compress else open
    with opener(path, "wt", newline="", encoding="utf-8") as out:  # type: ignore[operator]
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        block = io.StringIO()
        buffered = csv.writer(block, lineterminator="\n")
        for i in range(rows):
            row = list(samples[i % len(samples)])
            day = 1 + i % 28
            row[start_at] = f"2025-06-{day:02d}T00:00:00Z"
            row[end_at] = f"2025-06-{day:02d}T00:00:00Z".replace(f"-{day:02d}T", f"-{day + 1:02d}T")
            row[resource_at] = f"i-{i:017x}"
            if every and i % every == 0:
                row[tags_at] = json.dumps(
                    {
                        "trncost:estimate-id": f"est-{(i // every) % ESTIMATES:012x}",
                        "trncost:workload-id": "bench",
                    }
                )
            else:
                row[tags_at] = json.dumps({"team": "someone-else", "env": "prod"})
            buffered.writerow(row)
            if i % 10_000 == 9_999:
                out.write(block.getvalue())
                block.seek(0)
                block.truncate()
        out.write(block.getvalue())


READ = r"""
import json, os, resource, sys, time

def peak_rss_mb():
    # this process's own high-water mark (VmHWM): ru_maxrss would carry the parent's across
    # fork and exec
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

t0 = time.perf_counter()
from trncost.billing.files import read_bill_file
t1 = time.perf_counter()
c1 = time.process_time()
bill = read_bill_file(sys.argv[1])
t2 = time.perf_counter()
print(json.dumps({"read_s": t2 - t1, "cpu_s": time.process_time() - c1, "startup_s": t1 - t0,
    "load": os.getloadavg()[0], "rows": bill.rows_read, "tagged": bill.matched_rows,
    "estimates": len({g.estimate_id for g in bill.groups}),
    "lines": sum(len(g.lines) for g in bill.groups),
    "peak_rss_mb": peak_rss_mb()}))
"""


def read_in_fresh_process(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", READ, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


CONVERT = r"""
import sys, duckdb
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute(
    "COPY (SELECT * REPLACE (CAST(json(Tags) AS MAP(VARCHAR, VARCHAR)) AS Tags, "
    "TRY_CAST(BilledCost AS DOUBLE) AS BilledCost, TRY_CAST(ListCost AS DOUBLE) AS ListCost, "
    "TRY_CAST(PricingQuantity AS DOUBLE) AS PricingQuantity) "
    f"FROM read_csv('{sys.argv[1]}', all_varchar=true)) TO '{sys.argv[2]}' (FORMAT PARQUET)"
)
"""


def to_parquet(csv_path: Path, out: Path) -> None:
    """The CSV as AWS's Parquet export types it (in a process of its own: DuckDB's memory
    stays out of this one, whose children are measured)."""
    subprocess.run([sys.executable, "-c", CONVERT, str(csv_path), str(out)], check=True)


def report(what: str, size: int, r: dict) -> None:
    rate = r["rows"] / r["read_s"]
    print(
        f"  {what}: {r['rows']:,} rows ({size / 2**20:,.0f} MiB) in {r['read_s']:.2f} s = "
        f"{rate:,.0f} rows/s wall, {r['rows'] / r['cpu_s']:,.0f} rows/s of CPU time (goal "
        f"≥ 200,000; load {r['load']:.1f} on {os.cpu_count()} cores); peak RSS "
        f"{r['peak_rss_mb']:,.0f} MiB (goal ≤ 500); {r['tagged']:,} tagged rows → "
        f"{r['estimates']} estimates, {r['lines']} lines"
    )


def main() -> None:
    print(f"actuals: a {ROWS:,}-row FOCUS 1.2 export ({TAGGED:.0%} of rows tagged), read as "
          "the API and the CLI read it")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "focus.csv"
        t = time.perf_counter()
        write_focus(plain)
        print(f"  wrote {plain.stat().st_size / 2**20:,.0f} MiB in {time.perf_counter() - t:.1f} s")
        report("CSV", plain.stat().st_size, read_in_fresh_process(plain))
        packed = Path(tmp) / "focus.csv.gz"
        write_focus(packed, compress=True)
        report("gzip CSV", packed.stat().st_size, read_in_fresh_process(packed))
        parquet = Path(tmp) / "focus.parquet"
        to_parquet(plain, parquet)
        report("Parquet (DuckDB)", parquet.stat().st_size, read_in_fresh_process(parquet))
        plain.unlink()
        packed.unlink()
        every = Path(tmp) / "focus-all-tagged.csv"
        write_focus(every, tagged=1.0)
        report("CSV, every row tagged (worst case)", every.stat().st_size,
               read_in_fresh_process(every))  # fmt: skip


if __name__ == "__main__":
    main()
