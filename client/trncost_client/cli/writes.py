"""`trncost workload create FILE`, `trncost trial add FILE` and `trncost compare --workload ID`:
writes to the API at --url (default $TRNCOST_URL, else the local runtime at
http://127.0.0.1:8080), each printing where it wrote.

    trncost workload create examples/llama-8b/workload.json
    trncost trial add examples/llama-8b/trials.json          # one trial, or a list of them
    trncost compare --workload llama31-8b-cpt examples/llama-8b/estimate.json

`compare --workload` takes its candidates from FILE (a comparison request, or an estimate
request file: its candidates and assumptions; its workload, trials and prices are the
server's) and/or `--candidate TYPE:COUNT@REGION`, stores the comparison and prints its id, its
URL and its report's URL, the page to send a budget owner.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ValidationError
from rich.console import Console

from trncost.errors import ApiError, ClientError, RequestFileError, format_validation_error
from trncost.model.requests import ComparisonRequest
from trncost_client.cli.output import SubParsers, print_json
from trncost_client.cli.remote import _add_remote_options, _client, _remote
from trncost_client.files import REQUEST_FILE_MAX_BYTES, part_path, read_json_file

CANDIDATE = re.compile(r"^(?P<type>[a-z0-9.-]+):(?P<count>\d+)(@(?P<region>[a-z0-9-]+))?$")
DEFAULT_REGION = "us-east-1"
# Keys of an estimate request file that are the server's on a comparison against the API.
SERVER_SIDE = ("workload", "trials", "prices")


def _read_json(path: str | Path) -> Any:
    """A JSON file of the user's (trncost_client.files: a regular file, capped, bounded)."""
    return read_json_file(Path(path).expanduser(), REQUEST_FILE_MAX_BYTES)


def _validated(model: type[BaseModel], data: Any, file: str | Path, prefix: str = "") -> None:
    """`data` (read from `file`) must validate as `model` before anything is sent: a bad file
    is one line naming it and the field, with no server needed."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        raise RequestFileError(f"{file}: {format_validation_error(exc, prefix)}") from None


def _where(args: argparse.Namespace, path: str) -> str:
    return args.url.rstrip("/") + path


# -- workload create -------------------------------------------------------------------------
def _workload_from(data: Any, path: str) -> dict[str, Any]:
    """A workload JSON, or the `workload` of an estimate request file (inline or a file),
    validated."""
    from trncost.model import Workload

    file: str | Path = path
    prefix = ""
    if isinstance(data, dict) and "workload" in data and "workload_id" not in data:
        inner = data["workload"]
        if isinstance(inner, str):
            file = part_path(path, inner)
            inner = _read_json(file)
        else:
            prefix = "workload"
        data = inner
    if not isinstance(data, dict):
        raise RequestFileError(f"{file}: a workload is a JSON object (see examples/llama-8b/)")
    _validated(Workload, data, file, prefix)
    return data


def _same(model: type[BaseModel], ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Whether two records are the same once validated (defaults filled in alike)."""
    try:
        return model.model_validate(ours) == model.model_validate(theirs)
    except ValueError:
        return False


@_remote
def cmd_workload_create(args: argparse.Namespace, console: Console) -> int:
    from trncost.model import Workload

    workload = _workload_from(_read_json(args.file), args.file)
    client = _client(args)
    wid = str(workload.get("workload_id"))
    url = _where(args, f"/workloads/{quote(wid, safe='')}")
    try:
        made = client.create_workload(workload)
        outcome = f"created at {url} (by {made.get('created_by') or 'unknown'})"
    except ApiError as exc:
        if exc.status != 409:
            raise
        made = client.get_object(f"/workloads/{quote(wid, safe='')}")
        if not _same(Workload, workload, made["workload"]):
            raise ClientError(
                f"workload {wid} exists at {url} with other content: records are written "
                "once; give the new one another workload_id"
            ) from None
        outcome = f"already exists at {url}, the same (unchanged)"
    if args.json:
        print_json({**made, "url": url})
        return 0
    console.print(f"workload {wid} {outcome}", markup=False)
    return 0


