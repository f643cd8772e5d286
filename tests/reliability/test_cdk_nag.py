"""cdk-nag on the app as deployed (every stage of cdk.json): no unacknowledged finding; and
checkov over the same templates (its own virtualenv, stacks/checkov.py): none either.

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
CHECKOV_SECTION = "checkov (CloudFormation checks, every stage)"
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


def test_no_checkov_finding_is_unacknowledged(synthesized: Synthesized) -> None:
    from stacks.checkov import ACKNOWLEDGEMENTS, CHECKOV, acknowledgement_for, run

    synthesized.require()
    assert CHECKOV.is_file(), f"{CHECKOV} is missing: `make test` makes it"
    findings = run(synthesized.outdir)
    open_findings = [str(f) for f in findings if acknowledgement_for(f) is None]
    figure(CHECKOV_SECTION, "findings", len(findings))
    figure(CHECKOV_SECTION, "findings unacknowledged", len(open_findings))
    figure(
        CHECKOV_SECTION,
        "acknowledged (with reasons, stacks/checkov.py)",
        f"{len(findings) - len(open_findings)} ({len(ACKNOWLEDGEMENTS)} reasons)",
    )
    assert findings and open_findings == []
