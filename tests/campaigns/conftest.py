"""Fixtures for the campaign tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_helpers import write_campaign


@pytest.fixture
def campaign_dir(tmp_path: Path) -> Path:
    return write_campaign(tmp_path / "study")
