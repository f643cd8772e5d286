"""Sample events in tests/events/, loaded fresh for each use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parent / "events"


def event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / f"{name}.json").read_text())
