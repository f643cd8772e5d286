"""Every environment variable trncost reads is named here, and read only here.

CDK sets them on the Lambdas (stacks/ imports these names), the local runtime sets them for its
in-process handlers, and tests set them with monkeypatch. Each model reads its variables once
(`from_env`); nothing else in the package reads `os.environ`, the CLI's own flags and the
environment it passes to the processes it starts aside (tests/unit/test_layering.py checks).

    Settings           the Lambdas and the local runtime: table, bus, prices, trial plans
    LocalRuns          the local runtime only: trial plan runs as processes on this machine
    TrialStepSettings  what the trial steps Lambda gives the launchers (role, profile, bus)
    LocalSettings      the local runtime: where it keeps its state, how much it logs
    AgentSettings      the trial agent inside a training job (not read by the Lambdas)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from trncost.model.catalog import Catalog

# -- the names ----------------------------------------------------------------------------------
TABLE_NAME_ENV = "TRNCOST_TABLE"
BUS_NAME_ENV = "TRNCOST_BUS"
PRICE_LIST_REGION_ENV = "TRNCOST_PRICE_LIST_REGION"
CATALOG_ENV = "TRNCOST_CATALOG"
LIVE_PRICES_ENV = "TRNCOST_LIVE_PRICES"
ACCEPT_UPLOADS_ENV = "TRNCOST_ACCEPT_UPLOADS"  # prices.accept_uploads: may an upload be latest
STATE_MACHINE_ARN_ENV = "TRNCOST_TRIAL_PLAN_STATE_MACHINE_ARN"
TRAINING_ROLE_ENV = "TRNCOST_TRAINING_ROLE_ARN"
INSTANCE_PROFILE_ENV = "TRNCOST_TRAINING_INSTANCE_PROFILE_ARN"
AGENT_BUS_ENV = "TRNCOST_AGENT_BUS"
# the stage's bounds on every trial plan (cdk.json: trial_plans.max_budget_usd, max_run_hours,
# max_runs)
PLAN_MAX_BUDGET_ENV = "TRNCOST_TRIAL_PLAN_MAX_BUDGET_USD"
PLAN_MAX_RUN_HOURS_ENV = "TRNCOST_TRIAL_PLAN_MAX_RUN_HOURS"
PLAN_MAX_RUNS_ENV = "TRNCOST_TRIAL_PLAN_MAX_RUNS"
URL_ENV = "TRNCOST_URL"  # the CLI: the API base URL when --url is not given
DEFAULT_LAUNCHER_ENV = "TRNCOST_DEFAULT_LAUNCHER"  # the launcher of a plan that names none
# Set by the local runtime only: trial plans may use the `local` launcher (a process on this
# machine), whose runs write their output under this directory.
LOCAL_RUNS_DIR_ENV = "TRNCOST_LOCAL_RUNS_DIR"
MOTO_PORT_ENV = "MOTO_PORT"  # moto's own: where its Step Functions calls Lambda (local runtime)
REGION_ENV = "AWS_DEFAULT_REGION"  # botocore's own; the local runtime's region
LAMBDA_REGION_ENV = "AWS_REGION"  # what Lambda sets (with AWS_DEFAULT_REGION, the same value)
STATE_DIR_ENV = "TRNCOST_STATE_DIR"  # the local runtime's state file (default ~/.cache/trncost)
LOG_LEVEL_ENV = "POWERTOOLS_LOG_LEVEL"  # Powertools' own; the local runtime passes it on
# The stage's AWS account (CDK sets it): the account an estimate's budget is made in.
ACCOUNT_ID_ENV = "TRNCOST_ACCOUNT_ID"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def catalog_from_env(env: Mapping[str, str] | None = None) -> Catalog | None:
    """The stage catalog in CATALOG_ENV, None when it is not set."""
    raw = _env(env).get(CATALOG_ENV)
    return Catalog.model_validate(json.loads(raw)) if raw else None


class PlanLimits(BaseModel):
    """The stage's bounds on every trial plan (a plan above them is refused, 422). None: only
    the plan model's own caps (budget_cap_usd ≤ 10,000,000; max_run_minutes ≤ 28 days)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    max_budget_usd: Decimal | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_run_hours: int | None = Field(default=None, ge=1)
    max_runs: int | None = Field(default=None, ge=1)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> PlanLimits:
        env = _env(env)
        budget, hours = env.get(PLAN_MAX_BUDGET_ENV), env.get(PLAN_MAX_RUN_HOURS_ENV)
        runs = env.get(PLAN_MAX_RUNS_ENV)
        return cls(
            max_budget_usd=Decimal(budget) if budget else None,
            max_run_hours=int(hours) if hours else None,
            max_runs=int(runs) if runs else None,
        )


