"""`trncost workloads`, `trncost report`, `trncost prices latest` and `trncost prices upload`:
the API at --url.

--url defaults to $TRNCOST_URL, else the local runtime at http://127.0.0.1:8080. Requests to a
deployed stage (*.amazonaws.com) are SigV4-signed (trncost_client.http); any failure is one line on
stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from trncost import display
from trncost.errors import ClientError, TrncostError
from trncost_client.cli import flags
from trncost_client.cli.output import Command, SubParsers, fail, print_json
from trncost_client.cli.runtime import add_url_option
from trncost_client.files import PRICE_FILE_MAX_BYTES, read_json_file
from trncost_client.http import TrncostClient


def _client(args: argparse.Namespace) -> TrncostClient:
    return TrncostClient(args.url, sign=args.sign, region=args.region, timeout=args.timeout)


def _remote(command: Command) -> Command:
    """Run a command that talks to the API: any failure is one line and exit 2, never a
    traceback."""

    def run(args: argparse.Namespace, console: Console) -> int:
        try:
            return command(args, console)
        except TrncostError as exc:  # the API's answer, a file of the user's, ...
            return fail(str(exc))
        except OSError as exc:  # writing the report, mostly
            where = f" {exc.filename}" if exc.filename else ""
            return fail(f"{exc.strerror or exc}{where}")
        except KeyboardInterrupt:
            return fail("interrupted")
        except Exception as exc:  # a bug: still one line, never a traceback
            return fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in trncost)")

    return run


def _count(x: float | int | None) -> str:
    if x is None:
        return "—"
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return f"{x / size:,.3g}{suffix}"
    return f"{x:,.6g}"


def _workload_row(w: dict[str, Any]) -> tuple[str, str, str, str, str]:
    model = w.get("model") or {}
    target = w.get("target") or {}
    gate = w.get("quality_gate") or {}
    direction = str(gate.get("direction"))  # as printed, "None" when missing
    sign = {"at_most": "≤", "at_least": "≥"}.get(direction, direction)
    return (
        str(w.get("workload_id", "")),
        w.get("name") or "",
        f"{model.get('name', '?')} ({_count(model.get('parameters'))} params)",
        f"{_count(target.get('amount'))} {target.get('unit', '')}".strip(),
        f"{gate.get('metric', '?')} {sign} {gate.get('threshold', '?')}",
    )


@_remote
def cmd_workloads(args: argparse.Namespace, console: Console) -> int:
    items = _client(args).workloads()
    if args.json:
        print_json(items)
        return 0
    if not items:
        console.print(f"no workloads at {args.url} (POST /workloads creates one)")
        return 0
    table = Table(title=f"Workloads at {args.url}")
    for col in ("id", "name", "model", "target", "gate"):
        table.add_column(col, overflow="fold")
    for w in items:
        table.add_row(*(Text(cell) for cell in _workload_row(w)))  # the API's text, not markup
    console.print(table)
    return 0


COMPARISON_PREFIX = "cmp-"  # a stored comparison's id (an estimate's starts with est-)


def _report_name(estimate_id: str, version: int | None, fmt: str = "html") -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", estimate_id)
    ext = "csv" if fmt == "focus" else fmt  # FOCUS-shaped rows are CSV
    return f"trncost-report-{safe}" + (f"-v{version}" if version else "") + f".{ext}"


@_remote
def cmd_report(args: argparse.Namespace, console: Console) -> int:
    import tempfile
    from pathlib import Path

    fmt = args.format
    if args.out == "-" and args.json:
        raise ClientError("--out - writes the report to stdout; --json cannot go with it")
    comparison = args.estimate_id.startswith(COMPARISON_PREFIX)
    if comparison and (args.version is not None or fmt == "focus"):
        raise ClientError(
            "a comparison is immutable and has no versions or FOCUS rows: drop "
            + ("--version" if args.version is not None else "--format focus")
        )
    if comparison:
        html = _client(args).comparison_report(args.estimate_id, fmt)
    else:
        html = _client(args).report(args.estimate_id, args.version, fmt)
    if args.out == "-":
        sys.stdout.write(html)
        return 0
    if args.out:
        path = Path(args.out).expanduser()
        path.write_text(html, encoding="utf-8", newline="")
    else:  # a temporary file: never into the current directory unasked
        stem, ext = _report_name(args.estimate_id, args.version, fmt).rsplit(".", 1)
        fd, name = tempfile.mkstemp(prefix=stem + "-", suffix=f".{ext}")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(html)
        path = Path(name)
    path = path.resolve()
    opened = _open_in_browser(path) if args.open else False
    if args.json:
        print_json(
            {
                "estimate_id": args.estimate_id,
                "version": args.version,
                "format": fmt,
                "path": str(path),
                "bytes": len(html.encode("utf-8")),
                "opened": opened,
            }
        )
        return 0
    which = f"version {args.version}" if args.version else "latest version"
    what = {"html": "report", "csv": "CSV export", "md": "Markdown export"}.get(fmt, fmt)
    of = (
        f"comparison {args.estimate_id}" if comparison else f"estimate {args.estimate_id} ({which})"
    )
    console.print(f"{what} of {of} written to {path}", markup=False)
    if args.open:
        console.print(
            "opened in your browser"
            if opened
            else f"no browser could be opened; open {path.as_uri()} yourself"
        )
    return 0


def _open_in_browser(path: object) -> bool:
    import webbrowser
    from pathlib import Path

    try:
        return bool(webbrowser.open(Path(str(path)).as_uri()))
    except Exception:  # no browser, no display, a broken BROWSER setting: never fatal
        return False


def _plain(x: object) -> str:
    """A Decimal-as-string without trailing zeros or exponent: '44.7000000000' → '44.7'."""
    try:
        d = Decimal(str(x))
    except (ArithmeticError, ValueError):
        return str(x)
    if not d.is_finite():
        return str(x)
    return f"{d.normalize():f}"


def _quote_price(q: dict[str, Any]) -> str:
    if q.get("status") == "pending":
        return q.get("pending_reason") or "no official price"
    tiers = q.get("tiers") or []
    unit = q.get("unit") or "?"
    if len(tiers) == 1:
        return f"{display.rate(_plain(tiers[0]['usd']))} per {unit}"
    parts = []
    for t in tiers:
        end = "∞" if t.get("end") is None else _plain(t["end"])
        parts.append(f"{_plain(t.get('begin', 0))}–{end}: {display.rate(_plain(t['usd']))}")
    return "; ".join(parts) + f" per {unit}"


def _quote_key(key: dict[str, Any] | str) -> str:
    if isinstance(key, dict):
        return "/".join(
            str(key.get(k, "?")) for k in ("service", "region", "item", "purchase_option")
        )
    return str(key)


@_remote
def cmd_prices_latest(args: argparse.Namespace, console: Console) -> int:
    snap = _client(args).latest_snapshot()
    if args.json:
        print_json(snap)
        return 0
    _print_snapshot(snap, console)
    return 0


def _origin_text(origin: dict[str, Any] | None) -> str:
    if not origin:
        return "—"
    match origin.get("basis"):
        case "official":
            when = display.timestamp(origin.get("requested_at"))
            return f"asked {origin.get('endpoint')} at {when}"
        case "saved_file":
            note = f" — {origin['note']}" if origin.get("note") else ""
            return (
                f"file sha256 {origin.get('sha256')} supplied by {origin.get('supplied_by')} "
                f"at {display.timestamp(origin.get('supplied_at'))}{note}"
            )
        case _:
            return f"bundled file {origin.get('file')}"


def _print_snapshot(snap: dict[str, Any], console: Console) -> None:
    quotes = snap.get("quotes") or []
    pending = sum(1 for q in quotes if q.get("status") == "pending")
    rejected = snap.get("rejected") or []
    unmatched = snap.get("unmatched") or []
    basis = snap.get("basis") or "official"
    colour = "green" if basis == "official" else "magenta"
    basis = escape(str(basis))
    console.print(f"[bold]Price snapshot {escape(str(snap.get('snapshot_id')))}[/bold]")
    console.print(f"  basis:     [{colour}]{basis}[/{colour}]")
    console.print(f"  source:    {snap.get('source')}", markup=False)
    console.print(f"  origin:    {_origin_text(snap.get('origin'))}", markup=False)
    console.print(f"  taken at:  {display.timestamp(snap.get('taken_at'))}", markup=False)
    if snap.get("note"):
        console.print(f"  note:      {snap['note']}", markup=False)
    dates = snap.get("publication_dates") or {}
    console.print("  Price List publication dates:" + ("" if dates else " —"))
    for service, published in sorted(dates.items()):
        console.print(f"    {service}: {published}", markup=False)
    console.print(
        f"  quotes: {len(quotes)} ({len(quotes) - pending} priced ({basis}), {pending} PENDING); "
        f"rejected items: {len(rejected)}; unmatched items: {len(unmatched)}"
    )
    table = Table(title="Quotes")
    for col in ("key", "basis", "rate / unit or PENDING reason", "sku"):
        table.add_column(col, overflow="fold")
    for q in sorted(quotes, key=lambda q: _quote_key(q.get("key", ""))):
        pending_q = q.get("status") == "pending"
        table.add_row(
            Text(_quote_key(q.get("key", ""))),
            "[yellow]PENDING[/yellow]" if pending_q else Text(str(q.get("basis") or basis)),
            Text(_quote_price(q)),
            Text(q.get("sku") or ""),
        )
    console.print(table)
    for title, entries in (("Rejected", rejected), ("Unmatched", unmatched)):
        if entries:
            listed = Table(title=f"{title} items")
            for col in ("sku", "key", "reason"):
                listed.add_column(col, overflow="fold")
            for e in entries:
                key = e.get("key") or e.get("closest_key") or ""
                listed.add_row(
                    *(Text(str(v)) for v in (e.get("sku") or "", key, e.get("reason") or ""))
                )
            console.print(listed)


@_remote
def cmd_prices_upload(args: argparse.Namespace, console: Console) -> int:
    """Upload a saved Price List file: stored with basis saved_file; latest only with
    --publish on a stage that accepts uploads."""
    data = read_json_file(
        Path(args.file).expanduser(), PRICE_FILE_MAX_BYTES, "saved Price List file"
    )
    taken = _client(args).take_snapshot(data, note=args.note, publish=args.publish)
    if args.json:
        print_json(taken)
        return 0
    latest = "now the latest prices" if taken.get("published_as_latest") else "not latest"
    console.print(
        f"[bold]Stored {taken.get('snapshot_id')}[/bold] (basis {taken.get('basis')}, {latest}): "
        f"{taken.get('quotes')} quotes, {taken.get('pending')} PENDING, "
        f"{taken.get('rejected')} rejected, {taken.get('unmatched')} unmatched"
    )
    if not taken.get("published_as_latest"):
        console.print(
            f'  use it by id: "snapshot_id": "{taken.get("snapshot_id")}" in an estimate request'
        )
    return 0


def _add_remote_options(parser: argparse.ArgumentParser, *, json: bool = True) -> None:
    add_url_option(parser)
    if json:
        parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--sign",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="SigV4-sign requests with your AWS credentials (default: only for "
        "*.amazonaws.com URLs)",
    )
    parser.add_argument(
        "--region", help="the AWS region to sign for (default: from the execute-api host name)"
    )
    parser.add_argument(
        "--timeout",
        type=flags.seconds,
        default=30.0,
        help="seconds to wait for an answer (default 30)",
    )


def add_commands(sub: SubParsers) -> None:
    workloads = sub.add_parser("workloads", help="list the workloads the API knows")
    _add_remote_options(workloads)
    workloads.set_defaults(handler=cmd_workloads)
    report = sub.add_parser(
        "report",
        help="download an estimate's or a stored comparison's report (HTML, CSV or Markdown)",
        description="Download an estimate's (est-…) or a stored comparison's (cmp-…) "
        "self-contained HTML report, or with --format csv|md its figures as CSV or Markdown "
        "(a comparison's: each candidate's summary, range, decision, credits runway and next "
        "trial, then its line items and input table). Without --out it is written to a "
        "temporary file (trncost-report-<id>-*.<format>) whose path is printed; --open also "
        "opens it in your browser; --out - writes it to stdout.",
    )
    report.add_argument("estimate_id", metavar="ESTIMATE_ID|COMPARISON_ID")
    report.add_argument(
        "--format",
        choices=("html", "csv", "md", "focus"),
        default="html",
        help="html (the page, default), csv or md (its line items and input table), focus "
        "(the run's forecast as FOCUS-shaped CSV rows)",
    )
    report.add_argument(
        "--version", type=flags.version, metavar="N", help="a version (default: latest)"
    )
    report.add_argument("--open", action="store_true", help="open it in your web browser")
    report.add_argument(
        "--out",
        metavar="FILE",
        type=flags.output_file_or_stdout,
        help="write it here ('-': stdout; a file's folder must exist)",
    )
    _add_remote_options(report)
    report.set_defaults(handler=cmd_report)
    prices = sub.add_parser("prices", help="price snapshots")
    prices_sub = prices.add_subparsers(dest="prices_command", required=True)
    latest = prices_sub.add_parser(
        "latest", help="the latest price snapshot: its quotes, PENDING prices and sources"
    )
    _add_remote_options(latest)
    latest.set_defaults(handler=cmd_prices_latest)
    upload = prices_sub.add_parser(
        "upload",
        help="upload a saved Price List file (basis saved_file; latest only with --publish)",
    )
    upload.add_argument("file", help="a GetProducts response, a list of items or an offer file")
    upload.add_argument("--note", help="why you supply it (kept with the snapshot)")
    upload.add_argument(
        "--publish",
        action="store_true",
        help="make it the latest prices (only where the stage accepts uploads)",
    )
    _add_remote_options(upload)
    upload.set_defaults(handler=cmd_prices_upload)
