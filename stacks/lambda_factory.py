"""The house Lambda factory: every trncost function is built here, the same way.

- `TrncostLayer`: the one Lambda layer, the whole `trncost` package (layers/trncost; the client
  side — CLI, agent, local runtime — is the other package, client/trncost_client, never shipped)
  under `python/trncost/` plus
  the pinned dependencies of layers/trncost/requirements.txt, installed by pip for arm64 on the
  host: no Docker.
- `TrncostFunction`: arm64, `RUNTIME`, handler code from lambdas/<name>/ only, the layer, its
  own log group (retention from the stage, the stage's log key), JSON logs, X-Ray, Powertools
  env vars, its own role (no AWS managed policy), reserved concurrency from the stage
  (`concurrency.reserved.<name>`), an encrypted TLS-only SQS dead-letter queue for async
  invokes, and on request SnapStart: a published version and the alias `live` to invoke.
- `ScheduledInvocation`: an EventBridge Scheduler schedule that invokes one function, with
  a role that may invoke only that function, a retry policy and its own dead-letter queue.
- `dead_letter_queue()`: the house DLQ (SSE-SQS, TLS only, 14 days).

Layer bundling runs at synth (`cdk synth`, `cdk deploy`) through CDK's local bundling hook. CDK
skips bundling (local included) for every stack not matched by the `aws:cdk:bundling-stacks`
context, as `cdk synth --exclusively`/`cdk ls` and tests/infra (which sets it to []) do.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from stacks.base import retained_log_group
from stacks.config import StageConfig
from stacks.permissions import INVOKE_ACTIONS, LOG_WRITE_ACTIONS, grant
from trncost.observability import NAMESPACE

REPO_ROOT = Path(__file__).resolve().parent.parent
LAYERS_DIR = REPO_ROOT / "layers"  # the layer asset's source: holds trncost/
LAMBDAS_DIR = REPO_ROOT / "lambdas"  # lambdas/<name>/handler.py
PACKAGE = "trncost"
LAYER_REQUIREMENTS = f"{PACKAGE}/requirements.txt"  # relative to LAYERS_DIR

# The newest Python runtime aws-cdk-lib knows whose arm64 wheels exist for every compiled pin
# in layers/trncost/requirements.txt (pydantic-core, wrapt: cp314 manylinux2014_aarch64).
RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64
PIP_PLATFORM = "manylinux2014_aarch64"  # glibc 2.17+: runs on Lambda's Amazon Linux 2023
# numpy 2.4 ships aarch64 wheels for glibc 2.28+ only; Amazon Linux 2023 has glibc 2.34.
PIP_PLATFORM_NEWER = "manylinux_2_28_aarch64"
# What the Lambda Python runtime already has: the AWS SDK and its dependencies. Kept out of the
# layer (installed with --no-deps) so the runtime's boto3 runs on the runtime's botocore.
RUNTIME_PROVIDED_PACKAGES = frozenset(
    {"boto3", "botocore", "s3transfer", "jmespath", "urllib3", "python-dateutil", "six"}
)
# Modules only the Lambda Python runtime has (not installed here, so not pinned anywhere):
# SnapStart's runtime hooks, imported by lambdas/api/handler.py when present.
RUNTIME_ONLY_MODULES = frozenset({"snapshot_restore_py"})

# Paths under LAYERS_DIR that are not shipped. Used both to fingerprint the asset (so its hash
# changes with the package source and requirements, and not with caches) and to copy it.
LAYER_EXCLUDES: tuple[str, ...] = (
    "**/__pycache__",
    "**/*.pyc",
    "*.egg-info",
    ".*",
)
HANDLER_EXCLUDES: tuple[str, ...] = ("**/__pycache__", "**/*.pyc", "tests", ".*")

POWERTOOLS_METRICS_NAMESPACE = NAMESPACE  # trncost.observability, the one definition
LIVE_ALIAS = "live"  # the alias SnapStart functions are invoked through
DEFAULT_MEMORY_MB = 256
DEFAULT_TIMEOUT = cdk.Duration.seconds(30)
ASYNC_RETRY_ATTEMPTS = 2
SCHEDULE_RETRY_ATTEMPTS = 3  # EventBridge Scheduler retries when the invoke itself fails
SCHEDULE_MAX_EVENT_AGE = cdk.Duration.hours(1)
DLQ_RETENTION = cdk.Duration.days(14)  # the SQS maximum: time to look at what failed and redrive


def python_version(runtime: lambda_.Runtime = RUNTIME) -> str:
    """'python3.14' -> '3.14' (what pip's --python-version wants)."""
    return runtime.name.removeprefix("python")


def _excluded(relative: str, patterns: Sequence[str]) -> bool:
    """Whether a path relative to LAYERS_DIR (posix) matches one of the exclude globs."""
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        if fnmatch.fnmatchcase(relative, pattern):
            return True
        bare = pattern.removeprefix("**/")
        if "/" not in bare and fnmatch.fnmatchcase(name, bare):
            return True
    return False


def copy_package(source_dir: Path, target_dir: Path) -> None:
    """Copy `source_dir/trncost` to `target_dir/trncost`, leaving out LAYER_EXCLUDES."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        base = Path(directory).relative_to(source_dir).as_posix()
        prefix = "" if base == "." else f"{base}/"
        return {n for n in names if _excluded(prefix + n, LAYER_EXCLUDES)}

    shutil.copytree(source_dir / PACKAGE, target_dir / PACKAGE, ignore=ignore)


# How pip installs the layer's pins for arm64 Lambda.
# `--no-deps`: requirements.txt is the complete pinned list; what the Lambda runtime already
# provides (RUNTIME_PROVIDED_PACKAGES) is deliberately not in it and must not be pulled in
# transitively (a layer copy of botocore would shadow the runtime's, under the runtime's boto3).
# tests/infra checks that every dependency of what is installed is there.
# `--no-compile`: .pyc written by this host's Python would be for the wrong Python version.
PIP_INSTALL_OPTIONS: tuple[str, ...] = (
    "--platform", PIP_PLATFORM,
    "--platform", PIP_PLATFORM_NEWER,
    "--implementation", "cp",
    "--python-version", python_version(),
    "--only-binary=:all:",
    "--no-deps",
    "--no-compile",
    "--disable-pip-version-check",
    "--quiet",
)  # fmt: skip


def pip_install_command(
    requirements: Path, target: Path, python: str = sys.executable
) -> list[str]:
    """The pip command that installs `requirements` into `target` for arm64 Lambda."""
    return [
        python, "-m", "pip", "install", *PIP_INSTALL_OPTIONS,
        "--target", str(target), "-r", str(requirements),
    ]  # fmt: skip


@jsii.implements(cdk.ILocalBundling)
class LocalLayerBundler:
    """Builds the layer on this host: pip for the target platform, then the package source.

    Returns True (bundled) or raises: it never hands over to Docker.
    """

    def __init__(self, source_dir: Path = LAYERS_DIR) -> None:
        self.source_dir = Path(source_dir)

    # jsii hands over the cdk.BundlingOptions (positionally; its stub spells them as keywords):
    # this bundler needs none of them.
    def try_bundle(self, output_dir: str, *_options: object, **_props: object) -> bool:
        target = Path(output_dir) / "python"
        target.mkdir(parents=True, exist_ok=True)
        command = pip_install_command(self.source_dir / LAYER_REQUIREMENTS, target)
        env = {**os.environ, "PIP_NO_INPUT": "1"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"building the trncost layer failed ({' '.join(command)}):\n"
                f"{done.stdout}\n{done.stderr}"
            )
        shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts: not used in Lambda
        copy_package(self.source_dir, target)
        return True


def layer_code(source_dir: Path = LAYERS_DIR) -> lambda_.Code:
    """The layer's asset: fingerprinted over `source_dir` (package + requirements) and the
    bundling options (platform, Python version), bundled locally. Asset hash type SOURCE: pip's
    output is not byte-for-byte reproducible, so hashing it would publish a new layer version on
    every deploy; the source and the pins fully determine it."""
    return lambda_.Code.from_asset(
        str(source_dir),
        asset_hash_type=cdk.AssetHashType.SOURCE,
        exclude=list(LAYER_EXCLUDES),
        bundling=cdk.BundlingOptions(
            # Never pulled or run: LocalLayerBundler always bundles (or fails).
            image=cdk.DockerImage.from_registry(f"public.ecr.aws/sam/build-{RUNTIME.name}"),
            local=LocalLayerBundler(source_dir),
            # Not passed to Docker either: part of the asset hash, so a change of platform,
            # Python version or pip options rebuilds the layer.
            environment={"TRNCOST_PIP_INSTALL_OPTIONS": " ".join(PIP_INSTALL_OPTIONS)},
        ),
    )


class TrncostLayer(Construct):
    """The trncost layer. One per stack that has functions (`TrncostLayer.of(scope)`): sharing a
    LayerVersion across stacks would export its ARN, and CloudFormation refuses to change an
    export in use, i.e. every layer change would fail to deploy. The per-stack copies are one
    asset (same hash), built and uploaded once."""

    ID = "TrncostLayer"

    def __init__(self, scope: Construct, construct_id: str, *, source_dir: Path = LAYERS_DIR):
        super().__init__(scope, construct_id)
        self.layer_version = lambda_.LayerVersion(
            self,
            "Layer",
            code=layer_code(source_dir),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="trncost package and its pinned dependencies (arm64)",
        )

    @classmethod
    def of(cls, scope: Construct) -> TrncostLayer:
        """The layer of `scope`'s stack, created on first use."""
        stack = cdk.Stack.of(scope)
        existing = stack.node.try_find_child(cls.ID)
        if existing is None:
            return cls(stack, cls.ID)
        if not isinstance(existing, cls):
            raise TypeError(f"{stack.node.path}/{cls.ID} is not a TrncostLayer")
        return existing


def dead_letter_queue(scope: Construct, construct_id: str = "DeadLetterQueue") -> sqs.Queue:
    """The house DLQ: SQS-managed encryption (no key policy for senders to need), TLS only."""
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=DLQ_RETENTION,
    )


