"""The stage's KMS key for CloudWatch Logs: every trncost log group is encrypted with it.

One customer-managed key per stage, in the data stack (`LogKey`, made by TrncostData; the
other stacks import its ARN). Its policy is KMS's default (the account's administrators manage
it through IAM) plus one statement: CloudWatch Logs of this region may use it, and only for log
groups of this account and region (the `kms:EncryptionContext:aws:logs:arn` condition CloudWatch
Logs documents for encrypting log data). Writers (Lambda, API Gateway, Step Functions) need no
kms: permission: CloudWatch Logs encrypts and decrypts on their behalf; a reader of the logs
needs kms:Decrypt on the key (docs/security.md).

Rotation yearly; the key is retained when its stack is deleted, as the log groups are (deleting
it would make every retained log unreadable).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct, IConstruct

# What CloudWatch Logs does with the key (AWS docs: "Encrypt log data in CloudWatch Logs using
# AWS Key Management Service", step 2, the key policy).
LOGS_KEY_ACTIONS = [
    "kms:Encrypt*",
    "kms:Decrypt*",
    "kms:ReEncrypt*",
    "kms:GenerateDataKey*",
    "kms:Describe*",
]
LOGS_ENCRYPTION_CONTEXT = "kms:EncryptionContext:aws:logs:arn"


class LogKey(Construct):
    """The stage's log key (see the module docstring). `LogKey.of(scope)` finds it."""

    ID = "LogKey"

    def __init__(self, scope: Construct, construct_id: str = ID) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.key = kms.Key(
            self,
            "Key",
            description=f"trncost {stack.stack_name}: encrypts the stage's CloudWatch log groups",
            enable_key_rotation=True,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        log_groups = stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name="*",
            region=cdk.Aws.REGION,
            account=cdk.Aws.ACCOUNT_ID,
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchLogsOfThisAccountAndRegion",
                principals=[iam.ServicePrincipal(f"logs.{cdk.Aws.REGION}.amazonaws.com")],
                actions=LOGS_KEY_ACTIONS,
                resources=["*"],  # in a key policy: this key
                conditions={"ArnLike": {LOGS_ENCRYPTION_CONTEXT: log_groups}},
            )
        )

    @classmethod
    def of(cls, scope: IConstruct) -> kms.IKey:
        """The log key of `scope`'s stage (the one its data stack holds); a stack built on its
        own (tests, one-off apps) gets a key of its own."""
        stack = cdk.Stack.of(scope)
        stage = cdk.Stage.of(stack)
        holders = [stack]
        if stage is not None:
            holders += [c for c in stage.node.children if isinstance(c, cdk.Stack)]
        for holder in holders:
            found = holder.node.try_find_child(cls.ID)
            if isinstance(found, cls):
                return found.key
        return cls(stack).key
