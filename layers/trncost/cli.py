"""The `trncost` command.

    trncost estimate FILE [--json] [--candidate INSTANCE_TYPE]   offline: the engine directly
    trncost serve                                                the service on this machine
    trncost workloads [--json]                                   the API's workloads
    trncost report ESTIMATE_ID [--version N] [--open] [--out FILE]
    trncost prices latest [--json]                               the latest price snapshot
    trncost dlq list [--region R] [--json]                       dead-letter queues, depth
    trncost dlq redrive QUEUE [--to SOURCE] [--max-per-second N] [--wait] [--by-copy]
    trncost dlq status QUEUE                                     its message move tasks

`estimate` runs the pure engine on an estimate request file (see examples/) and prints each
candidate's estimate with its line items, warnings and input table.

`dlq` talks to SQS with the default AWS credentials (--region, --endpoint-url, or
$AWS_ENDPOINT_URL_SQS for the local runtime's embedded AWS). `dlq redrive` moves a DLQ's
messages back to their source queue with SQS message move tasks (--wait follows the task);
--by-copy receives, re-sends and deletes them instead, for endpoints without move tasks.

`workloads`, `report` and `prices` talk to the API at --url (default $TRNCOST_URL, else the
local runtime at http://127.0.0.1:8080). Requests to a deployed stage
(https://<id>.execute-api.<region>.amazonaws.com/<stage>) are SigV4-signed with the default AWS
credentials; nothing else is ever signed or sent to AWS. Errors exit 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path

from rich.console import Console
from rich.table import Table

from trncost.client import DEFAULT_URL, URL_ENV, ClientError, TrncostClient
from trncost.estimate import (
    DomainError,
    MissingEvidence,
    best_comparable,
    break_even_price,
    comparability,
    estimate,
)
from trncost.model import Estimate, EstimateInput, Provenance
from trncost.ops import MoveTask, OpsError, QueueOps, arn_name
from trncost.requestfile import RequestFileError, load_estimate_file


def money(x: Decimal | None) -> str:
    return "PENDING" if x is None else f"${x:,.2f}"


def _num(x: object) -> str:
    if isinstance(x, float):
        return f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"
    if x is None:
        return "—"
    return str(x)


def provenance_source(p: Provenance) -> str:
    """One line saying where a number comes from."""
    match p.kind:
        case "official_price":
            return f"snapshot {p.snapshot_id} sku {p.sku} rate {p.rate_code}"
        case "trial_measurement":
            return f"{p.metric} ← {', '.join(p.trial_ids)}"
        case "user_assumption":
            return p.name + (f" ({p.note})" if p.note else "")
        case "derived":
            return p.formula
        case _:
            return p.reason


def render(est: Estimate, console: Console, *, show_inputs: bool = True) -> None:
    c = est.candidate
    console.rule(f"[bold]{c.label}[/bold] — {est.status.upper()}")
    if est.status == "infeasible":
        console.print(f"[red]Infeasible:[/red] {est.infeasible_reason}")
    else:
        t = est.time
        assert t is not None
        tokens = (
            f" ({est.target_tokens:,.0f} tokens)"
            if est.target_tokens and est.target_unit != "tokens"
            else ""
        )
        console.print(f"Target: {est.target_amount:,.0f} {est.target_unit}{tokens}")
        console.print(
            f"Time to target: {t.total_h:,.1f} h (steady {t.steady_h:,.1f} h, compile "
            f"{t.compile_h:.2f} h, warm-up {t.warmup_h:.2f} h, checkpoints {t.checkpoint_h:.2f} h, "
            f"evaluation {t.evaluation_h:.2f} h, failures {t.failure_overhead_h:.2f} h); "
            f"held {t.held_h:,.1f} h"
        )
        console.print(f"Effective throughput: {est.effective_throughput:,.0f} {est.target_unit}/s")
        if est.complete:
            console.print(
                f"[bold]Cost per completed target: {money(est.total_usd)}[/bold]"
                + (
                    f" — {money(est.cost_per_million_tokens_usd)} per 1M tokens"
                    if est.cost_per_million_tokens_usd is not None
                    else ""
                )
            )
        else:
            console.print(f"[bold yellow]Incomplete: {est.total_formula}[/bold yellow]")
            for term in est.pending_terms:
                console.print(f"  PENDING {term.price_key}: {term.reason}")
        lines = Table(title="Line items", show_lines=False)
        for col, justify in (
            ("component", "left"),
            ("item", "left"),
            ("quantity", "right"),
            ("unit", "left"),
            ("rate", "right"),
            ("amount", "right"),
        ):
            lines.add_column(col, justify=justify)
        for li in est.line_items:
            lines.add_row(
                li.component.value,
                li.name,
                _num(li.quantity),
                li.unit,
                "tiered"
                if li.rate_usd is None and li.amount_usd is not None
                else ("PENDING" if li.rate_usd is None else f"{li.rate_usd}"),
                money(li.amount_usd),
            )
        console.print(lines)
        totals = Table(title="By component")
        totals.add_column("component")
        totals.add_column("known amount", justify="right")
        for comp, amount in est.components.items():
            totals.add_row(comp.value, money(amount))
        totals.add_row(
            "[bold]total[/bold]",
            f"[bold]{money(est.total_usd) if est.complete else est.total_formula}[/bold]",
        )
        console.print(totals)
    if est.warnings:
        console.print("[bold]Warnings[/bold]")
        for w in est.warnings:
            console.print(f"  [yellow]{w.code}[/yellow]: {w.message}")
    if show_inputs:
        table = Table(title="Input table")
        for col in ("id", "value", "unit", "provenance", "source"):
            table.add_column(col, overflow="fold")
        for row in est.inputs:
            p = row.provenance
            source = provenance_source(p)
            table.add_row(row.id, _num(row.value), row.unit or "", p.kind, source)
        console.print(table)


def render_break_even(results: list[tuple[EstimateInput, Estimate]], console: Console) -> None:
    """For each estimate waiting on one price: the price at which it matches the cheapest
    comparable, fully priced candidate."""
    pending = [(i, e) for i, e in results if e.status == "incomplete"]
    if not pending:
        return
    console.rule("[bold]Break-even prices[/bold]")
    for inp, est in pending:
        label = est.candidate.label
        if len(est.pending_terms) != 1:
            keys = ", ".join(t.price_key for t in est.pending_terms)
            console.print(f"{label}: waits on several prices ({keys}); no single break-even")
            continue
        best = best_comparable((inp, est), [r for r in results if r[1] is not est])
        if best is None:
            reasons = {
                f"{e.candidate.label}: {'; '.join(comparability(inp, i))}"
                for i, e in results
                if e is not est and e.status == "complete"
            }
            console.print(
                f"{label}: no comparable fully priced candidate"
                + (f" ({' | '.join(sorted(reasons))})" if reasons else "")
            )
            continue
        alt = best[1]
        term = est.pending_terms[0]
        price = break_even_price(est, alt.total_usd)
        if price is None or price <= 0:
            console.print(
                f"{label}: its known part alone ({money(est.total_known_usd)}) already exceeds "
                f"{alt.candidate.label} ({money(alt.total_usd)})"
            )
            continue
        console.print(
            f"{label}: cheaper per completed target than {alt.candidate.label} "
            f"({money(alt.total_usd)}) while P[{term.price_key}] < {money(price)} "
            f"per {term.unit}"
        )


def cmd_estimate(args: argparse.Namespace, console: Console) -> int:
    try:
        request = load_estimate_file(args.file)
    except RequestFileError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    results: list[tuple[EstimateInput, Estimate]] = []
    failed = 0
    for inp in request.inputs():
        if args.candidate and inp.candidate.instance_type != args.candidate:
            continue
        try:
            est = estimate(inp)
        except MissingEvidence as exc:
            failed += 1
            console.print(f"[red]missing evidence for {inp.candidate.label}:[/red] {exc}")
            continue
        except DomainError as exc:
            failed += 1
            console.print(f"[red]cannot estimate {inp.candidate.label}:[/red] {exc}")
            continue
        results.append((inp, est))
        if not args.json:
            render(est, console, show_inputs=not args.no_inputs)
    if not args.json:
        render_break_even(results, console)
    if args.json:
        payload = [e.model_dump(mode="json") for _, e in results]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    return 1 if failed else 0


def cmd_compare(args: argparse.Namespace, console: Console) -> int:  # noqa: C901 - split under issue 11 (remove this when done)
    """Offline: analyse every candidate of a request file (the engine, no server)."""
    from trncost.estimate import analyse

    try:
        request = load_estimate_file(args.file)
        analysis = analyse(request.inputs(), seed=args.seed, samples=args.samples)
    except RequestFileError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    except DomainError as exc:
        console.print(f"[red]cannot analyse:[/red] {exc}")
        return 2
    if args.html:
        from trncost.report import render_analysis_report

        Path(args.html).write_text(
            render_analysis_report(
                analysis,
                workload_name=request.workload.name,
                workload_id=request.workload.workload_id,
            ),
            encoding="utf-8",
        )
        console.print(f"analysis report written to {args.html}")
    if args.json:
        sys.stdout.write(analysis.model_dump_json(indent=2) + "\n")
        return 0
    decision = analysis.decision
    if decision is not None:
        console.rule(f"[bold]Decision: {decision.action.value}[/bold] ({decision.candidate_id})")
        console.print(decision.summary)
        for reason in decision.reasons:
            console.print(
                f"  [yellow]{reason.code}[/yellow] → {reason.action.value}: {reason.message}"
            )
    ranking = Table(title="Ranking (within comparable groups)")
    for col in (
        "group",
        "by cost",
        "by time",
        "candidate",
        "status",
        "cost per target",
        "time to target",
    ):
        ranking.add_column(col)
    for row in analysis.comparison.by_cost:
        cost = (
            money(row.cost_per_target_usd)
            if row.cost_per_target_usd is not None
            else (row.pending_formula or "—")
        )
        ranking.add_row(
            str(row.group),
            _num(row.cost_rank),
            _num(row.time_rank),
            f"{row.instance_count}× {row.instance_type}",
            row.status,
            cost,
            f"{row.time_to_target_h:,.1f} h" if row.time_to_target_h else "—",
        )
    console.print(ranking)
    for pair in analysis.comparison.not_comparable:
        console.print(f"not comparable: {pair.a} vs {pair.b}: {'; '.join(pair.reasons)}")
    for be in analysis.comparison.break_evens:
        price = f"{money(be.price_usd)} per {be.unit}" if be.price_usd is not None else "—"
        console.print(f"break-even {be.candidate_id}: P[{be.price_key}] < {price} ({be.note})")
    for cand in analysis.candidates:
        console.rule(cand.candidate_id)
        if cand.error:
            console.print(f"[red]not estimated:[/red] {cand.error}")
            continue
        rng = cand.range
        if rng is not None:
            band = rng.total_usd or rng.known_usd
            label = "total" if rng.total_usd else "known part"
            if band is not None:
                console.print(
                    f"{label} P10/P50/P90: {money(band.p10)} / {money(band.p50)} / "
                    f"{money(band.p90)} ({rng.samples:,} draws, seed {rng.seed}; "
                    f"{rng.infeasible_share:.1%} cannot finish)"
                )
            for pend in rng.pending:
                q = pend.quantity
                console.print(
                    f"  × P[{pend.price_key}]: {_num(q.p10)} / {_num(q.p50)} / "
                    f"{_num(q.p90)} {pend.unit}"
                )
        for swing in cand.tornado[: args.top]:
            low, high = swing.low, swing.high
            if low.total_usd is not None or high.total_usd is not None:
                span = f"{money(low.total_usd)} … {money(high.total_usd)}"
            else:
                span = f"known part {money(low.known_usd)} … {money(high.known_usd)}"
            console.print(f"  #{swing.rank} {swing.label} ({swing.basis}): {span}")
        if cand.decision is not None:
            console.print(f"decision: {cand.decision.action.value}")
    return 0


def cmd_trial_run(args: argparse.Namespace, console: Console) -> int:
    """Run a training command under the trial agent against the local runtime: its metrics and
    "Trial Run Completed" go to the runtime's embedded AWS, ingest records the trial and the
    workload's estimates are refreshed, as they would be on AWS."""
    import subprocess
    import time
    from datetime import UTC, datetime

    from trncost.local.runtime import read_state, state_path

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return _fail("give the training command after --, e.g. -- python examples/train_tiny.py")
    state = read_state()
    if state is None:
        return _fail(f"no local runtime found ({state_path()}): start it with `make run`")
    workload = args.workload or state.get("workload_id")
    if not workload:
        return _fail("--workload is required (the local runtime seeded none)")
    trial_id = args.trial_id or f"local-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": state["aws_endpoint"],
        "AWS_DEFAULT_REGION": state["region"],
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_SESSION_TOKEN": "local",
    }
    agent = [
        sys.executable, "-m", "trncost.agent",
        "--tag", f"trncost:workload={workload}", "--tag", f"trncost:phase={args.phase}",
        "--tag", f"trncost:trial={trial_id}",
        "--instance-type", args.instance_type, "--instance-count", str(args.instance_count),
        "--region", state["region"], "--bus", state["bus"], "--send-event", "--interval", "2",
        "--", *command,
    ]  # fmt: skip
    console.print(
        f"running under the trial agent as trial {trial_id} of {workload} "
        f"({args.phase}, {args.instance_count}× {args.instance_type})"
    )
    code = subprocess.call(agent, env=env)
    console.print(f"training command exited with {code}; waiting for ingest…")
    client = TrncostClient(state["url"])
    deadline = time.monotonic() + args.wait
    trial = None
    while time.monotonic() < deadline:
        try:
            trial = client.get_json(f"/trials/{trial_id}")["trial"]
            break
        except ClientError:
            time.sleep(0.5)
    if trial is None:
        return _fail(
            f"trial {trial_id} was not recorded within {args.wait:g} s: see "
            f"{state['url']}/ingest/rejected"
        )
    work = trial["work"]
    console.print(
        f"[bold]trial {trial_id} recorded[/bold]: {trial['status']}, "
        f"{work['quality_meeting']:,.0f} of {work['done']:,.0f} {work['unit']} "
        f"quality-meeting, steady {trial['wall']['steady_s']:.1f} s"
    )
    for note in trial.get("notes", []):
        console.print(f"  note: {note}")
    time.sleep(min(5.0, args.wait))  # the refresh runs from the "Trial Recorded" event
    for instance_type, estimate_id in (state.get("estimates") or {}).items():
        try:
            versions = client.get_json(f"/estimates/{estimate_id}/versions")["versions"]
        except ClientError:
            continue
        latest = versions[-1]
        console.print(
            f"  estimate {estimate_id} ({instance_type}): version "
            f"{latest['version']} ({latest['reason']})"
        )
    return 0 if code == 0 else code


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    """Run the service locally until Ctrl-C."""
    import signal
    import threading

    from trncost.local.runtime import Runtime

    runtime = Runtime(
        host=args.host,
        port=args.port,
        live_prices=args.live_prices,
        seed_example=not args.no_example,
    )
    console.print("starting the embedded AWS (moto), tables, queues and handlers…")
    runtime.start()
    console.print(f"[bold]trncost is serving on {runtime.url}[/bold]")
    console.print(f"  API docs (Swagger UI):  {runtime.url}/docs")
    console.print(f"  OpenAPI document:       {runtime.url}/openapi.json")
    snap = runtime.snapshot
    console.print(
        f"  price snapshot:         {snap.snapshot_id} ({snap.source}: "
        f"{snap.note or 'live Price List API'})"
    )
    for instance_type, estimate_id in runtime.estimates.items():
        console.print(
            f"  example report ({instance_type}): {runtime.url}/estimates/{estimate_id}/report"
        )
    console.print("Ctrl-C stops it.")
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        console.print("stopping…")
        runtime.stop()
        console.print("stopped.")
    return 0


