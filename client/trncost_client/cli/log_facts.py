"""`trncost trial import`'s flags for what a log cannot say, and its `--explain` output.

- `--parallelism tp=8,pp=1,dp=4` (also `ep=`, `sp=1`; the long names tensor, pipeline, data,
  expert, sequence): the candidate's parallelism;
- `--precision bf16` (the MFU check's peak), `--neuron-sdk-version 2.20.0`, `--region`;
- `--quality-metric val_loss=eval_loss`: read the log's `val_loss` as the workload's quality
  gate `eval_loss` — stated, never guessed (a log whose evaluations are named otherwise leaves
  quality unmeasured, with a note naming them);
- `--explain`: for each figure, the lines it came from and the rule that read them; the lines
  skipped and why (`trncost.metrics.logs.explain`).

A malformed value is an argparse error (exit 2, one line naming the flag).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from trncost.model.candidate import Parallelism

_KEYS = {
    "tp": "tensor",
    "tensor": "tensor",
    "pp": "pipeline",
    "pipeline": "pipeline",
    "dp": "data",
    "data": "data",
    "ep": "expert",
    "expert": "expert",
    "sp": "sequence",
    "sequence": "sequence",
}


def parallelism(text: str) -> Parallelism:
    """`tp=8,pp=1,dp=4` → Parallelism (an argparse type: a bad part is an ArgumentTypeError)."""
    from pydantic import ValidationError

    from trncost.model.candidate import Parallelism

    values: dict[str, Any] = {}
    for part in text.split(","):
        key, found, value = part.strip().partition("=")
        name = _KEYS.get(key.strip().lower())
        if not found or name is None:
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r}: give KEY=N with KEY one of tp, pp, dp, ep, sp (e.g. "
                "tp=8,pp=1,dp=4)"
            )
        if name in values:
            raise argparse.ArgumentTypeError(f"{key.strip()} given twice")
        value = value.strip()
        if name == "sequence":
            if value.lower() not in ("0", "1", "true", "false"):
                raise argparse.ArgumentTypeError(f"sp={value}: 1/true or 0/false")
            values[name] = value.lower() in ("1", "true")
        elif not value.isdigit():
            raise argparse.ArgumentTypeError(f"{key.strip()}={value}: a whole number ≥ 1")
        else:
            values[name] = int(value)
    try:
        return Parallelism.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise argparse.ArgumentTypeError(f"{where}: {first['msg']}") from None


def quality_metric(text: str) -> tuple[str, str]:
    """`val_loss=eval_loss` → (the log's name, the gate's metric)."""
    log_name, found, gate = text.partition("=")
    if not found or not log_name.strip() or not gate.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r}: give LOG_NAME=GATE_METRIC, e.g. val_loss=eval_loss"
        )
    return log_name.strip(), gate.strip()


def add_arguments(p: argparse.ArgumentParser) -> None:
    from trncost.model.candidate import Precision

    p.add_argument(
        "--parallelism",
        type=parallelism,
        metavar="tp=N,pp=N,dp=N",
        help="the trial's parallel degrees (also ep=N, sp=1): the log does not say",
    )
    p.add_argument(
        "--precision",
        choices=[x.value for x in Precision],
        help="the matrix-math precision the trial ran at (the MFU check's peak)",
    )
    p.add_argument("--neuron-sdk-version", help="the Neuron SDK release, e.g. 2.20.0")
    p.add_argument(
        "--quality-metric",
        type=quality_metric,
        metavar="LOG_NAME=GATE_METRIC",
        help="read the log's evaluation LOG_NAME as the quality gate's GATE_METRIC "
        "(e.g. val_loss=eval_loss): explicit, never guessed",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="for each figure, the lines it came from and the rule that read them; the lines "
        "skipped and why",
    )


def print_explanation(console: Console, explain: dict[str, Any]) -> None:
    from trncost.metrics.logs.explain import explanation_text

    for line in explanation_text(explain):
        console.print(line, markup=False, highlight=False)
