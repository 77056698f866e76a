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


def package_dir():  # noqa: ANN201  (a pathlib.Path; imported lazily like the rest of this module)
    """The folder of the convoscope package the suite imports: the installed wheel in CI, the
    checkout's ``src/convoscope`` in an editable install. Tests read package files from here,
    never from ``src/``, so they check what a user has."""
    from pathlib import Path

    import convoscope

    return Path(convoscope.__file__).resolve().parent


def import_path() -> str:
    """The ``sys.path`` entry the suite imports convoscope from, for a subprocess's PYTHONPATH (the
    subprocess then imports the very package under test, wheel or checkout)."""
    return str(package_dir().parent)
