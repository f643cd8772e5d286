"""Estimate request files: a workload, its trials, a price snapshot, shared assumptions and
one or more candidates. Parts may be inline or relative paths to JSON files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from trncost.model import Assumptions, Candidate, EstimateInput, PriceSnapshot, TrialRun, Workload
from trncost.model.common import DomainModel


class CandidatePlan(DomainModel):
    candidate: Candidate
    assumptions: dict[str, Any] = Field(
        default_factory=dict, description="overrides the shared assumptions for this candidate"
    )


class EstimateFile(DomainModel):
    workload: Workload
    trials: list[TrialRun]
    prices: PriceSnapshot
    assumptions: dict[str, Any] = Field(default_factory=dict)
    candidates: list[CandidatePlan] = Field(min_length=1)

    def inputs(self) -> list[EstimateInput]:
        return [
            EstimateInput(
                workload=self.workload,
                candidate=plan.candidate,
                trials=self.trials,
                prices=self.prices,
                assumptions=Assumptions.model_validate({**self.assumptions, **plan.assumptions}),
            )
            for plan in self.candidates
        ]


class RequestFileError(ValueError):
    """A request file that cannot be read or does not validate; the message names the field."""


def load_estimate_file(path: str | Path) -> EstimateFile:
    path = Path(path)
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise RequestFileError(f"{path}: expected a JSON object at the top level")
    for part in ("workload", "trials", "prices"):
        if isinstance(raw.get(part), str):
            raw[part] = _read_json(path.parent / raw[part])
    try:
        return EstimateFile.model_validate(raw)
    except ValidationError as exc:
        raise RequestFileError(f"{path}: {format_validation_error(exc)}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RequestFileError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestFileError(f"{path}: not valid UTF-8 JSON ({exc})") from None


def format_validation_error(exc: ValidationError) -> str:
    """One line per problem, each naming the field by its dotted path."""
    lines = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"{where}: {err['msg']}")
    return "; ".join(lines)
