"""The store's tables and their numbered migrations.

A judged task is identified by what it asks (its key: the rendered request and the judge), not by
the run that asked it: ``verdicts`` holds one row per ``(scope, task_key)``, where judges write in
the shared scope ``""`` and a human campaign in its own scope (its run id), so the same key in two
campaigns never collides. ``run_id`` on a verdict records which run produced it. A run is a record
of what was asked: ``runs`` (its spec), ``run_tasks`` (the keys it asked for, in input order) and
``run_chunks`` (its input in chunks, each leased by one worker at a time while it is judged).
The batch ledger (``batch_jobs``, ``batch_requests``: see :mod:`convoscope.store._batches`) keeps
provider batches and exported batch files where every machine sharing the store sees them.

Migrations run under a lock, so workers started together on a new database never race:
PostgreSQL takes a transaction-level advisory lock; SQLite takes its write lock first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

SHARED = ""  # the scope of judged tasks: every run that asks the same thing shares the verdict

metadata = sa.MetaData()
runs = sa.Table(
    "runs", metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("summary", sa.Text),
)


def _verdict_columns() -> list[Any]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(255), nullable=False, server_default=SHARED),
        sa.Column("task_key", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(255)),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("criterion", sa.Text, nullable=False),
        sa.Column("rater", sa.Text, nullable=False),
        sa.Column("value", sa.Text),
        sa.Column("unscored_reason", sa.String(32)),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
        sa.UniqueConstraint("scope", "task_key", name="uq_verdicts_scope_key"),
        sa.Index("ix_verdicts_producer", "run_id"),
    ]


verdicts = sa.Table("verdicts", metadata, *_verdict_columns())
schema_version = sa.Table(
    "schema_version", metadata, sa.Column("version", sa.Integer, nullable=False)
)
# The keys a run asked for, in input order (``position``); ``member``: a panel member's own
# verdict rather than the final (pooled) one of an item and criterion.
run_tasks = sa.Table(
    "run_tasks", metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("task_key", sa.String(64), primary_key=True),
    sa.Column("chunk", sa.Integer, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("member", sa.Boolean, nullable=False, default=False),
    sa.Index("ix_run_tasks_order", "run_id", "chunk", "position"),
)
# A run's input in chunks: who holds each (a lease with a heartbeat), and how it ended.
# ``state``: pending (never finished), done (every task has a verdict that is not a transient
# failure), failed (finished with transient failures: the next run judges it again).
run_chunks = sa.Table(
    "run_chunks", metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("chunk", sa.Integer, primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("owner", sa.String(128)),
    sa.Column("lease_until", sa.Float),
    sa.Column("state", sa.String(16), nullable=False, server_default="pending"),
    sa.Column("finished_at", sa.Float),
    sa.Column("outcome", sa.Text),
)

# A run's done prefix (see convoscope.items._prefix): its first ``chunks`` chunks, all done, are
# the input file's first ``offset`` bytes (lines ``1..line``), whose hash is ``digest``; ``markers``:
# the sorted 64-bit markers of their ids (8 bytes each), to refuse a new item repeating one.
run_prefixes = sa.Table(
    "run_prefixes", metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("chunks", sa.Integer, nullable=False),
    sa.Column("chunk_size", sa.Integer, nullable=False),
    sa.Column("line", sa.Integer, nullable=False),
    sa.Column("offset", sa.BigInteger, nullable=False),
    sa.Column("digest", sa.String(128), nullable=False),
    sa.Column("markers", sa.LargeBinary, nullable=False),
)

# The batch ledger (see convoscope.store._batches). A job is one batch at a provider (or one
# exported file); ``state``: submitting, submitted, in_progress, completed, failed, expired,
# cancelled (the provider's ending, not yet collected), collected. ``owner``/``lease_until``:
# the worker submitting or collecting it.
batch_jobs = sa.Table(
    "batch_jobs", metadata,
    sa.Column("job_id", sa.String(64), primary_key=True),
    sa.Column("provider", sa.String(16), nullable=False),
    sa.Column("base_url", sa.Text, nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("endpoint", sa.String(64), nullable=False),
    sa.Column("structured", sa.String(16)),  # the structured-output form its chat bodies asked for
    sa.Column("remote_id", sa.String(255)),
    sa.Column("input_file_id", sa.Text),
    sa.Column("output_file_id", sa.Text),
    sa.Column("error_file_id", sa.Text),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("provider_status", sa.String(32)),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("bytes", sa.Integer, nullable=False),
    sa.Column("answered", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("owner", sa.String(128)),
    sa.Column("lease_until", sa.Float),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("submitted_at", sa.Float),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("ended_at", sa.Float),
    sa.Column("collected_at", sa.Float),
    sa.Column("cancel_requested_at", sa.Float),
    sa.Column("files_deleted_at", sa.Float),
    sa.Column("detail", sa.Text),
    sa.Index("ix_batch_jobs_state", "state"),
)
# One row per request sent (or to be sent) through a batch, by its response-cache key.
# ``state``: pending (deferred, in no batch), batched (in job ``job_id``), answered (``answer``
# holds the Generation; the request is dropped), failed (the batch answered with ``problem``;
# the next run sends it again).
batch_requests = sa.Table(
    "batch_requests", metadata,
    sa.Column("request_key", sa.String(64), primary_key=True),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("job_id", sa.String(64)),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("request", sa.Text),
    sa.Column("answer", sa.Text),
    sa.Column("problem", sa.Text),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("ix_batch_requests_job", "job_id"),
)


def _v1(connection: sa.Connection) -> None:
    """The first schema (runs and verdicts keyed by run); later migrations reshape it."""
    old = sa.MetaData()
    sa.Table(
        "runs", old,
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("summary", sa.Text),
    )
    sa.Table(
        "verdicts", old,
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
        sa.UniqueConstraint("run_id", "task_key", name="uq_verdict_task"),
    )
    old.create_all(connection)


def _v2(connection: sa.Connection) -> None:
    """Task leases of the first several-workers design (dropped again by :func:`_v4`)."""
    old = sa.MetaData()
    sa.Table("tasks", old, sa.Column("run_id", sa.String(64), primary_key=True),
             sa.Column("task_key", sa.String(64), primary_key=True), sa.Column("owner", sa.String(64)),
             sa.Column("lease_until", sa.Float), sa.Column("done", sa.Boolean, nullable=False, default=False))
    old.create_all(connection)


def _v3(connection: sa.Connection) -> None:
    """How many times a task was tried (a transient failure is superseded by the next try)."""
    columns = {column["name"] for column in sa.inspect(connection).get_columns("verdicts")}
    if "attempts" not in columns:
        connection.execute(sa.text("ALTER TABLE verdicts ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1"))


def _v4(connection: sa.Connection) -> None:
    """Verdicts keyed by what was asked, not by the run (see the module docstring).

    Judge verdicts move to the shared scope; where two runs stored the same key, the verdict
    that is not a transient failure wins, then the latest. Campaign answers (run ids
    ``campaign:…``) keep their run as their scope. Each old run keeps its keys in ``run_tasks``."""
    staging = sa.MetaData()
    target = sa.Table("verdicts_v4", staging, *_verdict_columns())  # index names move with a rename
    staging.create_all(connection)
    old = sa.table("verdicts", *(sa.column(name) for name in (
        "id", "run_id", "task_key", "item_id", "criterion", "rater", "value", "unscored_reason", "data",
        "created_at", "attempts")))
    scope = sa.case((old.c.run_id.like("campaign:%"), old.c.run_id), else_=sa.literal(SHARED))
    copied = ("task_key", "run_id", "item_id", "criterion", "rater", "value", "unscored_reason", "data",
              "created_at", "attempts")
    failed = old.c.unscored_reason == "model_error"
    for wanted in (sa.or_(old.c.unscored_reason.is_(None), ~failed), failed):
        # Lasting verdicts first, each key's latest first; ON CONFLICT keeps the first one.
        query = sa.select(scope, *(old.c[name] for name in copied)).where(wanted).order_by(old.c.id.desc())
        insert = insert_for(connection, target).from_select(["scope", *copied], query)
        connection.execute(insert.on_conflict_do_nothing(index_elements=["scope", "task_key"]))
    keys = (sa.select(old.c.run_id, old.c.task_key, sa.literal(0), sa.func.min(old.c.id), sa.false())
            .where(~old.c.run_id.like("campaign:%")).group_by(old.c.run_id, old.c.task_key))
    run_tasks.create(connection)
    connection.execute(run_tasks.insert().from_select(
        ["run_id", "task_key", "chunk", "position", "member"], keys))
    connection.execute(sa.text("DROP TABLE verdicts"))
    connection.execute(sa.text("ALTER TABLE verdicts_v4 RENAME TO verdicts"))
    connection.execute(sa.text("DROP TABLE IF EXISTS tasks"))
    run_chunks.create(connection)


def _v5(connection: sa.Connection) -> None:
    """The batch ledger in the store (it was a JSON file beside one machine's response cache)."""
    batch_jobs.create(connection, checkfirst=True)
    batch_requests.create(connection, checkfirst=True)


def _v6(connection: sa.Connection) -> None:
    """A run's done prefix, so a resume skips its finished chunks unread."""
    run_prefixes.create(connection, checkfirst=True)


def insert_for(engine: sa.Engine | sa.Connection, table: sa.Table) -> Any:
    """An INSERT with the dialect's ON CONFLICT clauses (each dialect imported when first used:
    a SQLite run never loads the PostgreSQL dialect)."""
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


# Each migration takes the schema from version i to i + 1. Append, never edit.
MIGRATIONS: list[Callable[[sa.Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6]
_LOCK_ID = 0x636F6E76  # "conv": the advisory lock PostgreSQL workers take while migrating


def migrate(engine: sa.Engine) -> None:
    """Bring the schema to the latest version; safe when several processes start at once."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        connection.execute(sa.text("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"))
        if connection.dialect.name == "sqlite":
            # A write first: the transaction holds SQLite's write lock from here on, so a second
            # process waits here and then finds the schema up to date.
            connection.execute(sa.text("UPDATE schema_version SET version = version"))
        current = connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0
        for version in range(current, len(MIGRATIONS)):
            MIGRATIONS[version](connection)
        if current < len(MIGRATIONS):
            connection.execute(schema_version.delete())
            connection.execute(schema_version.insert().values(version=len(MIGRATIONS)))
