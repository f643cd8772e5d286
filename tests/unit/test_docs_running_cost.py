"""docs/deploy.md's running cost of a stage is what benchmarks/running_cost.py computes: Price
List items in their real format, read by trncost's own parser, each usage through its tiers."""

from __future__ import annotations

import importlib.util
import re
import sys
from decimal import Decimal

from tests.support.examples import ROOT

DEPLOY = ROOT / "docs" / "deploy.md"


def _module():
    spec = importlib.util.spec_from_file_location(
        "running_cost", ROOT / "benchmarks" / "running_cost.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_deploy_docs_running_cost_is_the_scripts_output():
    block = re.search(
        r"<!-- generated: running-cost -->\n(.*?)<!-- /generated: running-cost -->",
        DEPLOY.read_text(encoding="utf-8"),
        re.S,
    )
    assert block, "docs/deploy.md has no running-cost block"
    assert block.group(1) == _module().table()


def test_every_use_is_priced_by_the_parser_through_its_tiers():
    rc = _module()
    priced = rc.priced()
    assert len(priced) == len(rc.usage())
    by = {use.usagetype: amount for use, _, amount in priced}
    # hand-checked: 20,000 REST requests × $3.50 per million
    assert by["USE1-ApiGatewayRequest"] == Decimal("0.07")
    # 37 alarms × $0.10; 25 metrics × $0.30 (the first tier)
    assert by["USE1-CW:AlarmMonitorUsage"] == Decimal(rc.ALARMS) * Decimal("0.10")
    assert by["USE1-CW:MetricMonitorUsage"] == Decimal("7.50")
    # DynamoDB's first 25 GB are a zero-priced tier of the item itself
    assert by["USE1-TimedStorage-ByteHrs"] == 0