# -- trial add -------------------------------------------------------------------------------
@_remote
def cmd_trial_add(args: argparse.Namespace, console: Console) -> int:
    from trncost.model import TrialRun

    data = _read_json(args.file)
    trials = data if isinstance(data, list) else [data]
    if not trials or not all(isinstance(t, dict) for t in trials):
        raise RequestFileError(f"{args.file}: one trial (a JSON object) or a list of them")
    for i, trial in enumerate(trials):
        at = f"{i}." if isinstance(data, list) else ""
        if not args.workload and not trial.get("workload_id"):
            raise RequestFileError(f"{args.file}: {at}workload_id: missing; or pass --workload")
        if args.workload:
            trial = {**trial, "workload_id": args.workload}
        _validated(TrialRun, trial, args.file, at.rstrip("."))
    client = _client(args)
    done: list[dict[str, Any]] = []
    for trial in trials:
        wid = args.workload or trial["workload_id"]  # each one checked above
        if args.workload:
            trial = {**trial, "workload_id": args.workload}
        tid = str(trial.get("trial_id"))
        url = _where(args, f"/trials/{quote(tid, safe='')}")
        try:
            client.import_trial(str(wid), trial)
            outcome = "recorded"
        except ApiError as exc:
            recorded = ", ".join(d["trial_id"] for d in done) or "none"
            if exc.status != 409:
                raise ClientError(f"trial {tid}: {exc} (recorded before it: {recorded})") from None
            stored = client.get_object(f"/trials/{quote(tid, safe='')}")["trial"]
            if not _same(TrialRun, trial, stored):
                raise ClientError(
                    f"trial {tid} is recorded at {url} with other content: records are written "
                    f"once; give the new one another trial_id (recorded before it: {recorded})"
                ) from None
            outcome = "already recorded, the same (unchanged)"
        done.append({"trial_id": tid, "workload_id": wid, "outcome": outcome, "url": url})
        if not args.json:
            console.print(f"trial {tid} of workload {wid} {outcome} at {url}", markup=False)
    if args.json:
        print_json(done)
    else:
        console.print(
            "the workload's estimates refresh by themselves; a version is added only where a "
            f"figure moves (GET {args.url.rstrip('/')}/workloads/<id>/estimates lists them)"
        )
    return 0


# -- retract -------------------------------------------------------------------------------
@_remote
def cmd_trial_retract(args: argparse.Namespace, console: Console) -> int:
    done = _client(args).retract_trial(args.workload, args.trial_id, args.reason)
    if args.json:
        print_json(done)
        return 0
    r = (done.get("trial") or {}).get("retracted") or {}
    console.print(
        f"trial {args.trial_id} of workload {args.workload} retracted at {r.get('at')} by "
        f"{r.get('by') or 'unknown'}: {r.get('reason')}",
        markup=False,
    )
    console.print(
        "the record stays (GET /workloads/<id>/trials shows it retracted); every estimate of "
        "the workload is recomputed without it, and a version lists the change"
    )
    return 0


@_remote
def cmd_workload_retract(args: argparse.Namespace, console: Console) -> int:
    done = _client(args).retract_workload(args.workload_id, args.reason, args.superseded_by)
    if args.json:
        print_json(done)
        return 0
    r = done.get("retracted") or {}
    instead = f"; replaced by {r['superseded_by']}" if r.get("superseded_by") else ""
    console.print(
        f"workload {args.workload_id} retracted at {r.get('at')} by {r.get('by') or 'unknown'}: "
        f"{r.get('reason')}{instead} (it stays readable and takes no new trial or estimate)",
        markup=False,
    )
    return 0


# -- compare --workload ----------------------------------------------------------------------
def _plan(entry: Any) -> dict[str, Any]:
    if isinstance(entry, dict) and "candidate" in entry:
        return {k: entry[k] for k in ("candidate", "assumptions", "limited_features") if k in entry}
    return {"candidate": entry}


def parse_candidate(text: str) -> dict[str, Any]:
    """`trn2.48xlarge:4@us-east-2` → a candidate (region default us-east-1)."""
    match = CANDIDATE.match(text.strip())
    if not match:
        raise ClientError(f"--candidate {text!r}: write TYPE:COUNT[@REGION], e.g. trn2.48xlarge:4")
    return {
        "instance_type": match["type"],
        "instance_count": int(match["count"]),
        "region": match["region"] or DEFAULT_REGION,
    }


