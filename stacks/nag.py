"""cdk-nag, always on, with every acknowledgement written down once, with its reason.

cdk-nag 3 packs are CDK policy-validation plugins (`Validations.of(app).add_plugins`), not
Aspects. On `app.synth()` an unacknowledged ERROR finding makes synthesis fail
(`RuntimeError: ValidationFailed ...`); every finding, WARNING ones too, is written to
`<outdir>/validation-report.json` (`pluginReports[].violations`, and acknowledged ones under
`suppressedViolations`). tests/infra fails on any entry in `violations`.
"""

from __future__ import annotations

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from constructs import IConstruct

# (id, reason), applied to every stack. The id is exactly what the synth report prints after
# "Acknowledge with", pack prefix included, e.g. "Serverless::Serverless-LambdaTracing" or
# "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/...]".
# With the prefix the finding and its reason are kept in validation-report.json under
# `suppressedViolations`; a bare rule id ("AwsSolutions-S1") would also silence the finding but
# leave no record, so it is refused. Every entry needs a reason a reviewer accepts.
ACKNOWLEDGEMENTS: list[tuple[str, str]] = []

VALIDATION_REPORT = "validation-report.json"


def acknowledge(scope: IConstruct, acknowledgements: list[tuple[str, str]]) -> None:
    """Acknowledge cdk-nag findings on `scope` and everything under it."""
    for rule_id, reason in acknowledgements:
        if "::" not in rule_id.split("[", 1)[0]:
            raise ValueError(
                f"acknowledge {rule_id!r} by its full id, as the report prints it after"
                " 'Acknowledge with' (e.g. 'AwsSolutions::AwsSolutions-S1')"
            )
        if not reason.strip():
            raise ValueError(f"a cdk-nag acknowledgement needs a reason: {rule_id!r}")
        cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=rule_id, reason=reason))


def apply_nag(app: cdk.App, acknowledgements: list[tuple[str, str]] | None = None) -> None:
    """Register the AWS Solutions and Serverless packs on `app`; acknowledge per stack."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    acks = ACKNOWLEDGEMENTS if acknowledgements is None else acknowledgements
    for construct in app.node.find_all():
        if isinstance(construct, cdk.Stack):
            acknowledge(construct, acks)
