"""`campaigns/` imports point one way (issue 37): no module imports, directly or through others,
a module that imports it back. Every import counts, also those inside functions and under
TYPE_CHECKING, because a loop that only lazy imports hide is still a loop."""

from __future__ import annotations

import ast
from pathlib import Path

import convoscope.campaigns

PACKAGE = "convoscope.campaigns"


def import_graph(folder: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (anywhere in its text)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        if path.stem == "__init__":  # the public door re-exports everything: it is on top by design
            continue
        found = graph.setdefault(path.stem, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE + "."):
                found.add(node.module.removeprefix(PACKAGE + ".").split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop (its modules in order, the first repeated at the end), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module):], module]
        if module in done or module not in graph:
            return None
        path.append(module)
        for target in sorted(graph[module]):
            if (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        if (cycle := visit(module)) is not None:
            return cycle
    return None


def test_the_campaign_modules_import_each_other_without_a_loop() -> None:
    graph = import_graph(Path(convoscope.campaigns.__file__).parent)
    assert len(graph) > 20 and graph["_campaign"]  # the package was read, not an empty folder
    cycle = find_cycle(graph)
    assert cycle is None, "import loop in campaigns/: " + " -> ".join(cycle or [])


def test_the_loop_finder_finds_a_loop_hidden_behind_a_lazy_import(tmp_path: Path) -> None:
    (tmp_path / "_low.py").write_text("def f():\n    from convoscope.campaigns._high import g\n")
    (tmp_path / "_mid.py").write_text("from convoscope.campaigns._low import f\n")
    (tmp_path / "_high.py").write_text("from convoscope.campaigns._mid import f\ng = 1\n")
    assert find_cycle(import_graph(tmp_path)) == ["_high", "_mid", "_low", "_high"]
    (tmp_path / "_low.py").write_text("def f():\n    pass\n")
    assert find_cycle(import_graph(tmp_path)) is None
