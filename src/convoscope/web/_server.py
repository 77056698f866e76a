"""Serving the app with uvicorn: one process, one Store (one writer), bounded connections.

A connection must send its whole request head within ``header_timeout`` seconds or it is closed
(uvicorn alone only times out idle keep-alive connections), an idle keep-alive connection is
closed after ``keep_alive`` seconds, a form body must arrive within the app's body timeout, and
at most ``max_connections`` connections are served at once (more are answered 503).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from convoscope.campaigns import Campaign
from convoscope.web._app import make_app

SECRET_FILE = "server-secret.txt"
DASHBOARD_FILE = "dashboard-secret.txt"
JOIN_FILE = "join-secret.txt"
HEADER_TIMEOUT = 10.0


def server_secret(directory: str | Path) -> bytes:
    """The campaign's CSRF secret, kept in its directory so a restart keeps open forms valid."""
    return _secret_file(Path(directory) / SECRET_FILE, secrets.token_hex(32)).encode()


def dashboard_secret(directory: str | Path) -> str:
    """The researcher dashboard's secret (its link is ``/r/<secret>``), separate from annotator links."""
    return _secret_file(Path(directory) / DASHBOARD_FILE, secrets.token_urlsafe(24))


def join_secret(directory: str | Path) -> str:
    """The secret of the study link given to a crowdsourcing platform (``/join/<secret>``)."""
    return _secret_file(Path(directory) / JOIN_FILE, secrets.token_urlsafe(18))


def _secret_file(path: Path, fresh: str) -> str:
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # readable by its owner only
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(fresh)
    os.chmod(path, 0o600)  # a file copied in with looser rights is tightened
    return path.read_text(encoding="utf-8").strip()


def _deadline_protocol(seconds: float) -> type[H11Protocol]:
    class DeadlineH11(H11Protocol):
        """h11 with a deadline for the request head: a stalled or trickling client is dropped."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._head_deadline = self.loop.call_later(seconds, self._head_expired)

        def _head_expired(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None:
                self._head_deadline.cancel()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():  # the next request on this connection: a new deadline
                self._head_deadline.cancel()
                self._head_deadline = self.loop.call_later(seconds, self._head_expired)

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_deadline.cancel()
            super().connection_lost(exc)

    return DeadlineH11


class Server:
    """The campaign's server; ``run()`` blocks, ``start_background()`` serves in a thread (tests)."""

    def __init__(self, campaign: Campaign, *, host: str = "127.0.0.1", port: int = 8080,
                 quiet: bool = True, header_timeout: float = HEADER_TIMEOUT, keep_alive: int = 5,
                 max_connections: int = 1000, **app_options: Any):
        directory = campaign.directory
        app = make_app(campaign, secret=server_secret(directory), dashboard=dashboard_secret(directory),
                       join=join_secret(directory) if campaign.spec.platform.kind != "none" else None,
                       **app_options)
        self.socket = socket.create_server((host, port), backlog=512)
        self.server_port = self.socket.getsockname()[1]
        config = uvicorn.Config(app, http=_deadline_protocol(header_timeout), timeout_keep_alive=keep_alive,
                                limit_concurrency=max_connections, log_level="warning" if quiet else "info",
                                access_log=not quiet, lifespan="off", server_header=False)
        self.uvicorn = uvicorn.Server(config)

    def run(self) -> None:
        self.uvicorn.run(sockets=[self.socket])

    def serve_forever(self) -> None:
        self.run()

    def server_close(self) -> None:
        self.socket.close()


def build_server(campaign: Campaign, *, host: str = "127.0.0.1", port: int = 8080, quiet: bool = True,
                 **options: Any) -> Server:
    """The campaign's server (bound now, so ``server_port`` is known even for port 0)."""
    return Server(campaign, host=host, port=port, quiet=quiet, **options)


def start_background(server: Server) -> Callable[[], None]:
    """Serve in a daemon thread; returns the function that stops it (used by tests)."""
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.uvicorn.started:
            break
        time.sleep(0.02)

    def stop() -> None:
        server.uvicorn.should_exit = True
        thread.join(timeout=10)
        server.server_close()

    return stop


__all__ = ["Server", "build_server", "dashboard_secret", "join_secret", "server_secret", "start_background"]
