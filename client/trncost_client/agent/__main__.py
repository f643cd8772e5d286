"""`python -m trncost_client.agent [options] -- CMD …`: run CMD under the trial agent.

The command's stdout and stderr pass through unchanged; TRNCOST protocol lines in them are
measured (trncost_client.agent.protocol). The agent's exit code is the command's (128 +
signal when a signal ended it); nothing the agent does (a bad line, a publishing failure, a
monitor that cannot start) changes that. SIGTERM/SIGINT are passed on to the command and the run is
reported as `stopped`.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from trncost.errors import ProtocolError
from trncost.settings import (
    AGENT_TAGS_ENV,
    AGENT_TRIAL_ID_ENV,
    BUS_NAME_ENV,
    AgentSettings,
    parse_tags,
)
from trncost_client.agent.core import AgentConfig, TrialAgent, warn
from trncost_client.agent.monitors import NVIDIA_SMI_COMMAND, ReportReader, parse_nvidia_smi
from trncost_client.agent.protocol import parse_line
from trncost_client.agent.publish import DEFAULT_BUFFER, Publisher


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m trncost_client.agent", description=__doc__)
    p.add_argument("--trial-id", help=f"default: {AGENT_TRIAL_ID_ENV} or the trncost:trial tag")
    p.add_argument(
        "--tag", action="append", default=[], help=f"k=v (repeat); adds to {AGENT_TAGS_ENV}"
    )
    p.add_argument("--instance-type")
    p.add_argument("--instance-count", type=int)
    p.add_argument("--region")
    p.add_argument(
        "--bus", help=f"EventBridge bus for the event (default: {BUS_NAME_ENV} or default)"
    )
    p.add_argument("--send-event", action="store_true", default=None)
    p.add_argument("--no-event", dest="send_event", action="store_false")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between metric batches")
    p.add_argument("--warmup-steps", type=int, default=3)
    p.add_argument("--neuron-monitor", help="command printing neuron-monitor JSON reports")
    p.add_argument("--gpu", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--gpu-interval", type=float, default=15.0)
    p.add_argument("--buffer", default=DEFAULT_BUFFER, help="JSONL file for what was not sent")
    p.add_argument("--offline", action="store_true", help="publish nothing; write the buffer")
    p.add_argument("command", nargs=argparse.REMAINDER)
    return p


def _pump(stream: IO[str], out: IO[str], agent: TrialAgent) -> None:
    for raw in iter(stream.readline, ""):
        out.write(raw)
        out.flush()
        try:
            event = parse_line(raw)
        except ProtocolError as exc:
            warn(f"ignored a bad TRNCOST line: {exc}")
            agent.error(f"bad TRNCOST line: {exc}")
            continue
        if event is not None:
            try:
                agent.handle(event)
            except ProtocolError as exc:
                warn(f"ignored a bad TRNCOST line: {exc}")
            except Exception as exc:  # noqa: BLE001 - never stop reading the training's output
                warn(f"could not record {event.name}: {exc}")


def _neuron(command: str, agent: TrialAgent, stop: threading.Event) -> subprocess.Popen[str] | None:
    try:
        proc = subprocess.Popen(
            shlex.split(command), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
    except OSError as exc:
        warn(f"neuron-monitor did not start ({exc}); no Neuron metrics")
        return None

    def read() -> None:
        assert proc.stdout is not None
        reports = ReportReader()  # one report per line, or pretty-printed over many
        for line in iter(proc.stdout.readline, ""):
            if stop.is_set():
                break
            reading = reports.feed(line)
            if reading is not None:
                agent.accelerator(reading, "neuron")

    threading.Thread(target=read, daemon=True, name="neuron-monitor").start()
    return proc


def _gpu(interval: float, agent: TrialAgent, stop: threading.Event) -> None:
    def poll() -> None:
        while not stop.wait(interval):
            try:
                out = subprocess.run(
                    NVIDIA_SMI_COMMAND, capture_output=True, text=True, timeout=10, check=False
                ).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            reading = parse_nvidia_smi(out)
            if reading is not None:
                agent.accelerator(reading, "gpu")

    threading.Thread(target=poll, daemon=True, name="nvidia-smi").start()


def run(argv: Sequence[str] | None = None, publisher: Publisher | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("usage: python -m trncost_client.agent [options] -- CMD ...", file=sys.stderr)
        return 2
    try:
        settings = AgentSettings.from_env()
        config = AgentConfig.from_settings(settings, **_overrides(args))
    except ValueError as exc:  # no trial id: run the training anyway, measure nothing
        warn(f"{exc}; running the command without measuring it")
        return subprocess.call(command)
    publisher = publisher or Publisher(
        config.region,
        bus_name=args.bus or settings.bus_name,
        buffer_path=args.buffer,
        enabled=not args.offline,
    )
    agent = TrialAgent(config, publisher).start()
    try:
        child = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )
    except OSError as exc:
        warn(f"could not start {command[0]}: {exc}")
        agent.error(f"could not start {command[0]}: {exc}")
        agent.finish("failed")
        return 127
    stopped_by_signal = _forward_signals(child)
    code = _supervise(child, agent, args)
    if stopped_by_signal:
        status = "stopped"
    else:
        status = "completed" if code == 0 else "failed"
    try:
        agent.finish(status)
    except Exception as exc:  # noqa: BLE001 - the training's exit code is what counts
        warn(f"could not finish publishing: {exc}")
    return 128 - code if code < 0 else code


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The flags that override the environment (AgentConfig.from_settings)."""
    over: dict[str, Any] = {
        "tags": parse_tags(",".join(args.tag)),
        "interval_s": args.interval,
        "warmup_steps": args.warmup_steps,
    }
    for key in ("trial_id", "instance_type", "instance_count", "region", "send_event"):
        if getattr(args, key) is not None:
            over[key] = getattr(args, key)
    return over


def _forward_signals(child: subprocess.Popen[str]) -> list[int]:
    """Pass SIGTERM/SIGINT on to the command; the list fills with the signals received."""
    received: list[int] = []

    def forward(signum: int, _frame: Any) -> None:
        received.append(signum)
        child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            signal.signal(sig, forward)
        except ValueError:  # not the main thread (tests)
            pass
    return received


def _wait(child: subprocess.Popen[str]) -> int:
    """The command's exit code, waited for in short slices: a SIGTERM the kernel hands to one
    of the agent's threads runs its handler (forwarding it) only when the main thread wakes."""
    while True:
        try:
            return child.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue


def _supervise(child: subprocess.Popen[str], agent: TrialAgent, args: argparse.Namespace) -> int:
    """Measure the command's output and the accelerators until it ends: its exit code."""
    stopping = threading.Event()
    monitor = _neuron(args.neuron_monitor, agent, stopping) if args.neuron_monitor else None
    if args.gpu == "on" or (args.gpu == "auto" and shutil.which("nvidia-smi")):
        _gpu(args.gpu_interval, agent, stopping)
    pumps = [
        threading.Thread(target=_pump, args=(child.stdout, sys.stdout, agent), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, sys.stderr, agent), daemon=True),
    ]
    for t in pumps:
        t.start()
    code = _wait(child)
    for t in pumps:
        t.join(timeout=5)
    stopping.set()
    if monitor is not None:
        monitor.terminate()
    return code


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
