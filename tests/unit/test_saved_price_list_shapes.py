"""A saved Price List file in a shape it only looks like (PriceList not a list, OnDemand terms
not an object, an item string too deep or with a 5,000-digit number) is a PriceListItemError
saying what is wrong, never a TypeError: the CLI's one line, the API's 422, a rejected item."""

from __future__ import annotations

import json

import pytest

from trncost.errors import PriceListItemError
from trncost.pricing.parser import items_from_saved_file, parse_item


@pytest.mark.parametrize("items", [None, 7, "abc", {"a": 1}])
def test_a_price_list_that_is_not_a_list_is_refused(items) -> None:
    with pytest.raises(PriceListItemError, match="PriceList: expected a list"):
        items_from_saved_file({"FormatVersion": "aws_v1", "PriceList": items})


@pytest.mark.parametrize("on_demand", [["x"], "x", 3])
def test_offer_file_on_demand_terms_that_are_not_an_object_are_refused(on_demand) -> None:
    offer = {"products": {"S1": {"sku": "S1"}}, "terms": {"OnDemand": on_demand}}
    with pytest.raises(PriceListItemError, match="terms.OnDemand: expected an object"):
        items_from_saved_file(offer)


def test_offer_file_terms_that_are_not_an_object_leave_its_products_unpriced() -> None:
    offer = {"products": {"S1": {"sku": "S1"}}, "terms": ["not", "terms"]}
    assert items_from_saved_file(offer)[0]["terms"] == {"OnDemand": {}}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 5000 + "]" * 5000, "nested deeper than 64 levels"),
        ('{"product": {"sku": "S", "attributes": {"n": ' + "9" * 5000 + "}}}", "30 digits"),
        ("{not json", "malformed JSON"),
    ],
)
def test_an_item_string_json_cannot_parse_safely_is_a_reasoned_rejection(text, why) -> None:
    with pytest.raises(PriceListItemError) as info:
        parse_item(text)
    assert info.value.reason.startswith("PriceList item is not JSON trncost reads: ")
    assert why in info.value.reason


def test_a_well_formed_item_string_still_parses() -> None:
    item = {"product": {"sku": "S1", "attributes": {"instanceType": "trn2.48xlarge"}}}
    assert parse_item(json.dumps(item)).sku == "S1"
