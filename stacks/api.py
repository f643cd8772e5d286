"""API stack: the trncost HTTP API, API Gateway (REST, v1) in front of the api Lambda.

client ──HTTPS, SigV4 (IAM auth)──► API Gateway stage (throttled, access + execution logs,
    X-Ray) ──{proxy+} and / (ANY, Lambda proxy)──► api Lambda ──► table, bus, Price List API

The routes live in the Lambda (trncost.api.app, Powertools, OpenAPI generated from them): API
Gateway only authenticates, throttles, logs and forwards. Every method requires IAM
authorization (the caller signs with SigV4; the `trncost` CLI does) and, with no resource
policy, only principals of this account whose IAM policies allow `execute-api:Invoke` get in.

Personas (`ApiPersonas`): one customer-managed policy each, scoped by method and path in the
execute-api ARNs of this API's stage, exported as outputs to attach to a team's roles
(docs/security.md): `reader` (every GET, and the comparisons, which compute without storing),
`trial-writer` (workloads, trial imports, estimates), `planner` (trial plans, paid trial runs)
and `price-admin` (price snapshots).
"""

from __future__ import annotations

from typing import Unpack

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from constructs import Construct

from stacks.base import StackOptions, TrncostStack, retained_log_group
from stacks.config import StageConfig
from stacks.lambda_factory import TrncostFunction
from stacks.permissions import (
    TRAINING_PLAN_ACTIONS,
    grant,
    grant_price_reads,
    grant_put_events,
    grant_table,
)
from stacks.pricing import accept_uploads, catalog_json
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    ACCOUNT_ID_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    PLAN_MAX_BUDGET_ENV,
    PLAN_MAX_RUN_HOURS_ENV,
    PLAN_MAX_RUNS_ENV,
    PRICE_LIST_REGION_ENV,
    TABLE_NAME_ENV,
)

# API Gateway's integration timeout is at most 29 s: the function gets no more than that.
API_TIMEOUT = cdk.Duration.seconds(29)
API_MEMORY_MB = 1024  # the estimate engine (Monte Carlo, numpy) is CPU-bound: CPU ∝ memory
MIN_COMPRESSION_BYTES = 1024  # gzip responses (HTML report, JSON lists) above 1 KiB
# What the routes do with the table (store/records.py, store/prices.py, store/ingest.py via
# the services): conditional puts and updates, deletes, reads and queries, and, for
# POST /prices/snapshots, the snapshot repository's batch writes of quotes.
TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
]
INVOKE_API_ACTIONS = ["execute-api:Invoke"]
# POST /estimates/{id}/budget: AWS Budgets' CreateBudget and DeleteBudget are
# budgets:ModifyBudget, DescribeBudget budgets:ViewBudget, on budgets named trncost-*.
BUDGET_ACTIONS = ["budgets:ModifyBudget", "budgets:ViewBudget"]
BUDGET_NAMES = "trncost-*"  # trncost.billing.budgets.budget_name
# persona → (what it is for, the (method, path) pairs it may call). A path is the route with
# each {parameter} as "*" (in an execute-api ARN "*" matches any characters, "/" included).
PERSONAS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "reader": ("read everything (GET only: it stores and computes nothing new)", (("GET", "/*"),)),
    "trial-writer": (
        "create workloads, record trials and import their logs, retract (correct) them, "
        "create estimates and comparisons (stored; the comparison report renders one), import "
        "billed actuals",
        (
            ("POST", "/workloads"),
            ("POST", "/workloads/*/trials"),
            ("POST", "/workloads/*/trials/import"),
            ("POST", "/workloads/*/retract"),  # a workload, or one of its trials (* spans /)
            ("POST", "/workloads/*/estimates"),
            ("POST", "/actuals"),
            ("POST", "/workloads/*/comparisons"),
            ("POST", "/workloads/*/comparisons/report"),
        ),
    ),
    "planner": (
        "start trial plans (paid trial runs, within the stage's trial_plans bounds); create "
        "an AWS Budget from an estimate; quote the capacity an estimate can book",
        (
            ("POST", "/workloads/*/trial-plans"),
            ("POST", "/estimates/*/budget"),
            ("POST", "/estimates/*/capacity"),
        ),
    ),
    "price-admin": ("take price snapshots", (("POST", "/prices/snapshots"),)),
}


