"""A price key is taken in the text form trncost prints it in (`str(key)`, e.g. in a PENDING
term or a break-even line) as well as an object; a malformed text is a validation error that
names the field."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from trncost.errors import format_validation_error
from trncost.model import PriceKey, PriceOverride, UsageItem
from trncost.model.candidate import Platform, PurchaseOption
from trncost.model.price import Service

INSTANCE_KEYS = [
    PriceKey.for_instance(t, r, option, platform)
    for t, r in (("trn3.48xlarge", "us-east-2"), ("p5.48xlarge", "us-gov-west-1"))
    for option in PurchaseOption
    for platform in Platform
]
USAGE_KEYS = [PriceKey.for_usage(item, "eu-west-1") for item in UsageItem]


@pytest.mark.parametrize("key", INSTANCE_KEYS + USAGE_KEYS, ids=str)
def test_a_key_round_trips_through_its_text(key: PriceKey) -> None:
    # Given a key of any service, usage item, platform and purchase option
    # When its printed text is read back
    again = PriceKey.model_validate(str(key))
    # Then it is the same key, printed the same way
    assert again == key
    assert str(again) == str(key)


def test_the_round_trip_covers_every_service_and_usage_item() -> None:
    assert {k.service for k in INSTANCE_KEYS + USAGE_KEYS} == set(Service)
    assert {k.item for k in USAGE_KEYS} == {u.value for u in UsageItem}
    assert {k.item for k in INSTANCE_KEYS} >= {"ml.trn3.48xlarge", "trn3.48xlarge"}


def test_an_override_keyed_by_the_printed_text_is_the_same_override() -> None:
    # Given the key as a PENDING term prints it, and as an object
    text = "AmazonEC2/us-east-2/trn3.48xlarge/on_demand"
    as_object = {"service": "AmazonEC2", "region": "us-east-2", "item": "trn3.48xlarge"}
    # When each keys an override
    by_text = PriceOverride.model_validate({"key": text, "usd": "40", "unit": "Hrs"})
    by_object = PriceOverride.model_validate({"key": as_object, "usd": "40", "unit": "Hrs"})
    # Then they are one and the same
    assert by_text == by_object
    assert str(by_text.key) == text


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("AmazonEC2/us-east-2/trn3.48xlarge", "key", "four parts"),
        ("AmazonEC2/us-east-2/a/b/on_demand", "key", "not 5 part(s)"),
        ("", "key", "not 1 part(s)"),
        ("AmazonEC3/us-east-2/trn3.48xlarge/on_demand", "key.service", "AmazonEC2"),
        ("AmazonEC2/us-east-2/trn3.48xlarge/spot", "key.purchase_option", "on_demand"),
        ("AmazonEC2/Ohio/trn3.48xlarge/on_demand", "key.region", "pattern"),
        ("AmazonEC2/us-east-2//on_demand", "key.item", "at least 1 character"),
    ],
)
def test_a_malformed_text_key_names_the_field(text: str, field: str, says: str) -> None:
    # When an override is keyed by a text that is not a price key
    with pytest.raises(ValidationError) as info:
        PriceOverride.model_validate({"key": text, "usd": "40", "unit": "Hrs"})
    # Then the error names the key's field and says what it should be
    message = format_validation_error(info.value)
    assert message.startswith(f"{field}: "), message
    assert says in message


def test_a_key_of_another_type_is_still_refused() -> None:
    with pytest.raises(ValidationError) as info:
        PriceKey.model_validate(42)
    assert "valid dictionary" in format_validation_error(info.value)