class TrncostFunction(Construct):
    """One trncost Lambda function, built the house way (see the module docstring).

    `name` is the folder under lambdas/ (handler `handler.handler`) and the Powertools service.
    Permissions beyond its logs, X-Ray and DLQ are added by the caller to `function`/`role`.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        config: StageConfig,
        description: str,
        environment: Mapping[str, str] | None = None,
        memory_size: int = DEFAULT_MEMORY_MB,
        timeout: cdk.Duration = DEFAULT_TIMEOUT,
        reserved_concurrency: int | None = None,
        layer: TrncostLayer | None = None,
        snap_start: bool = False,
    ) -> None:
        """`reserved_concurrency`: None takes the stage's (StageConfig.concurrency).
        `snap_start`: SnapStart on published versions, and `alias` (`live`) on the current
        version: what callers invoke (the snapshot serves versions only, never $LATEST)."""
        super().__init__(scope, construct_id)
        # The Powertools service: the `service` dimension of its EMF metrics and the `service`
        # key of its logs (stacks/monitoring/alarms.py alarms on metrics by it).
        self.service_name = self.powertools_environment(name)["POWERTOOLS_SERVICE_NAME"]
        code_dir = LAMBDAS_DIR / name
        if not code_dir.is_dir():
            raise ValueError(f"no handler folder for function {name!r}: {code_dir}")
        clash = set(environment or ()) & set(self.powertools_environment(name))
        if clash:
            raise ValueError(f"environment may not override {sorted(clash)}")

        self.log_group = retained_log_group(
            self, "LogGroup", retention_days=config.log_retention_days
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"trncost {name} function",
        )
        # Instead of AWSLambdaBasicExecutionRole: write to its own log group only.
        grant(self.role, LOG_WRITE_ACTIONS, [self.log_group.log_group_arn])
        self.dead_letter_queue = dead_letter_queue(self)
        self.function = lambda_.Function(
            self,
            "Function",
            description=description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.handler",
            code=lambda_.Code.from_asset(str(code_dir), exclude=list(HANDLER_EXCLUDES)),
            layers=[(layer or TrncostLayer.of(self)).layer_version],
            role=self.role,
            log_group=self.log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            tracing=lambda_.Tracing.ACTIVE,
            environment={**self.powertools_environment(name), **(environment or {})},
            memory_size=memory_size,
            timeout=timeout,
            reserved_concurrent_executions=(
                config.concurrency.reserved_for(name)
                if reserved_concurrency is None
                else reserved_concurrency
            ),
            dead_letter_queue=self.dead_letter_queue,
            retry_attempts=ASYNC_RETRY_ATTEMPTS,
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snap_start else None,
        )
        self.alias: lambda_.Alias | None = None
        if snap_start:
            self.alias = lambda_.Alias(
                self, "Live", alias_name=LIVE_ALIAS, version=self.function.current_version
            )

    @property
    def invocable(self) -> lambda_.IFunction:
        """What callers invoke: the `live` alias under SnapStart, else the function."""
        return self.alias if self.alias is not None else self.function

    @staticmethod
    def powertools_environment(name: str) -> dict[str, str]:
        return {
            "POWERTOOLS_SERVICE_NAME": name,
            "POWERTOOLS_METRICS_NAMESPACE": POWERTOOLS_METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            # pydantic would scan every installed package's entry points for plugins on the
            # first model it builds: none are used, and the scan costs cold-start time
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
        }

    def add_to_role_policy(self, statement: iam.PolicyStatement) -> None:
        self.role.add_to_principal_policy(statement)


class _InvokeThisFunction(scheduler_targets.LambdaInvoke):
    """LambdaInvoke whose role may invoke exactly the function ARN (the stock target also
    grants `<arn>:*`, every version and alias)."""

    def __init__(
        self,
        function: lambda_.IFunction,
        *,
        role: iam.IRole,
        dead_letter_queue: sqs.IQueue,
        retry_attempts: int,
        max_event_age: cdk.Duration,
    ) -> None:
        super().__init__(
            function,
            role=role,
            dead_letter_queue=dead_letter_queue,
            retry_attempts=retry_attempts,
            max_event_age=max_event_age,
        )
        self._function_arn = function.function_arn

    def _add_target_action_to_role(self, role: iam.IRole) -> None:
        grant(role, INVOKE_ACTIONS, [self._function_arn])


class ScheduledInvocation(Construct):
    """An EventBridge Scheduler schedule (default group) that invokes `function` on
    `expression` (rate(...) or cron(...), UTC), retrying, then parking the event in a DLQ."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function: lambda_.IFunction,
        expression: str,
        description: str,
        retry_attempts: int = SCHEDULE_RETRY_ATTEMPTS,
        max_event_age: cdk.Duration = SCHEDULE_MAX_EVENT_AGE,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        # What it invokes (stacks/monitoring/resources.py names its DLQ by it).
        self.function = function
        self.dead_letter_queue = dead_letter_queue(self)
        # Assumable by EventBridge Scheduler for this account's default schedule group only.
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com",
                conditions={
                    "StringEquals": {
                        "aws:SourceAccount": stack.account,
                        "aws:SourceArn": stack.format_arn(
                            service="scheduler",
                            resource="schedule-group",
                            resource_name="default",
                        ),
                    }
                },
            ),
            description=f"EventBridge Scheduler: {description}",
        )
        self.schedule = scheduler.Schedule(
            self,
            "Schedule",
            schedule=scheduler.ScheduleExpression.expression(expression),
            description=description,
            target=_InvokeThisFunction(
                function,
                role=self.role,
                dead_letter_queue=self.dead_letter_queue,
                retry_attempts=retry_attempts,
                max_event_age=max_event_age,
            ),
        )