class EstimateApi(Construct):
    """The api function (house factory) behind a REST API whose every method needs IAM auth."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
        stage_name: str,
    ) -> None:
        """`stage_name`: the trncost stage (dev, prod, ...). It names the API `trncost-<stage>`
        and its API Gateway stage, the last path segment of the URL."""
        super().__init__(scope, construct_id)
        self.handler = TrncostFunction(
            self,
            "Handler",
            name="api",
            config=config,
            description="trncost HTTP API: workloads, trials, estimates, reports, prices",
            memory_size=API_MEMORY_MB,
            timeout=API_TIMEOUT,
            # A restored snapshot instead of an import on each cold start (lambdas/api: nothing
            # made before the snapshot holds credentials or connections; the hooks there).
            snap_start=True,
            environment={
                TABLE_NAME_ENV: table.table_name,
                BUS_NAME_ENV: bus.event_bus_name,
                PRICE_LIST_REGION_ENV: config.price_list_endpoint_region,
                CATALOG_ENV: catalog_json(config),
                PLAN_MAX_BUDGET_ENV: str(config.trial_plans.max_budget_usd),
                PLAN_MAX_RUN_HOURS_ENV: str(config.trial_plans.max_run_hours),
                PLAN_MAX_RUNS_ENV: str(config.trial_plans.max_runs),
                ACCEPT_UPLOADS_ENV: accept_uploads(config),
                ACCOUNT_ID_ENV: cdk.Aws.ACCOUNT_ID,  # where an estimate's budget is made
            },
        )
        # POST /prices/snapshots may take a live snapshot: the prices function's Price List
        # and Capacity Block reads, and its "Price Snapshot Taken" event.
        grant_price_reads(self.handler.role)
        # POST /estimates/{id}/capacity: Capacity Blocks (above) and Training Plan offerings
        grant(self.handler.role, TRAINING_PLAN_ACTIONS, ["*"])
        grant_table(self.handler.role, table, TABLE_ACTIONS)
        grant_put_events(self.handler.role, bus)
        grant(
            self.handler.role,
            BUDGET_ACTIONS,
            [
                cdk.Stack.of(self).format_arn(
                    service="budgets",
                    region="",
                    resource="budget",
                    resource_name=BUDGET_NAMES,
                    arn_format=cdk.ArnFormat.SLASH_RESOURCE_NAME,
                )
            ],
        )

        retention_days = config.log_retention_days
        self.access_logs = retained_log_group(self, "AccessLogs", retention_days=retention_days)
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"trncost-{stage_name}",
            description="trncost HTTP API (routes in the api Lambda; IAM auth on every method)",
            endpoint_configuration=apigw.EndpointConfiguration(types=[apigw.EndpointType.REGIONAL]),
            # POST /actuals takes a gzip CSV or Parquet export: API Gateway hands those to the
            # Lambda base64-encoded (text/csv and JSON stay text)
            binary_media_types=[
                "application/gzip",
                "application/x-gzip",
                "application/vnd.apache.parquet",
                "application/x-parquet",
                "application/octet-stream",
            ],
            min_compression_size=cdk.Size.bytes(MIN_COMPRESSION_BYTES),
            # Every method, present and future, requires SigV4-signed IAM callers.
            default_method_options=apigw.MethodOptions(
                authorization_type=apigw.AuthorizationType.IAM
            ),
            # Execution and access logs need API Gateway's account-level CloudWatch role: one
            # per account and region, so whoever sets it last wins. A stage creates it only
            # when configured to (StageConfig.api.account_cloudwatch_role), and CDK retains it
            # on delete, so removing this stack never breaks the logging of other APIs.
            cloud_watch_role=config.api.account_cloudwatch_role,
            deploy_options=apigw.StageOptions(
                stage_name=stage_name,
                throttling_rate_limit=config.api.throttle_rate_limit,
                throttling_burst_limit=config.api.throttle_burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.INFO,
                data_trace_enabled=False,  # full requests and responses would land in logs
                tracing_enabled=True,
                metrics_enabled=False,  # per-method metrics: only ANY / and ANY /{proxy+}
            ),
        )
        # RestApi's own "Endpoint" output is replaced by the stack's ApiUrl output.
        if not self.rest_api.node.try_remove_child("Endpoint"):
            raise RuntimeError("aws_apigateway.RestApi no longer adds an 'Endpoint' output")

        # API Gateway creates the execution log group on first use, without retention: create
        # it first, with the stage's retention, and deploy the stage after it.
        self.execution_logs = retained_log_group(
            self,
            "ExecutionLogs",
            retention_days=retention_days,
            log_group_name=f"API-Gateway-Execution-Logs_{self.rest_api.rest_api_id}/{stage_name}",
        )
        self.rest_api.deployment_stage.node.add_dependency(self.execution_logs)

        # Validates the request parameters a method declares (here the {proxy+} path). Bodies
        # are validated in the Lambda, against the pydantic schemas the routes and openapi.json
        # are generated from (422 naming the field); API Gateway models would restate those
        # schemas in a second place and answer 400 in another error shape.
        self.request_validator = self.rest_api.add_request_validator(
            "RequestValidator",
            request_validator_name="parameters",
            validate_request_parameters=True,
            validate_request_body=False,
        )
        integration = apigw.LambdaIntegration(
            self.handler.invocable,  # the `live` alias: SnapStart serves published versions
            proxy=True,
            timeout=API_TIMEOUT,
            allow_test_invoke=False,  # no extra invoke permission for console test calls
        )
        self.root_method = self.rest_api.root.add_method(
            "ANY", integration, request_validator=self.request_validator
        )
        self.proxy = self.rest_api.root.add_proxy(any_method=False)
        self.proxy_method = self.proxy.add_method(
            "ANY",
            integration,
            request_validator=self.request_validator,
            request_parameters={"method.request.path.proxy": True},
        )


class ApiPersonas(Construct):
    """One managed policy per persona (PERSONAS), allowing execute-api:Invoke on exactly its
    methods and paths of this API's stage; attach them to roles, users or groups."""

    def __init__(
        self, scope: Construct, construct_id: str, *, api: apigw.RestApi, stage_name: str
    ) -> None:
        super().__init__(scope, construct_id)
        self.api = api
        self.policies: dict[str, iam.ManagedPolicy] = {}
        for persona, (purpose, routes) in PERSONAS.items():
            self.policies[persona] = iam.ManagedPolicy(
                self,
                persona_id(persona),
                managed_policy_name=f"trncost-{stage_name}-{persona}",
                description=f"trncost {stage_name} API, {persona}: {purpose}",
                statements=[
                    iam.PolicyStatement(
                        sid=persona_id(persona),
                        actions=INVOKE_API_ACTIONS,
                        resources=[
                            api.arn_for_execute_api(method, path, api.deployment_stage.stage_name)
                            for method, path in routes
                        ],
                    )
                ],
            )


