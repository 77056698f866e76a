"""A run's input in chunks, each judged by one worker at a time: several processes share a run.

Every worker reads the same input in the same chunks (``run_chunks``). Before it renders a chunk,
a worker *claims* it: the claim succeeds when the chunk is new, or unfinished and not held by a
live lease (a worker renews its leases while it works; one that dies — kill -9, a lost machine —
stops renewing, and its chunks are claimable again once the lease has run out). A worker is named
``host:pid:random``: when the owner was a process on this machine that no longer runs, its chunks
are claimable at once, so a run killed and started again does not wait for its own leases. A chunk another
live worker holds is skipped without being rendered, so no worker plans what others judge, and
nothing proportional to the whole input is kept. A chunk ends ``done`` (every task has a verdict
that is not a transient failure) or ``failed`` (some task's verdict is a model_error: the next run
claims it again); ``outcome`` keeps its counts, so any worker can tell what the whole run did.
A chunk whose content changed (another ``fingerprint``) starts again as pending.

On PostgreSQL a claim locks its row (``SELECT … FOR UPDATE``); SQLite's single writer makes the
same transaction atomic.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from convoscope.items._prefix import Prefix
from convoscope.store._compiled import Compiled
from convoscope.store._owner import owner_gone, this_machine, worker_name  # noqa: F401 (imported from here)
from convoscope.store._schema import insert_for, run_chunks, run_prefixes, run_tasks, runs

Claim = Literal["claimed", "done", "held"]


@dataclass(frozen=True)
class ChunkState:
    """What the store knows about one chunk of a run."""

    chunk: int
    fingerprint: str
    state: str
    owner: str | None
    lease_until: float | None
    finished_at: float | None
    outcome: Counter[str]


def chunk_states(engine: sa.Engine, run_id: str) -> dict[int, ChunkState]:
    """Every chunk of the run the store has seen, by index."""
    with engine.connect() as connection:
        rows = connection.execute(sa.select(run_chunks).where(run_chunks.c.run_id == run_id))
        return {row.chunk: _state(row) for row in rows}


def _state(row: sa.Row[Any]) -> ChunkState:
    return ChunkState(row.chunk, row.fingerprint, row.state, row.owner, row.lease_until, row.finished_at,
                      Counter(json.loads(row.outcome or "{}")))


def claim_chunk(engine: sa.Engine, run_id: str, chunk: int, fingerprint: str, worker: str,
                lease_s: float, *, again: bool = False) -> Claim:
    """Lease ``chunk`` to ``worker`` unless it is done (and ``again`` is not asked) or held by
    another worker whose lease is still running."""
    now = time.time()
    with engine.begin() as connection:
        connection.execute(insert_for(engine, run_chunks).values(
            run_id=run_id, chunk=chunk, fingerprint=fingerprint, state="pending"
        ).on_conflict_do_nothing(index_elements=["run_id", "chunk"]))
        row = connection.execute(sa.select(run_chunks).where(
            run_chunks.c.run_id == run_id, run_chunks.c.chunk == chunk).with_for_update()).one()
        changed = row.fingerprint != fingerprint
        if row.state == "done" and not changed and not again:
            return "done"
        if row.owner not in (None, worker) and (row.lease_until or 0) > now \
                and not owner_gone(row.owner):
            return "held"
        connection.execute(run_chunks.update().where(
            run_chunks.c.run_id == run_id, run_chunks.c.chunk == chunk
        ).values(owner=worker, lease_until=now + lease_s, fingerprint=fingerprint,
                 state="pending" if changed or again else row.state))
    return "claimed"


def register_tasks(connection: sa.Connection, run_id: str, chunk: int,
                   keys: list[tuple[str, int, bool]]) -> None:
    """Record the keys a chunk asks for: (task key, position in the run, panel member?)."""
    if keys:
        _task_insert(connection).run(
            connection, [(run_id, key, chunk, position, member) for key, position, member in keys])


_TASK_INSERTS: dict[tuple[str, str, str], Compiled] = {}


def _task_insert(connection: sa.Connection) -> Compiled:
    """run_tasks' INSERT, compiled once per kind of database: a chunk registers hundreds of keys,
    and SQLAlchemy's per-row work on them cost more than the insert (issue 39)."""
    dialect = connection.dialect
    kind = (dialect.name, dialect.driver, dialect.paramstyle)
    found = _TASK_INSERTS.get(kind)
    if found is None:
        found = _TASK_INSERTS[kind] = Compiled.of(
            insert_for(connection, run_tasks).on_conflict_do_nothing(index_elements=["run_id", "task_key"]),
            dialect,
            ("run_id", "task_key", "chunk", "position", "member"))
    return found


