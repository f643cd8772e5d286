"""A WSGI app (the local API Gateway in front of the API handler, or a stub) served over real
HTTP on 127.0.0.1 in a thread, for tests that drive the CLI and its client."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def serve_http(app: Callable[..., Any]) -> Iterator[str]:
    """Serve `app` while the generator runs; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
