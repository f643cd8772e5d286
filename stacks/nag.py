"""cdk-nag, always on, with every acknowledgement written down once, with its reason.

cdk-nag 3 packs are CDK policy-validation plugins (`Validations.of(app).add_plugins`), not
Aspects. On `app.synth()` an unacknowledged ERROR finding makes synthesis fail
(`RuntimeError: ValidationFailed ...`); every finding, WARNING ones too, is written to
`<outdir>/validation-report.json` (`pluginReports[].violations`, and acknowledged ones under
`suppressedViolations`). tests/infra fails on any entry in `violations`.
"""

from __future__ import annotations

import fnmatch

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from constructs import IConstruct

from stacks.api import PERSONAS, ApiPersonas, EstimateApi
from stacks.base import TrncostStack
from stacks.workflow import (
    EC2_RUN_RESOURCES,  # the resources the launcher's role names
    state_machine_name,
)

# (id, reason), applied to every stack. The id is exactly what the synth report prints after
# "Acknowledge with", pack prefix included, e.g. "Serverless::Serverless-LambdaTracing" or
# "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/...]".
# With the prefix the finding and its reason are kept in validation-report.json under
# `suppressedViolations`; a bare rule id ("AwsSolutions-S1") would also silence the finding but
# leave no record, so it is refused. Every entry needs a reason a reviewer accepts.
ACKNOWLEDGEMENTS: list[tuple[str, str]] = []