# -- remote commands: the API at --url ------------------------------------------------------
Command = Callable[[argparse.Namespace, Console], int]


def _client(args: argparse.Namespace) -> TrncostClient:
    return TrncostClient(args.url, sign=args.sign, region=args.region, timeout=args.timeout)


def _print_json(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, indent=2) + "\n")


def _fail(message: str) -> int:
    """One line on stderr, exit status 2."""
    line = " ".join(str(message).split())
    sys.stderr.write(f"trncost: error: {line}\n")
    sys.stderr.flush()
    return 2


def _remote(command: Command) -> Command:
    """Run a command that talks to the API: any failure is one line and exit 2, never a
    traceback."""

    def run(args: argparse.Namespace, console: Console) -> int:
        try:
            return command(args, console)
        except ClientError as exc:
            return _fail(str(exc))
        except OSError as exc:  # writing the report, mostly
            where = f" {exc.filename}" if exc.filename else ""
            return _fail(f"{exc.strerror or exc}{where}")
        except KeyboardInterrupt:
            return _fail("interrupted")
        except Exception as exc:  # a bug: still one line, never a traceback
            return _fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in trncost)")

    return run


def _count(x: float | int | None) -> str:
    if x is None:
        return "—"
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return f"{x / size:,.3g}{suffix}"
    return f"{x:,.6g}"


