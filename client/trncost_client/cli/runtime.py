"""Which runtime a command talks to, said explicitly: the API at --url (default $TRNCOST_URL,
else the local runtime at http://127.0.0.1:8080). For a local runtime (a loopback URL) the
command reads that runtime's own state file, `<state dir>/local-<port>.json` (its embedded AWS
endpoint, region, bus and what it seeded), which no other runtime writes or deletes: with two
runtimes on one machine, a command goes to the one its URL names, and says which.
"""

from __future__ import annotations

import argparse
import os
from typing import Any
from urllib.parse import urlsplit

from trncost.errors import ClientError
from trncost.settings import URL_ENV
from trncost_client.http import DEFAULT_URL

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def default_url() -> str:
    return os.environ.get(URL_ENV) or DEFAULT_URL


def add_url_option(parser: argparse.ArgumentParser, what: str = "the API base URL") -> None:
    parser.add_argument(
        "--url",
        default=default_url(),
        help=f"{what} (default ${URL_ENV}, else {DEFAULT_URL}, the local runtime)",
    )


def local_port(url: str) -> int | None:
    """The port of a loopback URL (a local runtime), None for any other URL."""
    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK:
        return None
    try:
        return parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None


def local_runtime(url: str) -> dict[str, Any]:
    """The state of the local runtime at `url`; ClientError naming what is running when there
    is none."""
    from trncost_client.local.runtime import read_state, running_states, state_path

    port = local_port(url)
    if port is None:
        raise ClientError(f"{url} is not a local runtime (a loopback URL such as {DEFAULT_URL})")
    state = read_state(port)
    if state is not None:
        return state
    others = ", ".join(s["url"] for s in running_states()) or "none"
    raise ClientError(
        f"no local runtime at {url} ({state_path(port)} is missing or its process is gone): "
        f"start one with `make run` or `trncost serve --port {port}`, or name a running one "
        f"with --url or ${URL_ENV} (running: {others})"
    )
