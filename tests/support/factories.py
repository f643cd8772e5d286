"""Builders for domain objects in tests: explicit values, small defaults, no magic."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from trncost.model import (
    Assumptions,
    Candidate,
    EstimateInput,
    PriceKey,
    PriceQuote,
    PriceSnapshot,
    PriceTier,
    TrialRun,
    UsageItem,
    Workload,
)

REGION = "us-east-1"
SNAPSHOT = "snap-test-1"

# Real Price List tier shapes (us-east-1): S3 Standard per GB-month by monthly volume,
# data transfer out to the internet per GB by monthly volume, custom metrics per metric-month.
S3_TIERS = [(0, 51200, "0.023"), (51200, 512000, "0.022"), (512000, None, "0.021")]
OUT_TIERS = [
    (0, 10240, "0.09"),
    (10240, 51200, "0.085"),
    (51200, 153600, "0.07"),
    (153600, None, "0.05"),
]
METRIC_TIERS = [
    (0, 10000, "0.30"),
    (10000, 250000, "0.10"),
    (250000, 1000000, "0.05"),
    (1000000, None, "0.02"),
]


def workload(**over: Any) -> Workload:
    data: dict[str, Any] = {
        "workload_id": "wl-1",
        "model": {"name": "llama-3.1-8b", "parameters": 8.0e9},
        "code_version": "git:abc123",
        "dataset_id": "ds-1",
        "target": {"unit": "tokens", "amount": 7.2e9},
        "quality_gate": {"metric": "eval_loss", "threshold": 2.0, "direction": "at_most"},
        "tokens_per_sample": 4096,
    }
    data.update(over)
    return Workload.model_validate(data)


def candidate(instance_type: str = "trn2.48xlarge", count: int = 2, **over: Any) -> Candidate:
    data = {"instance_type": instance_type, "instance_count": count, "region": REGION}
    data.update(over)
    return Candidate.model_validate(data)


def trial(
    trial_id: str = "t-1",
    *,
    instance_type: str = "trn2.48xlarge",
    count: int = 2,
    phase: str = "baseline",
    status: str = "completed",
    work: float | dict[str, Any] = 3.6e8,
    quality_work: float | None = None,
    wall: dict[str, Any] | None = None,
    scope: dict[str, bool] | None = None,
    **over: Any,
) -> TrialRun:
    data: dict[str, Any] = {
        "trial_id": trial_id,
        "workload_id": "wl-1",
        "phase": phase,
        "status": status,
        "candidate": {"instance_type": instance_type, "instance_count": count, "region": REGION},
        "timing_scope": scope
        or {"compile": True, "data_loading": True, "checkpoints": True, "evaluation": True},
        "work": work
        if isinstance(work, dict)
        else {
            "unit": "tokens",
            "done": work,
            "quality_meeting": work if quality_work is None else quality_work,
        },
        "wall": wall or {"steady_s": 3600.0},
        "code_version": "git:abc123",
        "dataset_id": "ds-1",
    }
    data.update(over)
    return TrialRun.model_validate(data)


def quote(
    key: PriceKey, tiers: list[tuple[float, float | None, str]], unit: str, **over: Any
) -> PriceQuote:
    data: dict[str, Any] = {
        "key": key,
        "status": "official",
        "unit": unit,
        "tiers": [
            PriceTier(
                begin=Decimal(str(b)),
                end=None if e is None else Decimal(str(e)),
                usd=Decimal(u),
                rate_code=f"SKU{i}.JRTCKXETXF.6YS6EN2CT7",
            )
            for i, (b, e, u) in enumerate(tiers)
        ],
        "sku": f"SKU-{key.item}",
        "snapshot_id": SNAPSHOT,
        "effective_date": "2026-11-01T00:00:00Z",
        "publication_date": "2026-11-01T00:00:00Z",
    }
    data.update(over)
    return PriceQuote.model_validate(data)


def instance_quote(instance_type: str, usd: str, **over: Any) -> PriceQuote:
    return quote(PriceKey.for_instance(instance_type, REGION), [(0, None, usd)], "Hrs", **over)


def usage_quotes() -> list[PriceQuote]:
    u = lambda item: PriceKey.for_usage(item, REGION)  # noqa: E731
    return [
        quote(u(UsageItem.ebs_gp3), [(0, None, "0.08")], "GB-Mo"),
        quote(u(UsageItem.s3_standard), S3_TIERS, "GB-Mo"),
        quote(u(UsageItem.logs_ingestion), [(0, None, "0.50")], "GB"),
        quote(u(UsageItem.logs_storage), [(0, None, "0.03")], "GB-Mo"),
        quote(u(UsageItem.custom_metrics), METRIC_TIERS, "Metrics"),
        quote(u(UsageItem.transfer_out), OUT_TIERS, "GB"),
        quote(u(UsageItem.transfer_inter_region), [(0, None, "0.02")], "GB"),
    ]


def snapshot(*quotes: PriceQuote, usage: bool = True) -> PriceSnapshot:
    return PriceSnapshot(
        snapshot_id=SNAPSHOT,
        taken_at="2026-11-01T00:00:00Z",
        source="query_api",
        publication_dates={"AmazonEC2": "2026-11-01T00:00:00Z"},
        quotes=[*quotes, *(usage_quotes() if usage else [])],
    )


def inputs(
    *,
    wl: Workload | None = None,
    cand: Candidate | None = None,
    trials: list[TrialRun],
    prices: PriceSnapshot,
    assumptions: dict[str, Any] | None = None,
) -> EstimateInput:
    return EstimateInput(
        workload=wl or workload(),
        candidate=cand or candidate(),
        trials=trials,
        prices=prices,
        assumptions=Assumptions.model_validate(assumptions or {}),
    )