def _workload_row(w: dict) -> tuple[str, str, str, str, str]:
    model = w.get("model") or {}
    target = w.get("target") or {}
    gate = w.get("quality_gate") or {}
    sign = {"at_most": "≤", "at_least": "≥"}.get(gate.get("direction"), gate.get("direction"))
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
        _print_json(items)
        return 0
    if not items:
        console.print(f"no workloads at {args.url} (POST /workloads creates one)")
        return 0
    table = Table(title=f"Workloads at {args.url}")
    for col in ("id", "name", "model", "target", "gate"):
        table.add_column(col, overflow="fold")
    for w in items:
        table.add_row(*_workload_row(w))
    console.print(table)
    return 0


def _report_name(estimate_id: str, version: int | None) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", estimate_id)
    return f"trncost-report-{safe}" + (f"-v{version}" if version else "") + ".html"


@_remote
def cmd_report(args: argparse.Namespace, console: Console) -> int:
    import tempfile
    from pathlib import Path

    html = _client(args).report_html(args.estimate_id, args.version)
    if args.out == "-":
        sys.stdout.write(html)
        return 0
    if args.out:
        path = Path(args.out).expanduser()
        path.write_text(html, encoding="utf-8")
    elif args.open:
        fd, name = tempfile.mkstemp(
            prefix=_report_name(args.estimate_id, args.version)[:-5] + "-", suffix=".html"
        )
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(html)
        path = Path(name)
    else:
        path = Path(_report_name(args.estimate_id, args.version))
        path.write_text(html, encoding="utf-8")
    path = path.resolve()
    opened = _open_in_browser(path) if args.open else False
    if args.json:
        _print_json(
            {
                "estimate_id": args.estimate_id,
                "version": args.version,
                "path": str(path),
                "bytes": len(html.encode("utf-8")),
                "opened": opened,
            }
        )
        return 0
    which = f"version {args.version}" if args.version else "latest version"
    console.print(f"report of estimate {args.estimate_id} ({which}) written to {path}")
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


