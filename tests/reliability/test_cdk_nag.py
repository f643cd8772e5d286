"""cdk-nag on the app as deployed (every stage of cdk.json): no unacknowledged finding.

The app is built as `cdk synth` builds it (tests/infra/conftest.py does the same for the infra
tests; a session fixture cannot be shared across folders), with asset bundling skipped: the
nag packs look at the templates, not at the bundles.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from reliability_kit import figure

SECTION = "cdk-nag (AwsSolutions + Serverless, every stage)"
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
    "aws:cdk:bundling-stacks": [],
}


def test_no_cdk_nag_finding_is_unacknowledged(tmp_path: Path) -> None:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from app import build_app, cdk_json_context

    app = build_app({**cdk_json_context(), **CLI_CONTEXT}, str(tmp_path))
    error = None
    try:
        app.synth()
    except RuntimeError as exc:  # an unacknowledged ERROR finding fails the synthesis
        error = exc
    report_path = tmp_path / "validation-report.json"
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
