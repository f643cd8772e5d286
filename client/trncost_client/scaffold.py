"""`trncost init DIR`: a workload's request files to fill in, every field documented.

JSON has no comments, and trncost's loader reads plain JSON only (a comment would be an error
naming the line). So the files are plain JSON that already validate and answer (`trncost
estimate DIR/estimate.json` runs as written), with README.md beside them: every field of every
file, its type, whether it is required, its default and what it means, generated from the very
models the loader validates with, so the reference never drifts from what is accepted.

    DIR/estimate.json   the request: shared assumptions, candidates; points at the three below
    DIR/workload.json   the training job to cost: model, target, quality gate, data, code
    DIR/trials.json     trial records (a fit and a baseline run to start from)
    DIR/prices.json     the bundled example price file (basis example: never budget on it)
    DIR/README.md       what to change, and every field of each file
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from trncost.errors import ClientError

EXAMPLE_DIR = Path(__file__).resolve().parent.parent.parent / "examples" / "llama-8b"
FILES = ("estimate.json", "workload.json", "trials.json", "prices.json", "README.md")
WORKLOAD_ID = "my-workload"
MAX_DEPTH = 4


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " | ".join(names) + (" | null" if type(None) in args else "")
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (list, tuple, set):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"object of {_type_name(args[1])}" if len(args) == 2 else "object"
    name = getattr(annotation, "__name__", str(annotation))
    return {"str": "text", "float": "number", "int": "integer", "bool": "true | false",
            "Decimal": "number (USD, as text or number)"}.get(name, name)  # fmt: skip


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (itself, list items, union members)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models_in(a)]


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "**required**"
    if info.default_factory is not None:
        return "empty" if info.default_factory in (list, dict) else "see below"
    if info.default is PydanticUndefined or info.default is None:
        return "null"
    value = getattr(info.default, "value", info.default)
    if isinstance(value, bool):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


# What a field means where its model says nothing, by its path (the models' own descriptions
# come first). `.value` and `.note` of a stated assumption are said once, in `_note`.
NOTES: dict[str, str] = {
    "workload": "the workload: inline, or the path of workload.json (relative to this file)",
    "trials": "the trial records: inline, or the path of trials.json",
    "prices": "a price snapshot or a saved Price List file: inline, or the path of prices.json",
    "candidates": "what to estimate: one entry per candidate (at most 12)",
    "workload_id": "your id for this training job (letters, digits, . _ : + -)",
    "name": "a name people read in the reports",
    "model": "the model trained",
    "model.name": "the model's name",
    "code_version": "the training code's version (e.g. a git commit); trials of another version "
    "are excluded from the figures",
    "dataset_id": "the dataset's id (e.g. its S3 URI and snapshot date); trials on another "
    "dataset are excluded from the figures",
    "target": "the amount of work one completed training reaches",
    "target.unit": "tokens, samples or steps",
    "target.amount": "how many of that unit",
    "quality_gate": "what the trained model must reach for the work to count",
    "quality_gate.metric": "the evaluation metric's name, as the logs print it (e.g. eval_loss)",
    "quality_gate.threshold": "the value it must reach",
    "quality_gate.direction": "at_most (a loss) or at_least (an accuracy)",
    "tokens_per_sample": "tokens in one sample (converts samples to tokens)",
    "timing_scope.compile": "the clock includes compilation",
    "timing_scope.data_loading": "the clock includes waiting for data",
    "timing_scope.checkpoints": "the clock includes checkpoint saves",
    "timing_scope.evaluation": "the clock includes evaluation",
    "trial_id": "this run's id, unique within its workload",
    "phase": "fit (does it run at all), baseline (repeatable throughput) or target "
    "(near-production scale, data and checkpointing)",
    "status": "completed, failed, diverged or stopped",
    "candidate": "where it runs: instance type, count, region, platform, software",
    "candidate.instance_type": "an EC2 instance type (ml.… on SageMaker)",
    "candidate.instance_count": "how many instances",
    "candidate.region": "the AWS region (its prices are that region's)",
    "candidate.purchase_option": "on_demand or capacity_block",
    "candidate.platform": "ec2 or sagemaker",
    "candidate.parallelism": "how the model is split across devices",
    "candidate.parallelism.tensor": "tensor-parallel degree",
    "candidate.parallelism.pipeline": "pipeline-parallel degree",
    "candidate.parallelism.data": "data-parallel degree (null: whatever is left)",
    "candidate.parallelism.expert": "expert-parallel degree (mixture of experts)",
    "candidate.parallelism.sequence": "sequence parallelism on",
    "candidate.framework": "the training framework (e.g. torch-neuronx, pytorch)",
    "candidate.framework_version": "its version",
    "candidate.neuron_sdk_version": "the Neuron SDK's version (Trainium)",
    "timing_scope": "what this trial's clock includes (trials on another clock than the "
    "workload's are excluded)",
    "work": "the work the run did",
    "work.unit": "tokens, samples or steps",
    "work.done": "all the work done",
    "wall": "end-to-end wall time, split into its parts; a part not measured is left out (never 0)",
    "wall.compile_s": "seconds compiling",
    "wall.compile_cache_hit": "the compile cache was warm",
    "wall.warmup_s": "seconds of warm-up before the steady state",
    "wall.steady_s": "seconds of steady training",
    "wall.data_wait_s": "seconds waiting for data",
    "wall.checkpoint_save_s": "seconds saving checkpoints",
    "wall.checkpoint_restore_s": "seconds restoring a checkpoint",
    "wall.evaluation_s": "seconds evaluating",
    "wall.restart_s": "seconds restarting after failures",
    "wall.other_s": "other seconds (setup outside the training loop)",
    "utilization": "how busy the accelerators were",
    "utilization.device_memory_gb": "device memory used, GB",
    "reliability": "errors, failures and reruns during the trial",
    "reliability.errors": "errors logged",
    "reliability.unsupported_ops": "operators the accelerator's compiler could not run",
    "checkpointing": "checkpoints the trial saved",
    "checkpointing.saves": "how many",
    "checkpointing.size_gb": "one checkpoint's size, GB",
    "checkpointing.restore_verified": "a restore from one was tried and worked",
    "quality": "the quality the run reached",
    "quality.metric": "the metric's name (the workload's gate metric)",
    "quality.value": "its value at the end of the run",
    "usage": "supporting resources the trial used (scaled to the target)",
    "usage.transfer_out_gb": "GB sent out to the internet",
    "usage.transfer_inter_region_gb": "GB sent to other regions",
    "usage.log_ingest_gb": "GB of CloudWatch Logs written",
    "usage.custom_metrics": "CloudWatch custom metrics published",
    "framework_version": "the framework's version",
    "neuron_sdk_version": "the Neuron SDK's version",
    "provenance": "filled by trncost's importers (where each figure was read); leave it out "
    "in a record you write by hand",
    "retracted": "set by trncost when the record is retracted; never part of a record you send",
    "assumptions.data_preparation": "preprocessing compute (tokenization, …)",
    "data_preparation": "preprocessing compute (tokenization, …)",
    "data_preparation.instance_type": "the instance type the preprocessing runs on",
    "data_preparation.instance_hours": "its instance-hours",
    "price_overrides": "your own rate for a price key (a negotiated discount, a what-if): "
    "labelled assumed, never mixed into official",
    "price_overrides[].key": "the price it replaces",
    "price_overrides[].key.service": "the Price List service code (e.g. AmazonEC2)",
    "price_overrides[].key.region": "the region",
    "price_overrides[].key.item": "the item (an instance type, ebs:gp3, …)",
    "price_overrides[].key.purchase_option": "on_demand, capacity_block, …",
    "price_overrides[].usd": "your rate, USD per the key's billing unit",
    "price_overrides[].note": "why (kept with the price in the input table)",
}
SKIP = {"provenance", "retracted"}  # written by trncost: named, not expanded


def _note(path: str) -> str:
    """The description of `path` when its model gives none."""
    bare = path.replace("assumptions.", "", 1) if path.startswith("assumptions.") else path
    if bare.startswith("candidate.") and path.startswith("candidate."):
        bare = path
    for key in (path, bare, bare.split(".", 1)[-1]):
        if key in NOTES:
            return NOTES[key]
    if path.endswith(".value"):
        return "the value you state"
    if path.endswith(".note"):
        return "why (shown beside the figure in the input table)"
    if "." not in bare:  # a stated assumption
        stated = bare.replace("_", " ")
        return (
            f"{stated}, as you state it: `{{value, note}}` (omitted: the trials' measurement, "
            "else trncost's default)"
        )
    return ""


def field_rows(model: type[BaseModel], prefix: str = "", depth: int = 0) -> Iterator[list[str]]:
    """One row per field of `model`, nested models' fields after it (`a.b`, `a[].b`)."""
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        doc = " ".join((info.description or _note(path)).split())
        yield [f"`{path}`", _type_name(info.annotation), _default(info), doc]
        if depth < MAX_DEPTH and name not in SKIP:
            many = typing.get_origin(_unwrap(info.annotation)) in (list, tuple)
            for sub in _models_in(info.annotation):
                yield from field_rows(sub, f"{path}{'[]' if many else ''}.", depth + 1)


