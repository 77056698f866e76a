"""Statements a writer runs again and again, compiled once to the driver's SQL.

``Connection.execute(statement, rows)`` builds each row's parameters through the compiled
statement (``construct_params``, bind processors) before the DB-API sees them; for a run's
writer, which inserts hundreds of rows every few hundred milliseconds, that cost more than
SQLite's own insert (issue 39). A :class:`Compiled` statement is rendered once for the
connection's dialect; its rows are plain tuples in the order of its ``columns``, handed to the
driver with ``Connection.exec_driver_sql`` (errors are still SQLAlchemy's, so a busy database is
retried as before).

Rows must hold values the driver takes as they are (str, int, float, bool, None): no
SQLAlchemy bind processor runs on them.

On SQLite the rows go as few multi-row statements (``VALUES (...), (...), ...``), not through
``executemany``: Python's sqlite3 lets go of the GIL around every step, so ``executemany`` of a
few hundred rows handed the GIL to the event loop and waited to get it back a few hundred times
a commit. One statement is one step (issue 39: the writer thread's CPU per 5,000 verdicts fell
from about 0.32 to 0.25 s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import sqlalchemy as sa

from convoscope._rows import insert_rows, values_group

Rows = Sequence[tuple[Any, ...]]


@dataclass(frozen=True)
class Compiled:
    """An INSERT's SQL for one dialect, and how to turn rows into its DB-API parameters."""

    sql: str
    parameters: Callable[[Rows], list[Any]]
    # SQLite (qmark): the SQL before and after its one VALUES group, and the constants' values,
    # bound after every row's (None: the rows go through executemany).
    split: tuple[str, str, tuple[Any, ...]] | None = None

    def run(self, connection: sa.Connection, rows: Rows) -> None:
        """Insert ``rows`` (tuples in the order of the statement's columns) in ``connection``'s
        transaction: a few multi-row statements on SQLite, one executemany elsewhere."""
        if not rows:
            return
        if self.split is None:
            connection.exec_driver_sql(self.sql, self.parameters(rows))
            return
        head, tail, constants = self.split
        insert_rows(connection.exec_driver_sql, head, tail, rows, constants)

    @classmethod
    def of(cls, statement: Any, dialect: sa.Dialect, columns: Sequence[str]) -> Compiled:
        """``statement`` (an INSERT filling ``columns``) for ``dialect``. Bound values that are
        not columns (``attempts + 1``, a WHERE's reasons) are constants, added to every row."""
        compiled = statement.compile(dialect=dialect, column_keys=list(columns), for_executemany=True)
        names = [*columns]
        constants: list[Any] = []
        for name, bind in compiled.binds.items():
            if name not in columns and not name.startswith("%("):  # "%(…)": the same bind by id
                names.append(name)
                constants.append(bind.effective_value)
        tail = tuple(constants)
        if not compiled.positional:  # pyformat (psycopg): a dict per row, by escaped bind name
            keys = [compiled.escaped_bind_names.get(name, name) for name in names]
            return cls(str(compiled), lambda rows: [dict(zip(keys, row + tail, strict=True)) for row in rows])
        order = [names.index(name) for name in compiled.positiontup]
        if order == list(range(len(names))):
            return cls(str(compiled), lambda rows: [row + tail for row in rows],
                       _split(str(compiled), len(columns), tail))
        pick = itemgetter(*order)
        return cls(str(compiled), lambda rows: [pick(row + tail) for row in rows])


def _split(sql: str, width: int, constants: tuple[Any, ...]) -> tuple[str, str, tuple[Any, ...]] | None:
    """``sql`` around its VALUES group of ``width`` placeholders, when every other placeholder
    (as many as ``constants``) comes after it; None for any other shape."""
    group = values_group(width)
    if sql.count(group) != 1:
        return None
    head, tail = sql.split(group)
    if "?" in head or tail.count("?") != len(constants):
        return None
    return head, tail, constants
