"""Request files (docs/request-files.md): a workload, its trials, a price snapshot, shared
assumptions and one or more candidates, in one JSON file whose parts may be relative paths to
other JSON files. A request file is loaded into the domain's `RequestFile`
(trncost.model.requests) and held in memory as the evidence and the prices of one workload
(`FileRepository`), so `trncost estimate` and `trncost compare` run the very services the API
runs (`offline_comparisons`): the same name checks, assumption merges, price-override checks,
engine and numbers.

Prices read from a file are never `official`: only trncost's own live query makes an official
price. A saved Price List file becomes a `saved_file` snapshot (supplied by `local`); a price
snapshot written out to a file (`trncost prices latest --json`) keeps what it says only up to
`saved_file` (an `example` file stays `example`), because the file may have been edited."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from trncost.errors import (
    NoPrices,
    NotFound,
    PriceListItemError,
    RequestFileError,
    format_validation_error,
)
from trncost.model import EstimateInput, PriceSnapshot, TrialRun, Workload
from trncost.model.analysis import Credits
from trncost.model.basis import PriceBasis, SavedFileOrigin, basis_of_source
from trncost.model.catalog import Catalog
from trncost.model.price import PriceKey
from trncost.model.requests import CandidatePlan, ComparisonRequest, RequestFile
from trncost.pricing.names import KnownNames, for_catalog
from trncost.services.comparisons import ComparisonService
from trncost.services.snapshots import LOCAL_CALLER, file_sha256, snapshot_from_saved
from trncost_client.files import PRICE_FILE_MAX_BYTES, read_json_file


def load_request_file(path: str | Path) -> RequestFile:
    """The request file at `path` (its parts read relative to it); RequestFileError naming the
    file and the field at fault."""
    return _load(Path(path))


class FileRepository:
    """A request file held in memory as one workload's evidence and prices: what the comparison
    service reads from the stage's records and snapshots (services.comparisons.Evidence and
    Prices), answered from the file."""

    def __init__(self, request: RequestFile) -> None:
        self.request = request

    def workload(self, workload_id: str) -> Workload:
        if workload_id != self.request.workload.workload_id:
            raise NotFound(f"workload {workload_id} not found")
        return self.request.workload

    def all_trials(self, workload_id: str) -> list[TrialRun]:
        self.workload(workload_id)
        return list(self.request.trials)

    def snapshot(self, snapshot_id: str | None) -> PriceSnapshot:
        prices = self.request.prices
        if snapshot_id is not None and snapshot_id != prices.snapshot_id:
            raise NoPrices(f"price snapshot {snapshot_id} not found")
        return prices


def offline_names() -> KnownNames:
    """botocore's names plus the stage catalog: TRNCOST_CATALOG, else the dev stage's (cdk.json,
    the list CDK deploys; it names what botocore does not know yet, e.g. trn3.48xlarge)."""
    from trncost.settings import catalog_from_env
    from trncost_client.local.runtime import default_catalog

    catalog = catalog_from_env() or Catalog.model_validate(default_catalog())
    return for_catalog(catalog)


def offline_comparisons(request: RequestFile, names: KnownNames | None = None) -> ComparisonService:
    """The API's comparison service over the request file held in memory (nothing stored);
    names: what the stage accepts (default: `offline_names()`)."""
    repository = FileRepository(request)
    return ComparisonService(repository, repository, names=names or offline_names())


def comparison_request(
    request: RequestFile,
    *,
    seed: int = 0,
    samples: int = 20_000,
    credits: Credits | None = None,
    source: str | Path = "request file",
) -> ComparisonRequest:
    """The request file's candidates and shared assumptions as the API's comparison request;
    RequestFileError naming `source` and the field (e.g. more candidates than a comparison
    takes, or a seed out of range)."""
    try:
        return ComparisonRequest(
            candidates=request.candidates,
            assumptions=request.assumptions,
            seed=seed,
            samples=samples,
            credits=credits,
        )
    except ValidationError as exc:
        raise RequestFileError(f"{source}: {format_validation_error(exc)}") from None


def request_inputs(request: RequestFile, names: KnownNames | None = None) -> list[EstimateInput]:
    """One estimate input per candidate of a request file, checked and merged by the comparison
    service (what `trncost estimate` and `trncost compare` compute on)."""
    ask = comparison_request(request)
    return offline_comparisons(request, names).prepare(request.workload.workload_id, ask).inputs


def _load(path: Path) -> RequestFile:
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
        return RequestFile.model_validate(raw)
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
    preps = [p.assumptions.data_preparation for p in plans if p.assumptions is not None]
    shared = raw.get("assumptions")
    shared_prep = shared.get("data_preparation") if isinstance(shared, dict) else None
    types |= {d.instance_type for d in preps if d is not None}
    if isinstance(shared_prep, dict) and isinstance(shared_prep.get("instance_type"), str):
        types.add(shared_prep["instance_type"])
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
    # the file or any part of it: the prices part may be a saved Price List file (its cap)
    return read_json_file(path, PRICE_FILE_MAX_BYTES, "request file or part")
