"""What a store target names, read without SQLAlchemy (about 0.2 s of CPU to import): a run on a
new SQLite file sends its first requests before the store is set up (issue 39)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from convoscope.store._store import Store

DEFAULT_STORE = "convoscope.db"


def store_url(target: str | Path) -> str:
    """A SQLAlchemy URL for a file path or a database URL."""
    text = str(target)
    if "://" in text:
        return text.replace("postgresql://", "postgresql+psycopg://", 1)
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def new_sqlite_file(target: str | Path) -> Path | None:
    """The file of a SQLite store that holds nothing yet (missing, or empty) in a folder this
    process may write to; None for anything else (a database URL, a store with data, a file
    the store would fail to create). Nothing such a store could hold is worth waiting for."""
    text = str(target)
    if "://" in text:
        return None
    path = Path(text).expanduser().resolve()
    try:
        if path.exists() and (not path.is_file() or path.stat().st_size > 0):
            return None
    except OSError:
        return None
    folder = path.parent
    return path if folder.is_dir() and os.access(folder, os.W_OK | os.X_OK) else None


def is_store(value: object) -> TypeGuard[Store]:
    """``isinstance(value, Store)`` without importing the store (nothing is a Store before)."""
    import sys

    module = sys.modules.get("convoscope.store._store")
    return module is not None and isinstance(value, module.Store)
