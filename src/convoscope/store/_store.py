"""The verdict store: every verdict is written as it is produced, so a run can resume.

SQLite by default (a file path), PostgreSQL by URL (``postgresql+psycopg://…``); the same
SQLAlchemy Core code serves both. Schema changes go through numbered migrations
(:mod:`convoscope.store._schema`, which also says how verdicts, runs and chunks relate).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from convoscope.errors import LocatedError
from convoscope.judges import Verdict
from convoscope.store._compiled import Compiled
from convoscope.store._schema import SHARED, insert_for, migrate, run_tasks, runs, verdicts
from convoscope.store._target import DEFAULT_STORE, store_url

_CHUNK = 500  # bound parameters per statement stay far below SQLite's limit


def chunked(keys: Sequence[str], size: int = _CHUNK) -> Iterator[list[str]]:
    for start in range(0, len(keys), size):
        yield list(keys[start:start + size])


class Store:
    """Verdicts and runs in one database. Use one Store per process (one writer).

    Judges write in the shared scope (``""``): a verdict is stored once per task key, whichever
    run asked for it. A human campaign writes in its own scope, its run id."""

    def __init__(self, target: str | Path = DEFAULT_STORE, *, create: bool = True):
        """``create=False``: a reader's open. A SQLite file that does not exist is an error
        naming its path, never a new empty store (that would only say "nothing here")."""
        self.url = store_url(target)
        # A response cache whose answers this store's run writers commit with the verdicts, in
        # one transaction (a SQLite store only: the cache's file is attached to its connection).
        self.response_cache: Any = None
        self._inserts: dict[tuple[str, ...], Compiled] = {}  # the verdicts' INSERT per supersede reasons
        if not create:
            _check_exists(self.url)
        self.engine = _engine(self.url)
        try:
            migrate(self.engine)
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

    # -- runs -------------------------------------------------------------------------------

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

    def run_ids(self) -> list[str]:
        with self.engine.connect() as connection:
            return [row[0] for row in connection.execute(
                sa.select(runs.c.run_id).order_by(runs.c.created_at))]

    def run_spec(self, run_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as connection:
            found = connection.execute(sa.select(runs.c.spec).where(runs.c.run_id == run_id)).scalar()
        return None if found is None else dict(json.loads(found))

    # -- writing ----------------------------------------------------------------------------

    def add(self, scope: str, task_key: str, verdict: Verdict) -> None:
        """Write one verdict now (committed at once, so a kill loses nothing written)."""
        self.add_many(scope, [(task_key, verdict)])

    def add_many(self, scope: str, rows: list[tuple[str, Verdict]], *,
                 supersede: Iterable[str] = ()) -> None:
        """Write verdicts in one transaction. A task already stored keeps its verdict, unless
        that verdict is unscored for one of the ``supersede`` reasons (e.g. ``model_error``):
        then the new one replaces it and ``attempts`` counts the tries."""
        if rows:
            with self.engine.begin() as connection:
                self.write(connection, rows, scope=scope, supersede=supersede)

    def write(self, connection: sa.Connection, rows: list[tuple[str, Verdict]], *, scope: str = SHARED,
              run_id: str | None = None, supersede: Iterable[str] = ()) -> None:
        """:meth:`add_many` inside the caller's transaction (a run's writer groups them).
        ``run_id``: the run that produced the verdicts (default: the scope)."""
        producer = run_id if run_id is not None else scope
        now = time.time()
        self._verdict_insert(tuple(sorted(supersede))).run(
            connection, [_values(scope, producer, key, verdict, now) for key, verdict in rows])

    def _verdict_insert(self, reasons: tuple[str, ...]) -> Compiled:
        """The verdicts' INSERT for these supersede reasons, compiled once per store to the
        driver's SQL and run with plain tuples (store._compiled): a writer commits
        every few hundred milliseconds, and SQLAlchemy's building of the statement, then its
        processing of each row's parameters, cost more than the rows' own insert (issue 39)."""
        found = self._inserts.get(reasons)
        if found is not None:
            return found
        statement = self._insert(verdicts)
        if reasons:
            statement = statement.on_conflict_do_update(
                index_elements=["scope", "task_key"],
                set_={name: statement.excluded[name] for name in _REPLACED}
                | {"attempts": verdicts.c.attempts + 1},
                where=sa.or_(*(verdicts.c.unscored_reason == reason for reason in reasons)))
        else:
            statement = statement.on_conflict_do_nothing(index_elements=["scope", "task_key"])
        compiled = self._inserts[reasons] = Compiled.of(statement, self.engine.dialect, _COLUMNS)
        return compiled

    # -- reading ----------------------------------------------------------------------------

    def done_keys(self, scope: str) -> set[str]:
        """Task keys stored in a scope (a campaign's run id; ``""`` for judged tasks)."""
        with self.engine.connect() as connection:
            query = sa.select(verdicts.c.task_key).where(verdicts.c.scope == scope)
            return {row[0] for row in connection.execute(query)}

    def task_states(self, keys: Sequence[str], *, scope: str = SHARED) -> dict[str, str | None]:
        """The stored ones of ``keys`` with their verdict's unscored reason (None: scored)."""
        found: dict[str, str | None] = {}
        with self.engine.connect() as connection:
            for part in chunked(keys):
                query = sa.select(verdicts.c.task_key, verdicts.c.unscored_reason).where(
                    verdicts.c.scope == scope, verdicts.c.task_key.in_(part))
                found.update((key, reason) for key, reason in connection.execute(query))
        return found

    def verdicts_by_key(self, keys: Sequence[str], *, scope: str = SHARED) -> dict[str, Verdict]:
        """The current verdicts of the stored ones of ``keys``, by key."""
        found: dict[str, Verdict] = {}
        with self.engine.connect() as connection:
            for part in chunked(keys):
                query = sa.select(verdicts.c.task_key, verdicts.c.data).where(
                    verdicts.c.scope == scope, verdicts.c.task_key.in_(part))
                found.update((key, Verdict.model_validate_json(data))
                             for key, data in connection.execute(query))
        return found

    def verdicts(self, run_id: str | None = None, *, members: bool = True) -> list[Verdict]:
        """The verdicts of a run (a judging run's keys in input order, a campaign's answers in
        the order they were given), or every verdict in the store."""
        return list(self.iter_verdicts(run_id, members=members))

    def iter_verdicts(self, run_id: str | None = None, *, members: bool = True) -> Iterator[Verdict]:
        for _, verdict in self.iter_keyed_verdicts(run_id, members=members):
            yield verdict

    def iter_keyed_verdicts(self, run_id: str | None = None, *,
                            members: bool = True) -> Iterator[tuple[str, Verdict]]:
        """As :meth:`iter_verdicts`, each verdict with its task key (the hash of what was asked)."""
        if run_id is None:
            query = sa.select(verdicts.c.task_key, verdicts.c.data).order_by(verdicts.c.id)
        else:
            asked = (sa.select(verdicts.c.task_key, verdicts.c.data, run_tasks.c.chunk.label("first"),
                               run_tasks.c.position.label("then"))
                     .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key,
                                              verdicts.c.scope == SHARED))
                     .where(run_tasks.c.run_id == run_id))
            if not members:
                asked = asked.where(~run_tasks.c.member)
            own = sa.select(verdicts.c.task_key, verdicts.c.data, sa.literal(0).label("first"),
                            verdicts.c.id.label("then")).where(verdicts.c.scope == run_id)
            union = sa.union_all(asked, own).subquery()
            query = sa.select(union.c.task_key, union.c.data).order_by(union.c.first, union.c.then)
        with self.engine.connect() as connection:
            for key, data in connection.execute(query.execution_options(yield_per=1000)):
                yield key, Verdict.model_validate_json(data)

    def _insert(self, table: sa.Table) -> Any:
        return insert_for(self.engine, table)

    def close(self) -> None:
        self.engine.dispose()


