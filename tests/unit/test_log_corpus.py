"""The corpus of 80 real training-log excerpts (tests/events/logs/corpus, each with its
source) read against its answer key, and read again in the shapes the same text takes on its
way to a file: ANSI-coloured, carriage-return-joined, CloudWatch-escaped (`#015`), interleaved
by two ranks (mpirun and torchrun prefixes, and unprefixed duplicates), and truncated — copies
these tests make themselves, so no fixture is constructed.

The share read right is printed (`pytest -s`): against the key as written, and with the
declared ambiguities (`tests.support.log_corpus.AMBIGUOUS`: where the key and the reader
disagree for a stated reason, the reader's value is checked instead, never silently).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.log_corpus import (
    AMBIGUOUS,
    CORPUS,
    FIELDS,
    expected_of,
    figures_of,
    manifest,
    same,
    score,
    wrong_fields,
)
from trncost.metrics.logs.text import parse_bar

ENTRIES = manifest()
LINE_FILES = [e for e in ENTRIES if not e["file"].endswith(".json")]


def _id(entry: dict[str, Any]) -> str:
    return entry["file"]


def _data(entry: dict[str, Any]) -> bytes:
    return (CORPUS / entry["file"]).read_bytes()


def _read(entry: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    data = _data(entry) if text is None else text.encode("utf-8")
    return figures_of(Path(entry["file"]).name, data)


def _lines(entry: dict[str, Any]) -> list[str]:
    return _data(entry).decode("utf-8").split("\n")


# -- the key ----------------------------------------------------------------------------------
def test_the_corpus_is_read_right_against_its_key(capsys) -> None:
    # Given the 80 excerpts and their key; When each is read as `trial import` reads it
    declared, strict = score(), score(strict=True)
    with capsys.disabled():
        print(
            f"\ncorpus: {declared['right']}/{declared['files']} excerpts read right with the "
            f"declared ambiguities, {strict['right']}/{strict['files']} against the key as "
            "written; per format: "
            + ", ".join(f"{k} {ok}/{n}" for k, (ok, n) in declared["per_format"].items())
        )
    # Then every excerpt is read right, each disagreement with the key being a declared one
    assert declared["wrong"] == {}
    assert declared["right"] == declared["files"] == len(ENTRIES) >= 80
    assert strict["right"] == declared["files"] - len(AMBIGUOUS)


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_each_excerpt_gives_the_figures_of_its_key(entry) -> None:
    want, _ = expected_of(entry)
    got = _read(entry)
    assert wrong_fields(want, got) == [], {f: (want[f], got.get(f)) for f in FIELDS}


@pytest.mark.parametrize("file", sorted(AMBIGUOUS))
def test_each_declared_ambiguity_is_a_real_disagreement_with_its_reason(file) -> None:
    (entry,) = [e for e in ENTRIES if e["file"] == file]
    for field, (value, reason) in AMBIGUOUS[file].items():
        assert not same(field, entry["expected"][field], value), (file, field)
        assert len(reason) > 40  # a reason, not a shrug


def test_the_corpus_covers_every_shape_the_issue_names() -> None:
    formats = {e["format"] for e in ENTRIES}
    assert len(ENTRIES) >= 40 and all(e["source_url"].startswith("https://") for e in ENTRIES)
    assert {"nemo", "megatron", "hf_trainer", "hf_trainer_state", "lightning"} <= formats
    assert {"neuron_compile", "neuron_parallel_compile", "neuronx_distributed"} <= formats
    assert sum((CORPUS / e["file"]).stat().st_size for e in ENTRIES) < 4 * 2**20


# -- the same text in other shapes -------------------------------------------------------------
def _equal(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [f for f in FIELDS if not (a[f] == b[f] or same(f, a[f], b[f]))]


def ansi(lines: list[str]) -> str:
    """SageMaker's CloudWatch capture: every line in colour."""
    return "\n".join(f"\x1b[34m{line}\x1b[0m" if line else line for line in lines)


