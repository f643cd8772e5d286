"""The CLI never shows a traceback and never hangs on input (issue 21).

Hostile or mistaken input — a bad file, a bad part of a request file, a bad flag — exits 2
with one line on stderr naming the file (or the flag) and what is wrong; with --json, stdout
holds JSON or nothing. Two tests: a table of the cases an adversarial run found (each with its
expected line), and a hypothesis test that mutates the example request files and runs every
command that reads them.

Every run is bounded in time (SIGALRM): a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.examples import ROOT
from trncost_client.cli import main
from trncost_client.cli.output import one_line
from trncost_client.files import shown

EXAMPLES = ROOT / "examples"
SAVED_PRICES = ROOT / "client" / "trncost_client" / "local" / "data" / "saved_price_list.json"
LOGS = ROOT / "tests" / "events" / "logs"
LOG = LOGS / "megatron_mixtral_h100.log"
DEAD_URL = "http://127.0.0.1:9"  # the discard port: nothing answers, the refusal is at once
SECONDS = 15.0  # per run; every run here takes well under a second
PARTS = ("workload", "trials", "prices")


class Hang(BaseException):
    """A run that did not finish in time (BaseException: `main` cannot swallow it)."""


@dataclass
class Run:
    argv: list[str]
    code: int
    out: str
    err: str

    @property
    def line(self) -> str:
        return self.err.rstrip("\n")


def run_cli(*argv: str | Path) -> Run:
    """`main(argv)` with stdout and stderr captured, within SECONDS; SystemExit (argparse) is
    an exit status like any other; any other exception escapes and fails the test."""
    args = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"trncost {' '.join(args)} ran over {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return Run(args, code, out.getvalue(), err.getvalue())


def assert_contract(run: Run, names: list[str]) -> None:
    """What every run promises: a known exit status, no traceback, JSON (or nothing) on
    stdout with --json, and on exit 2 one line on stderr naming one of `names`."""
    assert run.code in (0, 1, 2), run
    assert "Traceback" not in run.out + run.err, run
    if "--json" in run.argv:
        if run.code == 0 or run.out.strip():
            json.loads(run.out)
    if run.code == 2:
        assert run.err.endswith("\n") and run.err.count("\n") == 1, run
        assert "error: " in run.line and any(name in run.line for name in names), run


def assert_one_line(run: Run, tail: str) -> None:
    """Exit 2, nothing on stdout, and one line on stderr ending with `tail`."""
    assert run.code == 2, run
    assert run.out == "", run
    assert run.err.count("\n") == 1 and run.err.endswith("\n"), run
    assert "error: " in run.line and run.line.endswith(tail), run


# -- the sandbox: the examples, and things that are not files --------------------------------
def copy_examples(into: Path) -> dict[str, Path]:
    """examples/llama-8b and examples/tiny-demo copied into `into` (tiny-demo's saved Price
    List file beside it): their estimate.json files, by name."""
    llama = into / "llama"
    shutil.copytree(EXAMPLES / "llama-8b", llama)
    tiny = into / "tiny"
    shutil.copytree(EXAMPLES / "tiny-demo", tiny)
    shutil.copy(SAVED_PRICES, tiny / "prices.json")
    request = json.loads((tiny / "estimate.json").read_text())
    (tiny / "estimate.json").write_text(json.dumps({**request, "prices": "prices.json"}))
    return {"llama": llama / "estimate.json", "tiny": tiny / "estimate.json"}


def not_files(into: Path) -> dict[str, Path]:
    """A directory, a FIFO, /dev/zero, a symlink loop and a missing file."""
    into.mkdir(exist_ok=True)
    fifo = into / "fifo.json"
    if not fifo.exists():
        os.mkfifo(fifo)
    loop = into / "loop.json"
    if not loop.is_symlink():
        loop.symlink_to(into / "loop2.json")
        (into / "loop2.json").symlink_to(loop)
    return {
        "directory": into,
        "fifo": fifo,
        "device": Path("/dev/zero"),
        "symlink loop": loop,
        "missing": into / "missing.json",
    }


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    copy_examples(root)
    not_files(root / "not-files")
    return root


def edited(sandbox: Path, name: str, change: Any) -> Path:
    """A copy of the llama example's estimate.json with `change(request)` applied."""
    request = json.loads((sandbox / "llama" / "estimate.json").read_text())
    change(request)
    path = sandbox / "llama" / f"{name}.json"
    path.write_text(json.dumps(request))
    return path


