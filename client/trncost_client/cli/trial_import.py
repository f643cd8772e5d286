"""`trncost trial import FILE… --workload ID --phase P --instance-type T --instance-count N
[--format auto|NAME] [--parallelism tp=8,pp=1,dp=4] [--precision bf16] [--neuron-sdk-version V]
[--quality-metric val_loss=eval_loss] [--explain] [--dry-run] [--json]`: a trial record from
the trial's own training logs.

The files are streamed here (a 1 GB log in bounded memory) in their detected formats into one
trial; TensorBoard event files are read with TensorBoard's reader. With --dry-run the record
is printed and nothing is sent: the workload comes from --workload-file, else a stand-in
(target in --unit, no quality gate, no MFU check: the note says so). Otherwise the workload is
read from the API and the record is written with POST /workloads/{id}/trials. A log in no
known format exits 2 naming every format tried and why it did not match. What a log cannot
say and --explain: `trncost_client.cli.log_facts`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pydantic import ValidationError
from rich.console import Console

from trncost.errors import (
    ClientError,
    DomainError,
    RequestFileError,
    TrncostError,
    first_validation_error,
    format_validation_error,
)
from trncost_client.cli import flags, log_facts
from trncost_client.cli.output import fail, number, print_json
from trncost_client.cli.runtime import add_url_option
from trncost_client.files import (
    REQUEST_FILE_MAX_BYTES,
    check_regular,
    open_regular,
    read_json_file,
    shown,
)

if TYPE_CHECKING:
    from trncost.model import TrialRun


def _workload(args: argparse.Namespace):  # -> Workload
    from trncost.model import Workload

    if args.workload_file:
        raw = read_json_file(Path(args.workload_file).expanduser(), REQUEST_FILE_MAX_BYTES)
        nested = isinstance(raw, dict) and "workload" in raw and "workload_id" not in raw
        try:
            return Workload.model_validate(raw["workload"] if nested else raw), None
        except ValidationError as exc:
            prefix = "workload" if nested else ""
            why = format_validation_error(exc, prefix)
            raise RequestFileError(f"{args.workload_file}: {why}") from None
    if args.dry_run:
        try:
            stand_in = Workload.model_validate(
                {
                    "workload_id": args.workload,
                    "model": {"name": "stand-in", "parameters": 1},
                    "code_version": "unknown",
                    "dataset_id": "unknown",
                    "target": {"unit": args.unit, "amount": 1},
                    "quality_gate": {"metric": "eval_loss", "threshold": 0, "direction": "at_most"},
                }
            )
        except ValidationError as exc:
            raise ClientError(f"--workload: {first_validation_error(exc)[1]}") from None
        return (
            stand_in,
            "dry run against a stand-in workload (no --workload-file): work in "
            f"{args.unit}, quality gate and MFU check not applied",
        )
    from trncost_client.http import TrncostClient

    client = TrncostClient(args.url)
    found = client.get_json(f"/workloads/{quote(args.workload, safe='')}")
    return Workload.model_validate(found["workload"]), None


def _read(args: argparse.Namespace, facts):  # -> (timeline, results, digest)
    from trncost.metrics.logs import FORMATS
    from trncost.metrics.logs.scan import Reader
    from trncost.metrics.logs.timeline import Timeline

    timeline = Timeline(global_batch=facts.global_batch_size, seq_length=facts.seq_length)
    reader = Reader(timeline, FORMATS, None if facts.format == "auto" else facts.format)
    from trncost_client import tensorboard

    results, hashes = [], []
    for path in args.files:
        name = os.path.basename(path)
        digest = hashlib.sha256()
        # a regular file only, opened without blocking (trncost_client.files); streamed twice
        with open_regular(path) as stream:
            try:
                size = os.fstat(stream.fileno()).st_size
                for block in iter(lambda: stream.read(2**24), b""):
                    digest.update(block)
                hashes.append((name, digest.digest()))
                if tensorboard.is_event_file(name):
                    results.append(tensorboard.read_event_file(path, name, timeline))
                else:
                    stream.seek(0)
                    results.append(reader.read_stream(name, stream, size))
            except OSError as exc:
                why = f"cannot be read ({exc.strerror or exc})"
                raise RequestFileError(f"{shown(path)}: {why}") from None
    return timeline, results, hashes


def _record(client: Any, workload_id: str, trial: TrialRun) -> bool:
    """POST the record; the same logs imported again (same trial id, same content) are not an
    error: False, nothing written. Other content under that id is a conflict."""
    from trncost.errors import ApiError
    from trncost.model import TrialRun as Run

    try:
        client.post_json(f"/workloads/{workload_id}/trials", trial.model_dump(mode="json"))
        return True
    except ApiError as exc:
        if exc.status != 409:
            raise
        existing = Run.model_validate(client.get_json(f"/trials/{trial.trial_id}")["trial"])
        if existing.model_dump(exclude={"notes"}) != trial.model_dump(exclude={"notes"}):
            raise
        return False


def cmd_trial_import(args: argparse.Namespace, console: Console) -> int:
    from trncost.model import Phase, TrialStatus
    from trncost.services.trial_logs import LogImportService, TrialFacts, file_digest

    for path in args.files:
        try:
            check_regular(path)  # a directory, a FIFO, /dev/zero, a symlink loop: refused
        except RequestFileError as exc:
            return fail(str(exc))
    facts = TrialFacts(
        phase=Phase(args.phase),
        instance_type=args.instance_type,
        instance_count=args.instance_count,
        region=args.region,
        trial_id=args.trial_id,
        status=TrialStatus(args.status) if args.status else None,
        code_version=args.code_version,
        dataset_id=args.dataset,
        global_batch_size=args.global_batch_size,
        seq_length=args.seq_length,
        format=args.format,
        precision=args.precision,
        parallelism=args.parallelism,
        neuron_sdk_version=args.neuron_sdk_version,
        quality_metric=args.quality_metric,
    )
    try:
        workload, stand_in = _workload(args)
        timeline, results, hashes = _read(args, facts)
        service = LogImportService(trials=None)  # type: ignore[arg-type]  # build only
        built = service.build(
            workload, timeline, results, facts, file_digest(hashes, facts, workload.workload_id)
        )
        trial = built.trial
        if stand_in:
            trial = trial.model_copy(update={"notes": [stand_in, *trial.notes]})
        recorded = False
        if not args.dry_run:
            from trncost_client.http import TrncostClient

            recorded = _record(TrncostClient(args.url), workload.workload_id, trial)
    except ValidationError as exc:
        return fail(format_validation_error(exc))
    except (DomainError, RequestFileError, ClientError, TrncostError, ValueError) as exc:
        return fail(str(exc))
    payload = {
        "trial": trial.model_dump(mode="json"),
        "recorded": recorded,
        "dry_run": bool(args.dry_run),
        "files": [
            {
                "file": r.file,
                "format": r.format,
                "confidence": r.confidence,
                "lines": r.lines,
                "matched_lines": r.matched_lines,
                "companions": r.companions,
                "other_format_lines": r.other_format_lines,
            }
            for r in results
        ],
        "measured": built.measured,
        "not_measured": built.not_measured,
        "excluded": built.excluded,
    }
    explain = None
    if args.explain:
        from trncost.metrics.logs.explain import explanation

        explain = payload["explain"] = explanation(timeline, results, trial)
    if args.json:
        print_json(payload)
        return 0
    _print(console, payload, trial)
    if explain is not None:
        log_facts.print_explanation(console, explain)
    return 0


def _print(console: Console, payload: dict[str, Any], trial: TrialRun) -> None:
    for f in payload["files"]:
        extra = "".join(f", {k} {v} lines" for k, v in f["companions"].items())
        others = f", other formats {f['other_format_lines']}" if f["other_format_lines"] else ""
        console.print(
            f"{f['file']}: {f['format'] or 'no training format'} (confidence "
            f"{f['confidence']:.2f}), {f['matched_lines']} of {f['lines']} lines read"
            f"{extra}{others}",
            markup=False,
        )
    w = trial.work
    verb = (
        "recorded"
        if payload["recorded"]
        else ("would record (dry run)" if payload["dry_run"] else "already recorded (same logs)")
    )
    console.print(
        f"[bold]trial {trial.trial_id} {verb}[/bold]: {trial.status}, {number(w.done)} "
        f"{w.unit} done, {number(w.quality_meeting)} quality-meeting, steady "
        f"{trial.wall.steady_s:.1f} s, {len(trial.steady_throughput_samples)} steady samples"
    )
    for figure in payload["measured"]:
        where = trial.provenance[figure].measured_in
        text = "; ".join(
            f"{m.file}"
            + (f" [{m.format}]" if m.format else "")
            + (f" lines {', '.join(f'{r.first}-{r.last}' for r in m.lines[:4])}" if m.lines else "")
            for m in where
        )
        console.print(f"  measured {figure}: {text}", markup=False, highlight=False)
    console.print("  not measured: " + ", ".join(payload["not_measured"]))
    for reason in payload["excluded"]:
        console.print(f"  [red]excluded[/red]: {reason}")
    for note in trial.notes:
        console.print(f"  note: {note}", markup=False, highlight=False)


def add_commands(trial_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from trncost.metrics.logs import FORMAT_NAMES

    p = trial_sub.add_parser(
        "import",
        help="a trial record from the trial's own training logs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="logs of one trial (a log plus compile reports, ...)",
    )
    p.add_argument("--workload", required=True, help="workload id")
    p.add_argument("--phase", required=True, choices=["fit", "baseline", "target"])
    p.add_argument("--instance-type", required=True)
    p.add_argument("--instance-count", required=True, type=flags.count)
    p.add_argument("--region", default="us-east-1", help="where the trial ran (default us-east-1)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMAT_NAMES])
    p.add_argument("--status", choices=["completed", "failed", "diverged", "stopped"],
                   help="default: from the log (completed if it shows training end)")  # fmt: skip
    p.add_argument(
        "--global-batch-size",
        type=flags.positive,
        help="samples per step, if the log does not say",
    )
    p.add_argument(
        "--seq-length", type=flags.positive, help="tokens per sample, if the log does not say"
    )
    p.add_argument("--trial-id", help="default: derived from the files' content")
    p.add_argument("--code-version")
    p.add_argument("--dataset")
    p.add_argument("--workload-file", help="the workload as JSON (for --dry-run)")
    p.add_argument(
        "--unit",
        default="samples",
        choices=["tokens", "samples", "steps"],
        help="the stand-in workload's unit (--dry-run without --workload-file)",
    )
    log_facts.add_arguments(p)
    p.add_argument("--dry-run", action="store_true", help="print the record; send nothing")
    p.add_argument("--json", action="store_true")
    add_url_option(p, "the API (not used with --dry-run)")
    p.set_defaults(handler=cmd_trial_import)
