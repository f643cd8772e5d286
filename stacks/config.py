"""Stage configuration, read from the `stages` context in cdk.json.

One `StageConfig` per deployable stage (dev, prod, ...). Validation errors name the stage and
the field so a typo in cdk.json is fixed in one look.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from trncost.metrics.joblogs import LOG_GROUPS
from trncost.model.catalog import Catalog
from trncost.pricing.client import PRICE_LIST_REGIONS

# Commercial, GovCloud and ISO partitions: us-east-1, ap-southeast-2, us-gov-west-1, ...
REGION_PATTERN = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
ACCOUNT_PATTERN = r"^[0-9]{12}$"
# EC2 instance type: family.size, e.g. trn2.48xlarge, p6-b200.48xlarge, p5en.48xlarge.
INSTANCE_TYPE_PATTERN = r"^[a-z][a-z0-9-]*\.[a-z0-9]+$"
EMAIL_PATTERN = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
# An EventBridge Scheduler recurring expression: rate(1 day), rate(12 hours), cron(0 6 * * ? *).
SCHEDULE_PATTERN = r"^(rate\([1-9][0-9]* (minute|minutes|hour|hours|day|days)\)|cron\([^()]+\))$"
# A stage name becomes a construct id and a CloudFormation stack-name prefix.
STAGE_NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,31}$")

# The values CloudWatch Logs accepts for a log group's RetentionInDays.
# fmt: off
LOG_RETENTION_DAYS: frozenset[int] = frozenset({
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
})
# fmt: on

Region = Annotated[str, Field(pattern=REGION_PATTERN)]
InstanceType = Annotated[str, Field(pattern=INSTANCE_TYPE_PATTERN)]


# The catalog the prices Lambda reads: one model, shared with the Lambda (trncost.settings).
CatalogConfig = Catalog


class ApiConfig(BaseModel):
    """The stage's REST API (stacks/api.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Stage-wide throttling (every method): steady requests per second and the token-bucket
    # burst. API Gateway's account quota per region is 10,000 rps, so nothing above it.
    throttle_rate_limit: Annotated[float, Field(gt=0, le=10_000)] = 50
    throttle_burst_limit: Annotated[int, Field(ge=1, le=5_000)] = 100
    # Execution and access logging need the account's API Gateway CloudWatch role (one per
    # account and region, in API Gateway's account settings). True: this stage creates one
    # (retained on delete) and sets it. False: the account already has one (a landing zone,
    # another stage or app in the same account and region); this stage leaves it alone.
    account_cloudwatch_role: bool = True
    # The latency alarm (stacks/monitoring/alarms.py): p99 of the stage's Latency, in
    # milliseconds, at or above this for 15 minutes. Below the 29 s integration timeout, or it
    # could never fire.
    latency_alarm_p99_ms: Annotated[int, Field(ge=100, lt=29_000)] = 10_000


MAX_RUNS_PER_PLAN = 8 * (1 + 20 + 16)  # the plan model's caps: 8 candidates, 20 repeats, 16 counts


class TrialPlansConfig(BaseModel):
    """The stage's bounds on every trial plan the API accepts (above them: 422 naming the
    field). A plan's own budget_cap_usd and max_run_minutes must fit under them; the plan
    model's caps (10,000,000 USD, 28 days) are the most a stage may allow."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_budget_usd: Annotated[Decimal, Field(gt=0, le=10_000_000, allow_inf_nan=False)] = Decimal(
        10_000
    )
    max_run_hours: Annotated[int, Field(ge=1, le=28 * 24)] = 72
    # Runs one plan may schedule (candidates × (fit + baseline repeats + target counts)); the
    # state machine's overall timeout is derived from it (trncost.workflow.definition).
    max_runs: Annotated[int, Field(ge=1, le=MAX_RUNS_PER_PLAN)] = 48


class ReservedConcurrency(BaseModel):
    """Reserved concurrency per function (lambdas/<name>): the most instances it runs at
    once, held back from the account's pool. Lambda refuses a reservation that leaves the
    account fewer than 100 unreserved: these defaults (56 in all) need an account
    concurrency quota of at least 156 (the default quota is 1,000)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # API Gateway lets 50 requests/s through (api.throttle_rate_limit) at well under a
    # second each: 40 instances serve it with room for the slow report and comparison routes.
    api: Annotated[int, Field(ge=1, le=1000)] = 40
    ingest: Annotated[int, Field(ge=1, le=1000)] = 5  # job ends arrive minutes apart
    refresh: Annotated[int, Field(ge=1, le=1000)] = 2  # conditional writes settle races
    prices: Annotated[int, Field(ge=1, le=1000)] = 2  # one scheduled snapshot a day
    trial_steps: Annotated[int, Field(ge=1, le=1000)] = 5  # Step Functions retries throttles
    actuals: Annotated[int, Field(ge=1, le=1000)] = 1  # one Cost Explorer pull a day
    outbox: Annotated[int, Field(ge=1, le=1000)] = 1  # one sweep a minute, oldest first


