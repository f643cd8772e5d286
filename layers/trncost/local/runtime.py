"""trncost on one laptop: an embedded AWS (moto server), the table, bus, rules and queues built
from the same definitions CDK uses, and the real Lambda handlers run in-process.

    HTTP 127.0.0.1:8080 ─► API Gateway proxy events ─► lambdas/api
    EventBridge rules ─► SQS ─► pollers (like event source mappings) ─► lambdas/ingest, refresh
    prices: a snapshot from the bundled saved Price List file (or live, with real credentials
    and --live-prices)

Nothing here calls real AWS unless the user passes credentials and asks for live prices.
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
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import trncost
from trncost import aws
from trncost.events import DetailType, pattern
from trncost.local.esm import QueuePoller
from trncost.local.gateway import WsgiGateway
from trncost.metrics.events import AGENT_PATTERN, BATCH_PATTERN, SAGEMAKER_PATTERN
from trncost.settings import (
    BUS_NAME_ENV,
    CATALOG_ENV,
    LIVE_PRICES_ENV,
    LOG_LEVEL_ENV,
    PRICE_LIST_REGION_ENV,
    TABLE_NAME_ENV,
    LocalSettings,
)
from trncost.store.schema import TABLE
from trncost.wiring import Wiring

log = logging.getLogger(__name__)
PACKAGE = Path(trncost.__file__).resolve().parent
REPO = PACKAGE.parent.parent
BUNDLED_PRICE_LIST = PACKAGE / "local" / "data" / "saved_price_list.json"
EXAMPLE = REPO / "examples" / "llama-8b" / "estimate.json"
TABLE_NAME = "trncost-local"
BUS = "trncost-local"
REGION = "us-east-1"


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
    catalog: dict[str, Any] | None = None
    moto_port: int = field(default=0)
    estimates: dict[str, str] = field(default_factory=dict)  # instance type → estimate id
    workload_id: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> Runtime:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto server's request log
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        warnings.filterwarnings("ignore", message="When using MotoServer")
        self.moto_port = self.moto_port or free_port()
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=self.moto_port, verbose=False)
        self._moto.start()
        self._environment()
        self.services = Wiring()  # from that environment, like each handler's own
        self._resources()
        self._load_handlers()
        self._take_prices()
        if self.seed_example:
            self._seed()
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
        self._write_state()
        return self

    def _write_state(self) -> None:
        """Where `trncost trial run --local` finds this runtime (and its embedded AWS)."""
        path = state_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {
                    "url": self.url,
                    "aws_endpoint": f"http://127.0.0.1:{self.moto_port}",
                    "region": REGION,
                    "bus": BUS,
                    "pid": os.getpid(),
                    "estimates": self.estimates,
                    "workload_id": self.workload_id,
                },
                indent=2,
            )
        )

    def stop(self) -> None:
        self._stop.set()
        path = state_path()
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

    def _poll(self, poller: QueuePoller) -> None:
        while not self._stop.is_set():
            try:
                if not poller.poll_once().invocations:
                    self._stop.wait(self.poll_interval_s)
            except Exception:  # keep polling; the message stays in its queue
                log.exception("poller %s failed", poller.queue_url)
                self._stop.wait(self.poll_interval_s)

    # -- setup ------------------------------------------------------------------------------
    def _environment(self) -> None:
        endpoint = f"http://127.0.0.1:{self.moto_port}"
        env = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_DEFAULT_REGION": REGION,
            TABLE_NAME_ENV: TABLE_NAME,
            BUS_NAME_ENV: BUS,
            CATALOG_ENV: json.dumps(self.catalog or default_catalog()),
            LIVE_PRICES_ENV: "true" if self.live_prices else "false",
            PRICE_LIST_REGION_ENV: REGION,
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

    def _resources(self) -> None:
        """The table, bus, rules and queues, from the definitions CDK uses."""
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

    def _load_handlers(self) -> None:
        from trncost.local.handlers import load_handler

        self.api = load_handler("api")
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
        built = snapshots.build_from_saved(
            data,
            catalog,
            note="the saved Price List file bundled with trncost for the local runtime: "
            "illustrative figures, not current AWS prices",
        )
        # labelled as the example it is: every estimate made with it says so
        self.snapshot = snapshots.commit(
            built.model_copy(update={"source": "example_file"})
        ).snapshot

    def _seed(self) -> None:
        """The example workload, its trials and one estimate per example candidate."""
        from datetime import UTC, datetime

        from trncost.errors import DomainError
        from trncost.requestfile import load_estimate_file

        request = load_estimate_file(EXAMPLE)
        self.workload_id = request.workload.workload_id
        services = self.services
        now = datetime.now(UTC).isoformat()
        services.records.put_workload(request.workload, now)
        for trial in request.trials:
            services.records.put_trial(trial, now, "example")
        for inp in request.inputs():
            try:
                version = services.estimates.create(
                    request.workload.workload_id, inp.candidate, inp.assumptions
                )
            except DomainError as exc:
                log.warning("example estimate for %s not made: %s", inp.candidate.label, exc)
                continue
            self.estimates[inp.candidate.instance_type] = version.estimate_id


def state_path() -> Path:
    """The local runtime's state file: $TRNCOST_STATE_DIR/local.json (~/.cache/trncost)."""
    return LocalSettings.from_env().state_dir / "local.json"


def read_state() -> dict[str, Any] | None:
    try:
        state = json.loads(state_path().read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


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
