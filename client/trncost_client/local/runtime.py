"""trncost on one laptop: an embedded AWS (moto server), the table, bus, rules, queues and the
trial plan state machine built from the same definitions CDK uses, and the real Lambda handlers
run in-process.

    HTTP 127.0.0.1:8080 ─► API Gateway proxy events ─► lambdas/api
    EventBridge rules ─► SQS ─► pollers (like event source mappings) ─► lambdas/ingest, refresh
    trial plans: moto's Step Functions executes state_machine.asl.json (short polls through its
    substitutions) ─► Task states ─► lambdas/trial_steps in-process
    (trncost_client.local.lambdas) ─►
    the `local` launcher: each run a process on this machine under the trial agent, whose
    metrics and event reach the embedded AWS and are ingested like a job's on AWS
    prices: a snapshot from the bundled saved Price List file (or live, with real credentials
    and --live-prices)
    actuals: the real actuals Lambda (lambdas/actuals) registered in the embedded AWS's Lambda
    as trncost-local-actuals, run as the Scheduler runs it: at start, then every
    `actuals_interval_s` (a day); moto's Cost Explorer answers what its moto-api queue was
    given (empty by default), and invoking the function (boto3, aws lambda invoke against the
    embedded AWS) pulls again at once

Seeded: the example workload (examples/llama-8b, its trials and one estimate per candidate)
and the demo workload (examples/tiny-demo: the bundled tiny training on this machine, recorded
as the c7i.16xlarge it says it is labelled as), which local trials and plans default to, so a
demo never moves the example's figures.

Each runtime writes `<state dir>/local-<port>.json` (its URL, its embedded AWS endpoint and
region, what it seeded), which the CLI reads for the runtime at the URL it is given; a runtime
deletes only its own file. Nothing here calls real AWS unless the user passes credentials and
asks for live prices.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import trncost
from trncost import aws
from trncost.events import DetailType, pattern
from trncost.metrics.events import AGENT_PATTERN, BATCH_PATTERN, SAGEMAKER_PATTERN
from trncost.settings import (
    ACCEPT_UPLOADS_ENV,
    ACCOUNT_ID_ENV,
    BUS_NAME_ENV,
    CATALOG_ENV,
    DEFAULT_LAUNCHER_ENV,
    LIVE_PRICES_ENV,
    LOCAL_RUNS_DIR_ENV,
    LOG_LEVEL_ENV,
    MOTO_PORT_ENV,
    PRICE_LIST_REGION_ENV,
    REGION_ENV,
    STATE_MACHINE_ARN_ENV,
    TABLE_NAME_ENV,
    LocalSettings,
)
from trncost.store.schema import TABLE
from trncost.wiring import Wiring
from trncost.workflow.definition import render, substitutions
from trncost_client.local.esm import QueuePoller
from trncost_client.local.gateway import WsgiGateway

if TYPE_CHECKING:
    from trncost.model.requests import RequestFile

log = logging.getLogger(__name__)
CLIENT_PACKAGE = Path(__file__).resolve().parent.parent  # trncost_client
REPO = Path(trncost.__file__).resolve().parent.parent.parent  # the checkout: examples/, cdk.json
BUNDLED_PRICE_LIST = CLIENT_PACKAGE / "local" / "data" / "saved_price_list.json"
EXAMPLE = REPO / "examples" / "llama-8b" / "estimate.json"
DEMO = REPO / "examples" / "tiny-demo" / "estimate.json"
TABLE_NAME = "trncost-local"
BUS = "trncost-local"
REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account
TRIAL_STEPS_FUNCTION = "trncost-local-trial-steps"
TRIAL_STEPS_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{TRIAL_STEPS_FUNCTION}"
ACTUALS_FUNCTION = "trncost-local-actuals"  # Cost Explorer → actuals, as the Scheduler runs it
ACTUALS_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{ACTUALS_FUNCTION}"
ACTUALS_INTERVAL_S = 24 * 3600  # the deployed schedule: daily
STATE_MACHINE = "trncost-local-trial-plans"
STATE_MACHINE_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{STATE_MACHINE}"
STATE_MACHINE_ROLE = f"arn:aws:iam::{ACCOUNT}:role/trncost-local-trial-plans"
# moto's Step Functions sleeps through a Wait state in real time: poll for a run's record every
# second (AWS: every 5 minutes), for at most an hour (a run's max time is checked as well).
LOCAL_POLL_INTERVAL_S = 1
LOCAL_MAX_POLLS = 3600
MOTO_CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


OUTBOX_SWEEP_S = 5.0  # the deployed sweeper runs every minute (stacks/ingest.py)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.info("%s %s", self.address_string(), format % args)


@dataclass
class LocalContext:
    function_name: str = "trncost-local"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:trncost-local"
    aws_request_id: str = "local"


@dataclass
class Runtime:
    host: str = "127.0.0.1"
    port: int = 8080
    live_prices: bool = False
    seed_example: bool = True
    poll_interval_s: float = 0.5
    seed_demo: bool = True
    catalog: dict[str, Any] | None = None
    moto_port: int = field(default=0)
    # workload id → {instance type → estimate id}, for what was seeded
    seeded: dict[str, dict[str, str]] = field(default_factory=dict)
    workload_id: str | None = None  # the example's
    demo_workload_id: str | None = None
    demo_candidate: dict[str, Any] | None = None  # what a demo run is recorded as
    actuals_interval_s: float = ACTUALS_INTERVAL_S  # how often Cost Explorer is asked
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def aws_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.moto_port}"

    @property
    def estimates(self) -> dict[str, str]:
        """The example's estimates: instance type → estimate id."""
        return self.seeded.get(self.workload_id or "", {})

    @property
    def dead_letter_queues(self) -> list[str]:
        return [url.rsplit("/", 1)[-1] for n, url in self.queues.items() if n.endswith("-dlq")]

    @property
    def state_file(self) -> Path:
        return state_path(self.port)

    @property
    def runs_dir(self) -> Path:
        """Where the local launcher's runs write their output."""
        return LocalSettings.from_env().state_dir / f"runs-{self.port}"

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> Runtime:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto server's request log
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        warnings.filterwarnings("ignore", message="When using MotoServer")
        self.moto_port = self.moto_port or free_port()
        self.port = self.port or free_port()
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=self.moto_port, verbose=False)
        self._moto.start()
        _post_json(f"{self.aws_endpoint}/moto-api/config", MOTO_CONFIG)
        self._environment()
        self.services = Wiring()  # from that environment, like each handler's own
        self._resources()
        self._load_handlers()
        self._take_prices()
        if self.seed_example:
            self.workload_id = self._seed(EXAMPLE).workload.workload_id
        if self.seed_demo:
            demo = self._seed(DEMO)
            self.demo_workload_id = demo.workload.workload_id
            self.demo_candidate = demo.candidates[0].candidate.model_dump(
                mode="json", include={"instance_type", "instance_count", "region"}
            )
        gateway = WsgiGateway(self.api.handler, LocalContext(function_name="trncost-api"))
        self._http = make_server(
            self.host,
            self.port,
            gateway,
            server_class=_ThreadingWSGIServer,
            handler_class=_QuietHandler,
        )
        self.port = self._http.server_port
        self._spawn(self._http.serve_forever, "http")
        for name, poller in (("ingest", self.ingest_poller), ("refresh", self.refresh_poller)):
            self._spawn(lambda p=poller: self._poll(p), f"poll-{name}")
        self._spawn(self._actuals_schedule, "actuals-schedule")
        self._spawn(self._sweep_outbox, "outbox")
        self._write_state()
        return self

    def _write_state(self) -> None:
        """Where the CLI finds this runtime (and its embedded AWS): a file of its own port,
        written whole (a temporary file renamed), so no other runtime overwrites it."""
        path = self.state_file
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "url": self.url,
            "port": self.port,
            "aws_endpoint": self.aws_endpoint,
            "region": REGION,
            "bus": BUS,
            "pid": os.getpid(),
            "dead_letter_queues": self.dead_letter_queues,
            "runs_dir": str(self.runs_dir),
            "workload_id": self.workload_id,
            "demo_workload_id": self.demo_workload_id,
            "demo_candidate": self.demo_candidate,
            "estimates": self.seeded,
            "actuals_function": ACTUALS_FUNCTION,
        }
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(state, indent=2))
        partial.replace(path)

    def stop(self) -> None:
        from trncost.launch import local
        from trncost_client.local import lambdas

        self._stop.set()
        lambdas.unregister(TRIAL_STEPS_ARN)
        lambdas.unregister(ACTUALS_ARN)
        local.stop_all()
        path = self.state_file
        try:
            if json.loads(path.read_text()).get("pid") == os.getpid():
                path.unlink()
        except (OSError, ValueError):
            pass
        if hasattr(self, "_http"):
            self._http.shutdown()
            self._http.server_close()
        for t in self._threads:
            t.join(timeout=5)
        if hasattr(self, "_moto"):
            self._moto.stop()

    def __enter__(self) -> Runtime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, target: Any, name: str) -> None:
        t = threading.Thread(target=target, name=f"trncost-{name}", daemon=True)
        t.start()
        self._threads.append(t)

    def pull_actuals(self) -> dict[str, Any]:
        """Invoke the actuals function in the embedded AWS, as the Scheduler does."""
        answer = self._lambda.invoke(FunctionName=ACTUALS_FUNCTION, Payload=b"{}")
        result: dict[str, Any] = json.loads(answer["Payload"].read() or b"{}")
        return result

    def _actuals_schedule(self) -> None:
        """The deployed schedule of the actuals function, here: now, then every interval."""
        while not self._stop.is_set():
            try:
                log.info("cost explorer actuals: %s", self.pull_actuals())
            except Exception:  # the next interval tries again, as the Scheduler would
                log.exception("the actuals function failed")
            self._stop.wait(self.actuals_interval_s)

    def _poll(self, poller: QueuePoller) -> None:
        while not self._stop.is_set():
            try:
                if not poller.poll_once().invocations:
                    self._stop.wait(self.poll_interval_s)
            except Exception:  # keep polling; the message stays in its queue
                log.exception("poller %s failed", poller.queue_url)
                self._stop.wait(self.poll_interval_s)

    def _sweep_outbox(self) -> None:
        """The outbox Lambda, as its schedule would run it (more often: a local run is short)."""
        context = LocalContext(function_name="trncost-outbox")
        while not self._stop.wait(OUTBOX_SWEEP_S):
            try:
                self.outbox_handler(None, context)
            except Exception:  # keep sweeping; the events stay in the outbox
                log.exception("outbox sweep failed")

    # -- setup ------------------------------------------------------------------------------
    def _environment(self) -> None:
        endpoint = f"http://127.0.0.1:{self.moto_port}"
        env = {
            "AWS_ENDPOINT_URL": endpoint,
            REGION_ENV: REGION,
            TABLE_NAME_ENV: TABLE_NAME,
            BUS_NAME_ENV: BUS,
            CATALOG_ENV: json.dumps(self.catalog or default_catalog()),
            LIVE_PRICES_ENV: "true" if self.live_prices else "false",
            ACCEPT_UPLOADS_ENV: "true",  # locally, an upload may become latest (with publish)
            PRICE_LIST_REGION_ENV: REGION,
            ACCOUNT_ID_ENV: ACCOUNT,  # budgets from estimates go to moto's account
            # trial plans: the state machine below, run by the local launcher by default
            STATE_MACHINE_ARN_ENV: STATE_MACHINE_ARN,
            DEFAULT_LAUNCHER_ENV: "local",
            LOCAL_RUNS_DIR_ENV: str(self.runs_dir),
            MOTO_PORT_ENV: str(self.moto_port),  # where moto's Step Functions calls Lambda
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_SERVICE_NAME": "trncost-local",
            "POWERTOOLS_METRICS_NAMESPACE": "trncost",
            "POWERTOOLS_METRICS_DISABLED": "true",  # no EMF lines on the console
            LOG_LEVEL_ENV: LocalSettings.from_env().log_level,
        }
        if self.live_prices:
            # Only the Price List API goes to AWS, with the user's own credentials.
            env["AWS_ENDPOINT_URL_PRICING"] = f"https://api.pricing.{REGION}.amazonaws.com"
        else:
            env.update(
                AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", AWS_SESSION_TOKEN="local"
            )
        os.environ.update(env)

    def _client(self, service: str) -> Any:
        return aws.client(service, REGION)

    def _state_machine(self, sfn: Any, made: list[str]) -> None:
        """The trial plan state machine from the one definition, its waits short (1 s polls)
        through the substitutions. moto's Step Functions interpreter takes a few seconds to
        load on first use: this runs while the other resources are made."""
        try:
            created = sfn.create_state_machine(
                name=STATE_MACHINE,
                definition=render(
                    substitutions(
                        TRIAL_STEPS_ARN,
                        poll_interval_s=LOCAL_POLL_INTERVAL_S,
                        max_polls=LOCAL_MAX_POLLS,
                    )
                ),
                roleArn=STATE_MACHINE_ROLE,
            )
            made.append(str(created["stateMachineArn"]))
        except Exception as exc:  # said by _resources, in the main thread
            made.append(f"{type(exc).__name__}: {exc}")

    def _resources(self) -> None:
        """The table, bus, rules, queues and state machine, from the definitions CDK uses."""
        made: list[str] = []
        sfn = self._client("stepfunctions")  # made here: boto3's default session is not
        machine = threading.Thread(target=self._state_machine, args=(sfn, made))  # thread-safe
        machine.start()
        self._client("dynamodb").create_table(**TABLE.create_table_kwargs(TABLE_NAME))
        sqs, events = self._client("sqs"), self._client("events")
        events.create_event_bus(Name=BUS)
        self.queues: dict[str, str] = {}
        for name in ("ingest", "refresh"):
            dlq = sqs.create_queue(QueueName=f"trncost-{name}-dlq")["QueueUrl"]
            dlq_arn = _arn(sqs, dlq)
            self.queues[name] = sqs.create_queue(
                QueueName=f"trncost-{name}",
                Attributes={
                    "RedrivePolicy": json.dumps(
                        {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "5"}
                    )
                },
            )["QueueUrl"]
            self.queues[f"{name}-dlq"] = dlq
        rules = (
            ("sagemaker", "default", SAGEMAKER_PATTERN, "ingest"),
            ("batch", "default", BATCH_PATTERN, "ingest"),
            ("agent", BUS, AGENT_PATTERN, "ingest"),
            ("trial-recorded", BUS, pattern(DetailType.trial_recorded), "refresh"),
            ("price-snapshot", BUS, pattern(DetailType.price_snapshot_taken), "refresh"),
        )
        for rule, bus, event_pattern, queue in rules:
            events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps(event_pattern))
            events.put_targets(
                Rule=rule,
                EventBusName=bus,
                Targets=[{"Id": queue, "Arn": _arn(sqs, self.queues[queue])}],
            )
        machine.join()
        if made != [STATE_MACHINE_ARN]:
            raise RuntimeError(f"the trial plan state machine was not created ({made})")

    def _load_handlers(self) -> None:
        from trncost_client.local import lambdas
        from trncost_client.local.handlers import load_handler

        self.api = load_handler("api")
        self.outbox_handler = load_handler("outbox").handler
        # moto has no Capacity Block or Training Plan offerings: the constructed examples
        # (basis example, never official) answer POST /estimates/{id}/capacity here
        from trncost_client.local.offerings import example_capacity

        api = self.api.services
        api.capacity = example_capacity(api.estimates, api.capacity_store)
        # the state machine's Task states reach the real trial steps handler in-process
        lambdas.register(
            TRIAL_STEPS_ARN,
            load_handler("trial_steps").handler,
            LocalContext(function_name=TRIAL_STEPS_FUNCTION, invoked_function_arn=TRIAL_STEPS_ARN),
        )
        # the actuals function, where the embedded Lambda (and the schedule thread) reach it;
        # the client made here (boto3's default session is not thread-safe)
        self._lambda = self._client("lambda")
        lambdas.register(
            ACTUALS_ARN,
            load_handler("actuals").handler,
            LocalContext(function_name=ACTUALS_FUNCTION, invoked_function_arn=ACTUALS_ARN),
        )
        sqs = self._client("sqs")
        self.ingest_poller = QueuePoller(
            sqs,
            self.queues["ingest"],
            load_handler("ingest").handler,
            LocalContext(function_name="trncost-ingest"),
        )
        self.refresh_poller = QueuePoller(
            sqs,
            self.queues["refresh"],
            load_handler("refresh").handler,
            LocalContext(function_name="trncost-refresh"),
        )

    def _take_prices(self) -> None:
        catalog = self.services.settings.catalog
        assert catalog is not None
        snapshots = self.services.snapshots
        if self.live_prices:
            self.snapshot = snapshots.take(catalog).snapshot
            return
        data = json.loads(BUNDLED_PRICE_LIST.read_text())
        # basis example, by the call that seeds it: every estimate made with it says so
        self.snapshot = snapshots.seed_example(
            data,
            catalog,
            file=str(BUNDLED_PRICE_LIST.relative_to(CLIENT_PACKAGE.parent)),
            note="the saved Price List file bundled with trncost for the local runtime: "
            "illustrative figures, not current AWS prices",
        ).snapshot

    def _seed(self, path: Path) -> RequestFile:
        """A request file's workload, its trials and one estimate per candidate (its
        assumptions merged over the shared ones as a comparison merges them)."""
        from datetime import UTC, datetime

        from trncost.errors import DomainError
        from trncost_client.requestfile import load_request_file, request_inputs

        request = load_request_file(path)
        workload_id = request.workload.workload_id
        services = self.services
        now = datetime.now(UTC).isoformat()
        services.records.put_workload(request.workload, now)
        for trial in request.trials:
            services.records.put_trial(trial, now, "example")
        made = self.seeded.setdefault(workload_id, {})
        for inp in request_inputs(request, services.names):
            try:
                version = services.estimates.create(workload_id, inp.candidate, inp.assumptions)
            except DomainError as exc:
                log.warning(
                    "%s estimate for %s not made: %s", path.parent.name, inp.candidate.label, exc
                )
                continue
            made[inp.candidate.instance_type] = version.estimate_id
        return request


