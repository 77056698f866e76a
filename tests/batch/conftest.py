"""Fixtures of the batch tests: a store per test, and the local batch server with no model behind it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from convoscope.store import Store

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from batch_server import BatchServer  # noqa: E402


@pytest.fixture
def store(tmp_path):
    opened = Store(tmp_path / "run.db")
    yield opened
    opened.close()


@pytest.fixture
def modelless_server():
    """The batch server with no model upstream: for tests whose batches are held, or answered
    with scripted errors (``fail_ids``), so no request ever reaches the model."""
    with BatchServer(upstream="http://127.0.0.1:9/v1") as started:
        yield started