class QueueConcurrency(BaseModel):
    """MaximumConcurrency of each SQS event source mapping (2..1,000, Lambda's range): at
    most as many as its function's reserved concurrency, so the poller never invokes into
    throttling (which would count receives against the queue's maxReceiveCount)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ingest: Annotated[int, Field(ge=2, le=1000)] = 5
    refresh: Annotated[int, Field(ge=2, le=1000)] = 2


class ConcurrencyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reserved: ReservedConcurrency = ReservedConcurrency()
    sqs_maximum: QueueConcurrency = QueueConcurrency()

    @model_validator(mode="after")
    def _queues_within_functions(self) -> ConcurrencyConfig:
        for name in type(self.sqs_maximum).model_fields:
            queue, function = getattr(self.sqs_maximum, name), getattr(self.reserved, name)
            if queue > function:
                raise ValueError(
                    f"sqs_maximum.{name} ({queue}) is above reserved.{name} ({function}):"
                    " the queue would invoke the function into throttling"
                )
        return self

    def reserved_for(self, function: str) -> int:
        """The reserved concurrency of lambdas/<function>; every function must have one."""
        if function not in type(self.reserved).model_fields:
            raise StageConfigError(f"concurrency.reserved has no entry for function {function!r}")
        value: int = getattr(self.reserved, function)
        return value


class PricesConfig(BaseModel):
    """How the stage treats prices (stacks/api.py and stacks/pricing.py pass it on)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # May an uploaded saved Price List file (POST /prices/snapshots with "publish": true)
    # become the latest prices, which estimates that follow latest are recomputed with? Off:
    # uploads are stored and usable by snapshot_id only, and nothing but the stage's own live
    # snapshots moves latest. Turn it on only for a stage without Price List access (air-gapped)
    # whose callers are trusted to supply prices.
    accept_uploads: bool = False


class StageConfig(BaseModel):
    """One deployable stage of trncost."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    account: Annotated[str, Field(pattern=ACCOUNT_PATTERN)] | None = None
    region: Region
    price_list_endpoint_region: Region = "us-east-1"
    log_retention_days: int = 30
    alarm_email: Annotated[str, Field(pattern=EMAIL_PATTERN)] | None = None
    catalog: CatalogConfig
    # When the prices Lambda snapshots the Price List (EventBridge Scheduler, UTC).
    price_schedule: Annotated[str, Field(pattern=SCHEDULE_PATTERN)] = "rate(1 day)"
    # When the actuals Lambda asks Cost Explorer for the spend tagged trncost:estimate-id
    # (UTC; each pull is a few USD 0.01 requests). Cost Explorer refreshes at least daily.
    actuals_schedule: Annotated[str, Field(pattern=SCHEDULE_PATTERN)] = "cron(0 7 * * ? *)"
    api: ApiConfig = ApiConfig()
    trial_plans: TrialPlansConfig = TrialPlansConfig()
    concurrency: ConcurrencyConfig = ConcurrencyConfig()
    prices: PricesConfig = PricesConfig()
    # Training log groups the ingest subscribes to (a CloudWatch Logs subscription filter each):
    # a job's log is then read whole when it ends, however long it ran. The groups must exist
    # when the stage deploys (SageMaker and Batch create them with their first job), and a
    # group takes at most two subscription filters. Empty: jobs without the agent are read with
    # GetLogEvents, at most MAX_CALLS calls a job (docs/trial-logs.md, "Long jobs").
    job_log_subscription: tuple[str, ...] = ()

    @field_validator("log_retention_days")
    @classmethod
    def _retention_allowed(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            allowed = ", ".join(str(v) for v in sorted(LOG_RETENTION_DAYS))
            raise ValueError(f"{value} is not a CloudWatch Logs retention; use one of {allowed}")
        return value

    @field_validator("job_log_subscription")
    @classmethod
    def _job_log_groups(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(LOG_GROUPS))
        if unknown or len(set(value)) != len(value):
            allowed = ", ".join(LOG_GROUPS)
            raise ValueError(f"subscribe each of {allowed} at most once, not {unknown or value}")
        return value

    @field_validator("price_list_endpoint_region")
    @classmethod
    def _price_list_region(cls, value: str) -> str:
        if value not in PRICE_LIST_REGIONS:
            allowed = ", ".join(sorted(PRICE_LIST_REGIONS))
            raise ValueError(f"the Price List API is not served from {value}; use one of {allowed}")
        return value


class StageConfigError(ValueError):
    """A stage in the `stages` context is missing or invalid."""


def _describe(stage: str, error: ValidationError) -> str:
    lines = [f"invalid config for stage {stage!r}:"]
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "<stage>"
        lines.append(f"  field {field!r}: {item['msg']} (got {item.get('input')!r})")
    return "\n".join(lines)


def load_stage_configs(context: dict[str, Any]) -> dict[str, StageConfig]:
    """Validate `context["stages"]` (cdk.json context) into one StageConfig per stage name."""
    stages = context.get("stages")
    if not isinstance(stages, dict) or not stages:
        raise StageConfigError(
            "context 'stages' must be a non-empty object of stage name -> stage config"
        )
    configs: dict[str, StageConfig] = {}
    for name, raw in stages.items():
        if not STAGE_NAME_PATTERN.match(name):
            raise StageConfigError(
                f"invalid stage name {name!r}: use a letter then letters, digits or '-' (max 32)"
            )
        if not isinstance(raw, dict):
            raise StageConfigError(f"invalid config for stage {name!r}: expected an object")
        try:
            configs[name] = StageConfig.model_validate(raw)
        except ValidationError as error:
            raise StageConfigError(_describe(name, error)) from None
    return configs


def select_stages(configs: dict[str, StageConfig], stage: str | None) -> dict[str, StageConfig]:
    """All stages, or only the one named (e.g. by `cdk synth -c stage=NAME`)."""
    if stage is None:
        return configs
    if stage not in configs:
        known = ", ".join(sorted(configs))
        raise StageConfigError(f"unknown stage {stage!r}; cdk.json defines: {known}")
    return {stage: configs[stage]}
