"""The layers of ``runs/`` only point down (DESIGN "Layers that only point down"): the run's settings
(``_options``) read no engine, the local run (``_here``), the worker processes (``_workers``) and Ray
(``_ray``) read the settings, and only the dispatcher (``_build``) reads the engines. Before, ``_build``
imported ``_workers`` and ``_ray`` while both imported ``_build``."""

from __future__ import annotations

import ast

import pytest
from installed import package_dir

RUNS = package_dir() / "runs"
# module -> the runs/ modules it must never import (at the top or inside a function)
ABOVE = {
    "_options": {"_build", "_here", "_workers", "_ray", "_batchfn", "_engine"},
    "_here": {"_build", "_workers", "_ray", "_batchfn"},
    "_workers": {"_build", "_ray", "_batchfn"},
    "_ray": {"_build", "_workers"},
    "_batchfn": {"_build", "_workers", "_ray"},
}


def _imported(module: str) -> set[str]:
    tree = ast.parse((RUNS / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("convoscope.runs."):
            found.add(node.module.removeprefix("convoscope.runs."))
    return found


@pytest.mark.parametrize("module", sorted(ABOVE))
def test_a_runs_module_never_imports_a_layer_above_it(module):
    assert not _imported(module) & ABOVE[module], f"runs/{module}.py imports {_imported(module) & ABOVE[module]}"


def test_every_engine_is_reached_only_through_the_dispatcher():
    readers = {path.stem for path in RUNS.glob("*.py") if {"_workers", "_ray"} & _imported(path.stem)}
    assert readers <= {"_build", "_batchfn", "__init__"}, readers