# -- the table: each case the adversarial run found, with its line -----------------------------
@pytest.mark.parametrize("kind", ["directory", "fifo", "device", "symlink loop", "missing"])
@pytest.mark.parametrize("where", ["the file", *PARTS])
def test_a_file_or_part_that_is_not_a_file_is_one_line(sandbox: Path, kind: str, where: str):
    # Given a directory, FIFO, /dev/zero, symlink loop or missing file as the request file
    # or as one of its parts (a path relative to it)
    target = not_files(sandbox / "not-files")[kind]
    why = {
        "directory": "a directory, not a regular file",
        "fifo": "a FIFO (named pipe), not a regular file",
        "device": "a character device, not a regular file",
        "symlink loop": "too many levels of symbolic links (a symlink loop?)",
        "missing": "no such file",
    }[kind]
    if where == "the file":
        path = target
    else:
        path = edited(
            sandbox,
            f"part-{where}-{kind.replace(' ', '-')}",
            lambda r: r.update({where: str(target)}),
        )
    # When it is estimated and compared
    for argv in (["estimate", path, "--json"], ["compare", path, "--samples", "1000", "--json"]):
        # Then each says, on one line, which file it is and why it cannot be read
        assert_one_line(run_cli(*argv), f"{target}: {why}")


def test_deep_nesting_and_huge_integers_are_one_line(sandbox: Path) -> None:
    deep = sandbox / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    huge = sandbox / "huge.json"
    huge.write_text('{"workload": ' + "1" * 5000 + "}")
    nested_part = edited(sandbox, "deep-part", lambda r: r.update(workload="../deep.json"))
    cases = {
        deep: f"{deep}: JSON nested deeper than 64 levels",
        huge: f"{huge}: an integer of more than 30 digits",
        nested_part: f"{sandbox / 'llama' / '../deep.json'}: JSON nested deeper than 64 levels",
    }
    for path, line in cases.items():
        assert_one_line(run_cli("estimate", path, "--json"), line)
        assert_one_line(run_cli("workload", "create", path, "--url", DEAD_URL), line)


def test_truncated_and_non_utf8_files_are_one_line(sandbox: Path) -> None:
    text = (sandbox / "llama" / "estimate.json").read_text()
    cut = sandbox / "cut.json"
    cut.write_text(text[:100])
    latin = sandbox / "latin.json"
    latin.write_bytes(b'{"name": "caf\xe9"}')
    big = sandbox / "big.json"
    with open(big, "wb") as f:
        f.truncate(129 * 2**20)  # sparse: refused from its size, nothing read
    assert_one_line(run_cli("estimate", cut, "--json"), "string starting at line 5 column 3")
    assert_one_line(run_cli("trial", "add", latin, "--url", DEAD_URL), "(byte 13, line 1)")
    assert_one_line(
        run_cli("estimate", big, "--json"),
        f"{big}: 135,266,304 bytes, more than the 128 MiB a request file or part may be",
    )


NOT_A_NUMBER = "value: Input should be a valid number"


@pytest.mark.parametrize(
    ("where", "field", "value", "says"),
    [
        ("shared", "idle_fraction", "lots", "assumptions.idle_fraction"),
        ("shared", "idle_fraction", {"value": "5%"}, "assumptions.idle_fraction"),
        ("shared", "checkpoint_interval_s", "1h", "assumptions.checkpoint_interval_s"),
        ("candidate", "idle_fraction", "x", "candidates.0.assumptions.idle_fraction"),
    ],
)
def test_a_non_number_assumption_is_one_line_naming_file_and_field(
    sandbox, where, field, value, says
):
    # Given an assumption that is not a number, shared or the first candidate's own
    def change(request: dict[str, Any]) -> None:
        held = request if where == "shared" else request["candidates"][0]
        held["assumptions"][field] = value

    path = edited(sandbox, f"assume-{where}-{field}", change)
    # When it is estimated and compared
    for argv in (["estimate", path, "--json"], ["compare", path, "--samples", "1000", "--json"]):
        run = run_cli(*argv)
        # Then the one line names the file and the field, at its place in the file
        assert run.code == 2 and run.out == "" and run.err.count("\n") == 1, run
        assert f"error: {path}: {says}.{NOT_A_NUMBER}" in run.line, run


