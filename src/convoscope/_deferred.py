"""A module imported when one of its names is first used, not when its user is imported."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class Deferred:
    """Stands for the module ``name`` until an attribute is asked for, then imports it once.

    Meant for ``if TYPE_CHECKING: from pkg import mod`` / ``else: mod = Deferred("pkg.mod")``,
    so type checkers see the module and its signatures while the import (SQLAlchemy's 0.2 s
    behind the store, issue 39) waits for the first call. Safe from several threads: the import
    system locks the module, and every thread finds the same module."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<deferred module {self._name!r} ({state})>"