def finish_chunk(connection: sa.Connection, run_id: str, chunk: int, outcome: Counter[str]) -> None:
    """In the verdicts' transaction: the chunk is done, or failed when a task's verdict is a
    transient failure (a model_error)."""
    state = "failed" if outcome.get("model_error") else "done"
    connection.execute(run_chunks.update().where(
        run_chunks.c.run_id == run_id, run_chunks.c.chunk == chunk
    ).values(state=state, owner=None, lease_until=None, finished_at=time.time(),
             outcome=json.dumps(dict(outcome), sort_keys=True)))


def renew_leases(engine: sa.Engine, run_id: str, worker: str, lease_s: float) -> None:
    """Extend every lease this worker holds (its heartbeat)."""
    with engine.begin() as connection:
        connection.execute(run_chunks.update().where(
            run_chunks.c.run_id == run_id, run_chunks.c.owner == worker
        ).values(lease_until=time.time() + lease_s))


def release_leases(engine: sa.Engine, run_id: str, worker: str) -> None:
    """Give back every lease this worker still holds (it stops early, e.g. Ctrl-C)."""
    with engine.begin() as connection:
        connection.execute(run_chunks.update().where(
            run_chunks.c.run_id == run_id, run_chunks.c.owner == worker
        ).values(owner=None, lease_until=None))


def chunk_keys(engine: sa.Engine, run_id: str, chunks: list[int]) -> list[tuple[str, bool]]:
    """The keys registered for some chunks of a run, in run order: (task key, member?)."""
    found: list[tuple[str, bool]] = []
    with engine.connect() as connection:
        for start in range(0, len(chunks), 500):
            query = (sa.select(run_tasks.c.task_key, run_tasks.c.member)
                     .where(run_tasks.c.run_id == run_id, run_tasks.c.chunk.in_(chunks[start:start + 500]))
                     .order_by(run_tasks.c.chunk, run_tasks.c.position))
            found.extend((key, bool(member)) for key, member in connection.execute(query))
    return found




def chunk_task_keys(engine: sa.Engine, run_id: str, chunk: int) -> list[str]:
    """The keys registered for one chunk of a run (one indexed query)."""
    with engine.connect() as connection:
        query = sa.select(run_tasks.c.task_key).where(run_tasks.c.run_id == run_id,
                                                      run_tasks.c.chunk == chunk)
        return [key for (key,) in connection.execute(query)]


def load_prefix(engine: sa.Engine, run_id: str) -> Prefix | None:
    """The run's recorded done prefix, if any (one indexed row)."""
    with engine.connect() as connection:
        row = connection.execute(sa.select(run_prefixes).where(run_prefixes.c.run_id == run_id)).first()
    if row is None:
        return None
    return Prefix(row.chunks, row.chunk_size, row.line, row.offset, row.digest, bytes(row.markers))


