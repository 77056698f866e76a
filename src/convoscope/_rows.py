"""Rows inserted into SQLite as a few multi-row statements rather than through ``executemany``.

Python's sqlite3 module lets go of the GIL around each step of a statement, and ``executemany``
steps once per row: in a thread beside a busy event loop, every row handed the GIL over and
waited to get it back (issue 39). ``INSERT ... VALUES (?, ?), (?, ?), ...`` is one step for all
its rows, with the same effect row by row (conflict clauses apply to each row in order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# Parameters in one statement: SQLite's smallest limit (999 before 3.32; 32,766 since).
MOST_PARAMETERS = 999


def values_group(width: int) -> str:
    """One row's placeholders as SQLAlchemy renders them for SQLite: ``(?, ?, ?)``."""
    return "(" + ", ".join(["?"] * width) + ")"


def insert_rows(execute: Callable[[str, tuple[Any, ...]], Any], head: str, tail: str,
                rows: Sequence[tuple[Any, ...]], constants: tuple[Any, ...] = ()) -> None:
    """Run ``head`` + ``(?, ...), (?, ...)`` + ``tail`` for ``rows``, as many rows per statement
    as SQLite takes parameters; ``constants`` (placeholders in ``tail``) follow each statement's
    rows. ``execute(sql, parameters)``: a DB-API cursor's execute, or SQLAlchemy's
    ``Connection.exec_driver_sql``."""
    if not rows:
        return
    width = len(rows[0])
    group = values_group(width)
    per = max(1, (MOST_PARAMETERS - len(constants)) // width)
    for start in range(0, len(rows), per):
        part = rows[start:start + per]
        flat = [value for row in part for value in row]
        flat.extend(constants)
        execute(head + ", ".join([group] * len(part)) + tail, tuple(flat))
