"""`trial import --explain`: for each figure, the lines it came from and the rule that read
them; which lines were skipped and why. Pure.

Two kinds of figures:

- **as the log states them** (`Timeline.reading()`, `metrics.logs.reading`): the last step
  counter and its total, the stated elapsed time, the log's own rate, batch and sequence
  length, compile and evaluation seconds, cache hit or miss, completed, the last loss;
- **of the record** (`trial.provenance`): work, steady throughput, the wall's parts, loss
  finiteness, failures, ... — each with the lines its series was read from and the rule
  (`metrics.record`'s) that made it.

Skipped lines: every line of a format's that was deliberately not used, by reason (another
rank's copy, an evaluation's progress bar, neuron_parallel_compile's trial run, a step already
read, a line holding a format's keywords that is not one of its lines), and per file the lines
that held no format's keywords at all (noise: NCCL, warnings, configuration dumps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trncost.metrics.logs.scan import FileResult
from trncost.metrics.logs.timeline import Timeline
from trncost.model.trial import TrialRun

RECORD_RULES = {
    "work.done": "the step counter's differences (a progress bar's count from the start), "
    "consumed samples' differences, else steps × the global batch size; tokens × the "
    "sequence length",
    "work.quality_meeting": "work done, less work redone after a restart or done after the "
    "loss went non-finite",
    "steady_throughput_samples": "the rate per minute of the clock after the warm-up: the line's "
    "own rate, else the global batch / step time, else work over time between lines",
    "wall.steady_s": "the clock (the lines' timestamps, a bar's elapsed time, the sum of step "
    "times, or the log's own runtime) less its measured parts",
    "wall.compile_s": "per file its compile phase (neuron_parallel_compile) or its timed "
    "compiles; across files the longest (they compile in parallel)",
    "wall.compile_cache_hit": "false when any graph was compiled, true when all were cached",
    "wall.evaluation_s": "each evaluation's own seconds, once (a compile inside a final "
    "evaluation is the compile's)",
    "wall.checkpoint_save_s": "from `saving checkpoint` to `successfully saved checkpoint`",
    "quality.value": "the last value of the gate's evaluation metric (or the one mapped to it)",
    "quality.loss_finite": "every training loss read was finite",
    "loss": "every training loss read was finite",
    "reliability.failures": "a step counter going back, or a resume after training began",
    "reliability.errors": "failed compiles and errors the process printed",
    "checkpointing.saves": "`saving checkpoint` / `Saving model checkpoint to` lines",
}
NOISE = "held none of the formats' keywords (NCCL, warnings, configuration, other output)"


def _value(trial: TrialRun, figure: str) -> Any:
    obj: Any = trial
    for part in figure.split("."):
        obj = getattr(obj, part, None)
    if isinstance(obj, list):
        return f"{len(obj)} samples"
    return obj


def explanation(timeline: Timeline, files: Sequence[FileResult], trial: TrialRun) -> dict[str, Any]:
    """The figures with their lines and rules, and the skipped lines with their reasons."""
    reading = timeline.reading()
    record = []
    for figure in sorted(trial.provenance):
        for where in trial.provenance[figure].measured_in:
            record.append(
                {
                    "figure": figure,
                    "value": _value(trial, figure),
                    "file": where.file,
                    "format": where.format,
                    "lines": [[r.first, r.last] for r in where.lines],
                    "rule": RECORD_RULES.get(figure, "read by the record's rules"),
                }
            )
    skipped = list(reading.skipped)
    for f in files:
        candidates = sum(v.candidate_lines for v in f.verdicts)
        noise = max(f.lines - max(candidates, f.matched_lines), 0)
        if noise:
            skipped.append({"file": f.file, "why": NOISE, "lines": [], "count": noise})
    return {
        "figures": [fig.as_dict() for fig in reading.figures.values()],
        "not_stated": reading.as_dict()["not_stated"],
        "record": record,
        "skipped": skipped,
        "notes": reading.notes,
    }


def explanation_text(explain: dict[str, Any]) -> list[str]:
    """The explanation as lines of text (the CLI prints them)."""

    def where(item: dict[str, Any]) -> str:
        ranges = item.get("lines") or []
        shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:6])
        more = f" (+{len(ranges) - 6} ranges)" if len(ranges) > 6 else ""
        return f"{item.get('file')} line(s) {shown}{more}" if shown else str(item.get("file"))

    out = ["as the log states them:"]
    for fig in explain["figures"]:
        unit = f" {fig['unit']}" if fig.get("unit") else ""
        out.append(f"  {fig['figure']:18s} {fig['value']!s}{unit}")
        out.append(f"      from {where(fig)}: {fig['rule']}")
    if explain["not_stated"]:
        out.append("  not stated: " + ", ".join(explain["not_stated"]))
    out.append("the record:")
    for item in explain["record"]:
        out.append(f"  {item['figure']:26s} {item['value']!s}")
        out.append(f"      from {where(item)} [{item['format']}]: {item['rule']}")
    out.append("skipped:")
    for item in explain["skipped"]:
        lines = where(item) if item.get("lines") else item["file"]
        out.append(f"  {item['count']} line(s) of {lines}: {item['why']}")
    out += [f"note: {n}" for n in explain["notes"]]
    return out
