"""`trncost capacity`: EC2 Capacity Blocks and SageMaker Training Plans for an estimate's P50 and
P90 held time, beside on-demand — each offering with its basis and expiry, the chance the run
finishes inside it and the cost of extending or finishing on demand.

    trncost capacity EST_ID                 # the offerings last quoted for the latest version
    trncost capacity EST_ID --quote         # ask EC2 and SageMaker now (POST …/capacity)
    trncost capacity --file examples/llama-8b/estimate.json --example
                                            # offline, every candidate, constructed offerings
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from trncost.display import timestamp
from trncost.errors import DomainError, NotFound, RequestFileError
from trncost.model.capacity import CapacityPlan
from trncost_client.cli import flags
from trncost_client.cli.output import SubParsers, fail, money, print_json
from trncost_client.cli.remote import _add_remote_options, _client, _remote

SOURCE = {"ec2_capacity_block": "EC2 Capacity Block", "sagemaker_training_plan": "Training Plan"}


def render_plan(plan: CapacityPlan, console: Console) -> None:
    """One plan: on-demand beside, then per held-time percentile its offerings."""
    c = plan.candidate
    console.rule(f"[bold]Capacity you can book — {c.label}[/bold]")
    od = plan.on_demand
    beside = (
        f"on demand {money(od.rate_usd)}/instance-h ({od.basis.value if od.basis else ''}): "
        f"expected instances {money(od.expected_instances_usd)}"
        if od.rate_usd is not None
        else f"on demand PENDING ({od.price_key})"
    )
    h = plan.held_h
    console.print(
        f"{beside}; held P10/P50/P90 {h.p10 or 0:,.1f} / {h.p50 or 0:,.1f} / {h.p90 or 0:,.1f} h "
        f"({plan.draws:,} draws); asked {plan.queried_at}"
    )
    for d in plan.durations:
        block = f"{d.block_hours:,} h" if d.block_hours is not None else "past 182 days"
        table = Table(
            title=f"{d.percentile}: {d.held_h:,.1f} h held → blocks of {block} (overrun, extend "
            "and instances: expected over the draws)"
        )
        for col in (
            "offering",
            "basis",
            "buy before",
            "duration",
            "fee",
            "per inst-h",
            "P(inside)",
            "overrun",
            "extend",
            "instances",
            "vs on-demand",
        ):
            table.add_column(col, overflow="fold")
        for q in d.quotes:
            o = q.offering
            saving = q.saving_vs_on_demand_usd
            table.add_row(
                f"{SOURCE[o.source]}{'' if q.applies else ' (other platform)'} {o.offering_id}",
                o.basis.value,
                timestamp(o.expires_at),
                f"{o.duration_hours:,.0f} h",
                money(o.upfront_fee_usd),
                money(o.per_instance_hour_usd),
                f"{q.p_finish_inside:.0%}",
                f"{q.expected_overrun_h:,.1f} h",
                money(q.expected_extension_usd),
                money(q.expected_instances_usd),
                "PENDING"
                if saving is None
                else f"{'saves' if saving > 0 else 'costs'} {money(abs(saving))}",
            )
        if d.quotes:
            console.print(table)
        for why in d.none_offered:
            console.print(f"  none offered: {why}")
    for note in plan.notes:
        console.print(f"  [dim]{note}[/dim]")


@_remote
def _cmd_remote(args: argparse.Namespace, console: Console) -> int:
    client = _client(args)
    found = (
        client.quote_capacity(args.estimate_id, args.version)
        if args.quote
        else client.capacity(args.estimate_id, args.version)
    )
    if args.json:
        print_json(found)
        return 0
    render_plan(CapacityPlan.model_validate(found), console)
    return 0


def _cmd_offline(args: argparse.Namespace, console: Console) -> int:
    from trncost.estimate import estimate
    from trncost_client.local.offerings import example_capacity
    from trncost_client.requestfile import load_request_file, request_inputs

    if not args.example:
        return fail("--file needs --example: offline, only the constructed offerings answer")
    try:
        inputs = request_inputs(load_request_file(args.file))
    except RequestFileError as exc:
        return fail(str(exc))
    service = example_capacity(None, None)
    plans = []
    for inp in inputs:
        if args.candidate and inp.candidate.instance_type != args.candidate:
            continue
        try:
            plans.append(service.plan(inp, estimate(inp)))
        except (DomainError, NotFound) as exc:
            (Console(stderr=True) if args.json else console).print(
                f"[red]{inp.candidate.label}:[/red] {exc}"
            )
    if args.json:
        sys.stdout.write("[" + ",".join(p.model_dump_json() for p in plans) + "]\n")
        return 0
    for plan in plans:
        render_plan(plan, console)
    return 0


def cmd_capacity(args: argparse.Namespace, console: Console) -> int:
    if args.file:
        return _cmd_offline(args, console)
    if not args.estimate_id:
        return fail("capacity needs ESTIMATE_ID (on the API) or --file FILE --example (offline)")
    return _cmd_remote(args, console)


def add_commands(sub: SubParsers) -> None:
    cap = sub.add_parser(
        "capacity",
        help="Capacity Blocks and Training Plans for an estimate's P50/P90 time, beside on-demand",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cap.add_argument("estimate_id", nargs="?", metavar="ESTIMATE_ID")
    cap.add_argument("--version", type=flags.version, metavar="N", help="default: the latest")
    cap.add_argument("--quote", action="store_true", help="ask EC2 and SageMaker now")
    cap.add_argument("--file", metavar="FILE", help="offline: an estimate request file")
    cap.add_argument(
        "--example",
        action="store_true",
        help="offline: the constructed example offerings (basis example, never official)",
    )
    cap.add_argument("--candidate", metavar="TYPE", help="offline: only this instance type")
    _add_remote_options(cap)
    cap.set_defaults(handler=cmd_capacity)
