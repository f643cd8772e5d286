"""The answer-keyed corpus of real training-log excerpts (tests/events/logs/corpus): read each
file as `trncost trial import` does and score the figures against the key.

`figures_of(name, data)` reads one excerpt into the eleven figures of the key (steps done and
total, elapsed seconds, throughput with its unit, global batch size, sequence length, compile
seconds, compile cache, evaluation seconds, completed, final loss) from the reader's own
reading (`Timeline.reading()`). `score()` compares them field by field with the tolerances
below. Run as a script (`python -m tests.support.log_corpus`) it prints the share read right,
per format: the figures quoted in the closing note of issue 24 ("before" was measured by
running this module against the `one-path` branch's layer, where `Timeline.reading` does not
exist: `_figures_before` reads the same eleven figures from that Timeline's own attributes).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "events" / "logs" / "corpus"
FIELDS = (
    "steps_done",
    "steps_total",
    "elapsed_s",
    "throughput",
    "global_batch_size",
    "seq_length",
    "compile_s",
    "compile_cache",
    "eval_s",
    "completed",
    "final_loss",
)

# Where the key and the reader disagree for a stated reason, the reader's value is checked
# instead of the key's (never silently: each entry says why the key is ambiguous, and the
# corpus test prints them). {file: {field: (value read, reason)}}
_TIMED = (
    "the text times {n} compiles from `No candidate found` to `Exiting with a successfully "
    "compiled graph` ({spans}); the key leaves compile_s null (the compiles before the excerpt "
    "are not in it), the reader gives the seconds the text shows"
)
_NO_TOTAL = (
    "no total and no end line in the text: the reader says unknown, as the key itself does for "
    "torchtune's and DeepSpeed's step lines and the torch-neuronx LOG lines; the key says false"
)
_NPC_TOTALS = (
    "`Total successful compilations: {n}` says {n} graphs were compiled (an all-cached run "
    "prints `Total graphs: 0`, as bert-jp-npc-torchrun-all-cached shows): a miss; the key "
    "leaves it null"
)
AMBIGUOUS: dict[str, dict[str, tuple[Any, str]]] = {
    "hf_trainer/trn1-bert-base-cased-mrpc-compile-mid-training.log": {
        "compile_s": (624.0, _TIMED.format(n=4, spans="318 + 2.4 + 2.4 + 301 s")),
    },
    "hf_trainer/trn1-gpt2-clm-torchrun-eval-compile.log": {
        "compile_s": (
            3588.0,
            "the key spans the first compile's start to the last one's end (3592.6 s), "
            "including 4.9 s between two compiles (10:34:48 → 10:34:53) when nothing compiled; "
            "the reader adds the four timed compiles (3588.0 s)",
        ),
    },
    "optimum_neuron/sagemaker-trn1-roberta-optimum-neuron-stopped-at-500.log": {
        "compile_s": (4.0, _TIMED.format(n=4, spans="2.0 + 1.0 + 1.0 + 0.0 s")),
        "eval_s": (
            9.9125,
            "line 907 prints the evaluation's dict with eval_runtime 9.9125: the evaluation "
            "after step 500 finished inside the excerpt (the key's note says it did not)",
        ),
    },
    "neuron_parallel_compile/nxdt-llama3-70b-npc-totals.log": {
        "compile_cache": ("miss", _NPC_TOTALS.format(n=36)),
    },
    "neuron_parallel_compile/nxdt-llama3-8b-dpo-npc-totals.log": {
        "compile_cache": ("miss", _NPC_TOTALS.format(n=32)),
    },
    "neuron_parallel_compile/nxdt-llama3-8b-sft-npc-totals-legacy-tag.log": {
        "compile_cache": ("miss", _NPC_TOTALS.format(n=22)),
    },
    "other/keys-values-issue97-litgpt-style-iter-lines.log": {"completed": (None, _NO_TOTAL)},
    "other/torchtitan-pr1287-rank0-prefix-gc-profiler.log": {"completed": (None, _NO_TOTAL)},
    "other/torchtitan-pr2389-unprefixed-rank-duplicates.log": {"completed": (None, _NO_TOTAL)},
    "other/llama2-accessory-issue48-metric-logger-total-time.log": {
        "steps_done": (
            1534,
            "two epochs in view (epoch 0 ends at 1500/1504, epoch 1 reaches 30/1504): the "
            "reader counts batches from the first epoch it shows (1504 + 30), as the key does "
            "for the Lightning log showing epochs 0 and 1 (sagemaker-workshop: 2 + 0); the key "
            "leaves it null",
        ),
        "completed": (
            None,
            "with a second epoch in view the bar's total is an epoch's, not the run's: unknown "
            "(the key says null for the same shape in sagemaker-workshop), the key says false",
        ),
    },
}


def manifest() -> list[dict[str, Any]]:
    return json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))


def figures_of(name: str, data: bytes) -> dict[str, Any]:
    """The eleven figures one file yields (all None when it is not a log trncost reads)."""
    from trncost.errors import LogFormatError
    from trncost.metrics.logs import FORMATS
    from trncost.metrics.logs.scan import Reader
    from trncost.metrics.logs.timeline import Timeline

    tl = Timeline()
    try:
        Reader(tl, FORMATS).read_bytes(name, data)
    except LogFormatError:
        return dict.fromkeys(FIELDS)
    if hasattr(tl, "reading"):
        return tl.reading().values()
    return _figures_before(tl)


def _figures_before(tl: Any) -> dict[str, Any]:  # pragma: no cover - the one-path layer only
    """The same figures from the one-path Timeline (no reading of its own): its largest step,
    its runtime or bar clock, the last minute's mean rate, its batch and sequence length,
    the sum of its compile spans, its cache counters, its end flag and last minute's loss."""
    last = tl.bins[max(tl.bins)] if tl.bins else None
    throughput = None
    if tl.summary_sps is not None:
        throughput = {"value": tl.summary_sps, "unit": "samples/s"}
    elif last is not None and last.sps_n:
        throughput = {"value": last.sps_sum / last.sps_n, "unit": "samples/s"}
    elif last is not None and last.st_n:
        throughput = {"value": last.st_n / last.st_sum, "unit": "it/s"}
    elapsed = tl.runtime_s
    if elapsed is None and tl.mode == "elapsed":
        elapsed = tl.t_last
    loss = None
    if last is not None and last.loss_n:
        loss = last.loss_sum / last.loss_n
    elif tl.final_loss is not None:
        loss = tl.final_loss
    return {
        "steps_done": tl.max_step,
        "steps_total": None,
        "elapsed_s": elapsed,
        "throughput": throughput,
        "global_batch_size": tl.global_batch,
        "seq_length": tl.seq_length,
        "compile_s": sum(tl.compile_s) if tl.compile_s else None,
        "compile_cache": "miss" if tl.compile_misses else ("hit" if tl.compile_hits else None),
        "eval_s": None,
        "completed": True if tl.ended else (False if tl.steps_seen else None),
        "final_loss": loss,
    }


