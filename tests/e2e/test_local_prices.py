"""The local runtime's prices over real HTTP (issue 12): the bundled file is seeded as an
`example`, never as official; an upload is stored as a `saved_file`, supplied by `local`, and
used by its id without moving `latest`."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "tests" / "events" / "pricelist" / "get_products_us_east_1.json"


def test_the_seeded_prices_are_the_example_and_say_so(server):
    status, latest = server.call("GET", "/prices/snapshots/latest")
    assert status == 200 and latest["basis"] == "example" and latest["source"] == "example_file"
    assert latest["origin"]["basis"] == "example"
    assert latest["origin"]["file"].endswith("saved_price_list.json")
    assert all(q["basis"] == "example" for q in latest["quotes"])
    status, page = server.call("GET", "/prices/snapshots")
    assert {s["basis"] for s in page["items"]} >= {"example"}


def test_an_upload_is_a_saved_file_used_by_id_and_latest_stays(server):
    status, before = server.call("GET", "/prices/snapshots/latest")
    saved = json.loads(SAVED.read_text())
    status, up = server.call(
        "POST", "/prices/snapshots", {"saved_price_list": saved, "note": "e2e"}
    )
    assert status == 201, up
    assert up["basis"] == "saved_file" and not up["published_as_latest"]
    assert up["origin"]["supplied_by"] == "local" and up["origin"]["note"] == "e2e"
    status, after = server.call("GET", "/prices/snapshots/latest")
    assert after["snapshot_id"] == before["snapshot_id"]
    status, got = server.call("GET", f"/prices/snapshots/{up['snapshot_id']}")
    assert status == 200 and got["basis"] == "saved_file"
    # the saved file prices us-east-1 only (the catalog also asks for us-east-2): PENDING
    assert any(q["status"] == "pending" for q in got["quotes"])
    # what answers no key is listed with its reason: the capacity-block SKU, the IA logs
    reasons = {u["sku"]: u["reason"] for u in got["unmatched"]}
    assert reasons["Y6PW3ZTQ8M2RKD4C"] == "marketoption 'CapacityBlock' is not 'OnDemand'"
    assert len(reasons) == 2
