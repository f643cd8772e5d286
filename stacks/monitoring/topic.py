"""The SNS topic every trncost alarm of a stage notifies."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct


class AlarmTopic(Construct):
    """The SNS topic every alarm notifies: KMS-encrypted with its own key (CloudWatch may not
    use the AWS managed aws/sns key), TLS only, publishable by this account's trncost alarms."""

    def __init__(
        self, scope: Construct, construct_id: str, *, stage_name: str, alarm_email: str | None
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.key = kms.Key(
            self,
            "Key",
            description=f"trncost-{stage_name}: encrypts the alarm topic",
            enable_key_rotation=True,
            # It protects notifications in flight only: nothing outlives the topic.
            removal_policy=cdk.RemovalPolicy.DESTROY,
            pending_window=cdk.Duration.days(7),
        )
        # CloudWatch publishes to an encrypted topic only with these on the key (SNS docs,
        # "compatibility with AWS services"). Who may publish at all is the topic policy's
        # call: this account's trncost-<stage>-* alarms.
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToUseTheKey",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy: this key
            )
        )
        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=f"trncost-{stage_name}-alarms",
            display_name=f"trncost {stage_name} alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        self.alarm_arn_pattern = stack.format_arn(
            service="cloudwatch",
            resource="alarm",
            resource_name=f"{alarm_name_prefix(stage_name)}*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowThisStagesAlarmsToPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "ArnLike": {"aws:SourceArn": self.alarm_arn_pattern},
                    "StringEquals": {"aws:SourceAccount": stack.account},
                },
            )
        )
        self.email: sns.Subscription | None = None
        if alarm_email:  # SNS mails a confirmation link first: nothing arrives until clicked
            self.email = self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))


def alarm_name_prefix(stage_name: str) -> str:
    return f"trncost-{stage_name}-"
