"""Serving the app with uvicorn: one process, one Store (one writer), bounded connections.

A connection must send its whole request head within ``header_timeout`` seconds or it is closed
(uvicorn alone only times out idle keep-alive connections), an idle keep-alive connection is
closed after ``keep_alive`` seconds, a form body must arrive within the app's body timeout, and
at most ``max_connections`` connections are served at once (more are answered 503). One client
address holds at most ``max_per_client`` of them: past that, its oldest idle connection is
closed (or the new one, when all of its connections are busy), so one client opening a thousand
idle connections, one by one or in a burst, no longer turns everyone else away.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections import defaultdict
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
MAX_PER_CLIENT = 64  # connections from one address (a browser opens about 6; a proxy: raise it)


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


def _guarded_protocol(seconds: float, per_client: int) -> type[H11Protocol]:
    clients: dict[str, list[H11Protocol]] = defaultdict(list)  # this server's connections by address

    class GuardedH11(H11Protocol):
        """h11 with a deadline for the request head (a stalled or trickling client is dropped)
        and a cap on connections per client address."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._head_deadline = self.loop.call_later(seconds, self._head_expired)
            address = self.client[0] if self.client else "?"
            mine = clients[address]
            mine.append(self)
            # A connection closed here leaves ``mine`` only when the loop reports it lost, a turn
            # later; a burst arrives within one turn, so closing ones are not counted nor chosen
            # (else the same closing connection was "closed" again for every newcomer).
            live = [c for c in mine if not c.transport.is_closing()]
            if per_client and len(live) > per_client:
                idle = next((c for c in live if c is not self and _idle(c)), self)
                idle.transport.close()

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
            address = self.client[0] if self.client else "?"
            with contextlib.suppress(ValueError):
                clients[address].remove(self)
            if not clients[address]:
                del clients[address]
            super().connection_lost(exc)

    return GuardedH11


def _idle(connection: H11Protocol) -> bool:
    """No request in flight: waiting for a request head, or kept alive after a response."""
    return connection.cycle is None or connection.cycle.response_complete


class Server:
    """The campaign's server; ``run()`` blocks, ``start_background()`` serves in a thread (tests)."""

    def __init__(self, campaign: Campaign, *, host: str = "127.0.0.1", port: int = 8080,
                 quiet: bool = True, header_timeout: float = HEADER_TIMEOUT, keep_alive: int = 5,
                 max_connections: int = 1000, max_per_client: int = MAX_PER_CLIENT, **app_options: Any):
        directory = campaign.directory
        app = make_app(campaign, secret=server_secret(directory), dashboard=dashboard_secret(directory),
                       join=join_secret(directory) if campaign.spec.platform.kind != "none" else None,
                       **app_options)
        self.socket = socket.create_server((host, port), backlog=512)
        self.server_port = self.socket.getsockname()[1]
        config = uvicorn.Config(app, http=_guarded_protocol(header_timeout, max_per_client),
                                timeout_keep_alive=keep_alive,
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
