"""Task leases: several processes on one run never do a task twice.

Every process of a run registers the run's task keys (idempotently), then *claims* small groups
of them before judging: a claim sets ``owner`` and ``lease_until`` on tasks that are not done and
not held by a live lease. On PostgreSQL the claim locks its candidates with ``SELECT … FOR UPDATE
SKIP LOCKED`` (two workers never wait for, or take, the same row); SQLite serialises writers, so
the same ``UPDATE … WHERE lease expired`` is atomic there. A worker renews its leases while it
works; a worker that dies (kill -9, lost machine) stops renewing, and its tasks are claimable by
the others once the lease has run out. A task is ``done`` once its verdict is not transient; a
transient failure releases the lease, so the next run (or another worker) tries it again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import sqlalchemy as sa

from convoscope.store._store import tasks

_CHUNK = 500  # bound parameters per statement stay far below SQLite's limit


def _chunks(keys: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(keys), _CHUNK):
        yield list(keys[start:start + _CHUNK])


def register_tasks(engine: sa.Engine, run_id: str, keys: Sequence[str], done: Iterable[str]) -> None:
    """Make sure every task of the run exists; mark ``done`` the ones known to be finished.

    Never turns a finished task back into pending (another worker may have just finished it);
    :func:`reopen_tasks` does that when the user asks to retry unscored verdicts."""
    from convoscope.store._store import insert_for

    finished = set(done)
    with engine.begin() as connection:
        for chunk in _chunks(keys):
            rows = [{"run_id": run_id, "task_key": key, "done": key in finished} for key in chunk]
            connection.execute(insert_for(engine, tasks).on_conflict_do_nothing(
                index_elements=["run_id", "task_key"]), rows)
        for chunk in _chunks(sorted(finished)):
            connection.execute(tasks.update().where(
                tasks.c.run_id == run_id, tasks.c.task_key.in_(chunk), ~tasks.c.done).values(done=True))


def reopen_tasks(engine: sa.Engine, run_id: str, keys: Iterable[str]) -> None:
    """Mark tasks pending again (their verdicts are to be retried)."""
    with engine.begin() as connection:
        for chunk in _chunks(sorted(keys)):
            connection.execute(tasks.update().where(
                tasks.c.run_id == run_id, tasks.c.task_key.in_(chunk)).values(done=False))


def claim_tasks(engine: sa.Engine, run_id: str, worker: str, keys: Sequence[str],
                lease_s: float) -> tuple[set[str], set[str]]:
    """Claim those of ``keys`` that are free. Returns (claimed, finished by now)."""
    now = time.time()
    free = sa.or_(tasks.c.owner.is_(None), tasks.c.lease_until < now, tasks.c.owner == worker)
    claimed: set[str] = set()
    finished: set[str] = set()
    with engine.begin() as connection:
        for chunk in _chunks(keys):
            candidates = (sa.select(tasks.c.task_key)
                          .where(tasks.c.run_id == run_id, tasks.c.task_key.in_(chunk), ~tasks.c.done, free)
                          .with_for_update(skip_locked=True))
            statement = (tasks.update()
                         .where(tasks.c.run_id == run_id, tasks.c.task_key.in_(candidates.scalar_subquery()))
                         .values(owner=worker, lease_until=now + lease_s)
                         .returning(tasks.c.task_key))
            claimed.update(row[0] for row in connection.execute(statement))
            done = sa.select(tasks.c.task_key).where(
                tasks.c.run_id == run_id, tasks.c.task_key.in_(chunk), tasks.c.done)
            finished.update(row[0] for row in connection.execute(done))
    return claimed, finished


def renew_leases(engine: sa.Engine, run_id: str, worker: str, lease_s: float) -> None:
    """Extend every lease this worker holds on unfinished tasks (its heartbeat)."""
    with engine.begin() as connection:
        connection.execute(tasks.update().where(
            tasks.c.run_id == run_id, tasks.c.owner == worker, ~tasks.c.done
        ).values(lease_until=time.time() + lease_s))


def settle_tasks(connection: sa.Connection, run_id: str, finished: Sequence[str],
                 failed: Sequence[str]) -> None:
    """In the verdicts' transaction: finished tasks are done; failed ones lose their lease."""
    for chunk in _chunks(finished):
        connection.execute(tasks.update().where(
            tasks.c.run_id == run_id, tasks.c.task_key.in_(chunk)).values(done=True, owner=None))
    for chunk in _chunks(failed):
        connection.execute(tasks.update().where(
            tasks.c.run_id == run_id, tasks.c.task_key.in_(chunk), ~tasks.c.done
        ).values(owner=None, lease_until=None))


def release_leases(engine: sa.Engine, run_id: str, worker: str) -> None:
    """Give back every lease this worker still holds (it stops early, e.g. Ctrl-C)."""
    with engine.begin() as connection:
        connection.execute(tasks.update().where(
            tasks.c.run_id == run_id, tasks.c.owner == worker, ~tasks.c.done
        ).values(owner=None, lease_until=None))
