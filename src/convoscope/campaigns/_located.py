"""Errors in a campaign's files that name file, line and field (the bottom of ``campaigns/``: the
spec and the questionnaires both use it, and it imports neither)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from convoscope.errors import LocatedError


class CampaignError(LocatedError):
    """A campaign file that cannot be used; the message names file, line and field."""

    def describe(self) -> str:  # the form campaign users know: ``path:line: problem (field 'f')``
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.problem}" + (f" (field {self.field!r})" if self.field else "")


def named_error(error: ValidationError, node: Any, path: Path) -> CampaignError:
    """The first problem pydantic found, located in the YAML ``node`` of ``path``."""
    first = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
    loc = tuple(first["loc"])
    field = ".".join(str(part) for part in loc) or None
    problem = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        problem = "unknown field"
    elif first["type"] == "missing":
        problem = "missing field"
    return CampaignError(path, problem, line=yaml_line(node, loc), field=field)


def yaml_line(node: Any, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the deepest YAML node along ``loc``."""
    found = node
    for key in loc:
        child = None
        if isinstance(found, yaml.MappingNode):
            child = next((value for name, value in found.value if name.value == key), None)
        elif isinstance(found, yaml.SequenceNode) and isinstance(key, int) and key < len(found.value):
            child = found.value[key]
        if child is None:
            break
        found = child
    return found.start_mark.line + 1 if found is not None else None