def _unwrap(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _unwrap(inner[0]) if len(inner) == 1 else annotation
    return annotation


def reference(title: str, model: type[BaseModel], *, nested: bool = True) -> str:
    rows = "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |"
                     for r in field_rows(model, depth=0 if nested else MAX_DEPTH))  # fmt: skip
    return f"## {title}\n\n| field | type | default | what it is |\n|---|---|---|---|\n{rows}\n"


INTRO = """# {name}: a workload's request files

Made by `trncost init`. The files are plain JSON (trncost reads no comments: a `//` line would
be refused, naming its line), and they already answer as written:

    trncost estimate {name}/estimate.json        # one estimate per candidate
    trncost compare {name}/estimate.json         # ranked, with ranges and the decision

Change, in this order:

1. `workload.json`: your model (`model.parameters`), target (`target.unit`, `target.amount`),
   quality gate, `dataset_id` and `code_version` (trials of another dataset or code version
   are excluded from the figures, with the reason).
2. `trials.json`: your own trial runs (or import them from logs: `trncost trial import`;
   record them in a running trncost with `trncost trial add`). A trial's `workload_id` must be
   the workload's. Wall time is end to end: compile, warm-up, data loading, checkpoints and
   evaluation each in their own field.
3. `estimate.json`: the candidates (instance type, count, region) and the assumptions you state
   (each with a `note` saying why).
4. `prices.json` is the illustrative file bundled with trncost (basis `example`): replace it
   with a Price List file, or estimate against a running trncost, before budgeting.

Every field of each file follows: its type, its default (**required** when it has none) and
what it means. The same reference is in docs/request-files.md.

"""


