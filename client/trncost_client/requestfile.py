"""Estimate request files: a workload, its trials, a price snapshot, shared assumptions and
one or more candidates. Parts may be inline or relative paths to JSON files.

Prices read from a file are never `official`: only trncost's own live query makes an official
price. A saved Price List file becomes a `saved_file` snapshot (supplied by `local`); a price
snapshot written out to a file (`trncost prices latest --json`) keeps what it says only up to
`saved_file` (an `example` file stays `example`), because the file may have been edited."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, TypeAdapter, ValidationError

from trncost.errors import (
    InvalidInput,
    PriceListItemError,
    RequestFileError,
    format_validation_error,
)
from trncost.model import Assumptions, Candidate, EstimateInput, PriceSnapshot, TrialRun, Workload
from trncost.model.basis import PriceBasis, SavedFileOrigin, basis_of_source
from trncost.model.catalog import Catalog
from trncost.model.common import DomainModel
from trncost.model.price import PriceKey
from trncost.pricing.names import KnownNames
from trncost.services.snapshots import LOCAL_CALLER, file_sha256, snapshot_from_saved


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
                # key by key: the candidate's keys replace the shared ones (checked merged)
                assumptions=Assumptions.model_validate({**self.assumptions, **plan.assumptions}),
                assumption_sources={
                    **{k: "shared" for k in self.assumptions},
                    **{k: "candidate" for k in plan.assumptions},
                },
            )
            for plan in self.candidates
        ]


def load_estimate_file(path: str | Path, names: KnownNames | None = None) -> EstimateFile:
    """The request file at `path`; with `names`, every instance type and region it names must
    be one AWS knows (or the stage catalog lists)."""
    request = _load(Path(path))
    if names is not None:
        try:
            for i, plan in enumerate(request.candidates):
                names.check_candidate(plan.candidate, f"candidates.{i}.candidate")
            for i, inp in enumerate(request.inputs()):
                names.check_assumptions(inp.assumptions, f"candidates.{i}.assumptions")
        except InvalidInput as exc:
            raise RequestFileError(f"{path}: {exc}") from None
    return request


def _load(path: Path) -> EstimateFile:
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise RequestFileError(f"{path}: expected a JSON object at the top level")
    for part in ("workload", "trials", "prices"):
        if isinstance(raw.get(part), str):
            raw[part] = _read_json(path.parent / raw[part])
    try:
        if _is_saved_price_list(raw.get("prices")):
            raw["prices"] = _snapshot_from_saved(raw, path)
        elif isinstance(raw.get("prices"), dict):
            raw["prices"] = _at_most_saved_file(raw["prices"], path)
        return EstimateFile.model_validate(raw)
    except ValidationError as exc:
        raise RequestFileError(f"{path}: {format_validation_error(exc)}") from None
    except PriceListItemError as exc:
        raise RequestFileError(f"{path}: prices: {exc.reason}") from None


def _is_saved_price_list(prices: Any) -> bool:
    return isinstance(prices, list) or (
        isinstance(prices, dict) and ("PriceList" in prices or "products" in prices)
    )


def _at_most_saved_file(prices: dict[str, Any], path: Path) -> dict[str, Any]:
    """A price snapshot read from a file, its basis capped at saved_file: a file that says
    its prices are official becomes a saved file (its sha256, supplied by `local`)."""
    source = str(prices.get("source", ""))
    if basis_of_source(source) != PriceBasis.official:
        return prices
    now = datetime.now(UTC).isoformat()
    origin = SavedFileOrigin(
        sha256=file_sha256(prices),
        supplied_by=LOCAL_CALLER,
        supplied_at=now,
        note=f"a price snapshot read from {path.name}; it says source {source}",
    ).model_dump(mode="json")

    def saved(part: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in part.items() if k != "basis"}
        return {**out, "source": "saved_price_list_file", "origin": origin}

    quotes = prices.get("quotes")
    capped = saved(prices)
    if isinstance(quotes, list):
        capped["quotes"] = [saved(q) if isinstance(q, dict) else q for q in quotes]
    return capped


def _snapshot_from_saved(raw: dict[str, Any], path: Path) -> PriceSnapshot:
    """Price the request's instance types and regions from a saved Price List file."""
    plans = TypeAdapter(list[CandidatePlan]).validate_python(raw.get("candidates") or [])
    trials = TypeAdapter(list[TrialRun]).validate_python(raw.get("trials") or [])
    machines = [p.candidate for p in plans] + [t.candidate for t in trials]
    # SageMaker machines are priced as their `ml.` type (the AmazonSageMaker key's item)
    types = {
        PriceKey.for_instance(m.instance_type, m.region, platform=m.platform).item for m in machines
    }
    regions = {m.region for m in machines}
    preps = [p.assumptions.get("data_preparation") for p in plans]
    preps.append((raw.get("assumptions") or {}).get("data_preparation"))
    types |= {d["instance_type"] for d in preps if isinstance(d, dict) and "instance_type" in d}
    if not types or not regions:
        raise PriceListItemError("a saved Price List needs candidates to know what to price")
    catalog = Catalog(instance_types=sorted(types), regions=sorted(regions))
    return snapshot_from_saved(
        raw["prices"],
        catalog,
        datetime.now(UTC),
        note=f"built from the saved Price List file of {path.name}",
        supplied_by=LOCAL_CALLER,
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RequestFileError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestFileError(f"{path}: not valid UTF-8 JSON ({exc})") from None
