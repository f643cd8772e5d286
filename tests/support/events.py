"""The real-format samples in tests/events/ (each with its source), loaded fresh for each use,
and how a test puts one on an EventBridge bus (moto)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parents[1] / "events"
# A GetProducts response saved from the Price List API (us-east-1): tests/events/pricelist/.
SAVED_PRICE_LIST = EVENTS / "pricelist" / "get_products_us_east_1.json"


def event_path(name: str) -> Path:
    """The file of sample `name` (`"batch_job_succeeded"`, `"pricelist/get_products_us_east_1"`)."""
    path = EVENTS / f"{name}.json"
    if not path.is_file():
        known = sorted(str(p.relative_to(EVENTS).with_suffix("")) for p in EVENTS.rglob("*.json"))
        raise FileNotFoundError(f"no sample event {name!r} in {EVENTS}; there are {known}")
    return path


def load_event(name: str) -> dict[str, Any]:
    """Sample `name` as a fresh dict (safe to modify), e.g.
    `load_event("sagemaker_training_job_completed")`."""
    loaded: dict[str, Any] = json.loads(event_path(name).read_text())
    return loaded


def saved_price_list() -> dict[str, Any]:
    """The saved GetProducts response (us-east-1), as a fresh dict."""
    return load_event("pricelist/get_products_us_east_1")


def put_event(events: Any, e: dict[str, Any], bus: str) -> None:
    """Put sample-shaped event `e` on `bus` with an EventBridge client, as the source would."""
    entry = {
        "Source": e["source"],
        "DetailType": e["detail-type"],
        "Detail": json.dumps(e["detail"]),
        "EventBusName": bus,
        "Time": datetime.fromisoformat(e["time"].replace("Z", "+00:00")),
    }
    assert events.put_events(Entries=[entry])["FailedEntryCount"] == 0
