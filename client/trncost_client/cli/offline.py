"""`trncost estimate` and `trncost compare` on a request file, no server: the file is held in
memory as one workload's evidence and prices, and the API's own comparison service runs on it
(trncost_client.requestfile), so the CLI and the API answer alike: the same name checks,
assumption merges, price-override checks, figures, ranges and decisions.

`--json` writes only JSON on stdout, whatever the exit status; every message goes to stderr."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table

from trncost import display
from trncost.errors import DomainError, MissingEvidence, NotFound, RequestFileError
from trncost.model import (
    Analysis,
    CandidateAnalysis,
    Comparison,
    Decision,
    Estimate,
    NextTrial,
    Range,
    Swing,
    SwingEnd,
)
from trncost.model.requests import RequestFile
from trncost_client.cli import flags
from trncost_client.cli.output import (
    SafeConsole,
    SubParsers,
    fail,
    money,
    number,
    provenance_source,
)
from trncost_client.cli.remote import _add_remote_options
from trncost_client.requestfile import comparison_request, load_request_file, offline_comparisons

LINE_ITEM_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("component", "left"),
    ("item", "left"),
    ("quantity", "right"),
    ("unit", "left"),
    ("rate", "right"),
    ("amount", "right"),
    ("basis", "left"),
)
RANKING_COLUMNS = (
    "group",
    "by cost",
    "by time",
    "candidate",
    "status",
    "expected",
    "P50",
    "p cheapest",
    "point",
    "price basis",
    "time to target",
)


# -- estimate ---------------------------------------------------------------------------------
def render(est: Estimate, console: Console, *, show_inputs: bool = True) -> None:
    c = est.candidate
    console.rule(f"[bold]{c.label}[/bold] — {est.status.upper()}")
    if est.status == "infeasible":
        console.print(f"[red]Infeasible:[/red] {est.infeasible_reason}")
    else:
        _render_feasible(est, console)
    if est.warnings:
        console.print("[bold]Warnings[/bold]")
        for w in est.warnings:
            console.print(f"  [yellow]{w.code}[/yellow]: {w.message}")
    if show_inputs:
        table = Table(title="Input table")
        for col in ("id", "value", "unit", "provenance", "basis", "source"):
            table.add_column(col, overflow="fold")
        for row in est.inputs:
            p = row.provenance
            source = provenance_source(p)
            basis = row.price_basis.value if row.price_basis else ""
            value = display.input_value(row.value, row.unit) if row.value is not None else "—"
            table.add_row(row.id, value, row.unit or "", p.kind, basis, source)
        console.print(table)


def render_basis(est: Estimate, console: Console) -> None:
    """The estimate's price basis, and a line for every price that is not official."""
    if est.price_basis is None:
        return
    notes = est.basis_notes()
    if not notes:
        console.print("Price basis: [green]official[/green] (every price fetched by trncost)")
        return
    console.print(f"Price basis: [bold magenta]{est.price_basis.value}[/bold magenta]")
    for note in notes:
        console.print(f"  [magenta]⚑ {note}[/magenta]")


