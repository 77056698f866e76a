"""Loading criteria from YAML: the built-in suites and the user's own files.

A criteria file is either a suite (a mapping with ``criteria:``, optional ``suite:`` name and
``defaults:`` merged into every criterion), a list of criteria, or one criterion. Errors name the
file, the line and the field, and say what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from convoscope.criteria._model import Criterion
from convoscope.errors import LocatedError

MAX_YAML_VALUES = 100_000

_SUITE_KEYS = {"suite", "title", "description", "source", "defaults", "criteria", "language",
               "translation_of"}


class CriteriaError(LocatedError):
    """A criteria file that cannot be used, with where and why."""


class Suite(BaseModel):
    """A named set of criteria, e.g. ``survey``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    title: str | None = None
    description: str | None = None
    source: str | None = None
    language: str | None = None
    translation_of: str | None = None
    criteria: tuple[Criterion, ...]
    path: str | None = None

    def get(self, name: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.name == name:
                return criterion
        known = ", ".join(criterion.name for criterion in self.criteria)
        raise KeyError(f"suite {self.name!r} has no criterion {name!r} (it has: {known})")


def list_suites() -> list[str]:
    """Names of the built-in suites and of those installed packages add (entry points of group
    ``convoscope.suites``)."""
    from convoscope._entry_points import SUITES, entry_point_names

    return sorted({*_built_in_suites(), *entry_point_names(SUITES)})


def _built_in_suites() -> list[str]:
    folder = resources.files("convoscope.criteria") / "suites"
    return [entry.name.removesuffix(".yaml") for entry in folder.iterdir() if entry.name.endswith(".yaml")]


def load_suite(name_or_path: str | Path) -> Suite:
    """A built-in suite by name (``survey``), a suite an installed package adds, or a suite file
    by path."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return _parse_suite(path.read_text(encoding="utf-8"), path)
    if str(name_or_path) not in _built_in_suites():
        return _installed_suite(str(name_or_path))
    resource = resources.files("convoscope.criteria") / "suites" / f"{name_or_path}.yaml"
    return _parse_suite(resource.read_text(encoding="utf-8"), Path(f"<built-in>/{name_or_path}.yaml"),
                        shipped=True)


def _installed_suite(name: str) -> Suite:
    """A suite from a ``convoscope.suites`` entry point: a Suite, a path to its YAML (``str``,
    ``Path`` or an ``importlib.resources`` file), or a function returning one of those."""
    from convoscope._entry_points import SUITES, load_entry_point

    found = load_entry_point(SUITES, name)
    if found is None:
        raise CriteriaError(name, f"no such built-in suite or file (suites: {', '.join(list_suites())})")
    if callable(found) and not isinstance(found, Suite):
        found = found()
    if isinstance(found, Suite):
        return found
    if isinstance(found, str | Path) or hasattr(found, "read_text"):
        source = Path(str(found)) if isinstance(found, str | Path) else found
        return _parse_suite(source.read_text(encoding="utf-8"), Path(f"<{SUITES}:{name}>/{name}.yaml"))
    raise CriteriaError(name, f"the {SUITES} entry point gives {type(found).__name__}, not a Suite or "
                        "the path of a suite file")


def load_criteria(path: str | Path) -> list[Criterion]:
    """Every criterion in a user's YAML file (suite, list or single criterion)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such criteria file")
    return list(_parse_suite(path.read_text(encoding="utf-8"), path).criteria)


def get_criterion(ref: str, *, extra_paths: Iterable[str | Path] = ()) -> Criterion:
    """A criterion by reference: ``suite:name``, ``suite/name`` or a bare ``name``.

    A bare name is looked up in ``extra_paths`` first, then in every built-in suite; a name
    found in more than one suite is an error that lists the qualified names to use instead.
    Translations of a suite (``translation_of:``, e.g. ``survey-ko``) are reached only by a
    qualified name, so they never make a bare name ambiguous.
    """
    for separator in (":", "/"):
        if separator in ref:
            suite_name, name = ref.split(separator, 1)
            try:
                return load_suite(suite_name).get(name)
            except KeyError as error:
                raise CriteriaError(suite_name, str(error.args[0])) from None
    for path in extra_paths:
        for criterion in load_criteria(path):
            if criterion.name == ref:
                return criterion
    suites = [load_suite(name) for name in list_suites()]
    found = [(suite.name, criterion) for suite in suites if suite.translation_of is None
             for criterion in suite.criteria if criterion.name == ref]
    if len(found) == 1:
        return found[0][1]
    if not found:
        raise CriteriaError(ref, "no criterion of this name in any built-in suite or given file "
                            "(see `convoscope criteria list`)")
    choices = ", ".join(f"{suite}:{ref}" for suite, _ in found)
    raise CriteriaError(ref, f"the name is in several suites; say which: {choices}")


def _parse_suite(text: str, path: Path, *, shipped: bool = False) -> Suite:
    """``shipped``: a suite of this package's own, read with libyaml's parser (ten times faster:
    a few milliseconds of ``judge``'s start-up, issue 39) where it is built; a user's file always
    with the pure-Python one, whose errors ``load_yaml`` locates."""
    node, data = _load_yaml(text, path, MAX_YAML_VALUES, _FAST_LOADER if shipped else yaml.SafeLoader)
    entries, header, entries_node = _split(data, node, path)
    defaults = header.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise CriteriaError(path, "'defaults' must be a mapping", line=_line(node, ("defaults",)))
    suite_name = header.get("suite") or path.stem.removesuffix(".yaml")
    criteria = [_criterion(entry, defaults, suite_name, path, _child(entries_node, index))
                for index, entry in enumerate(entries)]
    _check_unique(criteria, path, entries_node)
    keys = ("title", "description", "source", "language", "translation_of")
    fields = {key: header.get(key) for key in keys}
    try:
        return Suite(name=str(suite_name), **fields, criteria=tuple(criteria), path=str(path))
    except ValidationError as error:
        first = error.errors()[0]
        key = str(first["loc"][0])
        raise CriteriaError(path, f"suite field {key!r}: {first['msg']}", line=_line(node, (key,)),
                            field=key) from None


def load_yaml(text: str, path: str | Path, *, max_values: int = MAX_YAML_VALUES) -> tuple[Any, Any]:
    """(node tree, data) of one YAML document, safely: aliases may not expand the document past
    ``max_values`` scalars and collections (an alias bomb fails at once, naming the line), and
    a document nested too deeply for the parser is a located error, not a RecursionError."""
    return _load_yaml(text, path, max_values, yaml.SafeLoader)


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML built without libyaml: no C


def _load_yaml(text: str, path: str | Path, max_values: int, loader_class: Any) -> tuple[Any, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_expansion(node, path, max_values)
        return node, loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise CriteriaError(path, f"not valid YAML: {getattr(error, 'problem', error)}",
                            line=mark.line + 1 if mark else None) from None
    except RecursionError:
        raise CriteriaError(path, "not usable YAML: nested too deeply", line=_deepest_line(loader)) from None
    finally:
        loader.dispose()


def _check_expansion(root: Any, path: str | Path, limit: int) -> None:
    """Count the values the document holds once every alias is expanded; stop past ``limit``."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in open_nodes:
            raise CriteriaError(path, "an alias refers to the collection that contains it",
                                line=node.start_mark.line + 1)
        open_nodes.add(id(node))
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode) else [])
        total = 1 + sum(size(child) for child in children)
        open_nodes.discard(id(node))
        if total > limit:
            raise CriteriaError(path, f"aliases expand the document past {limit} values (an alias "
                                "bomb?); write repeated parts out or use 'defaults:'",
                                line=node.start_mark.line + 1)
        sizes[id(node)] = total
        return total

    size(root)


def _deepest_line(loader: yaml.SafeLoader) -> int | None:
    try:
        return loader.get_mark().line + 1
    except Exception:  # a reader that cannot say where it stopped: no line rather than no error
        return None


def _split(data: Any, node: Any, path: Path) -> tuple[list[Any], dict[str, Any], Any]:
    if isinstance(data, list):
        return data, {}, node
    if isinstance(data, dict) and "criteria" in data:
        unknown = sorted(set(data) - _SUITE_KEYS)
        if unknown:
            raise CriteriaError(path, f"unknown suite keys {unknown} (allowed: {sorted(_SUITE_KEYS)})",
                                line=_line(node, (unknown[0],)), field=unknown[0])
        if not isinstance(data["criteria"], list) or not data["criteria"]:
            raise CriteriaError(path, "'criteria' must be a non-empty list", line=_line(node, ("criteria",)),
                                field="criteria")
        return data["criteria"], data, _child(node, "criteria")
    if isinstance(data, dict):
        return [data], {}, _wrap(node)
    raise CriteriaError(path, "expected a suite (with 'criteria:'), a list of criteria or one criterion")


def _criterion(entry: Any, defaults: dict[str, Any], suite: str, path: Path, node: Any) -> Criterion:
    line = node.start_mark.line + 1 if node is not None else None
    if not isinstance(entry, dict):
        raise CriteriaError(path, "each criterion must be a mapping of fields", line=line)
    merged = {"suite": suite, **defaults, **entry}
    try:
        return Criterion.model_validate(merged)
    except ValidationError as error:
        # An unknown key points at the culprit line (often a misspelling of a missing field).
        first = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        loc = tuple(first["loc"])
        name = entry.get("name", "?")
        field = ".".join(str(part) for part in loc) or None
        problem = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            problem = f"unknown field {field!r}"
        elif first["type"] == "missing":
            problem = f"missing field {field!r}"
        raise CriteriaError(path, f"criterion {name!r}: {problem}",
                            line=_line(node, loc) or line, field=field) from None


def _check_unique(criteria: Sequence[Criterion], path: Path, node: Any) -> None:
    seen: set[str] = set()
    for index, criterion in enumerate(criteria):
        if criterion.name in seen:
            child = _child(node, index)
            raise CriteriaError(path, f"criterion {criterion.name!r} is defined twice",
                                line=child.start_mark.line + 1 if child is not None else None,
                                field="name")
        seen.add(criterion.name)


def _wrap(node: Any) -> Any:
    return yaml.SequenceNode(tag="tag:yaml.org,2002:seq", value=[node]) if node is not None else None


def _child(node: Any, key: str | int) -> Any:
    """The YAML node under a mapping key or a sequence index, or None."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        return next((value for name, value in node.value if name.value == key), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key]
    return None


def _line(node: Any, loc: Sequence[str | int]) -> int | None:
    """The 1-based line of the deepest node along ``loc`` that exists in the file."""
    found = node
    for key in loc:
        child = _child(found, key)
        if child is None:
            break
        found = child
    return found.start_mark.line + 1 if found is not None else None