def comparison_request(args: argparse.Namespace) -> dict[str, Any]:
    """The comparison request from FILE and the flags."""
    body: dict[str, Any] = {}
    if args.file:
        data = _read_json(args.file)
        if not isinstance(data, dict):
            raise RequestFileError(
                f"{args.file}: a comparison or estimate request is a JSON object"
            )
        body = {k: v for k, v in data.items() if k not in SERVER_SIDE}
        body["candidates"] = [_plan(c) for c in body.get("candidates") or []]
    body.setdefault("candidates", [])
    body["candidates"] += [{"candidate": parse_candidate(c)} for c in args.candidate or []]
    if not body["candidates"]:
        raise ClientError("no candidates: give FILE with candidates, or --candidate TYPE:COUNT")
    for name in ("seed", "samples", "snapshot_id"):
        value = getattr(args, name, None)
        if value is not None:
            body[name] = value
    _validated(ComparisonRequest, body, args.file or "--candidate")
    return body


@_remote
def cmd_compare_remote(args: argparse.Namespace, console: Console) -> int:
    from trncost.model import Analysis
    from trncost_client.cli.offline import (
        _print_candidate,
        _print_comparison_notes,
        _print_decision,
        _ranking_table,
    )

    made = _client(args).create_comparison(args.workload, comparison_request(args))
    url, report = _where(args, made["url"]), _where(args, made["report_url"])
    if args.json:
        print_json({**made, "url": url, "report_url": report})
        return 0
    analysis = Analysis.model_validate(made["analysis"])
    if analysis.decision is not None:
        _print_decision(analysis.decision, console)
    console.print(_ranking_table(analysis.comparison))
    _print_comparison_notes(analysis.comparison, console)
    # every candidate: its range, sensitivity, next trial and decision, or why it has none
    for cand in analysis.candidates:
        _print_candidate(cand, console, top=args.top)
    console.print(
        f"comparison {made['comparison_id']} of workload {made['workload_id']} stored at {url} "
        f"(price snapshot {made['snapshot_id']})"
    )
    console.print(f"report: {report}", markup=False)
    return 0


def add_commands(sub: SubParsers) -> None:
    workload = sub.add_parser("workload", help="create or retract a workload in the API")
    workload_sub = workload.add_subparsers(dest="workload_command", required=True)
    create = workload_sub.add_parser(
        "create",
        help="create a workload from a JSON file",
        description="POST FILE (a workload, or an estimate request file's workload) to "
        "/workloads and print where it was created. Example: trncost workload create "
        "examples/llama-8b/workload.json",
    )
    create.add_argument("file", metavar="FILE")
    _add_remote_options(create)
    create.set_defaults(handler=cmd_workload_create)
    retract = workload_sub.add_parser(
        "retract",
        help="retract a workload (it stays readable, marked; it takes no new trial or estimate)",
    )
    retract.add_argument("workload_id", metavar="WORKLOAD_ID")
    retract.add_argument("--reason", required=True, help="why it is retracted (kept with it)")
    retract.add_argument(
        "--superseded-by", metavar="WORKLOAD_ID", help="the workload that replaces it"
    )
    _add_remote_options(retract)
    retract.set_defaults(handler=cmd_workload_retract)


def add_trial_commands(trial_sub: SubParsers) -> None:
    add = trial_sub.add_parser(
        "add",
        help="record trials from a JSON file (one trial or a list) in the API",
        description="POST each trial of FILE (one trial record, or a list such as "
        "examples/llama-8b/trials.json) to /workloads/<its workload_id>/trials and print where "
        "each was recorded; one already recorded with the same content is left unchanged.",
    )
    add.add_argument("file", metavar="FILE")
    add.add_argument("--workload", help="record them under this workload (default: each one's)")
    _add_remote_options(add)
    add.set_defaults(handler=cmd_trial_add)
    retract = trial_sub.add_parser(
        "retract",
        help="retract a trial record: it stays, marked; every estimate is recomputed without it",
        description="POST /workloads/WORKLOAD/trials/TRIAL_ID/retract. The record stays, marked "
        "with who, when and why; every estimate of the workload excludes it (admission "
        "'retracted', not even as cost) and gets a version listing the change. To correct a "
        'trial instead, record the corrected one with "supersedes": "TRIAL_ID" (trncost trial '
        "add): that retracts this one and names the correction.",
    )
    retract.add_argument("trial_id", metavar="TRIAL_ID")
    retract.add_argument("--workload", required=True, help="the trial's workload")
    retract.add_argument("--reason", required=True, help="why it is retracted (kept with it)")
    _add_remote_options(retract)
    retract.set_defaults(handler=cmd_trial_retract)