def _render_feasible(est: Estimate, console: Console) -> None:
    """Time, throughput, the total (or its formula), the line items and the totals."""
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
    if est.projected:
        ratio = next((r for r in est.inputs if r.id == "projection:ratio"), None)
        console.print(
            "[bold magenta]PROJECTED, not measured:[/bold magenta] no throughput trial of "
            f"{est.candidate.instance_type}; "
            + (ratio.label if ratio is not None else "projected from another chip's trials")
            + " — a planning range, never a budget; its fit trial comes next"
        )
    if est.total_usd is not None:
        console.print(
            f"[bold]Cost per completed target{' (PROJECTED)' if est.projected else ''}: "
            f"{money(est.total_usd)}[/bold]"
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
    console.print(
        f"AWS bill (cloud): {money(est.cloud_usd)} · assumed labour: {money(est.labour_usd)}"
    )
    render_basis(est, console)
    lines = Table(title="Line items", show_lines=False)
    for col, justify in LINE_ITEM_COLUMNS:
        lines.add_column(col, justify=justify)
    for li in est.line_items:
        lines.add_row(
            li.component.value,
            li.name,
            number(li.quantity),
            li.unit,
            "tiered"
            if li.rate_usd is None and li.amount_usd is not None
            else ("PENDING" if li.rate_usd is None else display.rate(li.rate_usd, li.rate_unit)),
            money(li.amount_usd),
            li.price_basis.value if li.price_basis else ("labour" if li.cost == "labour" else ""),
        )
    console.print(lines)
    totals = Table(title="By component")
    totals.add_column("component")
    totals.add_column("amount", justify="right")
    known = est.known_by_component()
    for comp, amount in est.components.items():
        # a component with a PENDING line has no amount: PENDING, with its known part
        if amount is not None:
            shown = money(amount)
        elif known[comp] > 0:
            shown = f"PENDING (+ {money(known[comp])} known)"
        else:
            shown = "PENDING"
        totals.add_row(comp.value, shown)
    totals.add_row("cloud (AWS bill)", money(est.cloud_usd))
    totals.add_row("labour (assumed)", money(est.labour_usd))
    totals.add_row(
        "[bold]total[/bold]",
        f"[bold]{money(est.total_usd) if est.total_usd is not None else est.total_formula}[/bold]",
    )
    console.print(totals)


def render_break_even(comparison: Comparison, console: Console) -> None:
    """For each estimate waiting on one price: the price at which it matches the cheapest
    comparable, fully priced candidate (the ranking's break-even prices, as a comparison
    computes them)."""
    if not comparison.break_evens:
        return
    totals = {row.candidate_id: row.cost_per_target_usd for row in comparison.by_cost}
    console.rule("[bold]Break-even prices[/bold]")
    for call in comparison.close_calls:
        console.print(
            f"[bold yellow]too close to call[/bold yellow] (group {call.group}): {call.leader} "
            f"is cheaper than {call.runner_up} in {call.p_leader_cheaper:.0%} of the paired "
            "draws" + (f"; {call.separating_trial}" if call.separating_trial else "")
        )
    for be in comparison.break_evens:
        label = be.candidate_id
        total = totals.get(be.against) if be.against else None
        if be.no_price_makes_it_cheaper:
            console.print(f"{label}: {be.note}")
        elif be.against is None or be.price_usd is None or total is None:
            console.print(f"{label}: {be.note}")
        else:
            console.print(
                f"{label}: cheaper per completed target than {be.against} "
                f"({money(total)}) while P[{be.price_key}] < {display.rate(be.price_usd, be.unit)}"
            )
    for pair in comparison.not_comparable:
        console.print(f"not comparable: {pair.a} vs {pair.b}: {'; '.join(pair.reasons)}")


def _messages(args: argparse.Namespace, console: Console) -> Console:
    """Where messages go: stderr with --json (stdout holds only the JSON), else `console`."""
    return SafeConsole(stderr=True) if getattr(args, "json", False) else console


def _load(path: str) -> RequestFile:
    return load_request_file(path)


def cmd_estimate(args: argparse.Namespace, console: Console) -> int:
    """Every candidate of the request file (or the one --candidate names), estimated by the
    comparison service: checked and merged as the API does, shared price overrides checked
    across the candidates."""
    messages = _messages(args, console)
    try:
        request = _load(args.file)
        ask = comparison_request(request, source=args.file)
        service = offline_comparisons(request)
        each = service.estimate_each(request.workload.workload_id, ask)
    except RequestFileError as exc:
        return fail(str(exc))
    except (DomainError, NotFound) as exc:
        return fail(f"{args.file}: {exc}")
    failed = 0
    for miss in each.failed:
        if args.candidate and miss.input.candidate.instance_type != args.candidate:
            continue
        failed += 1
        kind = (
            "missing evidence for"
            if isinstance(miss.error, MissingEvidence)
            else ("cannot estimate")
        )
        messages.print(f"[red]{kind} {miss.input.candidate.label}:[/red] {miss.error}")
    shown = [
        e.estimate
        for e in each.estimated
        if not args.candidate or e.input.candidate.instance_type == args.candidate
    ]
    if args.json:
        payload = [e.model_dump(mode="json") for e in shown]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        for est in shown:
            render(est, console, show_inputs=not args.no_inputs)
        render_break_even(each.comparison, console)
    return 1 if failed else 0


# -- compare ----------------------------------------------------------------------------------
def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    """Offline: analyse every candidate of a request file (the engine, no server); with
    --workload, a stored comparison on the API (trncost_client.cli.writes)."""

    if args.workload:
        from trncost_client.cli.writes import cmd_compare_remote

        if args.html:
            return fail("--html is offline only: with --workload the report is at the URL printed")
        return cmd_compare_remote(args, console)
    if args.candidate:
        return fail("--candidate needs --workload (offline, the candidates are FILE's)")
    if not args.file:
        return fail("compare needs FILE (offline) or --workload ID (on the API)")
    messages = _messages(args, console)
    try:
        request = _load(args.file)
        ask = comparison_request(request, seed=args.seed, samples=args.samples, source=args.file)
        service = offline_comparisons(request)
        _, analysis = service.analyse(request.workload.workload_id, ask)
    except RequestFileError as exc:
        return fail(str(exc))
    except (DomainError, NotFound) as exc:
        return fail(f"{args.file}: cannot analyse: {exc}")
    if args.html:
        _write_analysis_report(analysis, request, Path(args.html))
        messages.print(f"analysis report written to {args.html}")
    if args.json:
        sys.stdout.write(analysis.model_dump_json(indent=2) + "\n")
        return 0
    if analysis.decision is not None:
        _print_decision(analysis.decision, console)
    console.print(_ranking_table(analysis.comparison))
    _print_comparison_notes(analysis.comparison, console)
    for cand in analysis.candidates:
        _print_candidate(cand, console, top=args.top)
    return 0


def _write_analysis_report(analysis: Analysis, request: RequestFile, path: Path) -> None:
    from trncost.report import render_analysis_report

    path.write_text(
        render_analysis_report(
            analysis,
            workload_name=request.workload.name,
            workload_id=request.workload.workload_id,
        ),
        encoding="utf-8",
    )


def _print_decision(decision: Decision, console: Console) -> None:
    console.rule(f"[bold]Decision: {decision.action.value}[/bold] ({decision.candidate_id})")
    console.print(decision.summary)
    for reason in decision.reasons:
        console.print(f"  [yellow]{reason.code}[/yellow] → {reason.action.value}: {reason.message}")


def _ranking_table(comparison: Comparison) -> Table:
    ranking = Table(title=f"Ranking within comparable groups, by {comparison.ranked_by}")
    for col in RANKING_COLUMNS:
        ranking.add_column(col)
    for row in comparison.by_cost:
        point = (
            money(row.cost_per_target_usd)
            if row.cost_per_target_usd is not None
            else (row.pending_formula or "—")
        )
        ranking.add_row(
            str(row.group),
            number(row.cost_rank),
            number(row.time_rank),
            f"{row.instance_count}× {row.instance_type}",
            row.status,
            money(row.expected_usd) if row.expected_usd is not None else "—",
            money(row.p50_usd) if row.p50_usd is not None else "—",
            f"{row.p_cheapest:.0%}" if row.p_cheapest is not None else "—",
            point,
            row.price_basis.value if row.price_basis else "—",
            f"{row.time_to_target_h:,.1f} h" if row.time_to_target_h else "—",
        )
    return ranking


def _print_comparison_notes(comparison: Comparison, console: Console) -> None:
    """The pairs that cannot be compared, and the break-even prices."""
    for pair in comparison.not_comparable:
        console.print(f"not comparable: {pair.a} vs {pair.b}: {'; '.join(pair.reasons)}")
    for call in comparison.close_calls:
        console.print(
            f"[bold yellow]too close to call[/bold yellow] (group {call.group}): {call.leader} "
            f"is cheaper than {call.runner_up} in {call.p_leader_cheaper:.0%} of the paired "
            "draws" + (f"; {call.separating_trial}" if call.separating_trial else "")
        )
    for be in comparison.break_evens:
        price = f"{money(be.price_usd)} per {be.unit}" if be.price_usd is not None else "—"
        spread = ""
        r = be.price_range
        if r is not None and r.p10 is not None and r.p90 is not None:
            spread = (
                f"; over the paired draws P10–P90 {money(r.p10)}–{money(r.p90)}, no price makes "
                f"it cheaper in {be.p_no_price_cheaper or 0:.0%}"
            )
        console.print(
            f"break-even {be.candidate_id}: P[{be.price_key}] < {price} ({be.note}{spread})"
        )


def _print_candidate(cand: CandidateAnalysis, console: Console, *, top: int) -> None:
    """One candidate: its P10/P50/P90 range, its `top` tornado rows and its decision."""
    console.rule(cand.candidate_id)
    if cand.error:
        console.print(f"[red]not estimated:[/red] {escape(cand.error)}")
        if cand.decision is not None:
            console.print(f"decision: {cand.decision.action.value}", markup=False)
        return
    if cand.range is not None:
        _print_range(cand.range, console, cand.estimate)
    est = cand.estimate
    if est is not None and est.status != "infeasible":
        console.print(
            f"AWS bill (cloud): {money(est.cloud_usd)} · assumed labour: {money(est.labour_usd)}"
        )
    for swing in cand.tornado[:top]:
        console.print(_swing_line(swing))
    if cand.next_trial is not None:
        _print_next_trial(cand.next_trial, console)
    if cand.checkpoint is not None:
        from trncost.report.checkpoint import advice_sentence

        console.print(f"checkpoint interval (what-if): {advice_sentence(cand.checkpoint)}")
    if cand.decision is not None:
        console.print(f"decision: {cand.decision.action.value}", markup=False)
        for reason in cand.decision.reasons[:3]:  # the first reasons, as the report's headline
            console.print(f"  {reason.code}: {reason.message}", markup=False)
        if len(cand.decision.reasons) > 3:
            console.print(f"  … {len(cand.decision.reasons) - 3} more (--json has them all)")


def _print_range(rng: Range, console: Console, point: Estimate | None = None) -> None:
    """The headline of a range: P50 and P10–P90 beside the point figure, each named."""
    band = rng.total_usd or rng.known_usd
    label = "total" if rng.total_usd else "known part"
    if band is not None:
        at = None
        if point is not None:
            at = point.total_usd if rng.total_usd else point.total_known_usd
        shown = f"point {money(at)} · " if point is not None and at is not None else ""
        console.print(
            f"{label}: {shown}P50 {money(band.p50)} · P10–P90 {money(band.p10)} – "
            f"{money(band.p90)} ({rng.samples:,} draws, seed {rng.seed}; p_infeasible "
            f"{rng.p_infeasible:.1%}: draws that cannot finish). The point is the figure at the "
            "posterior mean of every drawn input; P50/P10–P90 are the draws' percentiles"
        )
    for pend in rng.pending:
        q = pend.quantity
        console.print(
            f"  × P[{pend.price_key}]: {number(q.p10)} / {number(q.p50)} / "
            f"{number(q.p90)} {pend.unit}"
        )


def _print_next_trial(nt: NextTrial, console: Console) -> None:
    """The trial that narrows P90 − P10 the most per dollar, and the options weighed."""

    def width(v: float) -> str:
        return f"${v:,.2f}" if nt.unit == "USD" else f"{v:,.2f} {nt.unit}"

    b = nt.best
    if b is None:
        console.print(f"next trial ({nt.reason}): no option narrows the range")
        return
    cost = (
        money(b.expected_cost_usd)
        if b.expected_cost_usd is not None
        else f"{b.expected_instance_hours:,.2f} instance-h × P[{b.pending_price_key}] (PENDING)"
    )
    console.print(
        f"next trial worth running ({nt.reason}): a {b.phase} trial at {b.instance_count} "
        f"instances, ~{b.expected_instance_hours:,.2f} instance-h, {cost}: P90 − P10 of "
        f"{nt.measure} {width(nt.width_now)} → {width(b.width_after)} "
        f"({b.narrower_by:.0%} narrower)"
    )
    for o in nt.options:
        if o is not b:
            console.print(
                f"  or {o.phase} at {o.instance_count}: {width(o.width_after)} "
                f"({o.narrower_by:.0%} narrower, ~{o.expected_instance_hours:,.2f} instance-h)"
            )


CANNOT_FINISH = "cannot finish"  # an end where failures outpace the work (the report's words)


def _swing_line(swing: Swing) -> str:
    low, high = swing.low, swing.high
    total = any(e.total_usd is not None for e in (low, high))

    def end(e: SwingEnd) -> str:
        if e.infeasible:
            return CANNOT_FINISH
        return money(e.total_usd if total else e.known_usd)

    span = f"{end(low)} … {end(high)}"
    if not total:
        span = f"known part {span}"
    return f"  #{swing.rank} {swing.label} ({swing.basis}): {span}"


# -- the commands -----------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace, console: Console) -> int:
    """Write a workload's request files into DIR, every field documented in its README."""
    from trncost_client.scaffold import scaffold

    written = scaffold(Path(args.dir).expanduser(), force=args.force)
    for path in written:
        console.print(f"wrote {path}", markup=False)
    request = written[0]
    console.print(
        f"every field is documented in {written[-1]}; try: trncost estimate {request}",
        markup=False,
    )
    return 0


def add_commands(sub: SubParsers) -> None:
    init = sub.add_parser(
        "init",
        help="write a workload's request files to fill in (every field in DIR/README.md)",
        description="Write DIR/estimate.json, workload.json, trials.json and prices.json (plain "
        "JSON that already answers: trncost estimate DIR/estimate.json) and DIR/README.md, "
        "which says what to change and documents every field of each file.",
    )
    init.add_argument("dir", metavar="DIR")
    init.add_argument("--force", action="store_true", help="overwrite files already there")
    init.set_defaults(handler=cmd_init)
    est = sub.add_parser("estimate", help="estimate every candidate in a request file")
    est.add_argument("file", help="estimate request JSON (see examples/llama-8b/estimate.json)")
    est.add_argument("--json", action="store_true", help="print the estimates as JSON")
    est.add_argument("--candidate", metavar="INSTANCE_TYPE", help="only this instance type")
    est.add_argument("--no-inputs", action="store_true", help="omit the input table")
    est.set_defaults(handler=cmd_estimate)
    comp = sub.add_parser(
        "compare",
        help="analyse every candidate in a request file: ranking, ranges, tornado, decision",
        description="Offline: analyse every candidate of FILE with the engine, no server. "
        "With --workload ID: compare on the API at --url instead, on that workload's trials "
        "and the latest price snapshot, with FILE's candidates (and/or --candidate); the "
        "comparison is stored and its id, URL and report URL printed.",
    )
    comp.add_argument(
        "file",
        nargs="?",
        help="estimate request JSON (see examples/llama-8b/estimate.json); with --workload, "
        "also a comparison request",
    )
    comp.add_argument(
        "--workload", metavar="ID", help="compare on the API, on this workload; stored"
    )
    comp.add_argument(
        "--candidate",
        action="append",
        metavar="TYPE:COUNT@REGION",
        help="with --workload: a candidate (repeatable), e.g. trn3.48xlarge:2@us-east-2",
    )
    comp.add_argument(
        "--seed",
        type=flags.seed,
        default=0,
        help=f"Monte Carlo seed, 0 to {flags.SEED_MAX} (same seed, same answer)",
    )
    comp.add_argument(
        "--samples",
        type=flags.samples,
        default=20_000,
        help=f"Monte Carlo draws, {flags.SAMPLES_MIN:,} to {flags.SAMPLES_MAX:,}",
    )
    comp.add_argument(
        "--top", type=flags.top, default=5, help="tornado rows to print per candidate"
    )
    comp.add_argument("--json", action="store_true", help="print the analysis as JSON")
    comp.add_argument(
        "--html",
        metavar="FILE",
        type=flags.output_file,
        help="also write the analysis report here (its folder must exist)",
    )
    _add_remote_options(comp, json=False)
    comp.set_defaults(handler=cmd_compare)
