"""``import_run``: a run archive put into a store under its own run id, in one transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from convoscope.archive._read import ArchivedVerdict, read_run_archive
from convoscope.errors import ConfigError

_GROUP = 500


@dataclass(frozen=True)
class Imported:
    """What an import did: the run, and how many of its verdicts the store did not hold yet."""

    run_id: str
    verdicts: int
    added: int
    new_run: bool


def import_run(path: str | Path, store: str | Path) -> Imported:
    """Put the run of archive ``path`` into ``store`` (created when it does not exist). The archive
    is checked in full first, and everything is written in one transaction: a damaged archive or
    a bad line writes nothing. Importing the same archive again changes nothing; a verdict the
    store already holds for the same request is kept (the same request, the same verdict)."""
    from convoscope.store import Store
    from convoscope.store._schema import runs

    archive = read_run_archive(path)
    opened = Store(store)
    try:
        with opened.engine.begin() as connection:
            existing = connection.execute(
                sa.select(runs.c.spec).where(runs.c.run_id == archive.run_id)).scalar()
            if existing is not None and json.loads(existing) != archive.spec:
                raise ConfigError(f"{opened.location}: run {archive.run_id} is already there with another "
                                  f"spec than {path}'s; import it into another store")
            if existing is None:
                run = archive.manifest["run"]
                connection.execute(runs.insert().values(
                    run_id=archive.run_id, created_at=run["created_at"], finished_at=run.get("finished_at"),
                    spec=json.dumps(archive.spec, sort_keys=True),
                    summary=None if archive.summary is None else json.dumps(archive.summary, sort_keys=True)))
            before = _count(connection)
            total = 0
            group: list[ArchivedVerdict] = []
            for row in archive.iter_rows():
                group.append(row)
                total += 1
                if len(group) >= _GROUP:
                    _write(opened, connection, archive.run_id, group)
                    group = []
            _write(opened, connection, archive.run_id, group)
            added = _count(connection) - before
    finally:
        opened.close()
    return Imported(archive.run_id, total, added, existing is None)


def _count(connection: sa.Connection) -> int:
    from convoscope.store._schema import verdicts

    return int(connection.execute(sa.select(sa.func.count()).select_from(verdicts)).scalar() or 0)


def _write(store: Any, connection: sa.Connection, run_id: str, group: list[ArchivedVerdict]) -> None:
    from convoscope.store._schema import SHARED, insert_for, run_tasks
    from convoscope.store._store import _row, verdicts

    if not group:
        return
    values = [_row(run_id if row.own_scope else SHARED, row.producer or run_id, row.task_key, row.verdict)
              for row in group]
    statement = insert_for(connection, verdicts).on_conflict_do_nothing(index_elements=["scope", "task_key"])
    connection.execute(statement, values)
    asked = [{"run_id": run_id, "task_key": row.task_key, "chunk": row.chunk, "position": row.position,
              "member": not row.final} for row in group if not row.own_scope]
    if asked:
        statement = insert_for(connection, run_tasks).on_conflict_do_nothing(
            index_elements=["run_id", "task_key"])
        connection.execute(statement, asked)
