"""The repository's own files the tests read: its root and the bundled example request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = ROOT / "examples" / "llama-8b"
EXAMPLE = EXAMPLE_DIR / "estimate.json"


def example_estimates() -> dict[str, Any]:
    """The bundled example's estimates, by instance type (trn2, trn3 waiting on a PENDING
    price, p5)."""
    from trncost.estimate import estimate
    from trncost_client.requestfile import load_request_file, request_inputs

    return {
        i.candidate.instance_type: estimate(i) for i in request_inputs(load_request_file(EXAMPLE))
    }
