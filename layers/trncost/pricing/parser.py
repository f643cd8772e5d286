"""Parse AWS Price List items (the JSON strings `GetProducts` returns, or products of a bulk
offer file) into products with their OnDemand terms and price dimensions.

Pure: no boto3, no I/O. Anything malformed raises PriceListItemError with the reason; the
snapshot service records the reason in the snapshot's `rejected` list and carries on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from trncost import safejson
from trncost.errors import PriceListItemError


@dataclass(frozen=True)
class Dimension:
    rate_code: str
    unit: str
    begin: Decimal
    end: Decimal | None
    usd: Decimal
    description: str


@dataclass(frozen=True)
class OnDemandTerm:
    offer_term_code: str
    effective_date: str | None
    dimensions: tuple[Dimension, ...]


@dataclass(frozen=True)
class Product:
    sku: str
    service_code: str
    product_family: str | None
    attributes: dict[str, str]
    publication_date: str | None
    terms: tuple[OnDemandTerm, ...] = field(default=())
    error: str | None = None  # why its terms are unusable (the product is still identified)

    def value_of(self, name: str) -> str | None:
        """A filterable field: an attribute, or the product family."""
        if name == "productFamily":
            return self.product_family or self.attributes.get(name)
        return self.attributes.get(name)


def _decimal(value: Any, what: str, sku: str) -> Decimal:
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise PriceListItemError(f"{what} is not a number: {value!r}", sku) from None
    if not number.is_finite():
        raise PriceListItemError(f"{what} is not finite: {value!r}", sku)
    return number


def _dimension(raw: Any, sku: str) -> Dimension:
    if not isinstance(raw, dict):
        raise PriceListItemError("price dimension is not an object", sku)
    rate_code = raw.get("rateCode")
    unit = raw.get("unit")
    prices = raw.get("pricePerUnit")
    if not rate_code or not unit or not isinstance(prices, dict):
        raise PriceListItemError("price dimension lacks rateCode, unit or pricePerUnit", sku)
    if "USD" not in prices:
        currencies = ", ".join(sorted(prices)) or "none"
        raise PriceListItemError(f"price is not in USD (currencies: {currencies})", sku)
    usd = _decimal(prices["USD"], f"USD price of {rate_code}", sku)
    if usd < 0:
        raise PriceListItemError(f"negative USD price in {rate_code}", sku)
    begin = _decimal(raw.get("beginRange", "0"), f"beginRange of {rate_code}", sku)
    end_raw = raw.get("endRange", "Inf")
    end = None if str(end_raw) == "Inf" else _decimal(end_raw, f"endRange of {rate_code}", sku)
    if begin < 0 or (end is not None and end <= begin):
        raise PriceListItemError(f"bad range [{begin}, {end_raw}) in {rate_code}", sku)
    return Dimension(
        rate_code=str(rate_code),
        unit=str(unit),
        begin=begin,
        end=end,
        usd=usd,
        description=str(raw.get("description", "")),
    )


def _terms(raw: Any, sku: str) -> tuple[OnDemandTerm, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise PriceListItemError("terms.OnDemand is not an object", sku)
    terms = []
    for code, term in raw.items():
        if not isinstance(term, dict) or not isinstance(term.get("priceDimensions"), dict):
            raise PriceListItemError(f"OnDemand term {code} lacks priceDimensions", sku)
        dims = tuple(
            sorted(
                (_dimension(d, sku) for d in term["priceDimensions"].values()),
                key=lambda d: d.begin,
            )
        )
        if not dims:
            raise PriceListItemError(f"OnDemand term {code} has no price dimension", sku)
        terms.append(
            OnDemandTerm(
                offer_term_code=str(term.get("offerTermCode", code)),
                effective_date=term.get("effectiveDate"),
                dimensions=dims,
            )
        )
    return tuple(terms)


def parse_item(item: str | dict[str, Any]) -> Product:
    """One GetProducts PriceList entry (a JSON string) or an equivalent dict."""
    if isinstance(item, str):
        try:
            item = safejson.loads(item)  # bounded: nesting and integer length
        except safejson.UnsafeJson as exc:
            raise PriceListItemError(
                f"PriceList item is not JSON trncost reads: {exc.reason}"
            ) from None
    if not isinstance(item, dict):
        raise PriceListItemError("PriceList item is not a JSON object")
    product = item.get("product")
    if not isinstance(product, dict) or not product.get("sku"):
        raise PriceListItemError("PriceList item has no product.sku")
    sku = str(product["sku"])
    attributes = product.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise PriceListItemError("product.attributes is not an object", sku)
    # A product whose prices are unusable is still identified, so the rejection can be
    # reported against the price key it would have answered.
    error: str | None = None
    on_demand: tuple[OnDemandTerm, ...] = ()
    try:
        terms = item.get("terms") or {}
        if not isinstance(terms, dict):
            raise PriceListItemError("terms is not an object", sku)
        on_demand = _terms(terms.get("OnDemand"), sku)
    except PriceListItemError as exc:
        error = exc.reason
    return Product(
        sku=sku,
        # the product's own service code first: a bulk offer file lists the products of other
        # services it bills (AWSDataTransfer in AmazonEC2's) under its own offerCode
        service_code=str(attributes.get("servicecode") or item.get("serviceCode") or ""),
        product_family=product.get("productFamily"),
        attributes={str(k): str(v) for k, v in attributes.items()},
        publication_date=item.get("publicationDate"),
        terms=on_demand,
        error=error,
    )


def items_from_saved_file(data: Any) -> list[Any]:
    """Price List items from a saved file: a GetProducts response (or a list of them), a list
    of items, or a bulk offer file (`products` + `terms`), or a list mixing those."""
    if isinstance(data, list):
        out: list[Any] = []
        for part in data:
            if isinstance(part, dict) and ("PriceList" in part or "products" in part):
                out.extend(items_from_saved_file(part))
            else:
                out.append(part)
        return out
    if isinstance(data, dict) and "PriceList" in data:
        if not isinstance(data["PriceList"], list):
            raise PriceListItemError("PriceList: expected a list of Price List items")
        return list(data["PriceList"])
    if isinstance(data, dict) and isinstance(data.get("products"), dict):
        return _offer_file_items(data)
    raise PriceListItemError(
        "not a saved Price List: expected a GetProducts response, a list of items or a bulk "
        "offer file with products and terms"
    )


def _offer_file_items(offer: dict[str, Any]) -> list[dict[str, Any]]:
    terms = offer.get("terms")
    on_demand = (terms.get("OnDemand") if isinstance(terms, dict) else None) or {}
    if not isinstance(on_demand, dict):
        raise PriceListItemError("terms.OnDemand: expected an object keyed by SKU")
    items = []
    for sku, product in offer["products"].items():
        items.append(
            {
                "product": product,
                "serviceCode": offer.get("offerCode"),
                "terms": {"OnDemand": on_demand.get(sku, {})},
                "publicationDate": offer.get("publicationDate"),
                "version": offer.get("version"),
            }
        )
    return items
