"""The API handler's cold start: importing it loads neither the X-Ray SDK nor Powertools'
OpenAPI models nor the estimate engine (made on first use), and its SnapStart hooks make them
ahead of a snapshot and give a restored sandbox fresh services and its own random state."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from tests.support.handlers import FakeContext, api_event, load_handler

ROOT = Path(__file__).resolve().parents[2]
LAZY = (
    "aws_xray_sdk",
    "aws_lambda_powertools.event_handler.openapi.models",
    "trncost.estimate",
    "numpy",
)


def test_importing_the_api_handler_leaves_the_heavy_parts_for_later() -> None:
    code = (
        "import json, sys\n"
        "from trncost_client.local.handlers import load_handler\n"
        "load_handler('api')\n"
        f"print(json.dumps([m for m in {list(LAZY)!r} if m in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT")}
    env.update(
        {
            "AWS_DEFAULT_REGION": "us-east-1",
            "TRNCOST_TABLE": "t",
            "POWERTOOLS_SERVICE_NAME": "api",
            "POWERTOOLS_TRACE_DISABLED": "true",
        }
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_first_request_makes_the_tracer_and_still_validates(monkeypatch) -> None:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("TRNCOST_TABLE", "t")
    module = load_handler("api")
    assert not module.tracer.made
    # a body that fails validation is still a 422 naming the field (no AWS call needed)
    bad = {"workload_id": "w", "model": {"name": "m", "parameters": 1e30}}
    out = module.handler(api_event("POST", "/workloads", bad), FakeContext())
    assert out["statusCode"] == 422
    assert "model.parameters" in json.loads(out["body"])["fields"]
    assert module.tracer.made


def test_before_snapshot_warms_up_and_after_restore_starts_fresh(monkeypatch) -> None:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("TRNCOST_TABLE", "t")
    module = load_handler("api")
    # Before the snapshot: the Tracer is made, the docs route and the models are built, and
    # no AWS client exists (nothing that holds credentials or a connection)
    module.before_snapshot()
    assert module.tracer.made
    assert "records" not in vars(module.services) and "settings" not in vars(module.services)
    docs = module.handler(api_event("GET", "/docs"), FakeContext())
    assert docs["statusCode"] == 200 and "swagger" in docs["body"].lower()
    # After a restore: new services, and random state of its own (not the snapshot's copy)
    before = module.services
    state = random.getstate()
    module.after_restore()
    assert module.services is not before
    copy = random.Random()
    copy.setstate(state)
    assert random.random() != copy.random()
