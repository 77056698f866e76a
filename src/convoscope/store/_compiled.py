"""Statements a writer runs again and again, compiled once to the driver's SQL.

``Connection.execute(statement, rows)`` builds each row's parameters through the compiled
statement (``construct_params``, bind processors) before the DB-API sees them; for a run's
writer, which inserts hundreds of rows every few hundred milliseconds, that cost more than
SQLite's own insert (issue 39). A :class:`Compiled` statement is rendered once for the
connection's dialect; its rows are plain tuples in the order of its ``columns``, handed with
``Connection.exec_driver_sql`` to the cursor's ``executemany`` (errors are still SQLAlchemy's,
so a busy database is retried as before).

Rows must hold values the driver takes as they are (str, int, float, bool, None): no
SQLAlchemy bind processor runs on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import sqlalchemy as sa

Rows = Sequence[tuple[Any, ...]]


@dataclass(frozen=True)
class Compiled:
    """An INSERT's SQL for one dialect, and how to turn rows into its DB-API parameters."""

    sql: str
    parameters: Callable[[Rows], list[Any]]

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
            return cls(str(compiled), lambda rows: [row + tail for row in rows])
        pick = itemgetter(*order)
        return cls(str(compiled), lambda rows: [pick(row + tail) for row in rows])