class LocalRuns(BaseModel):
    """Where the local runtime runs trial plan runs as processes (the `local` launcher): only
    set there, so a deployed stage refuses a local plan."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    runs_dir: Path = Field(description="each run's output: <runs_dir>/<trial id>.log")
    region: str = Field(description="the runtime's region: its runs are recorded there")
    bus_name: str | None = Field(description="where the agent sends its event")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LocalRuns | None:
        env = _env(env)
        runs_dir = env.get(LOCAL_RUNS_DIR_ENV)
        if not runs_dir:
            return None
        return cls(
            runs_dir=Path(runs_dir),
            region=env.get(REGION_ENV) or "us-east-1",
            bus_name=env.get(BUS_NAME_ENV) or None,
        )


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    table_name: str
    bus_name: str | None = None
    price_list_region: str = "us-east-1"
    catalog: Catalog | None = None
    live_prices: bool = True  # may the API query the Price List API (POST /prices/snapshots)
    # May an uploaded Price List file become the latest prices when its request asks
    # ("publish": true)? The stage's prices.accept_uploads: off unless a stage turns it on
    # (the local runtime does).
    accept_uploads: bool = False
    state_machine_arn: str | None = None  # the trial plan state machine the API starts
    plan_limits: PlanLimits = Field(default_factory=PlanLimits)
    default_launcher: str | None = None  # a plan that names no launcher gets this one
    local_runs: LocalRuns | None = None  # the local runtime only
    # The region trncost is deployed to (the local runtime's, locally): a trial plan launches
    # there, so a candidate elsewhere is refused at submission. None (not set): not checked.
    region: str | None = None
    # The stage's account (POST /estimates/{id}/budget makes the budget in it). None: unknown.
    account_id: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = _env(env)
        return cls(
            table_name=env[TABLE_NAME_ENV],
            bus_name=env.get(BUS_NAME_ENV) or None,
            price_list_region=env.get(PRICE_LIST_REGION_ENV, "us-east-1"),
            catalog=catalog_from_env(env),
            live_prices=env.get(LIVE_PRICES_ENV, "true").lower() not in ("false", "0", "no"),
            accept_uploads=env.get(ACCEPT_UPLOADS_ENV, "false").lower() in ("true", "1", "yes"),
            state_machine_arn=env.get(STATE_MACHINE_ARN_ENV) or None,
            plan_limits=PlanLimits.from_env(env),
            default_launcher=env.get(DEFAULT_LAUNCHER_ENV) or None,
            local_runs=LocalRuns.from_env(env),
            # botocore's own variable first (the region every client of this process uses)
            region=env.get(REGION_ENV) or env.get(LAMBDA_REGION_ENV) or None,
            account_id=env.get(ACCOUNT_ID_ENV) or None,
        )


class TrialStepSettings(BaseModel):
    """Defaults the trial steps give a launch when the plan does not say."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    training_role_arn: str | None = None  # SageMaker and Batch jobs' role
    instance_profile_arn: str | None = None  # EC2 instances' profile
    agent_bus: str | None = None  # where the trial agent on EC2 sends "Trial Run Completed"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TrialStepSettings:
        env = _env(env)
        return cls(
            training_role_arn=env.get(TRAINING_ROLE_ENV),
            instance_profile_arn=env.get(INSTANCE_PROFILE_ENV),
            agent_bus=env.get(AGENT_BUS_ENV),
        )


class LocalSettings(BaseModel):
    """The local runtime's own settings (`trncost serve`, `make run`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    state_dir: Path
    log_level: str = "WARNING"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LocalSettings:
        env = _env(env)
        state_dir = env.get(STATE_DIR_ENV) or Path.home() / ".cache" / "trncost"
        return cls(state_dir=Path(state_dir), log_level=env.get(LOG_LEVEL_ENV, "WARNING"))


# -- the trial agent (trncost_client.agent, inside training jobs; not read by the Lambdas) ---
# The launchers (trncost.launch) or the job's own environment set these; the agent's flags win.
AGENT_TRIAL_ID_ENV = "TRNCOST_TRIAL_ID"
AGENT_TAGS_ENV = "TRNCOST_TAGS"  # "k=v,k=v": the job's trncost:* tags
AGENT_INSTANCE_TYPE_ENV = "TRNCOST_INSTANCE_TYPE"
AGENT_INSTANCE_COUNT_ENV = "TRNCOST_INSTANCE_COUNT"
AGENT_SEND_EVENT_ENV = "TRNCOST_SEND_EVENT"  # 0/false/no: no "Trial Run Completed" event
# The agent's EventBridge bus is BUS_NAME_ENV (TRNCOST_BUS). What the platforms set:
SAGEMAKER_INSTANCE_TYPE_ENV = "SM_CURRENT_INSTANCE_TYPE"
NODE_RANK_ENVS = ("NODE_RANK", "AWS_BATCH_JOB_NODE_INDEX")  # the first one set wins
REGION_ENVS = ("AWS_REGION", "AWS_DEFAULT_REGION")


def parse_tags(text: str | None) -> dict[str, str]:
    """ "k=v,k=v" → {k: v} (TRNCOST_TAGS, and the agent's --tag flags)."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            if k.strip():
                out[k.strip()] = v.strip()
    return out


class AgentSettings(BaseModel):
    """What the trial agent reads from its environment (an unset or empty variable is None).
    trncost_client.agent.AgentConfig combines it with the agent's flags and the job's tags."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    trial_id: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    instance_type: str | None = None  # TRNCOST_INSTANCE_TYPE, else SageMaker's
    instance_count: str | None = None  # as set: parsed only when no --instance-count overrides it
    node_rank: int = 0  # 0 (the leader) unless a rank variable holds a number
    region: str | None = None
    send_event: bool = True
    bus_name: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AgentSettings:
        env = _env(env)
        rank = next((env[k] for k in NODE_RANK_ENVS if env.get(k)), "0")
        return cls(
            trial_id=env.get(AGENT_TRIAL_ID_ENV) or None,
            tags=parse_tags(env.get(AGENT_TAGS_ENV)),
            instance_type=env.get(AGENT_INSTANCE_TYPE_ENV)
            or env.get(SAGEMAKER_INSTANCE_TYPE_ENV)
            or None,
            instance_count=env.get(AGENT_INSTANCE_COUNT_ENV) or None,
            node_rank=int(rank) if rank.isdigit() else 0,
            region=next((env[k] for k in REGION_ENVS if env.get(k)), None),
            send_event=env.get(AGENT_SEND_EVENT_ENV, "1").lower() not in ("0", "false", "no"),
            bus_name=env.get(BUS_NAME_ENV) or None,
        )
