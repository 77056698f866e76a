"""The verdict store: every verdict is written as it is produced, so a run can resume.

SQLite by default (a file path), PostgreSQL by URL (``postgresql+psycopg://…``); the same
SQLAlchemy Core code serves both. Schema changes go through numbered migrations.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from convoscope.errors import LocatedError
from convoscope.judges import Verdict

DEFAULT_STORE = "convoscope.db"

metadata = sa.MetaData()
runs = sa.Table(
    "runs", metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("summary", sa.Text),
)
verdicts = sa.Table(
    "verdicts", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("task_key", sa.String(64), nullable=False),
    sa.Column("item_id", sa.Text, nullable=False),
    sa.Column("criterion", sa.Text, nullable=False),
    sa.Column("rater", sa.Text, nullable=False),
    sa.Column("value", sa.Text),
    sa.Column("unscored_reason", sa.String(32)),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
    sa.UniqueConstraint("run_id", "task_key", name="uq_verdict_task"),
)
schema_version = sa.Table(
    "schema_version", metadata, sa.Column("version", sa.Integer, nullable=False)
)
# The tasks of a run and who holds each: several processes share a run through leases.
tasks = sa.Table(
    "tasks", metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("task_key", sa.String(64), primary_key=True),
    sa.Column("owner", sa.String(64)),
    sa.Column("lease_until", sa.Float),
    sa.Column("done", sa.Boolean, nullable=False, default=False),
)


def _add_attempts(connection: sa.Connection) -> None:
    """How many times a task was tried (a transient failure is superseded by the next try)."""
    columns = {column["name"] for column in sa.inspect(connection).get_columns("verdicts")}
    if "attempts" not in columns:
        connection.execute(sa.text("ALTER TABLE verdicts ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1"))


# Each migration takes the schema from version i to i + 1. Append, never edit.
MIGRATIONS: list[Any] = [
    lambda connection: metadata.create_all(connection, tables=[runs, verdicts]),
    lambda connection: metadata.create_all(connection, tables=[tasks]),
    _add_attempts,
]


def store_url(target: str | Path) -> str:
    """A SQLAlchemy URL for a file path or a database URL."""
    text = str(target)
    if "://" in text:
        return text.replace("postgresql://", "postgresql+psycopg://", 1)
    return f"sqlite:///{Path(text).expanduser().resolve()}"


class Store:
    """Verdicts and runs in one database. Use one Store per process (one writer)."""

    def __init__(self, target: str | Path = DEFAULT_STORE):
        self.url = store_url(target)
        self.engine = _engine(self.url)
        try:
            self._migrate()
        except sa.exc.DatabaseError as error:
            self.engine.dispose()
            raise _unusable(self.location, error) from None

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    @property
    def location(self) -> str:
        """Where the data lives, as shown to users (a file path for SQLite)."""
        url = self.engine.url
        return str(url.database) if url.get_backend_name() == "sqlite" else url.render_as_string()

    def _migrate(self) -> None:
        with self.engine.begin() as connection:
            metadata.create_all(connection, tables=[schema_version])
            current = connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
            for version in range(current or 0, len(MIGRATIONS)):
                MIGRATIONS[version](connection)
                connection.execute(schema_version.delete())
                connection.execute(schema_version.insert().values(version=version + 1))

    def start_run(self, run_id: str, spec: dict[str, Any]) -> bool:
        """Record a run; returns False when it already exists (a resumed run)."""
        with self.engine.begin() as connection:
            # rowcount after ON CONFLICT DO NOTHING differs between drivers; ask instead.
            query = sa.select(runs.c.run_id).where(runs.c.run_id == run_id)
            if connection.execute(query).first() is not None:
                return False
            insert = self._insert(runs).values(run_id=run_id, created_at=time.time(),
                                               spec=json.dumps(spec, sort_keys=True))
            connection.execute(insert.on_conflict_do_nothing(index_elements=["run_id"]))
            return True

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        with self.engine.begin() as connection:
            connection.execute(runs.update().where(runs.c.run_id == run_id).values(
                finished_at=time.time(), summary=json.dumps(summary, sort_keys=True)))

    def done_keys(self, run_id: str) -> set[str]:
        """Task keys already judged in this run."""
        with self.engine.connect() as connection:
            query = sa.select(verdicts.c.task_key).where(verdicts.c.run_id == run_id)
            return {row[0] for row in connection.execute(query)}

    def add(self, run_id: str, task_key: str, verdict: Verdict) -> None:
        """Write one verdict now (committed at once, so a kill loses nothing written)."""
        self.add_many(run_id, [(task_key, verdict)])

    def add_many(self, run_id: str, rows: list[tuple[str, Verdict]], *,
                 supersede: Iterable[str] = ()) -> None:
        """Write verdicts in one transaction. A task already stored keeps its verdict, unless
        that verdict is unscored for one of the ``supersede`` reasons (e.g. ``model_error``):
        then the new one replaces it and ``attempts`` counts the tries."""
        if rows:
            with self.engine.begin() as connection:
                self.write(connection, run_id, rows, supersede=supersede)

    def write(self, connection: sa.Connection, run_id: str, rows: list[tuple[str, Verdict]], *,
              supersede: Iterable[str] = ()) -> None:
        """:meth:`add_many` inside the caller's transaction (the run's writer groups them)."""
        values = [_row(run_id, key, verdict) for key, verdict in rows]
        statement = self._insert(verdicts)
        reasons = sorted(supersede)
        if reasons:
            statement = statement.on_conflict_do_update(
                index_elements=["run_id", "task_key"],
                set_={name: statement.excluded[name] for name in _REPLACED}
                | {"attempts": verdicts.c.attempts + 1},
                where=sa.or_(*(verdicts.c.unscored_reason == reason for reason in reasons)))
        else:
            statement = statement.on_conflict_do_nothing(index_elements=["run_id", "task_key"])
        connection.execute(statement, values)

    def task_states(self, run_id: str) -> dict[str, str | None]:
        """Every stored task key of a run with its verdict's unscored reason (None: scored)."""
        query = sa.select(verdicts.c.task_key, verdicts.c.unscored_reason).where(
            verdicts.c.run_id == run_id)
        with self.engine.connect() as connection:
            return {key: reason for key, reason in connection.execute(query)}

    def verdicts_for(self, run_id: str, keys: Iterable[str]) -> dict[str, Verdict]:
        """The current verdicts of the given task keys of a run, by key."""
        wanted = set(keys)
        query = sa.select(verdicts.c.task_key, verdicts.c.data).where(verdicts.c.run_id == run_id)
        with self.engine.connect() as connection:
            return {key: Verdict.model_validate_json(data)
                    for key, data in connection.execute(query) if key in wanted}

    # -- several workers on one run (see _tasks.py) -------------------------------------------

    def register_tasks(self, run_id: str, keys: Sequence[str], done: Iterable[str] = ()) -> None:
        from convoscope.store._tasks import register_tasks

        register_tasks(self.engine, run_id, keys, done)

    def reopen_tasks(self, run_id: str, keys: Iterable[str]) -> None:
        from convoscope.store._tasks import reopen_tasks

        reopen_tasks(self.engine, run_id, keys)

    def claim(self, run_id: str, worker: str, keys: Sequence[str], lease_s: float
              ) -> tuple[set[str], set[str]]:
        """Lease the free ones of ``keys`` to ``worker``: (claimed, already finished)."""
        from convoscope.store._tasks import claim_tasks

        return claim_tasks(self.engine, run_id, worker, keys, lease_s)

    def renew(self, run_id: str, worker: str, lease_s: float) -> None:
        from convoscope.store._tasks import renew_leases

        renew_leases(self.engine, run_id, worker, lease_s)

    def release(self, run_id: str, worker: str) -> None:
        from convoscope.store._tasks import release_leases

        release_leases(self.engine, run_id, worker)

    def verdicts(self, run_id: str | None = None) -> list[Verdict]:
        """Verdicts in the order they were written, for one run or all."""
        return list(self.iter_verdicts(run_id))

    def iter_verdicts(self, run_id: str | None = None) -> Iterator[Verdict]:
        query = sa.select(verdicts.c.data).order_by(verdicts.c.id)
        if run_id is not None:
            query = query.where(verdicts.c.run_id == run_id)
        with self.engine.connect() as connection:
            for (data,) in connection.execute(query):
                yield Verdict.model_validate_json(data)

    def run_ids(self) -> list[str]:
        with self.engine.connect() as connection:
            return [row[0] for row in connection.execute(
                sa.select(runs.c.run_id).order_by(runs.c.created_at))]

    def _insert(self, table: sa.Table) -> Any:
        return insert_for(self.engine, table)

    def close(self) -> None:
        self.engine.dispose()


def _unusable(location: str, error: sa.exc.DatabaseError) -> LocatedError:
    """A store that cannot be opened, named by its path (or URL without password)."""
    first = (str(error.orig).strip().splitlines() or [type(error.orig).__name__])[0]
    if "not a database" in first or "file is encrypted" in first:
        first = "not a SQLite database (the store path points at another kind of file)"
    return LocatedError(location, f"cannot be used as a verdict store: {first}")


_REPLACED = ("item_id", "criterion", "rater", "value", "unscored_reason", "data", "created_at")


def insert_for(engine: sa.Engine, table: sa.Table) -> Any:
    """An INSERT with the dialect's ON CONFLICT clauses."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def _row(run_id: str, task_key: str, verdict: Verdict) -> dict[str, Any]:
    return {
        "run_id": run_id, "task_key": task_key, "item_id": verdict.item_id,
        "criterion": verdict.criterion, "rater": verdict.rater,
        "value": None if verdict.value is None else json.dumps(verdict.value),
        "unscored_reason": verdict.unscored_reason,
        "data": verdict.model_dump_json(), "created_at": time.time(),
    }


def _engine(url: str) -> sa.Engine:
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True)