def with_saved_prices(sandbox: Path, name: str, change: dict[str, Any]) -> Path:
    """tiny-demo's request file, its saved Price List file changed by `change`."""
    tiny = sandbox / "tiny"
    prices = {**json.loads((tiny / "prices.json").read_text()), **change}
    (tiny / f"{name}-prices.json").write_text(json.dumps(prices))
    request = json.loads((tiny / "estimate.json").read_text())
    path = tiny / f"{name}.json"
    path.write_text(json.dumps({**request, "prices": f"{name}-prices.json"}))
    return path


def test_a_saved_price_list_that_is_not_a_list_is_one_line(sandbox: Path) -> None:
    path = with_saved_prices(sandbox, "price-list-null", {"PriceList": None})
    run = run_cli("estimate", path, "--json")
    assert_one_line(run, f"{path}: prices: PriceList: expected a list of Price List items")


def test_a_price_list_item_nested_too_deep_is_rejected_and_its_price_pending(sandbox):
    # Given a saved Price List whose one item is a string of JSON nested 5,000 deep
    path = with_saved_prices(sandbox, "item-deep", {"PriceList": ["[" * 5000 + "]" * 5000]})
    # When it is estimated
    run = run_cli("estimate", path, "--json")
    # Then the item is rejected (no RecursionError) and the instance price is PENDING
    assert run.code == 0, run
    (est,) = json.loads(run.out)
    assert est["status"] == "incomplete" and est["total_usd"] is None


def test_a_price_override_keyed_by_the_printed_key_is_taken(sandbox: Path) -> None:
    # Given the trn3 candidate's override keyed as trncost prints the PENDING price's key
    key = "AmazonEC2/us-east-2/trn3.48xlarge/on_demand"
    override = {"key": key, "usd": "40", "unit": "Hrs", "note": "a what-if"}

    def change(request: dict[str, Any]) -> None:
        request["candidates"][1]["assumptions"]["price_overrides"] = [override]

    path = edited(sandbox, "override-text-key", change)
    # When it is estimated
    run = run_cli("estimate", path, "--json", "--candidate", "trn3.48xlarge")
    # Then the trn3 estimate is complete, its instance price assumed at $40/h
    assert run.code == 0, run
    (trn3,) = json.loads(run.out)
    assert trn3["status"] == "complete" and trn3["price_basis"] == "assumed"


def test_a_malformed_printed_key_is_one_line_naming_the_field(sandbox: Path) -> None:
    def change(request: dict[str, Any]) -> None:
        bad = {"key": "AmazonEC2/us-east-2/trn3.48xlarge", "usd": "40", "unit": "Hrs"}
        request["candidates"][1]["assumptions"]["price_overrides"] = [bad]

    path = edited(sandbox, "override-bad-key", change)
    run = run_cli("estimate", path, "--json")
    assert run.code == 2 and run.err.count("\n") == 1, run
    assert str(path) in run.line and "price_overrides.0.key: " in run.line
    assert "four parts" in run.line


SEED = "argument --seed: an integer from 0 to 4,294,967,295"
SAMPLES = "argument --samples: an integer from 1,000 to 100,000"
NO_FOLDER = "the folder /nonexistent-dir does not exist (nothing is created: make it first)"
NO_HTML = "/nonexistent-dir/a.html"


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--seed", "-1"], f"{SEED}, not -1"),
        (["--seed", str(2**32)], f"{SEED}, not 4,294,967,296"),
        (["--seed", "1" * 5000], SEED),
        (["--seed", "x"], f"{SEED}, not 'x'"),
        (["--samples", "10"], f"{SAMPLES}, not 10"),
        (["--samples", "1e9"], f"{SAMPLES}, not '1e9'"),
        (["--top", "-1"], "argument --top: an integer from 0 to 1,000, not -1"),
        (["--html", NO_HTML], f"argument --html: {NO_HTML}: {NO_FOLDER}"),
        (["--html", "/proc/x.html"], "argument --html: /proc/x.html: the folder /proc cannot"),
    ],
)
def test_a_bad_compare_flag_is_one_line_before_anything_runs(sandbox, flags, line) -> None:
    run = run_cli("compare", sandbox / "llama" / "estimate.json", *flags, "--json")
    assert run.code == 2 and run.out == "" and run.err.count("\n") == 1, run
    assert run.line.startswith(f"trncost compare: error: {line}"), run