def _quote_price(q: dict) -> str:
    if q.get("status") == "pending":
        return q.get("pending_reason") or "no official price"
    tiers = q.get("tiers") or []
    unit = q.get("unit") or "?"
    if len(tiers) == 1:
        return f"${_plain(tiers[0]['usd'])} per {unit}"
    parts = []
    for t in tiers:
        end = "∞" if t.get("end") is None else _plain(t["end"])
        parts.append(f"{_plain(t.get('begin', 0))}–{end}: ${_plain(t['usd'])}")
    return "; ".join(parts) + f" per {unit}"


def _quote_key(key: dict | str) -> str:
    if isinstance(key, dict):
        return "/".join(
            str(key.get(k, "?")) for k in ("service", "region", "item", "purchase_option")
        )
    return str(key)


@_remote
def cmd_prices_latest(args: argparse.Namespace, console: Console) -> int:
    snap = _client(args).latest_snapshot()
    if args.json:
        _print_json(snap)
        return 0
    quotes = snap.get("quotes") or []
    pending = sum(1 for q in quotes if q.get("status") == "pending")
    rejected = snap.get("rejected") or []
    console.print(f"[bold]Price snapshot {snap.get('snapshot_id')}[/bold]")
    console.print(f"  source:    {snap.get('source')}")
    console.print(f"  taken at:  {snap.get('taken_at')}")
    if snap.get("note"):
        console.print(f"  note:      {snap['note']}")
    dates = snap.get("publication_dates") or {}
    console.print("  Price List publication dates:" + ("" if dates else " —"))
    for service, published in sorted(dates.items()):
        console.print(f"    {service}: {published}")
    console.print(
        f"  quotes: {len(quotes)} ({len(quotes) - pending} official, {pending} PENDING); "
        f"rejected items: {len(rejected)}"
    )
    table = Table(title="Quotes")
    for col in ("key", "status", "rate / unit or PENDING reason", "sku"):
        table.add_column(col, overflow="fold")
    for q in sorted(quotes, key=lambda q: _quote_key(q.get("key", ""))):
        pending_q = q.get("status") == "pending"
        table.add_row(
            _quote_key(q.get("key", "")),
            "[yellow]PENDING[/yellow]" if pending_q else "official",
            _quote_price(q),
            q.get("sku") or "",
        )
    console.print(table)
    return 0


