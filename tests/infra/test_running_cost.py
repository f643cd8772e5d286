"""The running cost in docs/deploy.md counts what the dev stage really deploys: its alarms and
its customer-managed KMS keys (benchmarks/running_cost.py states them), from the synthesized
templates."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.support.examples import ROOT

pytestmark = pytest.mark.infra


def test_the_running_cost_counts_the_stages_alarms_and_keys(synthesized):
    spec = importlib.util.spec_from_file_location(
        "running_cost", ROOT / "benchmarks" / "running_cost.py"
    )
    rc = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = rc  # its dataclasses look their module up
    spec.loader.exec_module(rc)
    counts: dict[str, int] = {}
    for name, template in synthesized.templates.items():
        if name.startswith("dev/"):
            for resource in template.get("Resources", {}).values():
                counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
    assert counts.get("AWS::CloudWatch::Alarm") == rc.ALARMS
    assert counts.get("AWS::KMS::Key") == rc.KMS_KEYS
    assert counts.get("AWS::Lambda::Function") == len(
        {u.what for u in rc.usage() if u.service == "Lambda"}
    )
