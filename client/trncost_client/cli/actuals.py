"""`trncost actuals`: billed actuals in, an estimate against them, the scorecard, a budget.

    trncost actuals import FILE|DIR … [--dry-run] [--json]
    trncost actuals show ESTIMATE_ID [--json]
    trncost actuals scorecard [--workload ID] [--json]
    trncost actuals budget ESTIMATE_ID --email ADDR … [--sns ARN] [--start D] [--end D]

`import` reads FOCUS 1.2 or CUR 2.0 export files where they are — CSV, gzip CSV or Parquet, of
any size, a directory meaning every export file under it (a delivery split into parts) — with
the same reader the API uses (trncost.billing), and sends what they hold for trncost (their
rows counted, each estimate's summed lines per billing period) to POST /actuals as JSON: a few
kilobytes whatever the bill's size, where the API takes 6 MB of export file itself. The same
files again change nothing.
"""

from __future__ import annotations

import argparse
import os
import stat
from datetime import date
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from trncost import display
from trncost.errors import ClientError
from trncost_client.cli.output import SubParsers, print_json
from trncost_client.cli.remote import _add_remote_options, _client, _remote

EXPORT_SUFFIXES = (".csv", ".csv.gz", ".gz", ".parquet")


def export_files(paths: list[str]) -> list[Path]:
    """The export files named: each FILE, and every export file under each DIR (sorted). Only
    regular files are read (not a FIFO, a device or a socket)."""
    found: list[Path] = []
    for name in paths:
        path = Path(name).expanduser()
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise ClientError(f"{name}: {exc.strerror or exc}") from None
        if stat.S_ISDIR(mode):
            inside = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.name.lower().endswith(EXPORT_SUFFIXES)
            )
            if not inside:
                raise ClientError(f"{name}: no .csv, .csv.gz or .parquet file in this directory")
            found += inside
        elif stat.S_ISREG(mode):
            found.append(path)
        else:
            raise ClientError(f"{name}: not a regular file")
    return found


def read_exports(paths: list[str]) -> Any:
    """The files as one ParsedBill (trncost.model.actuals)."""
    from trncost.billing.files import read_bill_file
    from trncost.billing.rows import merge
    from trncost.errors import InvalidInput

    bills = []
    for path in export_files(paths):
        try:
            bills.append(read_bill_file(path, path.name))
        except InvalidInput as exc:
            raise ClientError(f"{path}: {exc}") from None
    try:
        return merge(bills)
    except InvalidInput as exc:
        raise ClientError(str(exc)) from None


@_remote
def cmd_import(args: argparse.Namespace, console: Console) -> int:
    bill = read_exports(args.files)
    if args.dry_run:
        summary = {
            "format": bill.format,
            "files": bill.files,
            "rows_read": bill.rows_read,
            "tagged_rows": bill.matched_rows,
            "estimate_ids": sorted({g.estimate_id for g in bill.groups}),
            "deliveries": [d.model_dump() for d in bill.deliveries],
            "tag_keys_seen": bill.tag_keys_seen,
        }
        if args.json:
            print_json(summary)
        else:
            console.print(
                f"{len(bill.files)} file(s), {bill.rows_read:,} rows, {bill.matched_rows:,} "
                f"tagged with an estimate ({', '.join(summary['estimate_ids']) or 'none'}); "
                "nothing sent (--dry-run)"
            )
        return 0
    result = _client(args).post_json("/actuals", bill.model_dump(mode="json"))
    if args.json:
        print_json(result)
        return 0
    console.print(
        f"{args.url}: {result['rows_read']:,} rows read, {result['matched']:,} matched to "
        f"{len(result['estimate_ids'])} estimate(s), {result['unmatched']:,} not"
        + (f" ({_reasons(result['unmatched_reasons'])})" if result["unmatched_reasons"] else "")
    )
    for p in result["periods"]:
        c = p["changes"]
        console.print(
            f"  {p['period']} {p['source']}: {p['outcome']} "
            f"(+{c['added']} −{c['removed']} ~{c['changed']} lines, "
            f"{display.usd(_dec(p['billed_usd']))})"
        )
    if result.get("unknown_estimate_ids"):
        console.print(f"  not estimates here: {', '.join(result['unknown_estimate_ids'])}")
    for eid in result["estimate_ids"]:
        console.print(f"  {args.url.rstrip('/')}/estimates/{eid}/actuals")
    return 0


def _reasons(reasons: dict[str, int]) -> str:
    return ", ".join(f"{k.replace('_', ' ')}: {v:,}" for k, v in reasons.items())


def _dec(value: Any) -> Any:
    from decimal import Decimal

    return None if value is None else Decimal(str(value))


