"""Price List items → quotes: official with their identity, or PENDING with a reason."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.events import load_event
from tests.support.pricelist import ec2_instance, item, usage_items
from trncost.errors import PriceListItemError
from trncost.model import PriceKey, UsageItem
from trncost.model.catalog import Catalog
from trncost.pricing.capacity_blocks import capacity_block_quote
from trncost.pricing.catalog import instance_query, queries_for, usage_query
from trncost.pricing.parser import items_from_saved_file, parse_item
from trncost.pricing.quotes import build_quote

SNAP = "ps-test"


def quote_for(query, raw_items):
    products = [parse_item(json.dumps(i)) for i in raw_items]
    return build_quote(
        query, products, snapshot_id=SNAP, source="query_api", as_of="2026-11-20T18:32:09Z"
    )


def test_an_ec2_item_parses_with_its_identity_and_decimal_price():
    raw = ec2_instance("8N6JRMZQ3TC5KS9P", "trn1.32xlarge", "us-east-1", "21.5000000000")
    product = parse_item(json.dumps(raw))
    assert product.sku == "8N6JRMZQ3TC5KS9P" and product.service_code == "AmazonEC2"
    assert product.attributes["instanceType"] == "trn1.32xlarge"
    assert product.publication_date == "2026-11-20T18:32:09Z"
    (term,) = product.terms
    (dim,) = term.dimensions
    assert dim.usd == Decimal("21.5000000000") and isinstance(dim.usd, Decimal)
    assert dim.rate_code == "8N6JRMZQ3TC5KS9P.JRTCKXETXF.6YS6EN2CT7"
    assert (dim.begin, dim.end, dim.unit) == (Decimal(0), None, "Hrs")
    assert term.effective_date == "2026-11-01T00:00:00Z"


def test_an_on_demand_instance_quote_carries_sku_rate_code_and_dates():
    raw = ec2_instance("8N6JRMZQ3TC5KS9P", "trn1.32xlarge", "us-east-1", "21.5000000000")
    quote, rejected = quote_for(instance_query("trn1.32xlarge", "us-east-1"), [raw])
    assert rejected == [] and quote.status == "official"
    assert quote.key == PriceKey.for_instance("trn1.32xlarge", "us-east-1")
    assert quote.flat_rate == Decimal("21.5") and quote.unit == "Hrs"
    prov = quote.provenance()
    assert (prov.sku, prov.rate_code) == (
        "8N6JRMZQ3TC5KS9P",
        "8N6JRMZQ3TC5KS9P.JRTCKXETXF.6YS6EN2CT7",
    )
    assert prov.effective_date == "2026-11-01T00:00:00Z"
    assert prov.publication_date == "2026-11-20T18:32:09Z"


def test_a_capacity_block_sku_at_zero_is_never_an_on_demand_price():
    on_demand = ec2_instance("J7GR4NSH5K2XQF9M", "p5.48xlarge", "us-east-1", "55.04")
    block = ec2_instance(
        "Y6PW3ZTQ8M2RKD4C", "p5.48xlarge", "us-east-1", "0.00", marketoption="CapacityBlock"
    )
    quote, _ = quote_for(instance_query("p5.48xlarge", "us-east-1"), [block, on_demand])
    assert quote.sku == "J7GR4NSH5K2XQF9M" and quote.flat_rate == Decimal("55.04")
    # Even mislabelled as OnDemand, a $0.00 hourly price is refused, not taken.
    mislabelled = ec2_instance("Y6PW3ZTQ8M2RKD4C", "p5.48xlarge", "us-east-1", "0.00")
    quote, rejected = quote_for(instance_query("p5.48xlarge", "us-east-1"), [mislabelled])
    assert quote.status == "pending"
    assert "zero hourly price" in rejected[0].reason
    assert "no Price List product for p5.48xlarge" in quote.pending_reason


def test_a_missing_product_is_pending_with_its_reason():
    quote, rejected = quote_for(instance_query("trn3.48xlarge", "us-east-1"), [])
    assert quote.status == "pending" and quote.tiers == [] and rejected == []
    assert quote.pending_reason == (
        "no Price List product for trn3.48xlarge (on_demand) in us-east-1 "
        "as of 2026-11-20T18:32:09Z"
    )


def test_tiers_are_read_in_order_with_their_ranges():
    quote, _ = quote_for(
        usage_query(UsageItem.s3_standard, "us-east-1"), usage_items("us-east-1", "S")
    )
    assert [(t.begin, t.end, t.usd) for t in quote.tiers] == [
        (Decimal(0), Decimal(51200), Decimal("0.023")),
        (Decimal(51200), Decimal(512000), Decimal("0.022")),
        (Decimal(512000), None, Decimal("0.021")),
    ]
    assert quote.unit == "GB-Mo"


def test_usage_queries_pick_the_standard_product():
    items = usage_items("us-east-2", "S")
    ingest, _ = quote_for(usage_query(UsageItem.logs_ingestion, "us-east-2"), items)
    assert ingest.flat_rate == Decimal("0.5")  # not the Infrequent Access class
    assert ingest.attributes["usagetype"] == "USE2-DataProcessing-Bytes"
    storage, _ = quote_for(usage_query(UsageItem.logs_storage, "us-east-2"), items)
    assert storage.flat_rate == Decimal("0.03")  # CloudWatch, not S3 TimedStorage
    metrics, _ = quote_for(usage_query(UsageItem.custom_metrics, "us-east-2"), items)
    assert len(metrics.tiers) == 4
    out, _ = quote_for(usage_query(UsageItem.transfer_out, "us-east-2"), items)
    assert out.tiers[0].usd == Decimal("0.09") and out.tiers[-1].end is None
    gp3, _ = quote_for(usage_query(UsageItem.ebs_gp3, "us-east-2"), items)
    assert gp3.flat_rate == Decimal("0.08")


def test_inter_region_takes_the_highest_rate_and_says_so():
    items = usage_items("us-east-1", "S")
    dearer = item(
        "ZZZZZZZZZZZZZZZZ",
        "AWSDataTransfer",
        "Data Transfer",
        {
            "fromRegionCode": "us-east-1",
            "toRegionCode": "sa-east-1",
            "transferType": "InterRegion Outbound",
            "usagetype": "USE1-SAE1-AWS-Out-Bytes",
        },
        [("0", None, "0.0400000000", "to Sao Paulo")],
        unit="GB",
    )
    quote, _ = quote_for(
        usage_query(UsageItem.transfer_inter_region, "us-east-1"), [*items, dearer]
    )
    assert quote.flat_rate == Decimal("0.04")
    assert quote.attributes["toRegionCode"] == "sa-east-1"
    assert quote.attributes["trncost:selection"] == "highest of 3 matching products"


def test_two_matching_instance_products_are_ambiguous_not_guessed():
    a = ec2_instance("AAAAAAAAAAAAAAAA", "trn2.48xlarge", "us-east-1", "44.70")
    b = ec2_instance("BBBBBBBBBBBBBBBB", "trn2.48xlarge", "us-east-1", "40.00")
    quote, rejected = quote_for(instance_query("trn2.48xlarge", "us-east-1"), [a, b])
    assert quote.status == "pending" and "ambiguous" in quote.pending_reason
    assert rejected[-1].reason == quote.pending_reason


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda i: i["terms"]["OnDemand"].clear(), "no OnDemand term"),
        (lambda i: _dim(i).update(pricePerUnit={"CNY": "150.00"}), "price is not in USD"),
        (lambda i: _dim(i).update(unit="Quantity"), "unit Quantity is not one trncost prices"),
        (lambda i: _dim(i).update(pricePerUnit={"USD": "abc"}), "is not a number"),
        (lambda i: _dim(i).update(pricePerUnit={"USD": "-1"}), "negative USD price"),
        (lambda i: _dim(i).update(beginRange="10", endRange="5"), "bad range"),
    ],
)
def test_a_bad_item_is_rejected_with_its_reason(mutate, reason):
    raw = ec2_instance("8N6JRMZQ3TC5KS9P", "trn1.32xlarge", "us-east-1", "21.50")
    mutate(raw)
    try:
        quote, rejected = quote_for(instance_query("trn1.32xlarge", "us-east-1"), [raw])
    except PriceListItemError as exc:  # rejected while parsing
        assert reason in exc.reason
        return
    assert quote.status == "pending"
    assert reason in rejected[0].reason


def _dim(raw):
    (term,) = raw["terms"]["OnDemand"].values()
    (dim,) = term["priceDimensions"].values()
    return dim


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"product": {}}', '{"product": {"sku": "X", "attributes": 5}}']
)
def test_malformed_items_raise_with_a_reason(text):
    with pytest.raises(PriceListItemError) as exc:
        parse_item(text)
    assert exc.value.reason


def test_saved_files_in_every_shape_give_the_same_items():
    page = load_event("pricelist/get_products_us_east_1")
    as_items = items_from_saved_file(page)
    assert len(as_items) == 15
    assert len(items_from_saved_file([page, page])) == 30
    first = json.loads(as_items[0])
    offer = {
        "offerCode": "AmazonEC2",
        "publicationDate": first["publicationDate"],
        "products": {first["product"]["sku"]: first["product"]},
        "terms": {"OnDemand": {first["product"]["sku"]: first["terms"]["OnDemand"]}},
    }
    (from_offer,) = items_from_saved_file(offer)
    assert parse_item(from_offer) == parse_item(as_items[0])
    with pytest.raises(PriceListItemError, match="not a saved Price List"):
        items_from_saved_file({"hello": 1})


def test_default_catalog_asks_one_query_per_key():
    catalog = Catalog(
        instance_types=[
            "trn1.32xlarge",
            "trn2.48xlarge",
            "trn3.48xlarge",
            "p5.48xlarge",
            "p5en.48xlarge",
            "p6-b200.48xlarge",
        ],
        regions=["us-east-1", "us-east-2", "us-west-2"],
    )
    queries = queries_for(catalog)
    assert len(queries) == 6 * 3 + len(UsageItem) * 3
    assert len({str(q.key) for q in queries}) == len(queries)
    ec2 = queries[0].api_filters()
    assert {"Type": "TERM_MATCH", "Field": "marketoption", "Value": "OnDemand"} in ec2


# -- capacity blocks ------------------------------------------------------------------------
def offering(fee, hours=24, count=1, currency="USD", oid="cb-0123456789abcdef0"):
    return {
        "CapacityBlockOfferingId": oid,
        "InstanceType": "p5.48xlarge",
        "AvailabilityZone": "us-east-1a",
        "InstanceCount": count,
        "StartDate": "2026-12-07T11:30:00Z",
        "EndDate": "2026-12-08T11:30:00Z",
        "CapacityBlockDurationHours": hours,
        "UpfrontFee": fee,
        "CurrencyCode": currency,
        "Tenancy": "default",
    }


def test_capacity_block_quote_is_the_cheapest_block_per_instance_hour():
    quote, rejected = capacity_block_quote(
        "p5.48xlarge",
        "us-east-1",
        [offering("943.92", oid="cb-a"), offering("1700.00", hours=48, oid="cb-b")],
        snapshot_id=SNAP,
        queried_at="2026-11-30T09:00:00+00:00",
    )
    assert rejected == []
    assert quote.key.purchase_option == "capacity_block" and quote.unit == "block"
    assert quote.flat_rate == Decimal("1700.00") and quote.sku == "cb-b"  # 35.42/h < 39.33/h
    assert quote.capacity_block.duration_hours == 48
    assert quote.capacity_block.queried_at == "2026-11-30T09:00:00+00:00"
    assert quote.source == "capacity_block_query"


@pytest.mark.parametrize(
    "bad",
    [
        offering(None),
        offering("0.00"),
        offering(""),
        offering("12.00", currency="EUR"),
        offering("12", hours=0),
    ],
)
def test_unpriced_capacity_blocks_are_rejected_and_pending(bad):
    quote, rejected = capacity_block_quote(
        "p5.48xlarge", "us-east-1", [bad], snapshot_id=SNAP, queried_at="2026-11-30T09:00:00+00:00"
    )
    assert quote.status == "pending" and len(rejected) == 1


fees = st.one_of(
    st.none(),
    st.just(""),
    st.just("0"),
    st.just("0.00"),
    st.just("-5"),
    st.decimals("0.01", "100000", places=2).map(str),
)


@given(st.lists(fees, min_size=0, max_size=6), st.sampled_from(["0.00", "0", "0.0000000000"]))
def test_property_zero_or_missing_block_prices_never_become_prices(block_fees, zero):
    # A Capacity Block SKU listing $0.00 in the Price List never answers the on-demand key.
    block_sku = ec2_instance(
        "Y6PW3ZTQ8M2RKD4C", "p5.48xlarge", "us-east-1", zero, marketoption="CapacityBlock"
    )
    od, _ = quote_for(instance_query("p5.48xlarge", "us-east-1"), [block_sku])
    assert od.status == "pending" and od.tiers == []
    offerings = [offering(f, oid=f"cb-{i}") for i, f in enumerate(block_fees)]
    cb, rejected = capacity_block_quote(
        "p5.48xlarge",
        "us-east-1",
        offerings,
        snapshot_id=SNAP,
        queried_at="2026-11-30T09:00:00+00:00",
    )
    assert cb.key.purchase_option == "capacity_block"
    if cb.status == "official":
        assert cb.flat_rate > 0
    usable = [f for f in block_fees if f not in (None, "") and Decimal(f) > 0]
    assert (cb.status == "official") == bool(usable)
    assert len(rejected) == len(block_fees) - len(usable)