# -- dlq: SQS dead-letter queues (trncost.ops) ----------------------------------------------
def _ops(args: argparse.Namespace) -> QueueOps:
    return QueueOps(region=args.region, endpoint_url=args.endpoint_url)


def _ops_command(command: Command) -> Command:
    """An SQS command: OpsError and anything unexpected are one line and exit 2."""

    def run(args: argparse.Namespace, console: Console) -> int:
        try:
            return command(args, console)
        except OpsError as exc:
            return _fail(str(exc))
        except KeyboardInterrupt:
            return _fail("interrupted")
        except Exception as exc:  # a bug: still one line, never a traceback
            return _fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in trncost)")

    return run


@_ops_command
def cmd_dlq_list(args: argparse.Namespace, console: Console) -> int:
    found = _ops(args).dead_letter_queues(args.prefix)
    if args.json:
        _print_json(
            [
                {
                    "name": d.queue.name,
                    "url": d.queue.url,
                    "arn": d.queue.arn,
                    "messages": d.depth.visible,
                    "in_flight": d.depth.in_flight,
                    "delayed": d.depth.delayed,
                    "sources": d.sources,
                }
                for d in found
            ]
        )
        return 0
    if not found:
        console.print("no dead-letter queues (*-dlq, *DeadLetter*) here")
        return 0
    table = Table(title="Dead-letter queues")
    for col, justify in (
        ("queue", "left"),
        ("messages", "right"),
        ("in flight", "right"),
        ("sources", "left"),
    ):
        table.add_column(col, justify=justify, overflow="fold")
    for d in found:
        table.add_row(
            d.queue.name,
            f"[red]{d.depth.visible}[/red]" if d.depth.visible else "0",
            str(d.depth.in_flight),
            ", ".join(d.sources) or "—",
        )
    console.print(table)
    return 0


