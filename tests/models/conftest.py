"""Fixtures of the model tests."""

from __future__ import annotations

import pytest
from scripted_server import ScriptedServer


@pytest.fixture
def server():
    """``server(*replies)`` starts a ScriptedServer on 127.0.0.1 that answers with ``replies``."""
    servers: list[ScriptedServer] = []

    def make(*replies):
        servers.append(ScriptedServer(replies))
        return servers[-1]

    yield make
    for scripted in servers:
        scripted.close()
