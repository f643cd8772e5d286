"""Event names and patterns, defined once for CDK, the handlers, the local runtime and tests."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

SOURCE = "trncost"
AGENT_SOURCE = "trncost.agent"


class DetailType(StrEnum):
    price_snapshot_taken = "Price Snapshot Taken"
    trial_recorded = "Trial Recorded"
    trial_run_completed = "Trial Run Completed"  # sent by the trial agent (AGENT_SOURCE)
    # billed actuals kept (POST /actuals, Cost Explorer, a SageMaker job's same-day figure)
    actuals_imported = "Actuals Imported"
    # a new estimate version whose own decision (action or reasons) differs from the one before:
    # the readiness watch's news (a Trainium3 price appeared), or any refresh's
    estimate_decision_changed = "Estimate Decision Changed"


def pattern(detail_type: DetailType, source: str = SOURCE) -> dict[str, Any]:
    """The EventBridge event pattern that matches one of trncost's own events."""
    return {"source": [source], "detail-type": [detail_type.value]}
