"""An ASGI app served by uvicorn in a background thread on 127.0.0.1 (for local test servers)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any


class ThreadedApp:
    """``with ThreadedApp(app) as root:`` serves ``app`` at ``root`` (``http://127.0.0.1:PORT``)
    until the block ends."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __enter__(self) -> str:
        import uvicorn

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