def state_path(port: int) -> Path:
    """The state file of the runtime on `port`: $TRNCOST_STATE_DIR/local-<port>.json
    (default ~/.cache/trncost)."""
    return LocalSettings.from_env().state_dir / f"local-{port}.json"


def read_state(port: int) -> dict[str, Any] | None:
    """The state of the runtime on `port`, or None (no file, or its process is gone)."""
    try:
        state = json.loads(state_path(port).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not _alive(state.get("pid")):
        return None
    return state


def running_states() -> list[dict[str, Any]]:
    """Every local runtime this machine's state directory knows of, that is still running."""
    found = []
    for path in sorted(LocalSettings.from_env().state_dir.glob("local-*.json")):
        port = path.stem.removeprefix("local-")
        state = read_state(int(port)) if port.isdigit() else None
        if state is not None:
            found.append(state)
    return found


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def _post_json(url: str, body: dict[str, Any]) -> None:
    import urllib.request

    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - the local moto
        answer.read()


def _arn(sqs: Any, url: str) -> str:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def default_catalog() -> dict[str, Any]:
    """The dev stage's catalog from cdk.json (the same list CDK deploys), plus what the
    example needs."""
    catalog: dict[str, Any] = {"instance_types": [], "regions": []}
    cdk_json = REPO / "cdk.json"
    if cdk_json.exists():
        stages = json.loads(cdk_json.read_text())["context"]["stages"]
        catalog = dict(next(iter(stages.values()))["catalog"])
    types = list(dict.fromkeys([*catalog["instance_types"], "c7i.16xlarge"]))
    regions = list(dict.fromkeys([*catalog["regions"], "us-east-1", "us-east-2"]))
    return {**catalog, "instance_types": types, "regions": regions}
