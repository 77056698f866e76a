"""Where verdicts and runs are kept: SQLite by default, PostgreSQL by URL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convoscope.store._target import DEFAULT_STORE, store_url

if TYPE_CHECKING:
    from convoscope.store._store import Store
    from convoscope.store._writer import VerdictWriter

__all__ = ["DEFAULT_STORE", "Store", "VerdictWriter", "store_url"]

# Imported on first use: SQLAlchemy costs about 0.2 s of CPU, which a run on a new SQLite store
# spends while its first requests are in flight, not before them (issue 39).
_LAZY = {"Store": "convoscope.store._store", "VerdictWriter": "convoscope.store._writer"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
