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

In code: `TrainingRole` (the role and its instance profile), `TrialStepsFunction` (the task
Lambda and what it may launch), `TrialPlanStateMachine` (the definition, its logs, its role);
`TrncostWorkflow` wires them and outputs what a team needs. They are `Group`s: the resources
keep the logical ids they had directly in the stack.

stacks/stage.py wires it in and calls `grant_start(api_function)`, which lets the API start
and read plan executions and sets TRNCOST_TRIAL_PLAN_STATE_MACHINE_ARN on it.
"""

from __future__ import annotations

from typing import Any, Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from stacks.base import Group, StackOptions, TrncostStack, retained_log_group
from stacks.config import StageConfig
from stacks.lambda_factory import TrncostFunction
from stacks.permissions import (
    BUS_ACTIONS,
    INVOKE_ACTIONS,
    LOG_WRITE_ACTIONS,
    grant,
    grant_table,
    regional_arn,
)
from trncost.events import AGENT_SOURCE, DetailType
from trncost.metrics.jobs import PLAN_TAG
from trncost.metrics.names import AGENT_NAMESPACE
from trncost.settings import (
    AGENT_BUS_ENV,
    BUS_NAME_ENV,
    INSTANCE_PROFILE_ENV,
    STATE_MACHINE_ARN_ENV,
    TABLE_NAME_ENV,
    TRAINING_ROLE_ENV,
)
from trncost.workflow.definition import (
    plan_timeout_s,
    raw_definition,
    substitutions,
    with_timeout,
)

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
# Least privilege on trial jobs: every job trncost launches carries the trncost:plan tag
# (trncost.launch: LaunchRequest.tags), so a launch must carry it (aws:RequestTag: creating
# without it is refused) and a stop acts only on a job that has it (aws:ResourceTag). Tagging
# is allowed only as part of the launch that creates the job (sagemaker:TaggingAction =
# CreateTrainingJob, ec2:CreateAction = RunInstances; Batch's SubmitJob authorizes its own tags
# and batch:TagResource is not granted): the trial steps cannot put the tag on another team's
# job and then stop or terminate it (issue 23).
PLAN_TAG_KEY = PLAN_TAG  # trncost:plan, defined once in trncost.metrics.jobs
WITH_PLAN_TAG = {"Null": {f"aws:RequestTag/{PLAN_TAG_KEY}": "false"}}
ON_PLAN_TAGGED = {"Null": {f"aws:ResourceTag/{PLAN_TAG_KEY}": "false"}}
SAGEMAKER_CREATE_ACTIONS = ["sagemaker:CreateTrainingJob"]
SAGEMAKER_TAG_ACTIONS = ["sagemaker:AddTags"]  # only inside CreateTrainingJob
TAG_ON_CREATE_ONLY = {"StringEquals": {"sagemaker:TaggingAction": "CreateTrainingJob"}}
SAGEMAKER_STOP_ACTIONS = ["sagemaker:StopTrainingJob"]
SAGEMAKER_READ_ACTIONS = ["sagemaker:DescribeTrainingJob"]
EC2_RUN_ACTIONS = ["ec2:RunInstances"]
EC2_TAG_ACTIONS = ["ec2:CreateTags"]
EC2_STOP_ACTIONS = ["ec2:TerminateInstances"]
BATCH_ACTIONS = ["batch:SubmitJob"]
BATCH_STOP_ACTIONS = ["batch:TerminateJob"]
# What ec2:RunInstances creates and tags (TagSpecifications: the instance and its volumes):
# these must carry the plan tag; the others it only uses (or creates untagged) cannot.
EC2_TAGGED_RESOURCES = ("instance", "volume")
START_ACTIONS = ["states:StartExecution"]
DESCRIBE_ACTIONS = ["states:DescribeExecution"]
PASS_ROLE_ACTIONS = ["iam:PassRole"]
TRAINING_SERVICES = ["sagemaker.amazonaws.com", "ec2.amazonaws.com"]
# What a trial job writes: the agent's metrics, its event, SageMaker's training logs.
AGENT_METRICS_ACTIONS = ["cloudwatch:PutMetricData"]
TRAINING_LOG_ACTIONS = [*LOG_WRITE_ACTIONS, "logs:CreateLogGroup"]
TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"

# What ec2:RunInstances creates or uses, in this account and region (the AMI: any owner).
EC2_RUN_RESOURCES = (
    "instance",
    "volume",
    "network-interface",
    "subnet",
    "security-group",
    "key-pair",
    "launch-template",
)


class TrainingRole(Group):
    """The role trial jobs run as: SageMaker's execution role, and EC2's through the instance
    profile. It may publish the agent's metrics (namespace trncost/Agent only) and event (the
    project bus only) and write SageMaker training logs; data and images are the team's."""

    def __init__(self, scope: Construct, construct_id: str, *, bus: events.IEventBus) -> None:
        super().__init__(scope, construct_id)
        self.role = iam.Role(
            self,
            "TrainingRole",
            assumed_by=iam.CompositePrincipal(
                *(iam.ServicePrincipal(s) for s in TRAINING_SERVICES)
            ),
            description="trncost trial jobs (SageMaker training jobs, EC2 trial instances)",
        )
        self.role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=AGENT_METRICS_ACTIONS,
                resources=["*"],
                conditions={"StringEquals": {"cloudwatch:namespace": AGENT_NAMESPACE}},
            )
        )
        # The agent's own event only: a trial job cannot speak for trncost ("Trial Recorded",
        # "Price Snapshot Taken") or for anyone else on the bus.
        self.role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=BUS_ACTIONS,
                resources=[bus.event_bus_arn],
                conditions={
                    "StringEquals": {
                        "events:source": AGENT_SOURCE,
                        "events:detail-type": DetailType.trial_run_completed.value,
                    }
                },
            )
        )
        training_logs = cdk.Stack.of(self).format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"{TRAINING_LOG_GROUP}:*",
            region=cdk.Aws.REGION,
            account=cdk.Aws.ACCOUNT_ID,
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        grant(self.role, TRAINING_LOG_ACTIONS, [training_logs])
        self.instance_profile = iam.InstanceProfile(self, "TrainingInstanceProfile", role=self.role)