def _task_line(task: MoveTask) -> str:
    of = f"/{task.to_move}" if task.to_move is not None else ""
    why = f" ({task.failure_reason})" if task.failure_reason else ""
    return f"{task.status}: {task.moved}{of} moved{why}"


@_ops_command
def cmd_dlq_redrive(args: argparse.Namespace, console: Console) -> int:
    ops = _ops(args)
    dlq = ops.resolve(args.queue)
    to = ops.resolve(args.to) if args.to else None
    depth = ops.depth(dlq)
    where = to.name if to else "its original source queue"
    out: dict[str, object] = {"dlq": dlq.name, "destination": to.name if to else None}
    if not args.json:
        console.print(
            f"{dlq.name}: {depth.visible} messages ({depth.in_flight} in flight) → {where}"
        )
    if depth.total == 0:
        if args.json:
            _print_json({**out, "moved": 0, "status": "EMPTY"})
        else:
            console.print("nothing to redrive")
        return 0
    if args.by_copy:
        copied = ops.redrive_by_copy(dlq, to, args.max_per_second)
        if args.json:
            _print_json(
                {**out, "mode": "copy", "moved": copied.moved, "duplicates": copied.duplicates}
            )
        else:
            console.print(
                f"moved {copied.moved} messages by copy"
                + (f" ({copied.duplicates} seen twice, sent once)" if copied.duplicates else "")
            )
        return 0
    started = ops.start_redrive(dlq, to, args.max_per_second)
    if not args.wait:
        if args.json:
            _print_json({**out, "mode": "move_task", "task_handle": started.task_handle})
        else:
            console.print(f"move task started: {started.task_handle}")
            console.print(f"follow it with: trncost dlq status {dlq.name}")
        return 0

    def progress(task: MoveTask) -> None:
        if not args.json:
            console.print(f"  {_task_line(task)}")

    task = ops.wait(started, poll_s=args.poll_seconds, progress=progress)
    if args.json:
        _print_json(
            {
                **out,
                "mode": "move_task",
                "task_handle": started.task_handle,
                "status": task.status,
                "moved": task.moved,
                "failure_reason": task.failure_reason,
            }
        )
    return 0 if task.status == "COMPLETED" else 1