def _example(name: str) -> Any:
    return json.loads((EXAMPLE_DIR / name).read_text(encoding="utf-8"))


def _documents() -> dict[str, Any]:
    workload = {**_example("workload.json"), "workload_id": WORKLOAD_ID,
                "name": "My model's training run (edit workload.json)"}  # fmt: skip
    trials = [
        {**t, "workload_id": WORKLOAD_ID}
        for t in _example("trials.json")
        if t["candidate"]["instance_type"] == "trn2.48xlarge" and t["phase"] in ("fit", "baseline")
    ][:3]
    request = _example("estimate.json")
    request["candidates"] = [c for c in request["candidates"] if
                             c["candidate"]["instance_type"] == "trn2.48xlarge"]  # fmt: skip
    return {
        "estimate.json": request,
        "workload.json": workload,
        "trials.json": trials,
        "prices.json": _example("prices.json"),
    }


def readme(name: str) -> str:
    from trncost.model import TrialRun, Workload
    from trncost.model.assumptions import PartialAssumptions
    from trncost.model.requests import CandidatePlan, RequestFile

    return (
        INTRO.format(name=name)
        + reference("estimate.json (the request file)", RequestFile, nested=False)
        + "\n"
        + reference("estimate.json: each of `candidates`", CandidatePlan)
        + "\n"
        + reference(
            "estimate.json: `assumptions` (shared; a candidate's own replace them)",
            PartialAssumptions,
        )  # fmt: skip
        + "\n"
        + reference("workload.json", Workload)
        + "\n"
        + reference("trials.json: each trial", TrialRun)
    )


def scaffold(directory: Path, *, force: bool = False) -> list[Path]:
    """Write the request files into `directory` (made if missing); ClientError when one is
    there already, unless `force`."""
    existing = [directory / f for f in FILES if (directory / f).exists()]
    if existing and not force:
        names = ", ".join(str(p) for p in existing)
        raise ClientError(f"{names}: already there; pick another folder or pass --force")
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, document in _documents().items():
        path = directory / name
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    path = directory / "README.md"
    path.write_text(readme(directory.name or str(directory)), encoding="utf-8")
    written.append(path)
    return written