class TrialStepsFunction(Group):
    """The task Lambda of every state (budget check, launch, record check, gates, outcome), with
    what launching and stopping trial jobs takes: SageMaker training jobs, EC2 instances (tags
    only at launch, stops only of trncost's), Batch jobs, and passing the training role only,
    only to SageMaker and EC2."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
        training: TrainingRole,
    ) -> None:
        super().__init__(scope, construct_id)
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
                TRAINING_ROLE_ENV: training.role.role_arn,
                INSTANCE_PROFILE_ENV: training.instance_profile.instance_profile_arn,
            },
        )
        role = self.steps.role
        grant_table(role, table, TABLE_ACTIONS)
        self._grant_sagemaker(role)
        self._grant_ec2(role)
        self._grant_batch(role)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=PASS_ROLE_ACTIONS,
                resources=[training.role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": TRAINING_SERVICES}},
            )
        )

    def _grant_sagemaker(self, role: iam.IRole) -> None:
        jobs = [regional_arn(self, "sagemaker", "training-job")]
        _allow(role, SAGEMAKER_CREATE_ACTIONS, jobs, WITH_PLAN_TAG)
        _allow(role, SAGEMAKER_TAG_ACTIONS, jobs, {**TAG_ON_CREATE_ONLY, **WITH_PLAN_TAG})
        _allow(role, SAGEMAKER_STOP_ACTIONS, jobs, ON_PLAN_TAGGED)
        grant(role, SAGEMAKER_READ_ACTIONS, jobs)

    def _grant_ec2(self, role: iam.IRole) -> None:
        tagged = [regional_arn(self, "ec2", r) for r in EC2_TAGGED_RESOURCES]
        used = [
            regional_arn(self, "ec2", r) for r in EC2_RUN_RESOURCES if r not in EC2_TAGGED_RESOURCES
        ]
        _allow(role, EC2_RUN_ACTIONS, tagged, WITH_PLAN_TAG)
        grant(role, EC2_RUN_ACTIONS, [*used, regional_arn(self, "ec2", "image", account=False)])
        _allow(
            role,
            EC2_TAG_ACTIONS,
            tagged,
            {"StringEquals": {"ec2:CreateAction": "RunInstances"}, **WITH_PLAN_TAG},
        )
        _allow(role, EC2_STOP_ACTIONS, [regional_arn(self, "ec2", "instance")], ON_PLAN_TAGGED)

    def _grant_batch(self, role: iam.IRole) -> None:
        job = regional_arn(self, "batch", "job")
        _allow(
            role,
            BATCH_ACTIONS,
            [
                regional_arn(self, "batch", "job-queue"),
                regional_arn(self, "batch", "job-definition"),
                job,
            ],
            WITH_PLAN_TAG,
        )
        _allow(role, BATCH_STOP_ACTIONS, [job], ON_PLAN_TAGGED)


def state_machine_name(stage_name: str) -> str:
    return f"trncost-{stage_name}-trial-plans"


def execution_arns(scope: Construct, stage_name: str) -> str:
    """arn:<partition>:states:<region>:<account>:execution:<state machine name>:* (its runs)."""
    return cdk.Stack.of(scope).format_arn(
        service="states",
        resource="execution",
        resource_name=f"{state_machine_name(stage_name)}:*",
        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
    )


def _allow(
    role: iam.IRole, actions: list[str], resources: list[str], conditions: dict[str, Any]
) -> None:
    """One Allow statement with conditions on `role`'s default policy."""
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=actions, resources=resources, conditions=conditions)
    )