def cr_joined(lines: list[str], cr: str = "\r") -> str:
    """tqdm's refreshes as a terminal file keeps them: consecutive bar lines on one line."""
    out: list[str] = []
    for line in lines:
        if out and parse_bar(line) is not None and parse_bar(out[-1].split(cr)[-1]) is not None:
            out[-1] += cr + line
        else:
            out.append(line)
    return "\n".join(out)


def escaped(lines: list[str]) -> str:
    """CloudWatch's syslog escapes: `#015` for a carriage return, `#033[A` after a bar."""
    joined = cr_joined(lines, "#015#033[A")
    return "\n".join(f"\x1b[34m{line}\x1b[0m" for line in joined.split("\n"))


def ranks(lines: list[str], style: str) -> str:
    """Two ranks printing the same run, line by line: mpirun's and torchrun's prefixes."""
    prefix = {"mpirun": "[1,{r}]<stdout>:", "torchrun": "[default{r}]:"}[style]
    out = []
    for line in lines:
        out += [prefix.format(r=0) + line, prefix.format(r=1) + line] if line else [line]
    return "\n".join(out)


SHAPES = {
    "ansi": ansi,
    "cr_joined": cr_joined,
    "escaped": escaped,
    "mpirun_ranks": lambda lines: ranks(lines, "mpirun"),
    "torchrun_ranks": lambda lines: ranks(lines, "torchrun"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("entry", LINE_FILES, ids=_id)
def test_the_same_text_in_another_shape_gives_the_same_figures(entry, shape) -> None:
    # Given an excerpt and a copy in the shape a launcher, a terminal or CloudWatch gives it
    original = _read(entry)
    copy = SHAPES[shape](_lines(entry))
    # When the copy is read; Then every figure is the original's
    got = _read(entry, copy)
    assert _equal(original, got) == [], {f: (original[f], got[f]) for f in _equal(original, got)}


def _monotone(full: dict[str, Any], cut: dict[str, Any]) -> list[str]:
    """What a truncated copy may say: less, never more, and never a different end."""
    bad = []
    for field in ("steps_done", "eval_s"):
        if cut[field] is not None and (full[field] is None or cut[field] > full[field] + 1e-6):
            bad.append(field)
    at_total = cut["steps_total"] is not None and cut["steps_done"] == cut["steps_total"]
    if cut["completed"] is True and full["completed"] is not True and not at_total:
        bad.append("completed")  # (a cut that ends on a bar at its total shows an end)
    for field in ("steps_total", "global_batch_size", "seq_length"):
        if cut[field] is not None and full[field] is not None and cut[field] != full[field]:
            if field != "steps_total":
                bad.append(field)
    return bad


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_a_truncated_copy_says_less_never_more(entry, cut) -> None:
    # Given an excerpt cut mid-line at 30, 60 or 90 % of its bytes
    data = _data(entry)
    head = data[: int(len(data) * cut)]
    # When it is read; Then it never crashes, and says at most what the whole says
    full = _read(entry)
    got = figures_of(Path(entry["file"]).name, head)
    assert _monotone(full, got) == []


def test_duplicated_lines_without_prefixes_read_as_one_run() -> None:
    # Given torchtitan's seven ranks printing step 4 (a real excerpt) and every line doubled
    (entry,) = [e for e in ENTRIES if "unprefixed-rank-duplicates" in e["file"]]
    lines = _lines(entry)
    doubled = "\n".join(line for line in lines for _ in (0, 1))
    # Then the figures are the original's
    assert _equal(_read(entry), _read(entry, doubled)) == []


def test_the_manifest_names_a_source_for_every_file() -> None:
    listed = {e["file"] for e in ENTRIES}
    on_disk = {
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in ("manifest.json", "README.md")
    }
    assert listed == on_disk
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in listed)
    assert json.loads((CORPUS / "manifest.json").read_text())[0]["expected"]
