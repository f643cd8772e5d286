"""IAM written once: the action lists several stacks grant, the grants, the ARNs they name.

What each function may do with the table differs (least privilege: see TABLE_ACTIONS in each
stack, beside the code paths that need them); how a table grant is made does not: the table's
ARN for the item actions, each index by name (no `index/*`) for queries only.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from constructs import Construct

from stacks.data import index_arns

# Read-only Price List Query API and Capacity Block offerings: neither supports resource-level
# permissions (Service Authorization Reference), so these take Resource "*".
PRICE_LIST_ACTIONS = [
    "pricing:GetProducts",
    "pricing:DescribeServices",
    "pricing:GetAttributeValues",
]
CAPACITY_BLOCK_ACTIONS = ["ec2:DescribeCapacityBlockOfferings"]
# Read-only SageMaker Training Plan offerings (no resource-level permissions either): the API
# quotes them beside Capacity Blocks (POST /estimates/{id}/capacity).
TRAINING_PLAN_ACTIONS = ["sagemaker:SearchTrainingPlanOfferings"]
INDEX_ACTIONS = ["dynamodb:Query"]  # an index only serves queries
BUS_ACTIONS = ["events:PutEvents"]
# A function writes its own log group only (instead of AWSLambdaBasicExecutionRole).
LOG_WRITE_ACTIONS = ["logs:CreateLogStream", "logs:PutLogEvents"]
INVOKE_ACTIONS = ["lambda:InvokeFunction"]


def grant(role: iam.IRole, actions: Sequence[str], resources: Sequence[str]) -> None:
    """One Allow statement on `role`'s default policy."""
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=list(actions), resources=list(resources))
    )


def grant_table(role: iam.IRole, table: dynamodb.ITable, actions: Sequence[str]) -> None:
    """`actions` on the table, and queries on each of its indexes."""
    grant(role, actions, [table.table_arn])
    grant(role, INDEX_ACTIONS, index_arns(table))


def grant_put_events(role: iam.IRole, bus: events.IEventBus) -> None:
    grant(role, BUS_ACTIONS, [bus.event_bus_arn])


def grant_price_reads(role: iam.IRole) -> None:
    """What a price snapshot reads: the Price List and Capacity Block offerings (Resource "*")."""
    grant(role, PRICE_LIST_ACTIONS + CAPACITY_BLOCK_ACTIONS, ["*"])


def regional_arn(scope: Construct, service: str, resource: str, *, account: bool = True) -> str:
    """arn:<partition>:<service>:<region>:<account>:<resource>/*, from pseudo parameters (the
    deploy's own account and region, and one cdk-nag acknowledgement for every stage).
    `account=False` leaves the account empty (EC2 images: any owner)."""
    return cdk.Stack.of(scope).format_arn(
        service=service,
        resource=resource,
        resource_name="*",
        region=cdk.Aws.REGION,
        account=cdk.Aws.ACCOUNT_ID if account else "",
        arn_format=cdk.ArnFormat.SLASH_RESOURCE_NAME,
    )