class TrialPlanStateMachine(Group):
    """The Standard state machine of trial plans: the ASL file with its substitutions, logging
    ALL with execution data to its own log group (stage retention), X-Ray on, and a role that
    may invoke the one task function."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        task: lambda_.IFunction,
        poll_interval_s: int,
        max_polls: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self.timeout_s = plan_timeout_s(config.trial_plans.max_runs, poll_interval_s, max_polls)
        self.log_group = retained_log_group(
            self, "StateMachineLogs", retention_days=config.log_retention_days
        )
        self.substitutions = substitutions(task.function_arn, poll_interval_s, max_polls)
        stack = cdk.Stack.of(self)
        assert isinstance(stack, TrncostStack)
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            # named, so the API's states:DescribeExecution names this machine's executions only
            state_machine_name=state_machine_name(stack.stage_name),
            definition_body=sfn.DefinitionBody.from_string(
                with_timeout(raw_definition(), self.timeout_s)
            ),
            definition_substitutions=self.substitutions,
            state_machine_type=sfn.StateMachineType.STANDARD,
            logs=sfn.LogOptions(
                destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=True
            ),
            tracing_enabled=True,
            comment="trncost trial plans: fit -gate-> baseline -gate-> target",
        )
        self.state_machine.add_to_role_policy(
            iam.PolicyStatement(actions=INVOKE_ACTIONS, resources=[task.function_arn])
        )


class TrncostWorkflow(TrncostStack):
    """Trial plans on Step Functions: the training role, the task Lambda, the state machine."""

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
        **options: Unpack[StackOptions],
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost workflow: trial plans run by Step Functions (fit, baseline, "
            "target), their launcher and training roles",
            **options,
        )
        self.config = config
        self.training = TrainingRole(self, "Training", bus=bus)
        self.training_role = self.training.role
        self.instance_profile = self.training.instance_profile
        self.launcher = TrialStepsFunction(
            self, "Steps", config=config, table=table, bus=bus, training=self.training
        )
        self.steps = self.launcher.steps
        self.plans = TrialPlanStateMachine(
            self,
            "TrialPlans",
            config=config,
            task=self.steps.function,
            poll_interval_s=poll_interval_s,
            max_polls=max_polls,
        )
        self.log_group = self.plans.log_group
        self.substitutions = self.plans.substitutions
        self.state_machine = self.plans.state_machine

        cdk.CfnOutput(self, "StateMachineArn", value=self.state_machine.state_machine_arn)
        cdk.CfnOutput(self, "TrainingRoleArn", value=self.training_role.role_arn)
        cdk.CfnOutput(self, "TrainingRoleName", value=self.training_role.role_name)
        cdk.CfnOutput(
            self, "TrainingInstanceProfileArn", value=self.instance_profile.instance_profile_arn
        )

    def grant_start(self, function: TrncostFunction) -> None:
        """Let the API start plan executions and read their status (GET /trial-plans/{id}
        shows it beside the plan record), and tell it the state machine."""
        grant(function.role, START_ACTIONS, [self.state_machine.state_machine_arn])
        # executions are named after their plans: this state machine's executions only
        grant(function.role, DESCRIBE_ACTIONS, [execution_arns(function, self.stage_name)])
        function.function.add_environment(
            STATE_MACHINE_ARN_ENV, self.state_machine.state_machine_arn
        )