@_remote
def cmd_show(args: argparse.Namespace, console: Console) -> int:
    from urllib.parse import quote

    found = _client(args).get_object(f"/estimates/{quote(args.estimate_id, safe='')}/actuals")
    if args.json:
        print_json(found)
        return 0
    inside = found["inside_range"]
    band = (
        f"{display.usd(_dec(found['p10_usd']))} – {display.usd(_dec(found['p90_usd']))}"
        if found["p10_usd"] is not None
        else "no range"
    )
    error = found["relative_error"]
    console.print(
        f"[bold]{found['estimate_id']}[/bold] (version {found['estimate_version']}): billed "
        f"{display.usd(_dec(found['actual_usd']))}, forecast "
        f"{display.usd(_dec(found['estimate_usd']))}, P10–P90 {band} "
        f"({'inside' if inside else 'outside' if inside is False else 'no range'})"
        + (f", error {error:+.1%}" if error is not None else "")
    )
    gap = found.get("gap")
    if gap:
        console.print(
            f"  gap: hours {display.usd(_dec(gap['hours']))}, rate "
            f"{display.usd(_dec(gap['rate']))}, not estimated "
            f"{display.usd(_dec(gap['not_estimated']))}"
        )
    table = Table(title="lines")
    for col in ("line", "kind", "forecast", "billed", "hours", "rate", "not estimated"):
        table.add_column(col, overflow="fold")
    for x in found["lines"]:
        table.add_row(
            x["name"],
            x["kind"],
            display.usd(_dec(x["estimate_usd"])) if x["estimate_usd"] is not None else "—",
            display.usd(_dec(x["actual_usd"])),
            display.usd(_dec(x["hours_usd"])),
            display.usd(_dec(x["rate_usd"])),
            display.usd(_dec(x["not_estimated_usd"])),
        )
    console.print(table)
    for p in found["periods"]:
        console.print(
            f"  {p['period']}: {display.usd(_dec(p['actual_usd']))} from {p['source']}"
            + (" (estimated)" if p["estimated"] else "")
        )
    for note in found["notes"]:
        console.print(f"  note: {note}")
    return 0


@_remote
def cmd_scorecard(args: argparse.Namespace, console: Console) -> int:
    query = {"workload_id": args.workload} if args.workload else None
    card = _client(args).get_object("/actuals/scorecard", query)
    if args.json:
        print_json(card)
        return 0
    median = card["median_abs_relative_error"]
    console.print(
        f"{card['estimates_with_actuals']} estimate(s) with actuals, "
        f"{card['inside_p10_p90']} inside P10–P90"
        + (f", median |error| {median:.1%}" if median is not None else "")
    )
    table = Table(title=f"scorecard ({args.workload or 'stage'})")
    for col in ("estimate", "workload", "forecast", "billed", "range", "error"):
        table.add_column(col, overflow="fold")
    for e in card["estimates"]:
        table.add_row(
            e["estimate_id"],
            e["workload_id"],
            display.usd(_dec(e["estimate_usd"])),
            display.usd(_dec(e["actual_usd"])),
            {True: "inside", False: "outside", None: "—"}[e["inside_range"]],
            "—" if e["relative_error"] is None else f"{e['relative_error']:+.1%}",
        )
    console.print(table)
    return 0


@_remote
def cmd_budget(args: argparse.Namespace, console: Console) -> int:
    from urllib.parse import quote

    subscribers = [{"type": "EMAIL", "address": a} for a in args.email or []]
    subscribers += [{"type": "SNS", "address": a} for a in args.sns or []]
    if not subscribers:
        raise ClientError("give at least one --email or --sns: the budget's alerts go there")
    body: dict[str, Any] = {"subscribers": subscribers}
    if args.start:
        body["start"] = args.start.isoformat()
    if args.end:
        body["end"] = args.end.isoformat()
    view = _client(args).post_object(f"/estimates/{quote(args.estimate_id, safe='')}/budget", body)
    if args.json:
        print_json(view)
        return 0
    alerts = ", ".join(
        f"{a['percentile']} {display.usd(_dec(a['threshold_usd']))}" for a in view["alerts"]
    )
    console.print(
        f"budget {view['budget_name']} in account {view['account_id']}: {view['outcome']}, "
        f"limit {display.usd(_dec(view['limit_usd']))} (P90), alerts at {alerts}, "
        f"{view['start']} to {view['end']}, tag {view['tag_key']}={args.estimate_id}"
    )
    return 0


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def add_commands(sub: SubParsers) -> None:
    actuals = sub.add_parser(
        "actuals", help="billed actuals: import exports, an estimate against them, the scorecard"
    )
    actuals_sub = actuals.add_subparsers(dest="actuals_command", required=True)
    imp = actuals_sub.add_parser(
        "import",
        help="import FOCUS 1.2 or CUR 2.0 export files (CSV, gzip CSV, Parquet; any size)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("files", nargs="+", metavar="FILE", help="export files, or directories")
    imp.add_argument("--dry-run", action="store_true", help="read the files, send nothing")
    _add_remote_options(imp)
    imp.set_defaults(handler=cmd_import)
    show = actuals_sub.add_parser("show", help="an estimate against what AWS billed its runs")
    show.add_argument("estimate_id", metavar="ESTIMATE_ID")
    _add_remote_options(show)
    show.set_defaults(handler=cmd_show)
    card = actuals_sub.add_parser("scorecard", help="how often actuals fell inside P10–P90")
    card.add_argument("--workload", metavar="ID", help="one workload (default: the stage)")
    _add_remote_options(card)
    card.set_defaults(handler=cmd_scorecard)
    budget = actuals_sub.add_parser(
        "budget", help="an AWS Budget on the estimate's tag: limit P90, alerts at P50 and P90"
    )
    budget.add_argument("estimate_id", metavar="ESTIMATE_ID")
    budget.add_argument("--email", action="append", metavar="ADDR", help="an alert recipient")
    budget.add_argument("--sns", action="append", metavar="ARN", help="an SNS topic for alerts")
    budget.add_argument("--start", type=_day, help="first day (default: the first of the month)")
    budget.add_argument("--end", type=_day, help="end day (default: a year after --start)")
    _add_remote_options(budget)
    budget.set_defaults(handler=cmd_budget)
