"""Layers only point down (DESIGN "Layers that only point down").

``runs/``: the run's settings
(``_options``) read no engine, the local run (``_here``), the worker processes (``_workers``) and Ray
(``_ray``) read the settings, and only the dispatcher (``_build``) reads the engines. Before, ``_build``
imported ``_workers`` and ``_ray`` while both imported ``_build``.

``batch/`` sits above ``models/`` and ``store/``: neither imports it. Before, ``models/_batch.py``
imported the store, which imports judges, which import models (a loop)."""

from __future__ import annotations

import ast

import pytest
from installed import package_dir

PACKAGE = package_dir()
RUNS = PACKAGE / "runs"
# module -> the runs/ modules it must never import (at the top or inside a function)
ABOVE = {
    "_options": {"_build", "_here", "_workers", "_ray", "_batchfn", "_engine"},
    "_here": {"_build", "_workers", "_ray", "_batchfn"},
    "_workers": {"_build", "_ray", "_batchfn"},
    "_ray": {"_build", "_workers"},
    "_batchfn": {"_build", "_workers", "_ray"},
}


def _modules(path) -> set[str]:
    """Every convoscope module a file imports, at the top or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("convoscope"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("convoscope"))
    return found


def _imported(module: str) -> set[str]:
    return {name.removeprefix("convoscope.runs.") for name in _modules(RUNS / f"{module}.py")
            if name.startswith("convoscope.runs.")}


@pytest.mark.parametrize("module", sorted(ABOVE))
def test_a_runs_module_never_imports_a_layer_above_it(module):
    above = _imported(module) & ABOVE[module]
    assert not above, f"runs/{module}.py imports {above}"


def test_every_engine_is_reached_only_through_the_dispatcher():
    readers = {path.stem for path in RUNS.glob("*.py") if {"_workers", "_ray"} & _imported(path.stem)}
    assert readers <= {"_build", "_batchfn", "__init__"}, readers


@pytest.mark.parametrize("package", ["models", "store"])
def test_models_and_the_store_never_import_batch_submission(package):
    readers = {path.relative_to(PACKAGE).as_posix() for path in (PACKAGE / package).rglob("*.py")
               if any(name.startswith("convoscope.batch") for name in _modules(path))}
    assert not readers


def test_models_never_import_the_store():
    readers = {path.relative_to(PACKAGE).as_posix() for path in (PACKAGE / "models").rglob("*.py")
               if any(name.startswith("convoscope.store") for name in _modules(path))}
    assert not readers


def test_the_run_archive_never_imports_what_reads_it():
    """``compare`` and ``view`` read archives (and share their prompt check, archive/_prompts.py);
    an archive reads neither. Before, archive/ imported comparison/, which imported archive/."""
    readers = {path.relative_to(PACKAGE).as_posix() for path in (PACKAGE / "archive").rglob("*.py")
               if any(name.startswith(("convoscope.comparison", "convoscope.viewer"))
                      for name in _modules(path))}
    assert not readers
