"""SageMaker training prices end to end on moto (issue 12): the stage catalog names an `ml.`
type, trncost's own live snapshot asks AmazonSageMaker (the Price List Query API stubbed with
botocore's Stubber, answering as the API filters: every product whose attributes pass the sent
filters, hosting and other regions left out by the API, whatever else by trncost), and a
SageMaker candidate posted to the real API handler is priced from the training price —
billable seconds, no 60 s minimum, basis official — its trial from the job's billable seconds.

The SageMaker items are constructed from the documented format
(tests/events/pricelist/README.md says from which sources).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from botocore.stub import Stubber

from tests.support.events import load_event
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, load_handler
from tests.support.stubs import pricing_client, saved_items
from trncost.model.catalog import Catalog
from trncost.pricing.catalog import ProductQuery, queries_for
from trncost.pricing.client import PriceListClient
from trncost.settings import (
    BUS_NAME_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    TABLE_NAME_ENV,
)

ML = "ml.trn1.32xlarge"
CATALOG = Catalog(instance_types=[ML, "trn2.48xlarge"], regions=["us-east-1"])
WL = "wl-sm"
SM_KEY = f"AmazonSageMaker/us-east-1/{ML}/on_demand"


def _sagemaker_items() -> list[str]:
    return list(load_event("pricelist/get_products_sagemaker_constructed")["PriceList"])


def _passes(attributes: dict[str, str], service: str, query: ProductQuery) -> bool:
    """GetProducts' own filtering: the service, then every filter on an attribute the product
    has (TERM_MATCH/EQUALS equal, CONTAINS a substring, case-insensitive)."""
    if service != query.service_code:
        return False
    for f in query.api_filters():
        actual = attributes.get(f["Field"])
        if actual is None:
            return False
        want, got = f["Value"].lower(), actual.lower()
        if (want not in got) if f["Type"] == "CONTAINS" else (want != got):
            return False
    return True


def expect_as_the_api_filters(stub: Stubber, catalog: Catalog, items: list[str]) -> list[int]:
    """One GetProducts answer per catalog query: the items the API's filters pass. Returns how
    many items each SageMaker answer held."""
    parsed = [(raw, json.loads(raw)) for raw in items]
    held = []
    for query in queries_for(catalog):
        page = [
            raw
            for raw, item in parsed
            if _passes(item["product"]["attributes"], item["serviceCode"], query)
        ]
        if query.service_code == "AmazonSageMaker":
            held.append(len(page))
        params: dict[str, Any] = {
            "ServiceCode": query.service_code,
            "Filters": query.api_filters(),
            "FormatVersion": "aws_v1",
            "MaxResults": 100,
        }
        stub.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": page}, params)
    return held


@pytest.fixture
def api(table, bus, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(BUS_NAME_ENV, bus.name)
    monkeypatch.setenv(CATALOG_ENV, CATALOG.model_dump_json())
    monkeypatch.setenv(LIVE_PRICES_ENV, "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    handler = load_handler("api")

    def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        out = handler.handler(api_event(method, path, body), FakeContext())
        return out["statusCode"], json.loads(out["body"])

    call.services = handler.services  # type: ignore[attr-defined]
    return call


def test_a_sagemaker_candidate_is_priced_from_trncosts_own_sagemaker_training_price(api):
    # Given: trncost's own snapshot of a catalog with an ml. type
    client = pricing_client()
    with Stubber(client) as stub:
        held = expect_as_the_api_filters(stub, CATALOG, saved_items() + _sagemaker_items())
        api.services.price_list = PriceListClient("us-east-1", client=client)
        status, taken = api("POST", "/prices/snapshots", {})
        stub.assert_no_pending_responses()
    assert status == 201, taken
    assert held == [1]  # the API's filters leave out hosting, processing and other regions
    status, snap = api("GET", f"/prices/snapshots/{taken['snapshot_id']}")
    quote = next(q for q in snap["quotes"] if "/".join(q["key"].values()) == SM_KEY)
    assert quote["status"] == "official" and quote["basis"] == "official"
    assert [Decimal(t["usd"]) for t in quote["tiers"]] == [Decimal("28.497")]
    assert quote["sku"] == "EXSMTRN1TRAINUE1"  # the USE1-Train product, not USE1-Host
    assert quote["origin"]["service_code"] == "AmazonSageMaker"
    assert {"type": "CONTAINS", "field": "usagetype", "value": f"Train:{ML}"} in quote["origin"][
        "filters"
    ]

    # and a SageMaker trial billed 7,300 instance-seconds
    assert api("POST", "/workloads", workload(workload_id=WL).model_dump(mode="json"))[0] == 201
    sm = {"instance_type": ML, "instance_count": 2, "region": "us-east-1"}
    t = trial(
        "t-sm",
        instance_type=ML,
        count=2,
        phase="target",
        workload_id=WL,
        wall={"steady_s": 3600},
        candidate={**sm, "platform": "sagemaker"},
        billed_instance_seconds=7300.0,
    )
    assert api("POST", f"/workloads/{WL}/trials", t.model_dump(mode="json"))[0] == 201

    # When a SageMaker candidate is estimated on the latest prices
    ask = {"candidate": sm, "assumptions": {"ebs_gb_per_instance": 200}}
    status, made = api("POST", f"/workloads/{WL}/estimates", ask)
    assert status == 201, made
    est = made["estimate"]
    assert est["candidate"]["platform"] == "sagemaker"  # an ml. type runs on SageMaker

    # Then its instance hours are SageMaker's training price, as SageMaker bills them
    assert est["status"] != "infeasible", est["infeasible_reason"]
    hours = next(li for li in est["line_items"] if li["name"] == f"2× {ML}")
    assert hours["price_key"] == SM_KEY and hours["price_basis"] == "official"
    assert Decimal(hours["rate_usd"]) == Decimal("28.497")
    billed = next(r for r in est["inputs"] if r["id"] == "billing:seconds_per_instance")
    assert "no minimum" in billed["label"]
    held_s = Decimal(str(billed["value"]))
    expected = (2 * held_s / 3600 * Decimal("28.497")).quantize(Decimal("0.000001"))
    assert Decimal(hours["amount_usd"]) == expected
    # the trial as SageMaker billed it: 7,300 s × $28.497 / 3,600
    trial_line = next(li for li in est["line_items"] if li["name"].startswith("trial t-sm"))
    assert trial_line["price_key"] == SM_KEY
    assert Decimal(trial_line["amount_usd"]) == Decimal("57.785583")
    # and the candidate's own instance price is official (no EC2 key stands in for it)
    assert not any(
        li["price_key"] == f"AmazonEC2/us-east-1/{ML}/on_demand" for li in est["line_items"]
    )
    assert est["price_basis"] == "official"
    # its training volumes are priced at the EC2 gp3 rate, and it says so
    ebs = next(li for li in est["line_items"] if li["name"] == "EBS gp3 volumes")
    assert ebs["price_key"] == "AmazonEC2/us-east-1/ebs:gp3/on_demand"
    assert any(w["code"] == "sagemaker_storage_at_ebs_rate" for w in est["warnings"])