def test_html_into_a_directory_is_refused_and_nothing_is_created(sandbox: Path) -> None:
    before = sorted(p.name for p in sandbox.iterdir())
    run = run_cli("compare", sandbox / "llama" / "estimate.json", "--html", sandbox)
    assert_one_line(run, f"argument --html: {sandbox}: a directory; give a file to write")
    assert sorted(p.name for p in sandbox.iterdir()) == before


IMPORT = ["trial", "import", "--workload", "w", "--phase", "fit", "--dry-run"]
IMPORT += ["--instance-type", "trn2.48xlarge"]
DEV_ZERO = "/dev/zero: a character device, not a regular file"
NO_JSON = "--out - writes the report to stdout; --json cannot go with it"
VERSION = "argument --version: an integer from 1 to 2,147,483,647, not 0"
TIMEOUT = "argument --timeout: a number more than 0 and at most 86400, not 'nan'"
COUNT = "argument --instance-count: an integer from 1 to 1,000,000, not -2"


@pytest.mark.parametrize(
    ("argv", "tail"),
    [
        (["report", "est-1", "--out", "/nonexistent-dir/r.html"], NO_FOLDER),
        (["report", "est-1", "--out", "-", "--json"], NO_JSON),
        (["report", "est-1", "--version", "0"], VERSION),
        (["workloads", "--timeout", "nan"], TIMEOUT),
        (["prices", "upload", "/dev/zero"], DEV_ZERO),
        ([*IMPORT, "/dev/zero", "--instance-count", "1"], DEV_ZERO),
        ([*IMPORT, str(LOG), "--instance-count", "-2"], COUNT),
        ([*IMPORT, str(LOG), "--instance-count", "1", "--workload-file", "/dev/zero"], DEV_ZERO),
    ],
)
def test_other_commands_refuse_bad_flags_and_files_on_one_line(argv, tail) -> None:
    assert_one_line(
        run_cli(*argv, "--url", DEAD_URL) if argv[0] != "serve" else run_cli(*argv), tail
    )


def test_trial_import_refuses_what_is_not_a_log_file(sandbox: Path) -> None:
    facts = ["--workload", "w", "--phase", "fit", "--instance-type", "trn2.48xlarge"]
    facts += ["--instance-count", "1", "--dry-run", "--json"]
    for kind, path in not_files(sandbox / "not-files").items():
        run = run_cli("trial", "import", path, *facts)
        assert run.code == 2 and str(path) in run.line and run.err.count("\n") == 1, (kind, run)


def test_a_file_name_with_control_characters_stays_on_one_line(sandbox: Path) -> None:
    name = sandbox / "a\nb\x1b[31mc.json"
    run = run_cli("workload", "create", name, "--url", DEAD_URL)
    assert_one_line(run, "b\\x1b[31mc.json: no such file")


def test_writes_validate_the_file_before_connecting(sandbox: Path) -> None:
    # Given a workload and trials that do not validate, and no server at --url
    workload = json.loads((sandbox / "llama" / "workload.json").read_text())
    workload["target"]["amount"] = "lots"
    bad_workload = sandbox / "bad-workload.json"
    bad_workload.write_text(json.dumps(workload))
    trials = json.loads((sandbox / "llama" / "trials.json").read_text())
    trials[1]["phase"] = "warmup"
    bad_trials = sandbox / "bad-trials.json"
    bad_trials.write_text(json.dumps(trials))
    # Then each is one line naming the file and the field, not a connection error
    run = run_cli("workload", "create", bad_workload, "--url", DEAD_URL, "--json")
    assert_one_line(run, "")
    assert run.line.startswith(f"trncost: error: {bad_workload}: target.amount: ")
    run = run_cli("trial", "add", bad_trials, "--url", DEAD_URL)
    assert run.line.startswith(f"trncost: error: {bad_trials}: 1.phase: Input should be ")


def test_without_json_the_offline_error_line_is_on_stderr(sandbox: Path) -> None:
    for command in ("estimate", "compare"):
        assert_one_line(
            run_cli(command, "/dev/zero"), "/dev/zero: a character device, not a regular file"
        )


