"""cdk-nag on the app as deployed (every stage of cdk.json): no unacknowledged finding.

The app is the session synth the infra tests use (`synthesized`, tests/support/fixtures.py),
built as `cdk synth` builds it, with asset bundling skipped: the nag packs look at the
templates, not at the bundles.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cdk import Synthesized
from tests.support.reliability_kit import figure

SECTION = "cdk-nag (AwsSolutions + Serverless, every stage)"
pytestmark = pytest.mark.infra


def test_no_cdk_nag_finding_is_unacknowledged(synthesized: Synthesized) -> None:
    error = synthesized.error  # an unacknowledged ERROR finding fails the synthesis
    report_path = synthesized.outdir / "validation-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    assert report is not None, f"no cdk-nag report (synth error: {error})"
    plugins = report["pluginReports"]
    open_findings = [
        f"{p['pluginName']}: {v['ruleName']} ({v['severity']}) at "
        + ", ".join(c["constructPath"] for c in v["violatingConstructs"])
        for p in plugins
        for v in p["violations"]
    ]
    acknowledged = sum(
        len(v.get("violatingConstructs", [])) or 1
        for p in plugins
        for v in p.get("suppressedViolations", [])
    )
    figure(SECTION, "packs run", ", ".join(sorted(p["pluginName"] for p in plugins)))
    figure(SECTION, "findings unacknowledged", len(open_findings))
    figure(SECTION, "findings acknowledged (with reasons)", acknowledged)
    assert open_findings == []
    assert error is None, error
