"""Serving the WSGI app with the standard library: a threaded server, one Store (one writer)."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from convoscope.campaigns import Campaign
from convoscope.web._app import make_app

SECRET_FILE = "server-secret.txt"
DASHBOARD_FILE = "dashboard-secret.txt"


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128  # the default listen backlog (5) resets connections under a burst


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (stdlib signature)
        pass


def server_secret(directory: str | Path) -> bytes:
    """The campaign's CSRF secret, kept in its directory so a restart keeps open forms valid."""
    return _secret_file(Path(directory) / SECRET_FILE, secrets.token_hex(32)).encode()


def dashboard_secret(directory: str | Path) -> str:
    """The researcher dashboard's secret (its link is ``/r/<secret>``), separate from annotator links."""
    return _secret_file(Path(directory) / DASHBOARD_FILE, secrets.token_urlsafe(24))


def _secret_file(path: Path, fresh: str) -> str:
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # readable by its owner only
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(fresh)
    return path.read_text(encoding="utf-8").strip()


def build_server(campaign: Campaign, *, host: str = "127.0.0.1", port: int = 8080,
                 quiet: bool = True) -> WSGIServer:
    """A threaded WSGI server for the campaign; call ``serve_forever()`` (or use ``start_background``)."""
    app = make_app(campaign, secret=server_secret(campaign.directory),
                   dashboard=dashboard_secret(campaign.directory))
    handler = _QuietHandler if quiet else WSGIRequestHandler
    return make_server(host, port, app, server_class=_ThreadingServer, handler_class=handler)


def start_background(server: WSGIServer) -> Callable[[], None]:
    """Serve in a daemon thread; returns the function that stops it (used by tests)."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return stop