# (construct path, id, reason), applied to the matching constructs and everything under them.
# The path starts at the stack id (the stage prefix, e.g. "dev/", is left out) and is an
# fnmatch glob ("*" also matches "/"). Prefer these to ACKNOWLEDGEMENTS: they cover only the
# resource the reason is about. tests/infra fails on an entry that matches no construct.
_DLQ_NO_REDRIVE = (
    "A dead-letter queue is the end of its chain: a redrive policy would need yet another "
    "queue. Failed events stay 14 days (the SQS maximum) to be inspected and redriven."
)
_PRICE_LIST_ON_STAR = (
    "Resource '*' is the only one these actions accept (no resource-level permissions in the"
    " Service Authorization Reference): pricing:GetProducts, pricing:DescribeServices,"
    " pricing:GetAttributeValues (read-only public Price List), "
    "ec2:DescribeCapacityBlockOfferings (read-only) and the X-Ray xray:PutTraceSegments,"
    " xray:PutTelemetryRecords that active tracing adds. Every other statement is scoped;"
    " tests/infra pins the exact set of actions on '*'."
)
CONSTRUCT_ACKNOWLEDGEMENTS: list[tuple[str, str, str]] = [
    (
        "TrncostPricing/PriceSnapshots/Prices/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        _PRICE_LIST_ON_STAR,
    ),
    (
        "*/DeadLetterQueue",  # the house DLQ (stacks.lambda_factory.dead_letter_queue)
        "Serverless::Serverless-SQSRedrivePolicy",
        _DLQ_NO_REDRIVE,
    ),
    (
        "TrncostPricing/PriceSnapshots/Schedule/DeadLetterQueue",
        "AwsSolutions::AwsSolutions-SQS3",
        "This queue is a DLQ: the DeadLetterConfig of the EventBridge Scheduler schedule beside"
        " it. cdk-nag recognizes only SQS redrive policies and Lambda DeadLetterConfig as DLQ"
        " uses.",
    ),
    (
        "TrncostPricing/DecisionNotices/DeadLetterQueue",
        "AwsSolutions::AwsSolutions-SQS3",
        "This queue is a DLQ: the DeadLetterConfig of the EventBridge rule target that sends"
        " 'Estimate Decision Changed' to the decision-notices topic. cdk-nag recognizes only SQS"
        " redrive policies and Lambda DeadLetterConfig as DLQ uses.",
    ),
    (
        "TrncostIngest/TrialIngest/Ingest/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "Resource '*' is the only one these actions accept (no resource-level permissions in the"
        " Service Authorization Reference; CloudWatch metrics have no ARNs):"
        " cloudwatch:GetMetricData (read the trial's agent, Neuron and GPU metrics) and"
        " cloudwatch:ListMetrics (count the agent's metrics of a trial), batch:DescribeJobs (the"
        " log stream of a Batch job that ran without the agent), all read-only, and the"
        " X-Ray xray:PutTraceSegments, xray:PutTelemetryRecords that active tracing adds. Every"
        " other statement is scoped; tests/infra pins the exact set of actions on '*'.",
    ),
    *(
        (
            "TrncostIngest/TrialIngest/Ingest/Role/DefaultPolicy",
            "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:"
            f"<AWS::AccountId>:log-group:{group}:*]",
            f"logs:DescribeLogStreams and logs:GetLogEvents (read-only) in {group}, the log group"
            " the training jobs write to, for a job that ran without the trncost agent: its"
            " streams are named at run time by the job, so the ':*' covers this group's streams"
            " only. No other log group is readable.",
        )
        for group in ("/aws/sagemaker/TrainingJobs", "/aws/batch/job")
    ),
    (
        "TrncostIngest/TrialIngest/Ingest/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sagemaker:"
        "<AWS::Region>:<AWS::AccountId>:training-job/*]",
        "sagemaker:DescribeTrainingJob (read-only, the only action on this resource) for any"
        " training job of this account and region: the job to describe is named by the"
        " 'SageMaker Training Job State Change' event, and trial jobs are launched under names"
        " trncost does not choose, so no narrower name prefix holds. Training jobs in other"
        " accounts and regions stay out of reach.",
    ),
    (
        "TrncostIngest/EventOutbox/Outbox/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "Only the X-Ray xray:PutTraceSegments, xray:PutTelemetryRecords that active tracing"
        " adds take Resource '*' (X-Ray has no resource-level permissions for them); the table"
        " (query, delete, update) and the project bus (PutEvents) are scoped. tests/infra pins"
        " the exact set of actions on '*'.",
    ),
    (
        "TrncostIngest/EventOutbox/Schedule/DeadLetterQueue",
        "AwsSolutions::AwsSolutions-SQS3",
        "This queue is a DLQ: the DeadLetterConfig of the outbox sweep's EventBridge Scheduler"
        " schedule beside it. cdk-nag recognizes only SQS redrive policies and Lambda"
        " DeadLetterConfig as DLQ uses.",
    ),
    (
        "TrncostIngest/EstimateRefresh/Refresh/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "Only the X-Ray xray:PutTraceSegments, xray:PutTelemetryRecords that active tracing"
        " adds take Resource '*' (X-Ray has no resource-level permissions for them); the table"
        " and queue statements are scoped. tests/infra pins the exact set of actions on '*'.",
    ),
    (
        "TrncostIngest/*/Function/SqsEventSource:*",  # the ingest and refresh queue consumers
        "Serverless::Serverless-LambdaEventSourceMappingDestination",
        "Lambda supports on-failure destinations only for stream and Kafka event sources"
        " (Kinesis, DynamoDB Streams, Amazon MSK, self-managed Kafka), not for SQS. For an SQS"
        " source the queue is the failure path: with ReportBatchItemFailures only the failed"
        " records return to the queue, and after maxReceiveCount 5 its redrive policy moves"
        " them to the queue's dead-letter queue (14 days).",
    ),
    (
        "*/Function/EventInvokeConfig",  # every house function (stacks.lambda_factory)
        "Serverless::Serverless-LambdaAsyncFailureDestination",
        "Failed asynchronous invocations (after 2 retries) go to the function's SQS dead-letter"
        " queue (DeadLetterConfig, which Serverless-LambdaDLQ requires); Lambda sends to a"
        " failure destination in addition to a DLQ, so adding one would record each failure"
        " twice.",
    ),
    # --- the actuals (stacks/actuals.py) ---
    (
        "TrncostActuals/CostExplorerActuals/Actuals/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "Resource '*' is the only one these actions accept (no resource-level permissions in the"
        " Service Authorization Reference): ce:GetCostAndUsage (read-only: the spend grouped by"
        " the trncost:estimate-id tag) and the X-Ray xray:PutTraceSegments,"
        " xray:PutTelemetryRecords that active tracing adds. The table and bus statements are"
        " scoped; tests/infra pins the exact set of actions on '*'.",
    ),
    (
        "TrncostActuals/CostExplorerActuals/Schedule/DeadLetterQueue",
        "AwsSolutions::AwsSolutions-SQS3",
        "This queue is a DLQ: the DeadLetterConfig of the EventBridge Scheduler schedule beside"
        " it. cdk-nag recognizes only SQS redrive policies and Lambda DeadLetterConfig as DLQ"
        " uses.",
    ),
    # --- the API (stacks/api.py) ---
    (
        # POST /estimates/{id}/budget makes, reads and replaces the estimate's AWS Budget.
        "TrncostApi/Api/Handler/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:budgets::"
        "<AWS::AccountId>:budget/trncost-*]",
        "budgets:ModifyBudget (CreateBudget, DeleteBudget) and budgets:ViewBudget"
        " (DescribeBudget) on this account's budgets named trncost-<estimate id> only: the"
        " estimate a budget is made for is named by the request, so its name is not known at"
        " deploy time. Budgets of every other name stay out of reach.",
    ),
    (
        # POST /prices/snapshots takes a live snapshot, as the prices function does; POST
        # /estimates/{id}/capacity quotes Capacity Blocks and Training Plans.
        "TrncostApi/Api/Handler/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        _PRICE_LIST_ON_STAR
        + " The API also reads sagemaker:SearchTrainingPlanOfferings (read-only, no"
        " resource-level permissions either) to quote Training Plans beside Capacity Blocks.",
    ),
    (
        "TrncostApi/Api/RestApi/Resource",  # the AWS::ApiGateway::RestApi
        "AwsSolutions::AwsSolutions-APIG2",
        "Request validation is on for parameters (the API's one validator checks each method's"
        " declared request parameters, here the {proxy+} path) and deliberately off for bodies,"
        " and cdk-nag accepts only a validator that does both. API Gateway validates a body"
        " only against a model declared on the method; with one proxy method for every route,"
        " the per-route schemas live in the api Lambda (Powertools with enable_validation, the"
        " pydantic models openapi.json is generated from), which answers a bad body with 422"
        " naming the field and an oversize one (> 1 MiB) with 413. Models here would restate"
        " those schemas in a second place, with another error shape.",
    ),
    (
        "TrncostApi/Api/RestApi/Default",  # every method of the API, at any path
        "AwsSolutions::AwsSolutions-COG4",
        "Callers authenticate with IAM instead: every method has AuthorizationType AWS_IAM"
        " (the API's default method option; tests/infra checks each AWS::ApiGateway::Method),"
        " so each request is SigV4-signed by an IAM principal of this account that an IAM"
        " policy allows execute-api:Invoke. The callers (engineers, CI, the trncost CLI, other"
        " AWS services) already hold AWS credentials; a Cognito user pool would be a second"
        " identity store with nobody to put in it.",
    ),
    (
        "TrncostApi/Api/RestApi/DeploymentStage.*",  # the AWS::ApiGateway::Stage
        "AwsSolutions::AwsSolutions-APIG3",
        "No AWS WAF web ACL on this internal, IAM-authorized API: API Gateway rejects every"
        " request without a valid SigV4 signature of an allowed principal of this account"
        " before it reaches the integration, so anonymous traffic never invokes the Lambda,"
        " and the stage throttles (rate and burst from the stage config) what a signed caller"
        " can send. A web ACL (a monthly fee per ACL and rule plus a per-request fee) would"
        " have nothing left to filter. Associate one (AWS::WAFv2::WebACLAssociation on this"
        " stage) if the API is ever opened beyond IAM principals of the account.",
    ),
    (
        "TrncostApi/Api/RestApi/CloudWatchRole",  # only when api.account_cloudwatch_role
        "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
        "service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
        "This is API Gateway's account-level CloudWatch role (AWS::ApiGateway::Account), not a"
        " function role. It is assumable only by apigateway.amazonaws.com and serves the"
        " execution and access logs of every REST API in the account and region, whose log"
        " groups API Gateway names per API and stage; a policy scoped to this stack's log"
        " groups would break the logging of every other API. AmazonAPIGatewayPushToCloudWatchLogs"
        " is the AWS managed policy made for exactly this role and kept current by AWS.",
    ),
]

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


def path_in_stage(construct: IConstruct) -> str | None:
    """`construct`'s path from its stack down ("TrncostPricing/.../Role"); None outside stacks."""
    scopes = construct.node.scopes
    for index, scope in enumerate(scopes):
        if isinstance(scope, cdk.Stack):
            return "/".join(s.node.id for s in scopes[index:])
    return None


def _matching_constructs(
    app: cdk.App, acknowledgements: list[tuple[str, str, str]]
) -> dict[str, list[IConstruct]]:
    matches: dict[str, list[IConstruct]] = {pattern: [] for pattern, _, _ in acknowledgements}
    for construct in app.node.find_all():
        path = path_in_stage(construct)
        if path is None:
            continue
        for pattern, found in matches.items():
            if fnmatch.fnmatchcase(path, pattern):
                found.append(construct)
    return matches


def construct_acknowledgement_targets(
    app: cdk.App, acknowledgements: list[tuple[str, str, str]] | None = None
) -> dict[str, list[str]]:
    """For each construct path glob, the full paths of the constructs it matches in `app`."""
    acks = CONSTRUCT_ACKNOWLEDGEMENTS if acknowledgements is None else acknowledgements
    return {
        pattern: [construct.node.path for construct in found]
        for pattern, found in _matching_constructs(app, acks).items()
    }


def apply_nag(
    app: cdk.App,
    acknowledgements: list[tuple[str, str]] | None = None,
    construct_acknowledgements: list[tuple[str, str, str]] | None = None,
) -> None:
    """Register the AWS Solutions and Serverless packs on `app`; acknowledge per stack, then
    per construct (CONSTRUCT_ACKNOWLEDGEMENTS unless given)."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    acks = ACKNOWLEDGEMENTS if acknowledgements is None else acknowledgements
    for construct in app.node.find_all():
        if isinstance(construct, cdk.Stack):
            acknowledge(construct, acks)
    by_construct = (
        CONSTRUCT_ACKNOWLEDGEMENTS
        if construct_acknowledgements is None
        else construct_acknowledgements
    )
    matches = _matching_constructs(app, by_construct)
    for pattern, rule_id, reason in by_construct:
        for construct in matches[pattern]:
            acknowledge(construct, [(rule_id, reason)])
    for policy, rule_id in persona_findings(app):
        acknowledge(policy, [(rule_id, PERSONA_PATHS)])
    for policy, rule_id in execution_findings(app):
        acknowledge(policy, [(rule_id, DESCRIBE_EXECUTIONS)])


# The API personas (stacks/api.py): their findings name this API's own logical ids, so they
# are derived from the constructs rather than written out.
PERSONA_PATHS = (
    "A persona policy allows only execute-api:Invoke, only on this API's own stage, only for"
    " the methods and paths of its persona: the '*' in a path stands for the ids of the route"
    " (/workloads/{workload_id}/trials → /workloads/*/trials) and, for the reader, for every"
    " GET. tests/infra/test_least_privilege.py pins each persona's resources."
)


def persona_findings(app: cdk.App) -> list[tuple[IConstruct, str]]:
    """(policy, finding id) of every AwsSolutions-IAM5 finding the persona policies raise:
    one per (method, path) with a '*', as cdk-nag names them."""
    found: list[tuple[IConstruct, str]] = []
    for construct in app.node.find_all():
        if not isinstance(construct, ApiPersonas):
            continue
        stack = cdk.Stack.of(construct)
        api = construct.api.node.default_child
        stage = construct.api.deployment_stage.node.default_child
        assert isinstance(api, cdk.CfnElement) and isinstance(stage, cdk.CfnElement)
        api_id = stack.resolve(stack.get_logical_id(api))
        stage_id = stack.resolve(stack.get_logical_id(stage))
        region = "<AWS::Region>" if cdk.Token.is_unresolved(stack.region) else stack.region
        base = f"arn:<AWS::Partition>:execute-api:{region}:<AWS::AccountId>:<{api_id}>/<{stage_id}>"
        for persona, policy in construct.policies.items():
            for method, path in PERSONAS[persona][1]:
                if "*" in path:
                    found.append(
                        (
                            policy,
                            f"AwsSolutions::AwsSolutions-IAM5[Resource::{base}/{method}{path}]",
                        )
                    )
    return found


DESCRIBE_EXECUTIONS = (
    "states:DescribeExecution (read-only) on the executions of the stage's one trial plan state"
    " machine (trncost-<stage>-trial-plans) only: an execution is named after its plan when the"
    " API starts it, so the names are not known at deploy time. GET /trial-plans/{plan_id}"
    " shows the execution's status beside the plan record."
)


def execution_findings(app: cdk.App) -> list[tuple[IConstruct, str]]:
    """(the API role's policy, finding id) of the states:DescribeExecution wildcard, per stage
    (the region is the stage's, or a token when the stage has none)."""
    found: list[tuple[IConstruct, str]] = []
    for construct in app.node.find_all():
        if not isinstance(construct, EstimateApi):
            continue
        stack = cdk.Stack.of(construct)
        assert isinstance(stack, TrncostStack)
        region = "<AWS::Region>" if cdk.Token.is_unresolved(stack.region) else stack.region
        name = state_machine_name(stack.stage_name)
        policy = construct.handler.role.node.find_child("DefaultPolicy")
        found.append(
            (
                policy,
                "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:"
                f"{region}:<AWS::AccountId>:execution:{name}:*]",
            )
        )
    return found


# The trial workflow (stacks/workflow.py): launching and stopping trial jobs. One reason per
# wildcard, each saying what bounds it (the blanket reason that once covered them all, stops
# and tags of any job included, is gone: those now need the trncost:plan tag).
_STEPS_POLICY = "TrncostWorkflow/Steps/TrialSteps/Role/DefaultPolicy"
_REGIONAL = "Resource::arn:<AWS::Partition>:{service}:<AWS::Region>:<AWS::AccountId>:{what}/*"
_TAGGED_BY_PLAN = (
    " Creating requires the request to carry the trncost:plan tag"
    " (aws:RequestTag/trncost:plan), and stopping or terminating requires the job to have it"
    " already (aws:ResourceTag/trncost:plan). Tags can be put only by the launch that creates"
    " the job (sagemaker:AddTags only with sagemaker:TaggingAction = CreateTrainingJob; Batch"
    " SubmitJob authorizes its own tags and batch:TagResource is not granted), so the trial"
    " steps cannot tag another team's job and then stop or terminate it."
    " tests/infra/test_least_privilege.py pins each statement."
)
WORKFLOW_ACKNOWLEDGEMENTS: list[tuple[str, str, str]] = [
    (
        _STEPS_POLICY,
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "Only the X-Ray xray:PutTraceSegments, xray:PutTelemetryRecords that active tracing adds"
        " take Resource '*' (X-Ray has no resource-level permissions for them).",
    ),
    (
        _STEPS_POLICY,
        "AwsSolutions::AwsSolutions-IAM5["
        + _REGIONAL.format(service="sagemaker", what="training-job")
        + "]",
        "A trial's SageMaker training job is named per run when it is launched (job names are"
        " not known at deploy time); this account and region only."
        + _TAGGED_BY_PLAN
        + " sagemaker:DescribeTrainingJob (read-only) finds a job a retried launch already"
        " made.",
    ),
    *(
        (
            _STEPS_POLICY,
            f"AwsSolutions::AwsSolutions-IAM5[{_REGIONAL.format(service='ec2', what=r)}]",
            f"ec2:RunInstances authorizes every {r} it creates or uses, chosen per plan (subnet,"
            " security groups) or made at launch (instance, volumes, network interface); this"
            " account and region only. The instance and its volumes must be launched with the"
            " trncost:plan tag (aws:RequestTag), ec2:CreateTags is allowed only inside that"
            " RunInstances (ec2:CreateAction) and ec2:TerminateInstances only on instances"
            " that have the tag (aws:ResourceTag).",
        )
        for r in EC2_RUN_RESOURCES
    ),
    (
        _STEPS_POLICY,
        "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>::image/*]",
        "ec2:RunInstances needs the AMI the plan names: teams use AWS's and their own AMIs, so"
        " any owner's image in this region (read at launch, never changed).",
    ),
    *(
        (
            _STEPS_POLICY,
            f"AwsSolutions::AwsSolutions-IAM5[{_REGIONAL.format(service='batch', what=r)}]",
            f"Batch {r}s are named by the plan (job queue, job definition) or at submission"
            " (jobs); this account and region only." + _TAGGED_BY_PLAN,
        )
        for r in ("job-queue", "job-definition", "job")
    ),
    (
        "TrncostWorkflow/Training/TrainingRole/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "cloudwatch:PutMetricData has no resource-level permissions: it is allowed only with the"
        " condition cloudwatch:namespace = trncost/Agent, the trial agent's namespace.",
    ),
    (
        "TrncostWorkflow/Training/TrainingRole/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:"
        "<AWS::AccountId>:log-group:/aws/sagemaker/TrainingJobs:*]",
        "SageMaker training jobs write to the /aws/sagemaker/TrainingJobs log group, one stream"
        " per job and host, named at run time: the ':*' covers the group's streams only.",
    ),
    (
        "TrncostWorkflow/TrialPlans/StateMachine/Role/DefaultPolicy",
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "Only what Step Functions needs for logging to CloudWatch Logs (logs:CreateLogDelivery"
        " and the other log-delivery actions, which take only '*') and X-Ray tracing"
        " (xray:PutTraceSegments, xray:PutTelemetryRecords, xray:GetSampling*); the Lambda invoke"
        " is scoped to the one task function.",
    ),
]

CONSTRUCT_ACKNOWLEDGEMENTS += WORKFLOW_ACKNOWLEDGEMENTS