# -- scoring ------------------------------------------------------------------------------------
def _close(want: float, got: Any, rel: float, abs_: float = 0.0) -> bool:
    if not isinstance(got, int | float) or isinstance(got, bool) or not math.isfinite(got):
        return False
    return abs(got - want) <= max(abs(want) * rel, abs_)


UNITS = {"it/s", "samples/s", "seq/s", "tokens/s"}


def same(field: str, want: Any, got: Any) -> bool:
    """One field read right: counts exact, times within a second (Neuron's timestamps are
    good to about a second), rates within 0.5 % (the key rounds 1/s-per-it), losses to 1e-3."""
    if want is None or got is None:
        return want is None and got is None
    if field in ("steps_done", "steps_total", "global_batch_size", "seq_length"):
        return _close(float(want), got, 0.0, 1e-9)
    if field in ("elapsed_s", "eval_s"):
        return _close(float(want), got, 1e-4, 1.0)
    if field == "compile_s":
        return _close(float(want), got, 1e-3, 2.0)
    if field == "throughput":
        if not isinstance(got, Mapping):
            return False
        return got.get("unit") == want["unit"] and _close(want["value"], got.get("value"), 5e-3)
    if field == "final_loss":
        return _close(float(want), got, 1e-3, 1e-4)
    return bool(want == got)


def expected_of(entry: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The key of one excerpt with its declared ambiguities applied, and their reasons."""
    want = dict(entry["expected"])
    reasons: dict[str, str] = {}
    for field, (value, reason) in AMBIGUOUS.get(entry["file"], {}).items():
        want[field] = value
        reasons[field] = reason
    return want, reasons


def wrong_fields(want: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    return [f for f in FIELDS if not same(f, want[f], got.get(f))]


def score(strict: bool = False) -> dict[str, Any]:
    """Every excerpt read and scored: per format (files, right) and the wrong fields."""
    per_format: Counter[str] = Counter()
    right: Counter[str] = Counter()
    fields_right: Counter[str] = Counter()
    wrong: dict[str, dict[str, tuple[Any, Any]]] = {}
    for entry in manifest():
        data = (CORPUS / entry["file"]).read_bytes()
        got = figures_of(Path(entry["file"]).name, data)
        want = entry["expected"] if strict else expected_of(entry)[0]
        bad = wrong_fields(want, got)
        per_format[entry["format"]] += 1
        fields_right.update(f for f in FIELDS if f not in bad)
        if bad:
            wrong[entry["file"]] = {f: (want[f], got.get(f)) for f in bad}
        else:
            right[entry["format"]] += 1
    return {
        "files": sum(per_format.values()),
        "right": sum(right.values()),
        "per_format": {k: (right[k], v) for k, v in sorted(per_format.items())},
        "fields_right": dict(fields_right),
        "wrong": wrong,
    }


def main() -> None:  # pragma: no cover - prints the figures of the closing note
    for strict in (False, True):
        s = score(strict)
        label = "key as written" if strict else "key with the declared ambiguities"
        print(f"{s['right']}/{s['files']} excerpts read right ({label})")
        for fmt, (ok, n) in s["per_format"].items():
            print(f"  {fmt:24s} {ok:3d}/{n}")
        total = s["files"]
        print(
            "  fields: " + ", ".join(f"{f} {s['fields_right'].get(f, 0)}/{total}" for f in FIELDS)
        )
    for file, bad in score()["wrong"].items():
        print(
            f"WRONG {file}: " + "; ".join(f"{f} key={w!r} read={g!r}" for f, (w, g) in bad.items())
        )


if __name__ == "__main__":  # pragma: no cover
    main()
