"""Turn the products a query found into one quote — priced, or PENDING with its reason — and
say why each refused product was refused. Pure: products in, a quote and rejections out."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError

from trncost.errors import PriceListItemError
from trncost.model.basis import PriceOrigin, basis_of_source
from trncost.model.price import PriceQuote, PriceTier, Rejection
from trncost.pricing.catalog import ProductQuery
from trncost.pricing.parser import OnDemandTerm, Product
from trncost.pricing.plausible import implausible


def _usable_term(query: ProductQuery, product: Product) -> OnDemandTerm:
    """The product's OnDemand term in effect, or PriceListItemError saying why none is
    usable: unreadable, none, an unknown unit, a zero price, outside the plausible range."""
    if product.error:
        raise PriceListItemError(product.error, product.sku)
    if not product.terms:
        raise PriceListItemError("no OnDemand term (reserved-only or free)", product.sku)
    # Several OnDemand terms are unusual; the one in effect most recently is the price.
    term = max(product.terms, key=lambda t: t.effective_date or "")
    units = {d.unit for d in term.dimensions}
    unknown = units - query.units
    if unknown:
        raise PriceListItemError(
            f"unit {', '.join(sorted(unknown))} is not one trncost prices {query.key.item} in "
            f"(expects {', '.join(sorted(query.units))})",
            product.sku,
        )
    if all(d.usd == 0 for d in term.dimensions):
        if query.require_nonzero:
            why = (
                "zero hourly price: a capacity-block or reserved-only SKU is never taken as an "
                "on-demand price"
            )
        else:
            why = "zero price: every tier is $0, which is never an on-demand price"
        raise PriceListItemError(why, product.sku)
    unit = term.dimensions[0].unit
    problem = implausible(unit, [d.usd for d in term.dimensions])
    if problem:
        raise PriceListItemError(problem, product.sku)
    return term


def official_quote(
    query: ProductQuery,
    product: Product,
    *,
    snapshot_id: str,
    source: str,
    origin: PriceOrigin | None = None,
) -> PriceQuote:
    """The product's OnDemand price for `query.key` (its basis from `source`), or
    PriceListItemError saying why not."""
    term = _usable_term(query, product)
    try:
        return PriceQuote(
            key=query.key,
            status="official",
            unit=term.dimensions[0].unit,
            tiers=[
                PriceTier(
                    begin=d.begin,
                    end=d.end,
                    usd=d.usd,
                    rate_code=d.rate_code,
                    description=d.description or None,
                )
                for d in term.dimensions
            ],
            sku=product.sku,
            attributes=product.attributes,
            effective_date=term.effective_date,
            publication_date=product.publication_date,
            snapshot_id=snapshot_id,
            source=source,
            basis=basis_of_source(source),
            origin=origin,
        )
    except ValidationError as exc:
        problems = "; ".join(e["msg"] for e in exc.errors(include_url=False))
        raise PriceListItemError(f"unusable price dimensions: {problems}", product.sku) from None


def pending_quote(
    query: ProductQuery,
    *,
    snapshot_id: str,
    source: str,
    reason: str,
    origin: PriceOrigin | None = None,
) -> PriceQuote:
    return PriceQuote(
        key=query.key,
        status="pending",
        snapshot_id=snapshot_id,
        source=source,
        basis=basis_of_source(source),
        origin=origin,
        pending_reason=reason,
    )


def build_quote(
    query: ProductQuery,
    products: Iterable[Product],
    *,
    snapshot_id: str,
    source: str,
    as_of: str | None,
    origin: PriceOrigin | None = None,
) -> tuple[PriceQuote, list[Rejection]]:
    """One quote for the query's key from the products found, plus what was rejected."""
    key = str(query.key)
    rejected: list[Rejection] = []
    found: list[PriceQuote] = []
    for product in products:
        if not query.accepts(product):
            continue
        try:
            found.append(
                official_quote(
                    query, product, snapshot_id=snapshot_id, source=source, origin=origin
                )
            )
        except PriceListItemError as exc:
            rejected.append(Rejection(key=key, sku=exc.sku or product.sku, reason=exc.reason))
    k = query.key
    if not found:
        reason = (
            f"no Price List product for {k.item} ({k.purchase_option}) in {k.region}"
            f" as of {as_of or 'this snapshot'}"
        )
        if rejected:
            reason += f"; {len(rejected)} rejected: {rejected[0].reason}"
        pending = pending_quote(
            query, snapshot_id=snapshot_id, source=source, reason=reason, origin=origin
        )
        return pending, rejected
    if len(found) == 1:
        return found[0], rejected
    if query.pick == "highest":
        best = max(found, key=lambda q: max(t.usd for t in q.tiers))
        attributes = {
            **best.attributes,
            "trncost:selection": f"highest of {len(found)} matching products",
        }
        return best.model_copy(update={"attributes": attributes}), rejected
    skus = ", ".join(sorted(q.sku or "" for q in found))
    reason = (
        f"{len(found)} Price List products match {k.item} in {k.region} ({skus}): "
        "ambiguous SKUs, so no price is taken"
    )
    rejected += [Rejection(key=key, sku=q.sku, reason=reason) for q in found]
    pending = pending_quote(
        query, snapshot_id=snapshot_id, source=source, reason=reason, origin=origin
    )
    return pending, rejected
