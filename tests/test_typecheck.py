"""The package type-checks: mypy (configured in pyproject.toml, pydantic plugin) reports no error
in src/convoscope. Part of the suite, so CI (.ci/run -> scripts/test.sh) fails on a type error."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def test_mypy_finds_no_error_in_the_package():
    pytest.importorskip("mypy", reason="mypy is in the dev extra")
    # The cache lives in the system's temp folder, never in the working tree; a warm cache turns a
    # minute of checking into seconds on a developer's machine.
    cache = Path(tempfile.gettempdir()) / "convoscope-mypy-cache"
    checked = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache)], cwd=ROOT,
                             capture_output=True, text=True, timeout=900)
    assert checked.returncode == 0, checked.stdout[-6000:] + checked.stderr[-2000:]