_REPLACED = ("run_id", "item_id", "criterion", "rater", "value", "unscored_reason", "data", "created_at")


# The verdicts' columns a write fills, in the order of _values' tuples (the table's order, so the
# compiled INSERT takes the tuples as they are).
_COLUMNS = ("scope", "task_key", "run_id", "item_id", "criterion", "rater", "value", "unscored_reason",
            "data", "created_at")


def _row(scope: str, producer: str, task_key: str, verdict: Verdict,
         now: float | None = None) -> dict[str, Any]:
    """One verdict's row by column (for SQLAlchemy statements, e.g. an archive's import)."""
    return dict(zip(_COLUMNS, _values(scope, producer, task_key, verdict, now), strict=True))


def _values(scope: str, producer: str, task_key: str, verdict: Verdict,
            now: float | None = None) -> tuple[Any, ...]:
    """One verdict's values, in the order of ``_COLUMNS`` (the writer's compiled INSERT)."""
    return (scope, task_key, producer, verdict.item_id, verdict.criterion, verdict.rater,
            _json_value(verdict.value), verdict.unscored_reason,
            verdict.model_dump_json(), time.time() if now is None else now)


def _json_value(value: int | str | None) -> str | None:
    """``json.dumps(value)`` (None stays NULL); an int is its decimal digits, as json writes it."""
    if value is None:
        return None
    return str(value) if type(value) is int else json.dumps(value)


def _check_exists(url: str) -> None:
    if not url.startswith("sqlite:///"):
        return  # a database server: the connection itself says whether it is there
    path = Path(url.removeprefix("sqlite:///"))
    if not path.is_file():
        raise LocatedError(str(path), "no store there (nothing has been written to it yet); "
                           "check the path, or run a command that writes verdicts first")


def _unusable(location: str, error: sa.exc.DatabaseError) -> LocatedError:
    """A store that cannot be opened, named by its path (or URL without password)."""
    first = (str(error.orig).strip().splitlines() or [type(error.orig).__name__])[0]
    if "not a database" in first or "file is encrypted" in first:
        first = "not a SQLite database (the store path points at another kind of file)"
    return LocatedError(location, f"cannot be used as a verdict store: {first}")


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
