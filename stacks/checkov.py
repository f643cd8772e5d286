"""checkov beside cdk-nag: every finding it still reports on the synthesized templates is
acknowledged here, once, with its reason (as stacks/nag.py does for cdk-nag).

checkov runs from its own virtualenv (`.venv-checkov`, pinned by requirements-checkov.txt, made
by the Makefile): its pins (boto3 1.35, networkx 2, cfn-lint's) clash with the project's. The
infra tests (tests/infra/test_checkov.py) run it over every stack of the app and fail on any
finding not acknowledged below, and on an acknowledgement that matches no finding.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
CHECKOV = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"

_SSE_SQS = (
    "Every queue is encrypted at rest with SQS-managed keys (SqsManagedSseEnabled, SSE-SQS) and"
    " refuses plain HTTP (enforce_ssl); CKV_AWS_27 recognises only a KMS key (KmsMasterKeyId)."
    " A KMS key would need a key policy for every sender (EventBridge rules, EventBridge"
    " Scheduler, Lambda's async DLQ delivery) and kms: grants for every consumer, and protects"
    " job state-change events that hold no secrets no better."
)
_NO_VPC = (
    "trncost's functions reach only AWS APIs (DynamoDB, EventBridge, CloudWatch, the Price List,"
    " SageMaker, EC2, Batch) over TLS with SigV4, and nothing in a private network: a VPC would"
    " add NAT gateways or an interface endpoint per service (hourly cost) and ENI cold starts"
    " to protect no private resource."
)
_ENV_KEY = (
    "The environment holds no secrets, only names and ARNs (table, bus, state machine, roles),"
    " the price catalog and the stage's plan bounds; Lambda encrypts it at rest with the AWS"
    " managed key. A customer managed key would add kms:Decrypt to every role for nothing"
    " secret."
)
# (check id, template resource glob "Type.LogicalId", reason)
ACKNOWLEDGEMENTS: list[tuple[str, str, str]] = [
    ("CKV_AWS_27", "AWS::SQS::Queue.*", _SSE_SQS),
    ("CKV_AWS_117", "AWS::Lambda::Function.*", _NO_VPC),
    ("CKV_AWS_173", "AWS::Lambda::Function.*", _ENV_KEY),
    (
        "CKV_AWS_119",
        "AWS::DynamoDB::Table.DataTable*",
        "The table uses the AWS managed key (aws/dynamodb): KMS, every use of the key in"
        " CloudTrail, no key policy or grants to keep (stacks/data.py TrncostTable). A customer"
        " managed key buys cross-account control and crypto-shredding that trial metrics and"
        " public prices do not need, at the price of kms: grants for every function.",
    ),
    (
        "CKV_AWS_120",
        "AWS::ApiGateway::Stage.*",
        "No API Gateway cache: every answer is per caller (IAM-signed) and estimates change"
        " with each new trial or snapshot, so a cached answer would be stale or another"
        " caller's; the cache would also bill by the hour.",
    ),
]


@dataclass(frozen=True)
class Finding:
    check_id: str
    name: str
    resource: str  # Type.LogicalId
    template: str  # file name

    def __str__(self) -> str:
        return f"{self.check_id} {self.name} at {self.resource} ({self.template})"


def acknowledgement_for(finding: Finding) -> tuple[str, str, str] | None:
    for ack in ACKNOWLEDGEMENTS:
        check_id, resource, _ = ack
        if finding.check_id == check_id and fnmatch.fnmatchcase(finding.resource, resource):
            return ack
    return None


def run(templates: Path, checkov: Path = CHECKOV) -> list[Finding]:
    """checkov's failed checks over the CloudFormation templates under `templates`."""
    if not checkov.is_file():
        raise FileNotFoundError(f"{checkov} is missing: `make checkov-venv` (make test) makes it")
    done = subprocess.run(
        [str(checkov), "-d", str(templates), "--framework", "cloudformation"]
        + ["--output", "json", "--quiet", "--compact", "--skip-download"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):  # 1: some check failed
        raise RuntimeError(f"checkov failed ({done.returncode}): {done.stderr[-2000:]}")
    report: Any = json.loads(done.stdout or "[]")
    reports = report if isinstance(report, list) else [report]
    findings = []
    for part in reports:
        for failed in (part.get("results") or {}).get("failed_checks", []):
            findings.append(
                Finding(
                    check_id=failed["check_id"],
                    name=failed["check_name"],
                    resource=failed["resource"],
                    template=Path(failed["file_path"]).name,
                )
            )
    return findings
