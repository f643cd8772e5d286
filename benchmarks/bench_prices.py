"""Price snapshot figures (issue #3): Price List calls per snapshot, and the time to build a
snapshot of the default catalog over a stubbed Price List client (no AWS, no moto).

The calls must grow with the keys asked for, never with all of EC2: printed for catalogs of
growing size next to the number of keys.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from trncost.model.catalog import Catalog
from trncost.pricing.client import PriceListClient
from trncost.services.snapshots import SnapshotService

ROOT = Path(__file__).resolve().parent.parent
CDK_JSON = ROOT / "cdk.json"
SAVED = ROOT / "tests" / "events" / "pricelist" / "get_products_us_east_1.json"
sys.path.insert(0, str(ROOT))  # the tests package (tests.support), as pytest sees it


class StubPricing:
    """Answers GetProducts like the API would, from saved items, matching the filters."""

    def __init__(self, items: list[str]) -> None:
        from trncost.pricing.catalog import Filter
        from trncost.pricing.parser import parse_item

        self._filter = Filter
        self.items = [(raw, parse_item(raw)) for raw in items]

    def get_products(self, ServiceCode: str, Filters: list[dict[str, str]], **_: Any) -> dict:
        fs = [self._filter(f["Field"], f["Value"], f["Type"]) for f in Filters]
        hits = [
            raw
            for raw, p in self.items
            if p.service_code == ServiceCode and all(f.matches(p) for f in fs)
        ]
        return {"FormatVersion": "aws_v1", "PriceList": hits}

    def get_paginator(self, operation: str) -> Any:
        from tests.support.stubs import paginator_over  # botocore's own paging, over this fake

        return paginator_over(self, "pricing", operation)


class NullStore:
    pass


def default_catalog() -> Catalog:
    stage = json.loads(CDK_JSON.read_text())["context"]["stages"]["dev"]["catalog"]
    return Catalog.model_validate(stage)


def snapshot_once(catalog: Catalog, items: list[str]) -> tuple[int, int, float]:
    client = PriceListClient(client=StubPricing(items))
    svc = SnapshotService(store=NullStore(), price_list=client)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    snap = svc.build_live(catalog)
    return client.calls, len(snap.quotes), time.perf_counter() - t0


def main(runs: int = 20) -> int:
    items = list(json.loads(SAVED.read_text())["PriceList"])
    catalog = default_catalog()
    calls, keys, _ = snapshot_once(catalog, items)
    times = [snapshot_once(catalog, items)[2] for _ in range(runs)]
    print(
        f"price snapshot, default catalog ({len(catalog.instance_types)} instance types × "
        f"{len(catalog.regions)} regions + usage prices): {keys} keys, {calls} Price List calls"
    )
    print(
        f"  build time over a stubbed client: median {statistics.median(times) * 1e3:.1f} ms "
        f"({runs} runs)"
    )
    print("  calls by catalog size (types × regions → keys: calls):")
    for n_types, n_regions in ((1, 1), (3, 1), (6, 3), (12, 6)):
        types = [f"t{i}.48xlarge" for i in range(n_types)]
        regions = [
            "us-east-1",
            "us-east-2",
            "us-west-2",
            "eu-west-1",
            "eu-central-1",
            "ap-south-1",
        ][:n_regions]
        c, k, _ = snapshot_once(Catalog(instance_types=types, regions=regions), items)
        print(f"    {n_types:>2} × {n_regions} → {k:>3} keys: {c:>3} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
