"""Step lines of trainers without a format of their own, read by their labels: the fallback
format, chosen only when no other training format matches a file.

What it knows (each a real shape: tests/events/logs/corpus/other):

- a step counter: `step: 200`, `Step 12 |`, `step 00000005/00000015`, litgpt's `iter 20 step
  20`, the DeiT/MAE MetricLogger's `Epoch: [1]  [30/1504]` (batches within an epoch, counted
  from the first epoch shown: with a second epoch in view the total is unknown);
- a training loss: the first label ending in `loss` that is not an evaluation's or an
  auxiliary one (`loss:`, `loss train:`, `cross-entropy-loss`, `closs:`, `Loss:`,
  `train_epoch_loss=tensor(0.0681…`, `Final loss is`), its value the first number after it;
- a rate, by its label: `tps:` / `tokens_per_second(_per_gpu)` / `tokens-per-second` (tokens
  per second, with thousands separators), `samples_per_second`, `… seq/s`;
- a step time: `step-time 27.8 sec`, `iter time: 42.9 s`, the MetricLogger's `time: 4.59`;
- an evaluation's seconds: `val_time: 79.795 s`; a run's total: `Total time: 1:52:18`.

The timestamp of a line (`2025-06-16 22:30:50,322 - root - INFO - step: …`) is its time.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import (
    NUMBER,
    EventKind,
    LogFormat,
    Sink,
    Step,
    clock_text,
    duration,
    iso_time,
    number,
)
from trncost.metrics.logs.lightning import NAN

_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|" + NUMBER + r")"
_STEP = re.compile(r"\b[Ss]tep\b[:=\s]\s*(?P<n>\d+)(?:\s*/\s*(?P<total>\d+))?")
_LITGPT = re.compile(r"\biter\s+\d+\s+step\s+(?P<n>\d+)")
_METRIC_LOGGER = re.compile(r"Epoch:\s*\[(?P<epoch>\d+)\]\s+\[\s*(?P<n>\d+)/(?P<total>\d+)\]")
_LOSS = re.compile(
    r"(?i)(?<![\w.-])(?P<name>(?:[a-z][\w-]*?)?loss(?:\s+train)?)\b"
    r"\s*(?:[:=]|\bis\b|\s-\s)?\s*(?:tensor\()?(?P<v>" + NUMBER + r")"
)
NOT_TRAINING_LOSS = ("val", "eval", "valid", "test", "load", "aux", "mtp", "dummy", "z_")
_RATES = (
    (re.compile(r"\btps:\s*(?P<v>" + _NUM + r")"), "tokens/s"),
    (
        re.compile(
            r"(?i)\btokens?[_\- ]per[_\- ]second(?:[_\- ]per[_\- ]gpu)?\s*[:=]?\s*(?P<v>"
            + _NUM
            + r")"
        ),
        "tokens/s",
    ),  # fmt: skip
    (
        re.compile(r"(?i)\bsamples?[_\- ]per[_\- ]second\s*[:=]?\s*(?P<v>" + _NUM + r")"),
        "samples/s",
    ),  # fmt: skip
    (re.compile(r"(?P<v>" + _NUM + r")\s*seq/s"), "seq/s"),
)
_STEP_TIME = re.compile(
    r"(?i)\b(?:step[-_ ]time|iter time)\s*[:=]?\s*(?P<v>" + NUMBER + r")\s*(?:s|sec)?\b"
)
_LOGGER_TIME = re.compile(r"\btime:\s*(?P<v>" + NUMBER + r")")
_VAL_TIME = re.compile(r"\bval_time:\s*(?P<v>" + NUMBER + r")\s*s\b")
_TOTAL_TIME = re.compile(r"\bTotal time:\s*(?P<v>(?:\d+\s*days?,\s*)?\d+(?::\d\d)+)")
RULE = "a trainer's own step line, read by its labels (step, loss, rate, step time)"


def training_loss(line: str) -> float | None:
    """The first training loss a line labels (not an evaluation's or an auxiliary loss)."""
    for m in _LOSS.finditer(line):
        if not m.group("name").lower().startswith(NOT_TRAINING_LOSS):
            if "balanc" not in m.group("name").lower():
                return number(m.group("v"))
    return None


class StepLines(LogFormat):
    name = "step_lines"
    title = "other trainers' step lines (torchtitan, torchtune, litgpt, MetricLogger, ...)"
    sample = (
        "[titan] 2025-06-16 22:32:00,846 - root - INFO - step: 250  loss:  5.8383  memory: "
        "49.66GiB(52.28%)  tps: 5,862  tflops: 339.48  mfu: 34.33%"
    )
    yields = (
        "steps (a step counter), loss, tokens/s or samples/s (by label), step time, the clock "
        "(timestamps), evaluation seconds (val_time), a total time"
    )
    keys = (b"step", b"Step", b"loss", b"Loss", b"Epoch: [", b"Total time:", b"val_time:")
    step_keys = ()
    priority = 5
    fallback = True

    def __init__(self) -> None:
        self.first_epoch: int | None = None
        self.epoch = -1
        self.totals: dict[int, int] = {}

    def parse(self, line: str, number_: int, sink: Sink) -> bool:  # noqa: C901
        at = iso_time(line, 0, 60)
        if (m := _TOTAL_TIME.search(line)) is not None:
            sink.event(EventKind.runtime, number_, at=at, value=clock_text(m.group("v")),
                       text="the trainer's own `Total time`")  # fmt: skip
            return True
        if (m := _VAL_TIME.search(line)) is not None:
            sink.event(EventKind.eval_seconds, number_, at=at, value=number(m.group("v")),
                       text=f"val_time line {number_}")  # fmt: skip
            return True
        shown, total, step_time = self._counter(line, number_, sink)
        loss = training_loss(line)
        rate = unit = None
        for pattern, label in _RATES:
            found = pattern.search(line)
            if found is not None:
                rate, unit = number(found.group("v")), label
                break
        st = _STEP_TIME.search(line)
        if st is not None:
            step_time = number(st.group("v"))
        if shown is None and loss is None:
            return False
        sink.step(
            Step(
                line=number_,
                step=shown,
                shown=shown,
                total=total,
                loss=loss,
                step_time_s=duration(step_time, "step time", number_, sink),
                tokens_per_s=rate if unit == "tokens/s" else None,
                samples_per_s=rate if unit in ("samples/s", "seq/s") else None,
                at=at,
                rate=rate,
                rate_unit=unit,
                rule=RULE if shown is not None else "a training loss the trainer prints",
            )
        )
        return True

    def _counter(
        self, line: str, number_: int, sink: Sink
    ) -> tuple[float | None, float | None, float | None]:
        """(step, total, step time) of the line's counter, if it has one."""
        m = _METRIC_LOGGER.search(line)
        if m is not None:
            epoch, n, total = int(m.group("epoch")), int(m.group("n")), int(m.group("total"))
            if self.first_epoch is None:
                self.first_epoch = epoch
            if epoch != self.epoch:
                if self.totals and epoch not in self.totals and len(self.totals) == 1:
                    sink.event(EventKind.steps_total, number_, value=NAN)
                self.epoch = epoch
            self.totals[epoch] = total
            offset = sum(self.totals.get(e, total) for e in range(self.first_epoch, epoch))
            t = _LOGGER_TIME.search(line)
            return (
                float(offset + n),
                float(total) if len(self.totals) == 1 else NAN,
                None if t is None else number(t.group("v")),
            )
        m = _LITGPT.search(line) or _STEP.search(line)
        if m is None:
            return None, None, None
        planned = m.groupdict().get("total")
        return float(m.group("n")), None if planned is None else float(planned), None
