"""Skip a test when an optional library is not installed — really installed.

``pytest.importorskip("datasets")`` is fooled by this suite's own ``tests/datasets/`` folder: pytest
puts ``tests/`` on ``sys.path``, so without Hugging Face ``datasets`` the name resolves to that
folder as an empty namespace package and the test fails instead of skipping. A library has a file
behind it (``spec.origin``); a namespace package made of a folder of tests has none.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import pytest


def library_or_skip(name: str) -> ModuleType:
    """The installed library ``name``, or skip the test saying it is not installed."""
    spec = importlib.util.find_spec(name.partition(".")[0])
    if spec is None or spec.origin is None:
        pytest.skip(f"needs the {name} library (not installed)")
    return importlib.import_module(name)
