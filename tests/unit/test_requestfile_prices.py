"""An estimate request may carry a saved Price List file instead of a snapshot."""

from __future__ import annotations

import json

import pytest

from tests.support.events import SAVED_PRICE_LIST
from tests.support.factories import trial, workload
from trncost.errors import RequestFileError
from trncost.estimate import estimate
from trncost_client.requestfile import load_request_file, request_inputs


def request(tmp_path, prices):
    trials = [
        trial("t-2", phase="target", count=2),
        trial("t-3", instance_type="trn3.48xlarge", phase="target", count=2),
    ]
    data = {
        "workload": workload().model_dump(mode="json"),
        "trials": [t.model_dump(mode="json") for t in trials],
        "prices": prices,
        "candidates": [
            {
                "candidate": {
                    "instance_type": "trn2.48xlarge",
                    "instance_count": 2,
                    "region": "us-east-1",
                }
            },
            {
                "candidate": {
                    "instance_type": "trn3.48xlarge",
                    "instance_count": 2,
                    "region": "us-east-1",
                }
            },
        ],
    }
    path = tmp_path / "estimate.json"
    path.write_text(json.dumps(data))
    return path


def test_a_saved_price_list_prices_the_request_offline(tmp_path):
    (tmp_path / "saved.json").write_text(SAVED_PRICE_LIST.read_text())
    loaded = load_request_file(request(tmp_path, "saved.json"))
    assert loaded.prices.source == "saved_price_list_file"
    trn2, trn3 = (estimate(i) for i in request_inputs(loaded))
    row = next(
        r for r in trn2.inputs if r.id == "price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand"
    )
    assert row.provenance.kind == "official_price"
    assert row.provenance.source == "saved_price_list_file"
    assert row.provenance.sku == "Q2ZB7E3VRK8W9TNX"
    assert trn2.status == "complete"
    assert trn3.status == "incomplete"
    assert "no Price List product for trn3.48xlarge" in trn3.pending_terms[0].reason


def test_a_file_that_is_not_a_price_list_names_the_problem(tmp_path):
    with pytest.raises(RequestFileError, match="prices: not a saved Price List"):
        load_request_file(request(tmp_path, {"products": 5}))


def test_bad_items_in_a_saved_price_list_are_rejected_and_counted(tmp_path):
    loaded = load_request_file(request(tmp_path, {"PriceList": [42]}))
    assert [r.reason for r in loaded.prices.rejected] == ["PriceList item is not a JSON object"]
    assert all(q.status == "pending" for q in loaded.prices.quotes)
