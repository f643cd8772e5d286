"""The CDK app synthesizes, passes cdk-nag with no unacknowledged finding, and lints clean."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import assertions
from aws_cdk import aws_s3 as s3
from cfnlint.api import ManualArgs, lint

from app import build_app
from stacks.config import StageConfigError, load_stage_configs
from stacks.nag import acknowledge, apply_nag

pytestmark = pytest.mark.infra

CFN_LINT_IGNORED = ["W3005"]


def _cfn_lint(template: dict, regions: list[str]) -> list[str]:
    config = ManualArgs(regions=regions, ignore_checks=CFN_LINT_IGNORED)
    matches = lint(json.dumps(template), config=config)
    return [f"{m.rule.id} {m.message} ({'/'.join(map(str, m.path))})" for m in matches]


def _violations(report: dict) -> list[str]:
    return [
        f"{plugin['pluginName']}: {v['ruleName']} ({v['severity']}) at "
        + ", ".join(c["constructPath"] for c in v["violatingConstructs"])
        for plugin in report["pluginReports"]
        for v in plugin["violations"]
    ]


def test_dev_stage_synthesizes_with_data_stack(synthesized) -> None:
    # Given the cdk.json context, When the app is synthesized
    synthesized.require()
    # Then the dev stage holds the data stack, with its description
    assert "dev/TrncostData" in synthesized.templates
    template = assertions.Template.from_json(synthesized.templates["dev/TrncostData"])
    assert template.to_json()["Description"].startswith("trncost data")


def test_every_stage_in_cdk_json_is_synthesized(synthesized, cdk_context) -> None:
    synthesized.require()
    stages = {path.split("/")[0] for path in synthesized.templates}
    assert stages == set(cdk_context["stages"])


def test_cdk_nag_reports_no_unacknowledged_findings(synthesized) -> None:
    # warnings included: every finding is fixed or acknowledged in stacks/nag.py
    assert _violations(synthesized.validation_report) == []
    synthesized.require()


def test_cfn_lint_is_clean(synthesized, cdk_context) -> None:
    synthesized.require()
    regions = sorted({cfg["region"] for cfg in cdk_context["stages"].values()})
    findings = [
        f"{path}: {finding}"
        for path, template in synthesized.templates.items()
        for finding in _cfn_lint(template, regions)
    ]
    assert findings == []


def test_cfn_lint_catches_a_finding() -> None:
    template = {
        "Resources": {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"Colour": "blue"}}}
    }
    assert any(finding.startswith("E3002") for finding in _cfn_lint(template, ["us-east-1"]))


def test_bad_region_error_names_stage_and_field(cdk_context) -> None:
    context = cdk_context
    context["stages"]["dev"]["region"] = "us-east"
    with pytest.raises(StageConfigError, match=r"(?s)stage 'dev'.*field 'region'"):
        load_stage_configs(context)


def test_bad_retention_and_extra_field_are_named(cdk_context) -> None:
    context = cdk_context
    context["stages"]["dev"]["log_retention_days"] = 31
    context["stages"]["dev"]["colour"] = "blue"
    with pytest.raises(StageConfigError) as caught:
        load_stage_configs(context)
    assert "field 'log_retention_days'" in str(caught.value)
    assert "field 'colour'" in str(caught.value)


def test_unknown_stage_selection_is_refused(cdk_context, tmp_path: Path) -> None:
    with pytest.raises(StageConfigError, match="unknown stage 'prod'"):
        build_app({**cdk_context, "stage": "prod"}, str(tmp_path))


def _app_with_unencrypted_bucket(outdir: Path, context: dict) -> tuple[cdk.App, cdk.Stack]:
    app = cdk.App(outdir=str(outdir), context=context)
    stack = cdk.Stack(app, "Throwaway")
    s3.Bucket(stack, "Bucket")  # no access logs, no enforce_ssl: AwsSolutions-S1 and -S10
    return app, stack


def test_cdk_nag_catches_a_finding(tmp_path: Path, cli_context, synthesize) -> None:
    # Given a stack with a bucket that breaks AWS Solutions rules
    app, _ = _app_with_unencrypted_bucket(tmp_path, cli_context)
    apply_nag(app, acknowledgements=[])
    # When it is synthesized
    result = synthesize(app, tmp_path)
    # Then synthesis fails and the report names the rules
    assert result.error is not None and "ValidationFailed" in str(result.error)
    found = _violations(result.validation_report)
    assert any("AwsSolutions-S1 (error)" in line for line in found), found
    assert any("AwsSolutions-S10 (error)" in line for line in found), found


def test_cdk_nag_acknowledgement_suppresses_exactly_that_rule(
    tmp_path: Path, cli_context, synthesize
) -> None:
    app, _ = _app_with_unencrypted_bucket(tmp_path, cli_context)
    apply_nag(app, acknowledgements=[("AwsSolutions::AwsSolutions-S1", "throwaway test bucket")])
    result = synthesize(app, tmp_path)
    found = _violations(result.validation_report)
    assert not any("AwsSolutions-S1 " in line for line in found), found
    assert any("AwsSolutions-S10 " in line for line in found), found


def test_cdk_nag_fully_acknowledged_stack_synthesizes_with_reasons_on_record(
    tmp_path: Path, cli_context, synthesize
) -> None:
    app, stack = _app_with_unencrypted_bucket(tmp_path, cli_context)
    reasons = [
        ("AwsSolutions::AwsSolutions-S1", "no access logs: test"),
        ("AwsSolutions::AwsSolutions-S10", "no TLS: test"),
    ]
    apply_nag(app, acknowledgements=reasons)
    result = synthesize(app, tmp_path)
    assert result.error is None
    suppressed = {
        (v["acknowledgedId"], v["reason"])
        for plugin in result.validation_report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
    }
    assert suppressed == set(reasons)
    with pytest.raises(ValueError, match="reason"):
        acknowledge(stack, [("AwsSolutions::AwsSolutions-S10", " ")])
    with pytest.raises(ValueError, match="full id"):  # bare ids silence without a record
        acknowledge(stack, [("AwsSolutions-S10", "a reason")])
