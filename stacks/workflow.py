"""Trial workflow stack: the trial plan state machine, its task Lambda, the training role.

client ─POST trial-plan─► api Lambda ─StartExecution─► state machine (Standard)
    each run: trial_steps Lambda ─budget_check─► launch (SageMaker | EC2 | Batch, PassRole of
    the training role) ─► wait ─► check_record (the ingest writes it) ─► gate ─► next / end

The definition is `trncost/workflow/state_machine.asl.json`, inlined as is with
DefinitionSubstitutions (the same file the tests render). Logging ALL with execution data to
its own log group (stage retention), X-Ray tracing on.

The training role is the one role trial jobs run as (SageMaker execution role; EC2 through the
instance profile): it may publish the agent's metrics (namespace trncost/Agent only) and its
event (the project bus only), and write SageMaker training logs. Access to the team's dataset
and output buckets and to its image repository is the team's to attach (the bucket names are
not known here): outputs TrainingRoleArn / TrainingRoleName. The task Lambda may pass only
this role, and only to SageMaker and EC2.

stacks/stage.py wires it in and calls `grant_start(api_function)`, which lets the API start
and read plan executions and sets TRNCOST_TRIAL_PLAN_STATE_MACHINE_ARN on it.
"""

from __future__ import annotations

from typing import cast

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from stacks.config import StageConfig
from stacks.data import index_arns
from stacks.lambda_factory import TrncostFunction
from trncost.api.trial_plans import STATE_MACHINE_ARN_ENV
from trncost.events import BUS_NAME_ENV
from trncost.metrics.names import AGENT_NAMESPACE
from trncost.store.schema import TABLE_NAME_ENV
from trncost.workflow.definition import raw_definition, substitutions
from trncost.workflow.steps import AGENT_BUS_ENV, INSTANCE_PROFILE_ENV, TRAINING_ROLE_ENV

STEPS_TIMEOUT = cdk.Duration.seconds(60)
POLL_INTERVAL_S = 300
MAX_POLLS = 600
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
]
SAGEMAKER_ACTIONS = [
    "sagemaker:CreateTrainingJob",
    "sagemaker:StopTrainingJob",
    "sagemaker:DescribeTrainingJob",
    "sagemaker:AddTags",
]
EC2_RUN_ACTIONS = ["ec2:RunInstances"]
EC2_TAG_ACTIONS = ["ec2:CreateTags"]
EC2_STOP_ACTIONS = ["ec2:TerminateInstances"]
BATCH_ACTIONS = ["batch:SubmitJob", "batch:TagResource"]
BATCH_STOP_ACTIONS = ["batch:TerminateJob"]
START_ACTIONS = ["states:StartExecution"]
TRAINING_SERVICES = ["sagemaker.amazonaws.com", "ec2.amazonaws.com"]

EC2_RUN_RESOURCES = (
    "instance",
    "volume",
    "network-interface",
    "subnet",
    "security-group",
    "key-pair",
    "launch-template",
)

# cdk-nag acknowledgements of this stack: (construct path glob from the stack id, rule, reason).


def _arn(scope: Construct, service: str, resource: str, account: bool = True) -> str:
    return cdk.Stack.of(scope).format_arn(
        service=service,
        resource=resource,
        resource_name="*",
        region=cdk.Aws.REGION,
        account=cdk.Aws.ACCOUNT_ID if account else "",
        arn_format=cdk.ArnFormat.SLASH_RESOURCE_NAME,
    )


