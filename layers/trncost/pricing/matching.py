"""Which price key each product answers, and — for a product that answers none — the filter
that refused it for the key it came closest to. Pure: queries and products in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from trncost.model.price import Unmatched
from trncost.pricing.catalog import ProductQuery
from trncost.pricing.parser import Product


def explain(product: Product, candidates: Sequence[ProductQuery]) -> Unmatched:
    """Why `product` answers none of `candidates` (the queries of its service)."""
    service = product.service_code or None
    if not candidates:
        what = f"service {service}" if service else "no serviceCode"
        return Unmatched(
            sku=product.sku,
            service=service,
            reason=f"{what}: no price key of this catalog is priced from it",
        )
    # the closest key: the smallest share of its checks failed, then the fewest failures,
    # then one whose item (instance type) the product names somewhere
    named = " ".join(product.attributes.values())
    scored = [
        (len(f) / q.checks, len(f), q.key.item not in named, str(q.key), q, f)
        for q in candidates
        if (f := q.failures(product))
    ]
    if not scored:  # pragma: no cover - callers pass only the queries it failed
        return Unmatched(sku=product.sku, service=service, reason="matched")
    *_, closest, failures = min(scored, key=lambda s: s[:4])
    return Unmatched(
        sku=product.sku,
        service=service,
        closest_key=str(closest.key),
        reason="; ".join(failures),
    )


def match(
    queries: Sequence[ProductQuery], products: Sequence[Product]
) -> tuple[dict[int, list[Product]], list[Unmatched]]:
    """The products each query accepts (by its index), and every product no query accepts
    with the reason."""
    by_service: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        by_service[q.service_code].append(i)
    found: dict[int, list[Product]] = {i: [] for i in range(len(queries))}
    unmatched: list[Unmatched] = []
    for product in products:
        mine = by_service.get(product.service_code, [])
        hits = [i for i in mine if queries[i].accepts(product)]
        for i in hits:
            found[i].append(product)
        if not hits:
            unmatched.append(explain(product, [queries[i] for i in mine]))
    return found, unmatched
