"""Fixtures for the campaign tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import CHROMIUM, CHROMIUM_FLAGS, write_campaign


@pytest.fixture
def campaign_dir(tmp_path: Path) -> Path:
    return write_campaign(tmp_path / "study")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for one test module (the modules that use it skip without it)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def prolific_stand_in() -> Iterator[str]:
    """A local stand-in for Prolific's completion page (tests make no outside connection)."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802  (stdlib name)
            body = b"<h1>Prolific: submission complete</h1>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