def persona_id(persona: str) -> str:
    """trial-writer → TrialWriter (its construct id, statement id and output prefix)."""
    return "".join(part.capitalize() for part in persona.split("-"))


class TrncostApi(TrncostStack):
    """The HTTP API of trncost, over the data stack's table and bus."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        table: dynamodb.ITable,
        bus: events.IEventBus,
        **options: Unpack[StackOptions],
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="trncost API: REST API (IAM auth) over the estimate engine",
            **options,
        )
        self.config = config
        self.api = EstimateApi(
            self, "Api", config=config, table=table, bus=bus, stage_name=self.stage_name
        )
        cdk.CfnOutput(
            self,
            "ApiUrl",
            value=self.api.rest_api.url,
            description="base URL of the API (SigV4-signed requests, service execute-api)",
        )
        cdk.CfnOutput(self, "ApiId", value=self.api.rest_api.rest_api_id)
        self.personas = ApiPersonas(
            self, "Personas", api=self.api.rest_api, stage_name=self.stage_name
        )
        for persona, policy in self.personas.policies.items():
            cdk.CfnOutput(
                self,
                f"{persona_id(persona)}PolicyArn",
                value=policy.managed_policy_arn,
                description=f"attach to let a principal {PERSONAS[persona][0]}",
            )
        cdk.CfnOutput(self, "ApiFunctionName", value=self.api.handler.function.function_name)