def test_shared_assumptions_that_are_not_an_object_are_one_line(sandbox: Path) -> None:
    # Given tiny-demo (prices: a saved Price List file) with `assumptions` a string
    request = json.loads((sandbox / "tiny" / "estimate.json").read_text())
    path = sandbox / "tiny" / "assumptions-string.json"
    path.write_text(json.dumps({**request, "assumptions": "none"}))
    # Then it is one line naming the file and the field
    run = run_cli("estimate", path, "--json")
    assert run.code == 2 and f"{path}: " in run.line and "assumptions" in run.line, run


def test_in_a_real_process_nothing_hangs_and_no_log_line_joins_the_error(sandbox: Path):
    """The same promise from the `trncost` process itself (no pytest capture, no log handler):
    /dev/zero and a FIFO do not hang it, and a warning the layer logs on the way (a Price List
    item it rejects) is not printed beside the one error line."""
    import subprocess
    import sys

    tiny = sandbox / "tiny"
    prices = json.loads((tiny / "prices.json").read_text())
    prices["PriceList"].append("not a Price List item")
    (tiny / "prices-one-bad.json").write_text(json.dumps(prices))
    request = json.loads((tiny / "estimate.json").read_text())
    request["prices"] = "prices-one-bad.json"
    request["candidates"][0]["candidate"]["instance_type"] = "zz9.48xlarge"  # checked late
    logged = tiny / "logged-then-bad.json"
    logged.write_text(json.dumps(request))
    fifo = not_files(sandbox / "not-files")["fifo"]
    part_fifo = edited(sandbox, "process-fifo-part", lambda r: r.update(trials=str(fifo)))
    for argv, says in (
        (["estimate", "/dev/zero", "--json"], "/dev/zero: a character device"),
        (["compare", part_fifo, "--json"], f"{fifo}: a FIFO (named pipe)"),
        (["estimate", logged, "--json"], "'zz9.48xlarge' is not an instance type AWS knows"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "trncost_client.cli", *map(str, argv)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=sandbox,
        )
        assert done.returncode == 2 and done.stdout == "", done
        assert done.stderr.count("\n") == 1 and says in done.stderr, done


# -- hypothesis: the examples, mutated ---------------------------------------------------------
PLACEHOLDER = "\ue000hostile\ue000"
SPECIAL = {
    "deep nesting": lambda n: "[" * n + "]" * n,
    "5,000-digit integer": lambda n: "-" * (n % 2) + "9" * 5000,
}
NOT_FILES = ("directory", "fifo", "device", "symlink loop", "missing")
KINDS = ("drop", "replace", *SPECIAL, "unicode", "truncate", "bytes", "not a file")
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 10**25, -1, 0, -0.0, 2**64, "1h", "", "NaN", "-1", "1e999"]),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def paths_in(data: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every location in a JSON document, as key paths (the root is ())."""
    found = [at]
    if isinstance(data, dict):
        for k, v in data.items():
            found += paths_in(v, (*at, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found += paths_in(v, (*at, i))
    return found


def put(data: Any, at: tuple[Any, ...], value: Any, *, drop: bool = False) -> Any:
    """`data` with the value at `at` replaced (or dropped)."""
    if not at:
        return value
    parent = data
    for step in at[:-1]:
        parent = parent[step]
    if drop:
        del parent[at[-1]]
    else:
        parent[at[-1]] = value
    return data


@st.composite
def mutations(draw: st.DrawFn, documents: dict[str, Any]) -> tuple[str, str, bytes]:
    """(the file mutated: estimate or one of its PARTS, what was done, its new bytes); for
    "not a file", the bytes are empty and what was done names the thing in its place."""
    which = draw(st.sampled_from(sorted(documents)))
    data = json.loads(json.dumps(documents[which]))
    at = draw(st.sampled_from(paths_in(data)))
    kind = draw(st.sampled_from(KINDS))
    if kind == "not a file":
        return which, draw(st.sampled_from(NOT_FILES)), b""
    if kind in SPECIAL:
        text = json.dumps(put(data, at, PLACEHOLDER), ensure_ascii=False)
        size = draw(st.integers(65, 20_000))
        raw = text.replace(f'"{PLACEHOLDER}"', SPECIAL[kind](size)).encode()
        return which, f"{kind} at {at}", raw
    if kind == "drop" and at:
        data = put(data, at, None, drop=True)
    elif kind == "unicode":
        data = put(data, at, draw(st.text(min_size=1, max_size=40)))
    elif kind in ("replace", "drop"):
        data = put(data, at, draw(ODD_VALUES))
    raw = json.dumps(data, ensure_ascii=draw(st.booleans())).encode()
    if kind == "truncate":
        raw = raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    elif kind == "bytes":
        pos = draw(st.integers(0, len(raw)))
        raw = raw[:pos] + draw(st.binary(min_size=1, max_size=8)) + raw[pos:]
    return which, f"{kind} at {at}", raw


def documents_of(estimate: Path) -> dict[str, Any]:
    """The request file and each of its parts, parsed."""
    request = json.loads(estimate.read_text())
    docs = {"estimate": request}
    for part in PARTS:
        docs[part] = json.loads((estimate.parent / request[part]).read_text())
    return docs


def commands_for(which: str, estimate: Path, mutated: Path) -> list[list[str | Path]]:
    """The runs that read the mutated file: the offline commands (the file or its part) and,
    for a workload (or the request file holding one) or trials, the commands that send it to
    the API (no server at DEAD_URL: they must refuse a bad file before connecting)."""
    runs: list[list[str | Path]] = [
        ["estimate", estimate, "--json"],
        ["compare", estimate, "--samples", "1000", "--json"],
    ]
    remote = ["--url", DEAD_URL, "--timeout", "2"]
    if which in ("workload", "estimate"):
        runs.append(["workload", "create", mutated, *remote, "--json"])
    if which == "workload":
        runs.append([*IMPORT, LOG, "--instance-count", "1", "--workload-file", mutated, "--json"])
    if which == "trials":
        runs.append(["trial", "add", mutated, *remote])
    return runs


def part_paths(estimate: Path) -> list[str]:
    """The files a (mutated) request file names as its parts, as the loader joins them, raw
    and as a message shows them (escaped)."""
    if not estimate.is_file():  # a FIFO or /dev/zero in its place: not read here either
        return []
    try:
        request = json.loads(estimate.read_bytes())
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(request, dict):
        return []
    named = [request.get(part) for part in PARTS]
    joined = [str(estimate.parent / p) for p in named if isinstance(p, str)]
    return joined + [shown(p) for p in joined] + [one_line(p) for p in joined]


def apply(case: Path, example: str, mutation: tuple[str, str, bytes]) -> tuple[Path, Path]:
    """The example copied into `case` with `mutation` applied: (its request file, the file
    mutated, or the thing put in its place)."""
    estimate = copy_examples(case)[example]
    which, what, raw = mutation
    request = json.loads(estimate.read_text())
    if what in NOT_FILES:
        stand_in = not_files(case.parent / "not-files")[what]
        if which == "estimate":
            return stand_in, stand_in
        estimate.write_text(json.dumps({**request, which: str(stand_in)}))
        return estimate, stand_in
    target = estimate if which == "estimate" else estimate.parent / request[which]
    target.write_bytes(raw)
    return estimate, target


RUNS: list[int] = []  # every run's exit status (the case count)


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(example=st.sampled_from(["llama", "tiny"]), data=st.data())
def test_mutated_example_files_keep_the_contract(sandbox: Path, example: str, data) -> None:
    # Given an example request file with one of its files mutated, or put out of reach
    case = sandbox / f"case-{len(RUNS)}"
    shutil.rmtree(case, ignore_errors=True)
    pristine = documents_of(sandbox / example / "estimate.json")
    mutation = data.draw(mutations(pristine), label="mutation")
    estimate, target = apply(case, example, mutation)
    names = [str(estimate), str(target), shown(target), DEAD_URL, *part_paths(estimate)]
    with_json = data.draw(st.booleans(), label="--json")
    # When every command that reads it runs, with --json or without
    for argv in commands_for(mutation[0], estimate, target):
        run = run_cli(*(a for a in argv if with_json or a != "--json"))
        RUNS.append(run.code)
        # Then none escapes the contract: 0, 1 or 2; on 2 one line naming the file; JSON only
        assert_contract(run, names)
    shutil.rmtree(case, ignore_errors=True)
