"""Price List records as they really come (issue 12): SageMaker training products, records
older than `regionCode` / `marketoption`, trimmed and hostile copies. Every product of a saved
file answers a key, or is listed as unmatched or rejected with the reason.

Samples: tests/events/pricelist/README.md (sources beside each file).
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from stacks.config import StageConfig
from tests.support.events import EVENTS
from tests.support.stubs import saved_items
from trncost.model import PriceKey
from trncost.model.candidate import Platform
from trncost.model.catalog import Catalog
from trncost.pricing.capacity_blocks import capacity_block_quote
from trncost.pricing.catalog import instance_query, machine_query, queries_for, sagemaker_query
from trncost.pricing.client import PRICE_LIST_REGIONS, PriceListClient
from trncost.pricing.locations import location_names, region_descriptions, region_of, spellings
from trncost.pricing.parser import parse_item
from trncost.pricing.plausible import RANGES, implausible
from trncost.services.snapshots import snapshot_from_saved

SAMPLES = EVENTS / "pricelist"
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def load(name: str):
    return json.loads((SAMPLES / name).read_text())


def snap(data, types, regions):
    return snapshot_from_saved(data, Catalog(instance_types=types, regions=regions), NOW)


def by_key(s):
    return {str(q.key): q for q in s.quotes}


def items_of(data) -> int:
    if "PriceList" in data:
        return len(data["PriceList"])
    return len(data["products"])


def accounted(s, data) -> None:
    """Every product is priced, unmatched or rejected: none silently dropped."""
    priced = {q.sku for q in s.quotes if not q.is_pending}
    listed = {u.sku for u in s.unmatched} | {r.sku for r in s.rejected if r.sku}
    skus = (
        {json.loads(i)["product"]["sku"] for i in data["PriceList"]}
        if "PriceList" in data
        else set(data["products"])
    )
    assert skus == priced | listed, skus - priced - listed


# -- SageMaker -------------------------------------------------------------------------------------
def test_sagemaker_training_is_priced_from_its_train_usage_type_only():
    data = load("get_products_sagemaker_constructed.json")
    types = ["ml.trn1.32xlarge", "ml.p4d.24xlarge", "ml.m5.large", "ml.p3.2xlarge"]
    s = snap(data, types, ["us-east-1", "us-east-2"])
    q = by_key(s)
    priced = {k: (v.sku, v.flat_rate) for k, v in q.items() if not v.is_pending}
    assert priced == {
        "AmazonSageMaker/us-east-1/ml.trn1.32xlarge/on_demand": (
            "EXSMTRN1TRAINUE1",
            Decimal("28.497"),
        ),
        "AmazonSageMaker/us-east-2/ml.trn1.32xlarge/on_demand": (
            "EXSMTRN1TRAINUE2",
            Decimal("28.497"),
        ),
        "AmazonSageMaker/us-east-1/ml.m5.large/on_demand": ("JMCWJEAPVJNFJ5P4", Decimal("0.115")),
        # an older-schema product (instanceType, platoinstancetype, no regionCode): by location
        "AmazonSageMaker/us-east-1/ml.p4d.24xlarge/on_demand": (
            "EXSMP4DTRAINOLD1",
            Decimal("37.688"),
        ),
    }
    assert all(v.basis == "saved_file" for v in q.values())
    # hosting, processing and notebooks are not training: listed, with the filter that failed
    unmatched = {u.sku: u for u in s.unmatched}
    assert set(unmatched) == {"EXSMTRN1HOSTUE1X", "EXSMM5LPROCESUE1", "EXSMP3NOTEBKUE1X"}
    host = unmatched["EXSMTRN1HOSTUE1X"]
    assert host.service == "AmazonSageMaker"
    assert host.closest_key == "AmazonSageMaker/us-east-1/ml.trn1.32xlarge/on_demand"
    assert "usagetype 'USE1-Host:ml.trn1.32xlarge'" in host.reason
    # ml.p3.2xlarge has only a notebook price: PENDING, never the notebook rate
    assert q["AmazonSageMaker/us-east-1/ml.p3.2xlarge/on_demand"].is_pending
    assert s.rejected == []
    accounted(s, data)


def test_the_catalog_queries_sagemaker_for_ml_types_and_ec2_for_the_rest():
    catalog = Catalog(instance_types=["ml.trn1.32xlarge", "trn2.48xlarge"], regions=["us-east-1"])
    services = {str(q.key): q.service_code for q in queries_for(catalog)}
    assert services["AmazonSageMaker/us-east-1/ml.trn1.32xlarge/on_demand"] == "AmazonSageMaker"
    assert services["AmazonEC2/us-east-1/trn2.48xlarge/on_demand"] == "AmazonEC2"
    assert not any("ml." in k and v == "AmazonEC2" for k, v in services.items())
    q = sagemaker_query("ml.trn1.32xlarge", "us-east-1")
    assert q.api_filters() == [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
        {"Type": "CONTAINS", "Field": "usagetype", "Value": "Train:ml.trn1.32xlarge"},
    ]
    assert machine_query("ml.trn1.32xlarge", "us-east-1") == q
    # a SageMaker candidate named without its prefix is priced as the ml. type
    key = PriceKey.for_instance("trn1.32xlarge", "us-east-1", platform=Platform.sagemaker)
    assert (key.service, key.item) == ("AmazonSageMaker", "ml.trn1.32xlarge")
    assert PriceKey.for_instance("ml.trn1.32xlarge", "us-east-1").service == "AmazonSageMaker"


def test_spot_and_prefixed_usage_types_never_pass_for_on_demand_training():
    item = json.loads(load("get_products_sagemaker_constructed.json")["PriceList"][0])
    q = sagemaker_query("ml.trn1.32xlarge", "us-east-1")
    for usage in ("USE1-Train:ml.trn1.32xlarge-Spot", "USE1-Train-Spot:ml.trn1.32xlarge"):
        hostile = copy.deepcopy(item)
        hostile["product"]["attributes"]["usagetype"] = usage
        assert not q.accepts(parse_item(hostile)), usage
    assert q.accepts(parse_item(item))


# -- older records -----------------------------------------------------------------------------
def test_a_2016_offer_file_is_priced_by_location_and_the_rest_say_why_not():
    data = load("offer_ec2_2016_lyft_awspricing.json")
    s = snap(data, ["c4.large"], ["us-east-1", "us-east-2"])
    q = by_key(s)
    priced = {k: (v.sku, v.flat_rate) for k, v in q.items() if not v.is_pending}
    assert priced == {
        # no regionCode, capacitystatus or marketoption: 'US East (N. Virginia)', on demand
        "AmazonEC2/us-east-1/c4.large/on_demand": ("4C7N4APU9GEUZ6H6", Decimal("0.1")),
        # a transfer with fromLocation only ('US East (Ohio)'), in the EC2 offer file
        "AWSDataTransfer/us-east-2/transfer:inter-region/on_demand": (
            "25KK9VY72V4RDJBD",
            Decimal("0.02"),
        ),
    }
    assert len(s.unmatched) == items_of(data) - 2 == 9 and s.rejected == []
    reasons = {u.sku: u.reason for u in s.unmatched}
    assert (
        reasons["92WGTJSJZEKKZQCW"]
        == "instanceType 'i2' is not 'c4.large'; tenancy 'Host' is not 'Shared'"
    )
    assert (
        "location 'EU (Ireland)' is not us-east-1 (US East (N. Virginia))"
        in reasons["NDET67BXTNJGSGN2"]
    )
    assert "usagetype 'APS3-EBS:VolumeUsage.gp2'" in reasons["4MB6SVGV7JKWFBUJ"]
    assert all(u.closest_key for u in s.unmatched)
    accounted(s, data)


def test_2019_records_name_every_region_the_way_botocore_does_by_rule():
    data = load("get_products_ec2_2019_asheiduk.json")
    items = [json.loads(i)["product"]["attributes"] for i in data["PriceList"]]
    locations = {a["location"] for a in items}
    assert len(locations) == 21 and not any("regionCode" in a for a in items)
    regions = {loc: region_of(loc) for loc in locations}
    assert None not in regions.values() and len(set(regions.values())) == 21
    descriptions = region_descriptions()
    for loc, region in regions.items():
        # the location is botocore's description, or a spelling of it by a stated rule
        assert loc in spellings(descriptions[region]), loc
    assert regions["EU (Frankfurt)"] == "eu-central-1"  # botocore: Europe (Frankfurt)
    assert (
        regions["Asia Pacific (Osaka-Local)"] == "ap-northeast-3"
    )  # botocore: Asia Pacific (Osaka)
    assert regions["AWS GovCloud (US)"] == "us-gov-west-1"  # botocore: AWS GovCloud (US-West)
    assert descriptions["eu-central-1"] == "Europe (Frankfurt)"


def test_2019_records_that_answer_no_key_are_listed_with_the_failing_filter():
    data = load("get_products_ec2_2019_asheiduk.json")
    s = snap(data, ["r5.24xlarge"], ["us-gov-west-1"])
    assert all(q.is_pending for q in s.quotes)
    assert len(s.unmatched) == items_of(data) == 22 and s.rejected == []
    windows = next(u for u in s.unmatched if u.sku == "222FSQ7X57S9DN65")
    # the one compute instance: GovCloud by its location, but Windows with SQL Server
    assert windows.closest_key == "AmazonEC2/us-gov-west-1/r5.24xlarge/on_demand"
    assert (
        windows.reason
        == "operatingSystem 'Windows' is not 'Linux'; preInstalledSw 'SQL Std' is not 'NA'"
    )
    host = next(u for u in s.unmatched if u.sku == "27NND7BA7V8SEM35")
    assert "tenancy 'Reserved' is not 'Shared'" in host.reason
    assert "capacitystatus 'AllocatedHost' is not 'Used'" in host.reason
    accounted(s, data)


def trimmed(*drop: str) -> dict:
    """The current-format sample without `drop`, as older records or other tools have it."""
    out = []
    for raw in saved_items():
        item = json.loads(raw)
        attrs = item["product"]["attributes"]
        for name in drop:
            attrs.pop(name, None)
        out.append(json.dumps(item))
    return {"PriceList": out}


CATALOG = (["trn1.32xlarge", "trn2.48xlarge", "p5.48xlarge"], ["us-east-1"])


@pytest.mark.parametrize(
    "drop",
    [
        ("regionCode",),
        ("marketoption",),
        ("regionCode", "marketoption", "capacitystatus"),
        ("regionCode", "fromRegionCode", "marketoption"),
    ],
)
def test_trimmed_records_price_exactly_as_the_full_ones(drop):
    full = by_key(snap({"PriceList": saved_items()}, *CATALOG))
    s = snap(trimmed(*drop), *CATALOG)
    cut = by_key(s)
    inter = "AWSDataTransfer/us-east-1/transfer:inter-region/on_demand"
    if "fromRegionCode" in drop:
        # these inter-region records name neither fromRegionCode nor fromLocation: unmatched,
        # and saying so — never matched to the wrong region
        assert cut.pop(inter).is_pending and full.pop(inter)
        why = {u.reason for u in s.unmatched if u.closest_key == inter}
        assert why == {"no fromRegionCode or fromLocation (wants us-east-1)"}
    assert {k: (q.sku, q.tiers) for k, q in cut.items()} == {
        k: (q.sku, q.tiers) for k, q in full.items()
    }


def test_a_capacity_block_record_without_marketoption_is_still_refused():
    # Without marketoption the $0.00 capacity-block SKU of p5 is refused by its zero price.
    s = snap(trimmed("marketoption"), *CATALOG)
    p5 = by_key(s)["AmazonEC2/us-east-1/p5.48xlarge/on_demand"]
    assert p5.flat_rate == Decimal("55.04")
    assert any("zero hourly price" in r.reason for r in s.rejected)


# -- hostile copies -------------------------------------------------------------------------------
def hostile(change) -> dict:
    items = [json.loads(i) for i in saved_items()]
    for item in items:
        change(item)
    return {"PriceList": [json.dumps(i) for i in items]}


def dims(item):
    for term in item["terms"]["OnDemand"].values():
        yield from term["priceDimensions"].values()


def _cny(item):
    for d in dims(item):
        d["pricePerUnit"] = {"CNY": d["pricePerUnit"]["USD"]}


def _quantity(item):
    for d in dims(item):
        d["unit"] = "Quantity"


def _zero(item):
    for d in dims(item):
        d["pricePerUnit"]["USD"] = "0.0000000000"


def _thousandth(item):
    for d in dims(item):
        d["pricePerUnit"]["USD"] = str(Decimal(d["pricePerUnit"]["USD"]) / 1000)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (_cny, "price is not in USD (currencies: CNY)"),
        (_quantity, "unit Quantity is not one trncost prices"),
        (_zero, "zero"),
    ],
)
def test_a_saved_file_of_unusable_prices_is_rejected_never_a_quote(change, reason):
    s = snap(hostile(change), *CATALOG)
    assert all(q.is_pending for q in s.quotes)
    assert s.rejected and all(reason in r.reason for r in s.rejected if r.key), s.rejected
    assert all(reason in q.pending_reason for q in s.quotes if "rejected" in q.pending_reason)


def test_rates_divided_by_1000_pass_for_instance_hours_but_not_for_storage():
    s = by_key(snap(hostile(_thousandth), *CATALOG))
    assert s["AmazonEC2/us-east-1/trn2.48xlarge/on_demand"].flat_rate == Decimal("0.0447")
    gp3 = s["AmazonEC2/us-east-1/ebs:gp3/on_demand"]
    assert gp3.is_pending and "outside the plausible range" in gp3.pending_reason


def test_duplicated_skus_are_ambiguous_and_both_are_listed():
    items = saved_items()
    twin = json.loads(items[0])
    twin["product"]["sku"] = "TWINSKU000000001"
    s = snap({"PriceList": [*items, json.dumps(twin)]}, *CATALOG)
    trn1 = by_key(s)["AmazonEC2/us-east-1/trn1.32xlarge/on_demand"]
    assert trn1.is_pending and "ambiguous SKUs" in trn1.pending_reason
    assert {r.sku for r in s.rejected if "ambiguous" in r.reason} == {
        "8N6JRMZQ3TC5KS9P",
        "TWINSKU000000001",
    }


def test_a_record_in_another_region_is_unmatched_with_its_location():
    def frankfurt(item):
        attrs = item["product"]["attributes"]
        if attrs.get("instanceType") == "trn1.32xlarge":
            attrs.pop("regionCode")
            attrs["location"] = "EU (Frankfurt)"

    s = snap(hostile(frankfurt), *CATALOG)
    (u,) = [u for u in s.unmatched if u.sku == "8N6JRMZQ3TC5KS9P"]
    assert u.closest_key == "AmazonEC2/us-east-1/trn1.32xlarge/on_demand"
    assert u.reason.startswith("location 'EU (Frankfurt)' is not us-east-1 (US East (N. Virginia))")


def test_a_product_of_a_service_trncost_does_not_price_is_unmatched():
    rds = {"product": {"sku": "RDSSKU0000000001", "attributes": {"servicecode": "AmazonRDS"}}}
    s = snap({"PriceList": [json.dumps(rds)]}, *CATALOG)
    (u,) = s.unmatched
    assert u.service == "AmazonRDS" and "no price key of this catalog" in u.reason


# -- locations and plausible ranges --------------------------------------------------------------
def test_location_names_come_from_botocore_with_the_rules():
    assert location_names("eu-central-1") >= {"Europe (Frankfurt)", "EU (Frankfurt)"}
    assert region_of("  eu (frankfurt) ") == "eu-central-1"
    assert region_of("US East (N. Virginia)") == "us-east-1"
    for nowhere in ("Any", "US West (Los Angeles)", "Antarctica (South Pole)"):
        assert region_of(nowhere) is None
    assert location_names("xx-nowhere-1") == frozenset()


def test_the_price_list_endpoint_regions_are_botocores_and_bound_client_and_stage():
    # Given the one list of Price List Query API regions: botocore's endpoint data agrees
    from botocore.session import get_session

    assert sorted(PRICE_LIST_REGIONS) == sorted(get_session().get_available_regions("pricing"))
    # When a client or a stage names another region, Then both refuse it, naming the list
    with pytest.raises(ValueError, match="served from .*us-east-1.*, not eu-west-1"):
        PriceListClient("eu-west-1", client=object())
    with pytest.raises(ValueError, match="not served from eu-west-1; use one of ap-south-1, "):
        StageConfig.model_validate(
            {
                "region": "eu-west-1",
                "price_list_endpoint_region": "eu-west-1",
                "catalog": {"instance_types": ["trn2.48xlarge"], "regions": ["eu-west-1"]},
            }
        )
    assert PriceListClient("ap-south-1", client=object()).region == "ap-south-1"


def test_plausible_ranges_by_unit():
    assert set(RANGES) == {"Hrs", "GB-Mo", "GB", "Metrics"}
    assert implausible("Hrs", [Decimal("0.0042"), Decimal("113.9")]) is None
    assert implausible("Hrs", [Decimal(0), Decimal("1.5")]) is None  # a free tier is not checked
    too_cheap = implausible("GB-Mo", [Decimal("0.000023")])
    assert too_cheap and "$0.000023 per GB-Mo is outside the plausible range" in too_cheap
    assert implausible("Hrs", [Decimal("9000")])
    assert implausible("block", [Decimal("1")]) is None  # blocks are checked per instance-hour


def test_an_implausible_capacity_block_fee_is_rejected():
    offering = {
        "CapacityBlockOfferingId": "cbo-1",
        "InstanceType": "p5.48xlarge",
        "UpfrontFee": "0.001",
        "CurrencyCode": "USD",
        "CapacityBlockDurationHours": 24,
        "InstanceCount": 1,
    }
    quote, rejected = capacity_block_quote(
        "p5.48xlarge", "us-east-1", [offering], snapshot_id="ps-1", queried_at=NOW.isoformat()
    )
    assert quote.is_pending and "outside the plausible range" in rejected[0].reason
    assert quote.basis == "official"


def test_the_instance_query_still_pins_linux_shared_on_demand():
    q = instance_query("trn2.48xlarge", "us-east-1")
    fields = {f["Field"] for f in q.api_filters()}
    assert {"regionCode", "operatingSystem", "tenancy", "capacitystatus", "marketoption"} <= fields
