"""botocore Stubber helpers for the Price List API (moto has no `pricing` service)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
from botocore.stub import Stubber

from trncost.pricing.catalog import queries_for
from trncost.pricing.parser import parse_item
from trncost.settings import Catalog

SAVED_US_EAST_1 = (
    Path(__file__).resolve().parent / "events" / "pricelist" / "get_products_us_east_1.json"
)


def saved_items() -> list[str]:
    return list(json.loads(SAVED_US_EAST_1.read_text())["PriceList"])


def pricing_client() -> Any:
    return boto3.client("pricing", region_name="us-east-1")


def expect_catalog(
    stubber: Stubber, catalog: Catalog, items: list[str], page_size: int = 100
) -> int:
    """Queue one GetProducts answer per catalog query (split into pages of `page_size`),
    each answering with the saved items that query would match. Returns the calls queued."""
    parsed = [(raw, parse_item(raw)) for raw in items]
    calls = 0
    for query in queries_for(catalog):
        matching = [raw for raw, p in parsed if query.accepts(p)]
        pages = [matching[i : i + page_size] for i in range(0, len(matching), page_size)] or [[]]
        for n, page in enumerate(pages):
            params: dict[str, Any] = {
                "ServiceCode": query.service_code,
                "Filters": query.api_filters(),
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            }
            if n:
                params["NextToken"] = f"page-{n}"
            response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": page}
            if n + 1 < len(pages):
                response["NextToken"] = f"page-{n + 1}"
            stubber.add_response("get_products", response, params)
            calls += 1
    return calls
