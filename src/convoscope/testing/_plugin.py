"""The pytest plugin (entry point ``pytest11``): a ``convoscope_store`` fixture in pytest's cache
folder, so judged tests re-run without model calls while items and judge stay the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def convoscope_store(request: Any) -> Path:
    """A store (and its response cache beside it) kept across test runs in pytest's cache."""
    cache = getattr(request.config, "cache", None)
    if cache is None:  # -p no:cacheprovider: one per test session instead
        return Path(request.getfixturevalue("tmp_path_factory").mktemp("convoscope")) / "judged.db"
    return Path(cache.mkdir("convoscope")) / "judged.db"
