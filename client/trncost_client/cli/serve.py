"""`trncost serve`: the service on this machine (embedded AWS, the real handlers)."""

from __future__ import annotations

import argparse
import faulthandler

from rich.console import Console

from trncost_client.cli import flags
from trncost_client.cli.output import SubParsers

STOP_POLL_S = 0.5
STOP_DEADLINE_S = 45.0


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    """Run the service locally until Ctrl-C."""
    import signal
    import threading

    from trncost_client.local.runtime import REGION, Runtime

    runtime = Runtime(
        host=args.host,
        port=args.port,
        live_prices=args.live_prices,
        seed_example=not args.no_example,
        seed_demo=not args.no_demo,
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
    for workload_id, estimates in runtime.seeded.items():
        what = "demo" if workload_id == runtime.demo_workload_id else "example"
        for instance_type, estimate_id in estimates.items():
            console.print(
                f"  {what} report ({instance_type}): {runtime.url}/estimates/{estimate_id}/report"
            )
    console.print(f"  embedded AWS:           {runtime.aws_endpoint} (region {REGION})")
    console.print(f"  dead-letter queues:     {', '.join(runtime.dead_letter_queues)}")
    console.print(f"  state file:             {runtime.state_file}")
    if runtime.demo_workload_id:
        console.print(
            f"  a trial of the demo:    trncost trial run --local --url {runtime.url} -- "
            "python examples/train_tiny.py"
        )
        console.print(
            f"  a trial plan (local):   POST {runtime.url}/workloads/{runtime.demo_workload_id}"
            "/trial-plans with examples/tiny-demo/trial-plan.json; runs' output in "
            f"{runtime.runs_dir}"
        )
    console.print("Ctrl-C stops it.")
    stopped = threading.Event()
    # Ctrl-C and SIGTERM both stop it, set explicitly: a process started in the background by a
    # non-interactive shell inherits SIGINT ignored, and Python then never raises
    # KeyboardInterrupt (Ctrl-C "did nothing" under CI runners and `cmd &`)
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    try:
        # In short waits: the kernel may deliver the signal to any of the runtime's threads,
        # and Python runs the handler only on the main thread, which an endless wait would
        # keep asleep (a Ctrl-C that stopped nothing, now and then)
        while not stopped.wait(STOP_POLL_S):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        console.print("stopping…")
        # If stopping itself hangs, every thread's stack goes to stderr and the process ends
        # (the state file is gone by then): Ctrl-C always stops it, and says where it stuck
        faulthandler.dump_traceback_later(STOP_DEADLINE_S, exit=True)
        runtime.stop()
        faulthandler.cancel_dump_traceback_later()
        console.print("stopped.")
    return 0


def add_commands(sub: SubParsers) -> None:
    serve = sub.add_parser("serve", help="run the service locally (embedded AWS, real handlers)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=flags.port, default=8080)
    serve.add_argument(
        "--live-prices",
        action="store_true",
        help="take the price snapshot from the live Price List API with your "
        "own AWS credentials (everything else stays local)",
    )
    serve.add_argument("--no-example", action="store_true", help="do not seed the example")
    serve.add_argument(
        "--no-demo", action="store_true", help="do not seed the demo workload (tiny-demo)"
    )
    serve.set_defaults(handler=cmd_serve)