class TrncostWorkflow(cdk.Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
        poll_interval_s: int = POLL_INTERVAL_S,
        max_polls: int = MAX_POLLS,
        **kwargs: object,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost workflow: trial plans run by Step Functions (fit, baseline, "
            "target), their launcher and training roles",
            **kwargs,
        )
        self.config = config
        # -- the training role (SageMaker execution role, EC2 instance profile) ----------------
        self.training_role = iam.Role(
            self,
            "TrainingRole",
            assumed_by=iam.CompositePrincipal(
                *(iam.ServicePrincipal(s) for s in TRAINING_SERVICES)
            ),
            description="trncost trial jobs (SageMaker training jobs, EC2 trial instances)",
        )
        self.training_role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["cloudwatch:PutMetricData"],
                resources=["*"],
                conditions={"StringEquals": {"cloudwatch:namespace": AGENT_NAMESPACE}},
            )
        )
        self.training_role.add_to_principal_policy(
            iam.PolicyStatement(actions=["events:PutEvents"], resources=[bus.event_bus_arn])
        )
        self.training_role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:CreateLogGroup"],
                resources=[
                    self.format_arn(
                        service="logs",
                        resource="log-group",
                        resource_name="/aws/sagemaker/TrainingJobs:*",
                        region=cdk.Aws.REGION,
                        account=cdk.Aws.ACCOUNT_ID,
                        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                    )
                ],
            )
        )
        self.instance_profile = iam.InstanceProfile(
            self, "TrainingInstanceProfile", role=self.training_role
        )

        # -- the task Lambda ------------------------------------------------------------------
        self.steps = TrncostFunction(
            self,
            "TrialSteps",
            name="trial_steps",
            config=config,
            description="Trial plan steps: budget check, launch, record check, gates, outcome",
            timeout=STEPS_TIMEOUT,
            environment={
                TABLE_NAME_ENV: table.table_name,
                BUS_NAME_ENV: bus.event_bus_name,
                AGENT_BUS_ENV: bus.event_bus_name,
                TRAINING_ROLE_ENV: self.training_role.role_arn,
                INSTANCE_PROFILE_ENV: self.instance_profile.instance_profile_arn,
            },
        )
        add = self.steps.add_to_role_policy
        add(iam.PolicyStatement(actions=TABLE_ACTIONS, resources=[table.table_arn]))
        add(iam.PolicyStatement(actions=["dynamodb:Query"], resources=index_arns(table)))
        add(
            iam.PolicyStatement(
                actions=SAGEMAKER_ACTIONS, resources=[_arn(self, "sagemaker", "training-job")]
            )
        )
        add(
            iam.PolicyStatement(
                actions=EC2_RUN_ACTIONS,
                resources=[_arn(self, "ec2", r) for r in EC2_RUN_RESOURCES]
                + [_arn(self, "ec2", "image", account=False)],
            )
        )
        add(
            iam.PolicyStatement(
                actions=EC2_TAG_ACTIONS,
                resources=[_arn(self, "ec2", "instance"), _arn(self, "ec2", "volume")],
                conditions={"StringEquals": {"ec2:CreateAction": "RunInstances"}},
            )
        )
        add(
            iam.PolicyStatement(
                actions=EC2_STOP_ACTIONS,
                resources=[_arn(self, "ec2", "instance")],
                conditions={"Null": {"aws:ResourceTag/trncost:plan": "false"}},
            )
        )
        add(
            iam.PolicyStatement(
                actions=BATCH_ACTIONS,
                resources=[
                    _arn(self, "batch", "job-queue"),
                    _arn(self, "batch", "job-definition"),
                    _arn(self, "batch", "job"),
                ],
            )
        )
        add(iam.PolicyStatement(actions=BATCH_STOP_ACTIONS, resources=[_arn(self, "batch", "job")]))
        add(
            iam.PolicyStatement(
                actions=["iam:PassRole"],
                resources=[self.training_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": TRAINING_SERVICES}},
            )
        )

        # -- the state machine ----------------------------------------------------------------
        self.log_group = logs.LogGroup(
            self, "StateMachineLogs", removal_policy=cdk.RemovalPolicy.RETAIN
        )
        cast(
            logs.CfnLogGroup, self.log_group.node.default_child
        ).retention_in_days = config.log_retention_days
        self.substitutions = substitutions(
            self.steps.function.function_arn, poll_interval_s, max_polls
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            definition_body=sfn.DefinitionBody.from_string(raw_definition()),
            definition_substitutions=self.substitutions,
            state_machine_type=sfn.StateMachineType.STANDARD,
            logs=sfn.LogOptions(
                destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=True
            ),
            tracing_enabled=True,
            comment="trncost trial plans: fit -gate-> baseline -gate-> target",
        )
        self.state_machine.add_to_role_policy(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"], resources=[self.steps.function.function_arn]
            )
        )
        cdk.CfnOutput(self, "StateMachineArn", value=self.state_machine.state_machine_arn)
        cdk.CfnOutput(self, "TrainingRoleArn", value=self.training_role.role_arn)
        cdk.CfnOutput(self, "TrainingRoleName", value=self.training_role.role_name)
        cdk.CfnOutput(
            self, "TrainingInstanceProfileArn", value=self.instance_profile.instance_profile_arn
        )

    def grant_start(self, function: TrncostFunction) -> None:
        """Let the API start plan executions, and tell it the state machine."""
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=START_ACTIONS, resources=[self.state_machine.state_machine_arn]
            )
        )
        # No states:DescribeExecution: it needs a wildcard over execution names; the plan
        # record in the table (written by the steps) is the status the API reports.
        function.function.add_environment(
            STATE_MACHINE_ARN_ENV, self.state_machine.state_machine_arn
        )
