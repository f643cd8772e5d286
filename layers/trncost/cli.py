"""The `trncost` command.

    trncost estimate FILE [--json] [--candidate INSTANCE_TYPE]

Runs the pure engine on an estimate request file (see examples/) and prints each candidate's
estimate with its line items, warnings and input table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from decimal import Decimal

from rich.console import Console
from rich.table import Table

from trncost.estimate import (
    DomainError,
    MissingEvidence,
    best_comparable,
    break_even_price,
    comparability,
    estimate,
)
from trncost.model import Estimate, EstimateInput, Provenance
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
    args = parser.parse_args(argv)
    console = Console(width=160) if sys.stdout.isatty() else Console(width=160, soft_wrap=False)
    return {"estimate": cmd_estimate, "serve": cmd_serve}[args.command](args, console)


if __name__ == "__main__":
    raise SystemExit(main())