@_ops_command
def cmd_dlq_status(args: argparse.Namespace, console: Console) -> int:
    ops = _ops(args)
    dlq = ops.resolve(args.queue)
    depth = ops.depth(dlq)
    tasks = ops.move_tasks(dlq)
    if args.json:
        _print_json(
            {
                "dlq": dlq.name,
                "messages": depth.visible,
                "in_flight": depth.in_flight,
                "tasks": [t.__dict__ for t in tasks],
            }
        )
        return 0
    console.print(f"{dlq.name}: {depth.visible} messages ({depth.in_flight} in flight)")
    if not tasks:
        console.print("no message move task")
    for t in tasks:
        dest = arn_name(t.destination_arn) if t.destination_arn else "original sources"
        console.print(f"  → {dest}: {_task_line(t)}")
    return 0


def _add_sqs_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--region", help="the queues' AWS region (default: your AWS config)")
    parser.add_argument(
        "--endpoint-url", help="an SQS endpoint (the local runtime's embedded AWS, say)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def _add_dlq_commands(sub: argparse._SubParsersAction) -> None:
    dlq = sub.add_parser("dlq", help="dead-letter queues: list them, redrive one")
    dlq_sub = dlq.add_subparsers(dest="dlq_command", required=True)
    listing = dlq_sub.add_parser(
        "list", help="queues named *-dlq or *DeadLetter*, with their depth and sources"
    )
    listing.add_argument("--prefix", help="only queues whose name starts with this")
    _add_sqs_options(listing)
    listing.set_defaults(handler=cmd_dlq_list)
    redrive = dlq_sub.add_parser(
        "redrive",
        help="move a DLQ's messages back to their source queue",
        description="Move a dead-letter queue's messages back to a queue whose consumer "
        "processes them again: an SQS message move task (StartMessageMoveTask) to --to, or "
        "to each message's original source queue. --by-copy receives, re-sends and deletes "
        "them instead (endpoints without move tasks; idempotent per message id).",
    )
    redrive.add_argument("queue", metavar="QUEUE", help="the DLQ: name, URL or ARN")
    redrive.add_argument("--to", metavar="SOURCE", help="the destination queue (name, URL, ARN)")
    redrive.add_argument(
        "--max-per-second", type=int, metavar="N", help="move at most N messages a second"
    )
    redrive.add_argument("--wait", action="store_true", help="follow the move task to its end")
    redrive.add_argument(
        "--by-copy", action="store_true", help="receive, re-send and delete, without a move task"
    )
    redrive.add_argument("--poll-seconds", type=float, default=5.0, help=argparse.SUPPRESS)
    _add_sqs_options(redrive)
    redrive.set_defaults(handler=cmd_dlq_redrive)
    status = dlq_sub.add_parser("status", help="a DLQ's depth and its message move tasks")
    status.add_argument("queue", metavar="QUEUE", help="the DLQ: name, URL or ARN")
    _add_sqs_options(status)
    status.set_defaults(handler=cmd_dlq_status)


def _add_remote_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=os.environ.get(URL_ENV) or DEFAULT_URL,
        help=f"the API base URL (default ${URL_ENV}, else {DEFAULT_URL}, the local runtime)",
    )
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
        "--timeout", type=float, default=30.0, help="seconds to wait for an answer (default 30)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="trncost", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    est = sub.add_parser("estimate", help="estimate every candidate in a request file")
    est.add_argument("file", help="estimate request JSON (see examples/llama-8b/estimate.json)")
    est.add_argument("--json", action="store_true", help="print the estimates as JSON")
    est.add_argument("--candidate", metavar="INSTANCE_TYPE", help="only this instance type")
    est.add_argument("--no-inputs", action="store_true", help="omit the input table")
    comp = sub.add_parser(
        "compare",
        help="analyse every candidate in a request file: ranking, ranges, tornado, decision",
    )
    comp.add_argument("file", help="estimate request JSON (see examples/llama-8b/estimate.json)")
    comp.add_argument(
        "--seed", type=int, default=0, help="Monte Carlo seed (same seed, same answer)"
    )
    comp.add_argument("--samples", type=int, default=20_000, help="Monte Carlo draws")
    comp.add_argument("--top", type=int, default=5, help="tornado rows to print per candidate")
    comp.add_argument("--json", action="store_true", help="print the analysis as JSON")
    comp.add_argument("--html", metavar="FILE", help="also write the analysis report here")
    comp.set_defaults(handler=cmd_compare)
    trial = sub.add_parser("trial", help="trial runs")
    trial_sub = trial.add_subparsers(dest="trial_command", required=True)
    run = trial_sub.add_parser(
        "run",
        help="run a training command under the trial agent against the local runtime",
        description="Run CMD under the trial agent against the local runtime (`make run`): "
        "its metrics and event go to the runtime's embedded AWS, the trial is recorded and "
        "the workload's estimates refresh by themselves. Example: trncost trial run --local "
        "-- python examples/train_tiny.py",
    )
    run.add_argument(
        "--local",
        action="store_true",
        required=True,
        help="against the local runtime (the only target for now; on AWS, start "
        "trial plans: POST /workloads/{id}/trial-plans)",
    )
    run.add_argument("--workload", help="workload id (default: the runtime's example)")
    run.add_argument("--phase", choices=["fit", "baseline", "target"], default="baseline")
    run.add_argument("--instance-type", default="trn3.48xlarge")
    run.add_argument("--instance-count", type=int, default=2)
    run.add_argument("--trial-id", help="default: local-<UTC timestamp>")
    run.add_argument("--wait", type=float, default=60, help="seconds to wait for the record")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD …")
    run.set_defaults(handler=cmd_trial_run)
    serve = sub.add_parser("serve", help="run the service locally (embedded AWS, real handlers)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument(
        "--live-prices",
        action="store_true",
        help="take the price snapshot from the live Price List API with your "
        "own AWS credentials (everything else stays local)",
    )
    serve.add_argument("--no-example", action="store_true", help="do not seed the example")

    workloads = sub.add_parser("workloads", help="list the workloads the API knows")
    _add_remote_options(workloads)
    workloads.set_defaults(handler=cmd_workloads)
    report = sub.add_parser(
        "report",
        help="download an estimate's HTML report",
        description="Download an estimate's self-contained HTML report. Without --out it is "
        "written to ./trncost-report-<id>.html (with --open: to a temporary file, then "
        "opened in your browser). --out - writes it to stdout.",
    )
    report.add_argument("estimate_id", metavar="ESTIMATE_ID")
    report.add_argument("--version", type=int, metavar="N", help="a version (default: latest)")
    report.add_argument("--open", action="store_true", help="open it in your web browser")
    report.add_argument("--out", metavar="FILE", help="write it here ('-': stdout)")
    _add_remote_options(report)
    report.set_defaults(handler=cmd_report)
    prices = sub.add_parser("prices", help="price snapshots")
    prices_sub = prices.add_subparsers(dest="prices_command", required=True)
    latest = prices_sub.add_parser(
        "latest", help="the latest price snapshot: its quotes, PENDING prices and sources"
    )
    _add_remote_options(latest)
    latest.set_defaults(handler=cmd_prices_latest)
    _add_dlq_commands(sub)

    args = parser.parse_args(argv)
    if args.command == "report" and args.version is not None and args.version < 1:
        parser.error("--version must be 1 or more")
    if getattr(args, "timeout", 1) <= 0:
        parser.error("--timeout must be more than 0 seconds")
    if getattr(args, "max_per_second", None) is not None and args.max_per_second < 1:
        parser.error("--max-per-second must be 1 or more")
    console = Console(width=160) if sys.stdout.isatty() else Console(width=160, soft_wrap=False)
    if hasattr(args, "handler"):
        return args.handler(args, console)
    return {"estimate": cmd_estimate, "serve": cmd_serve}[args.command](args, console)


if __name__ == "__main__":
    raise SystemExit(main())
