"""The shapes a training log's text takes on its way to a file, undone before a format reads a
line; and tqdm's progress bar, which several formats print. Pure: no I/O.

`clean(line)` → (rank, text):

- ANSI colours (`ESC[34m … ESC[0m`, SageMaker's CloudWatch capture) removed;
- CloudWatch / syslog octal escapes: `#015` is a carriage return, `#033[A` a cursor move
  (removed), `#011` a tab: a whole epoch of tqdm refreshes arrives as one line;
- launcher prefixes, wherever they are in the line (mpirun interleaves ranks mid-line):
  `[1,0]<stdout>:`, SageMaker's `[1,mpirank:0,algo-1]<stdout>:`, torchrun's `[default7]:`,
  `[rank0]:`, accelerate's leading `stdout: `. The rank of a prefix at the line's start is
  returned: a file is read in the first rank it shows (the others print the same run).

`split_refreshes(text)`: the carriage-return parts of a line (tqdm redraws its bar with `\\r`).

`parse_bar(part)`: one tqdm bar state — `Epoch 0:  22%|██▏ | 4/18 [00:17<01:02,  4.47s/it,
loss=10.072]`, with or without the `|` glyphs (Colab), with escaped pipes (`\\|##3 \\|`, a log
viewer's export), with mis-encoded glyphs, without a rate (NeMo's `[16:26<00:00, v_num=…]`).
Its label (what precedes the percentage) says what it counts: `Epoch N:` a training epoch,
nothing a Trainer's training (or evaluation) loop, `Validation`, `Downloading`, `model.neff:`
or `Fetching 15 files:` not training. Only `it/s` and `s/it` rates are iteration rates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trncost.metrics.logs.base import NUMBER, clock_text, key_values, number

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]")
_ESCAPED_CSI = re.compile(r"#033\[[0-9;?]*[@-~]")
_PREFIX = re.compile(
    r"\[1,(?:mpirank:)?(?P<mpi>\d+)(?:,algo-\d+)?\]<std(?:out|err)>:"
    r"|\[default(?P<torchrun>\d+)\]:|\[rank(?P<rank>\d+)\]:"
)


def clean(line: str) -> tuple[int | None, str]:
    """(rank of the line's leading launcher prefix or None, the line as the program printed
    it). Cheap when there is nothing to undo (one `in` test per marker)."""
    if not (
        "\x1b" in line
        or "#0" in line
        or "]<std" in line
        or "[default" in line
        or "[rank" in line
        or line.startswith(("stdout: ", "stderr: "))
    ):
        return None, line
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "#0" in line:
        line = _ESCAPED_CSI.sub("", line).replace("#015", "\r").replace("#011", "\t")
    rank = None
    if "]<std" in line or "[default" in line or "[rank" in line:
        first = _PREFIX.search(line)
        if first is not None:
            if not line[: first.start()].strip():
                found = first.group("mpi") or first.group("torchrun") or first.group("rank")
                rank = int(found)
            line = _PREFIX.sub("", line)
    if line.startswith(("stdout: ", "stderr: ")):
        line = line[8:]
    return rank, line


def split_refreshes(text: str) -> list[str]:
    """The carriage-return parts of a line that hold text (one part when there is no \\r)."""
    if "\r" not in text:
        return [text]
    return [p for p in text.split("\r") if p.strip()]


# -- tqdm ------------------------------------------------------------------------------------
_BAR = re.compile(
    r"(?P<pct>\d{1,3})%\s*(?:\\?\|[^|\n]*?\\?\|)?\s*(?P<n>\d+)/(?P<total>\d+)\s*"
    r"\[(?P<elapsed>(?:\d+\s*days?,\s*)?\d+(?::\d\d)+)<(?P<eta>[^,\]]*)"
    r"(?:,\s*(?P<rest>[^\]]*))?\]"
)
_RATE = re.compile(r"^\s*(?P<v>\?|" + NUMBER + r")\s*(?P<unit>s/it|it/s|[A-Za-z]*/s)\s*$")
_EPOCH = re.compile(r"Epoch (?P<epoch>\d+)\b")
NOT_TRAINING = ("valid", "sanity", "test", "predict", "download", "fetching", "evaluat", ".neff")


@dataclass(slots=True)
class Bar:
    """One tqdm bar state. `rate` in iterations per second (None: not shown, `?it/s`, or a
    rate in another unit: `unit` says which)."""

    label: str
    n: int
    total: int
    elapsed_s: float | None
    rate: float | None
    unit: str | None
    values: dict[str, str]

    @property
    def epoch(self) -> int | None:
        m = _EPOCH.search(self.label)
        return None if m is None else int(m.group("epoch"))

    @property
    def iterations(self) -> bool:
        """It counts iterations (its unit is it/s or s/it, or it shows none yet)."""
        return self.unit in (None, "it/s", "s/it")

    @property
    def training_label(self) -> bool:
        """Its label does not name an evaluation, a download or a data-loading loop."""
        low = self.label.lower()
        return not any(word in low for word in NOT_TRAINING)


def parse_bar(part: str) -> Bar | None:
    """The tqdm bar in `part` (None when there is none: no `n/N [elapsed<…]`)."""
    if "%" not in part or "[" not in part:
        return None
    m = _BAR.search(part)
    if m is None:
        return None
    rate = unit = None
    values: dict[str, str] = {}
    rest = m.group("rest")
    if rest:
        first, _, tail = rest.partition(",")
        r = _RATE.match(first)
        if r is not None:
            unit = r.group("unit")
            value = None if r.group("v") == "?" else number(r.group("v"))
            if value is not None and value > 0:
                rate = value if unit == "it/s" else (1 / value if unit == "s/it" else None)
            rest = tail
        values = key_values(rest)
    return Bar(
        label=part[: m.start()],
        n=int(m.group("n")),
        total=int(m.group("total")),
        elapsed_s=clock_text(m.group("elapsed")),
        rate=rate,
        unit=unit,
        values=values,
    )
