"""Fixtures for the campaign tests."""

from __future__ import annotations

from collections.abc import Iterator
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