def related_prefixes(engine: sa.Engine, run_id: str, config: str, most: int = 3) -> list[tuple[str, Prefix]]:
    """The done prefixes of other runs with the same judge and criteria (``config`` in their spec:
    every run of the same command over another file), longest first: a renamed or copied input
    may start with one of them (see :func:`take_chunks`). Only those are read whole (a prefix
    holds 8 bytes an id)."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(runs.c.run_id, runs.c.spec).join(run_prefixes, run_prefixes.c.run_id == runs.c.run_id)
            .where(runs.c.run_id != run_id).order_by(run_prefixes.c.chunks.desc())).all()
    related = [row.run_id for row in rows if json.loads(row.spec).get("config") == config][:most]
    found = ((other, load_prefix(engine, other)) for other in related)
    return [(other, prefix) for other, prefix in found if prefix is not None]


def takeable(engine: sa.Engine, run_id: str, other: str, chunks: int) -> list[ChunkState] | None:
    """``other``'s chunks ``0..chunks-1`` when this run may take them as its own (see
    :func:`take_chunks`): all done there, and each either absent from this run or the same
    there (a run over this path before, with other content, keeps its own). None otherwise."""
    with engine.connect() as connection:
        return _takeable(connection, run_id, other, chunks)


def _takeable(connection: sa.Connection, run_id: str, other: str, chunks: int) -> list[ChunkState] | None:
    query = sa.select(run_chunks).where(run_chunks.c.run_id.in_([run_id, other]), run_chunks.c.chunk < chunks)
    found: dict[str, dict[int, ChunkState]] = {run_id: {}, other: {}}
    for row in connection.execute(query):
        found[row.run_id][row.chunk] = _state(row)
    theirs, ours = found[other], found[run_id]
    same = all(index in theirs and (mine.fingerprint, mine.state) == (theirs[index].fingerprint, "done")
               for index, mine in ours.items())
    if len(theirs) != chunks or not same or any(state.state != "done" for state in theirs.values()):
        return None
    return [theirs[index] for index in range(chunks)]


def take_chunks(engine: sa.Engine, run_id: str, other: str, chunks: int) -> bool:
    """Record ``other``'s chunks ``0..chunks-1`` (the same items asked of the same judge) and
    their tasks as this run's, in one transaction, if they are still :func:`takeable`; False, and
    nothing written, otherwise. Task keys name what was asked: the verdicts are shared."""
    with engine.begin() as connection:
        if _takeable(connection, run_id, other, chunks) is None:
            return False
        copied = ("chunk", "fingerprint", "state", "finished_at", "outcome")
        connection.execute(insert_for(connection, run_chunks).from_select(
            ["run_id", *copied],
            sa.select(sa.literal(run_id), *(run_chunks.c[name] for name in copied))
            .where(run_chunks.c.run_id == other, run_chunks.c.chunk < chunks)
        ).on_conflict_do_nothing(index_elements=["run_id", "chunk"]))
        listed = ("task_key", "chunk", "position", "member")
        connection.execute(insert_for(connection, run_tasks).from_select(
            ["run_id", *listed],
            sa.select(sa.literal(run_id), *(run_tasks.c[name] for name in listed))
            .where(run_tasks.c.run_id == other, run_tasks.c.chunk < chunks)
        ).on_conflict_do_nothing(index_elements=["run_id", "task_key"]))
    return True


def save_prefix(engine: sa.Engine, run_id: str, prefix: Prefix, *, only_longer: bool) -> None:
    """Record the run's done prefix. ``only_longer``: the run started from the recorded one (it
    still holds), so a shorter one (another worker's, finishing later) does not replace it;
    otherwise the recorded one no longer matched the file and is replaced whatever its length."""
    values = {"chunks": prefix.chunks, "chunk_size": prefix.chunk_size, "line": prefix.line,
              "offset": prefix.offset, "digest": prefix.digest, "markers": prefix.markers}
    with engine.begin() as connection:
        connection.execute(insert_for(engine, run_prefixes).values(run_id=run_id, **values)
                           .on_conflict_do_update(index_elements=["run_id"], set_=values,
                                                  where=run_prefixes.c.chunks < prefix.chunks
                                                  if only_longer else None))
