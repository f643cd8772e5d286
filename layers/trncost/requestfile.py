"""Estimate request files: a workload, its trials, a price snapshot, shared assumptions and
one or more candidates. Parts may be inline or relative paths to JSON files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, TypeAdapter, ValidationError

from trncost.errors import PriceListItemError, RequestFileError
from trncost.model import Assumptions, Candidate, EstimateInput, PriceSnapshot, TrialRun, Workload
from trncost.model.common import DomainModel
from trncost.services.snapshots import snapshot_from_saved
from trncost.settings import Catalog


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


def load_estimate_file(path: str | Path) -> EstimateFile:
    path = Path(path)
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise RequestFileError(f"{path}: expected a JSON object at the top level")
    for part in ("workload", "trials", "prices"):
        if isinstance(raw.get(part), str):
            raw[part] = _read_json(path.parent / raw[part])
    try:
        if _is_saved_price_list(raw.get("prices")):
            raw["prices"] = _snapshot_from_saved(raw)
        return EstimateFile.model_validate(raw)
    except ValidationError as exc:
        raise RequestFileError(f"{path}: {format_validation_error(exc)}") from None
    except PriceListItemError as exc:
        raise RequestFileError(f"{path}: prices: {exc.reason}") from None


def _is_saved_price_list(prices: Any) -> bool:
    return isinstance(prices, list) or (
        isinstance(prices, dict) and ("PriceList" in prices or "products" in prices)
    )


def _snapshot_from_saved(raw: dict[str, Any]) -> PriceSnapshot:
    """Price the request's instance types and regions from a saved Price List file."""
    plans = TypeAdapter(list[CandidatePlan]).validate_python(raw.get("candidates") or [])
    trials = TypeAdapter(list[TrialRun]).validate_python(raw.get("trials") or [])
    machines = [p.candidate for p in plans] + [t.candidate for t in trials]
    types = {m.instance_type for m in machines if not m.instance_type.startswith("ml.")}
    regions = {m.region for m in machines}
    preps = [p.assumptions.get("data_preparation") for p in plans]
    preps.append((raw.get("assumptions") or {}).get("data_preparation"))
    types |= {d["instance_type"] for d in preps if isinstance(d, dict) and "instance_type" in d}
    if not types or not regions:
        raise PriceListItemError("a saved Price List needs candidates to know what to price")
    catalog = Catalog(instance_types=sorted(types), regions=sorted(regions))
    return snapshot_from_saved(
        raw["prices"], catalog, datetime.now(UTC), note="built from a saved Price List file"
    )


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
