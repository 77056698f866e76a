"""The batch ledger: provider batches (and exported batch files) in the verdict store.

Every machine sharing the store sees the same ledger, so a batch submitted by one machine is
collected by whichever runs next, and no request is ever in two open batches:

* A request that no answer and no open batch covers is *deferred*: a ``pending`` row under its
  response-cache key (:meth:`BatchLedger.defer`).
* A worker *takes* pending (or failed) rows into a new job in one transaction
  (:meth:`BatchLedger.open_job`): on PostgreSQL a concurrent ``UPDATE … WHERE state IN
  ('pending', 'failed')`` waits for the first one's row locks and then finds the rows taken;
  SQLite serialises writers. Only the rows a worker took go into its batch file, so two processes
  deferring the same requests send one set of batches between them.
* A job is held by one worker at a time while it is submitted, polled, collected or cancelled
  (a lease, as run chunks are: :mod:`convoscope.store._chunks`); a worker that dies loses it
  when the lease runs out.
* Collecting writes each answer (or the batch's error) on its row and marks the job
  ``collected``; answered rows keep the answer, so any machine's next run finds it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from convoscope.store._chunks import owner_gone
from convoscope.store._schema import batch_jobs, batch_requests, insert_for

OPEN_STATES = ("submitting", "submitted", "in_progress")
ENDED_STATES = ("completed", "failed", "expired", "cancelled")
_GROUP = 500  # rows per statement


@dataclass(frozen=True)
class BatchJob:
    """One batch at a provider (or one exported file), as the ledger records it."""

    job_id: str
    provider: str
    base_url: str
    model: str
    endpoint: str
    state: str
    requests: int
    bytes: int
    structured: str | None = None
    remote_id: str | None = None
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    provider_status: str | None = None
    answered: int = 0
    failed: int = 0
    owner: str | None = None
    lease_until: float | None = None
    created_at: float = 0.0
    submitted_at: float | None = None
    updated_at: float = 0.0
    ended_at: float | None = None
    collected_at: float | None = None
    cancel_requested_at: float | None = None
    files_deleted_at: float | None = None
    detail: str | None = None

    @property
    def open(self) -> bool:
        """Not yet collected: answers may still come (or are waiting to be read)."""
        return self.state != "collected"


@dataclass(frozen=True)
class RequestState:
    """What the ledger knows about one request: its state, its job, its answer or problem."""

    state: str
    job_id: str | None
    answer: str | None
    problem: str | None


class BatchLedger:
    """The ledger on a store's engine (see the module docstring)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    # -- requests -------------------------------------------------------------------------------

    def lookup(self, key: str) -> RequestState | None:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(
                batch_requests.c.state, batch_requests.c.job_id, batch_requests.c.answer,
                batch_requests.c.problem).where(batch_requests.c.request_key == key)).first()
        return None if row is None else RequestState(*row)

    def defer(self, model: str, requests: dict[str, str]) -> None:
        """Record requests (key -> request JSON) as pending unless the ledger has them already."""
        now = time.time()
        rows = [{"request_key": key, "model": model, "state": "pending", "request": body, "updated_at": now}
                for key, body in sorted(requests.items())]  # one lock order for every worker
        with self.engine.begin() as connection:
            for start in range(0, len(rows), _GROUP):
                connection.execute(insert_for(connection, batch_requests).on_conflict_do_nothing(
                    index_elements=["request_key"]), rows[start:start + _GROUP])

    # -- jobs -----------------------------------------------------------------------------------

    def open_job(self, *, provider: str, base_url: str, model: str, endpoint: str, keys: Sequence[str],
                 size: int, worker: str, lease_s: float, structured: str | None = None
                 ) -> tuple[BatchJob, list[str]] | None:
        """Take those of ``keys`` nobody else has taken into a new job held by ``worker``; returns
        the job and the keys taken (None when every key was taken already). ``structured``: the
        structured-output form the job's chat bodies ask for (recorded on its answers)."""
        now = time.time()
        job_id = f"cb-{uuid.uuid4().hex[:20]}"
        keys = sorted(keys)  # every worker locks rows in one order: no deadlock on PostgreSQL
        with self.engine.begin() as connection:
            connection.execute(batch_jobs.insert().values(
                job_id=job_id, provider=provider, base_url=base_url, model=model, endpoint=endpoint,
                structured=structured, state="submitting", requests=0, bytes=size, owner=worker,
                lease_until=now + lease_s, created_at=now, updated_at=now))
            for start in range(0, len(keys), _GROUP):
                connection.execute(batch_requests.update().where(
                    batch_requests.c.request_key.in_(keys[start:start + _GROUP]),
                    batch_requests.c.state.in_(("pending", "failed"))
                ).values(state="batched", job_id=job_id, updated_at=now,
                         attempts=batch_requests.c.attempts + 1))
            taken = [key for (key,) in connection.execute(sa.select(batch_requests.c.request_key).where(
                batch_requests.c.job_id == job_id, batch_requests.c.state == "batched"))]
            if not taken:
                connection.execute(batch_jobs.delete().where(batch_jobs.c.job_id == job_id))
                return None
            connection.execute(batch_jobs.update().where(batch_jobs.c.job_id == job_id)
                               .values(requests=len(taken)))
        job = self.job(job_id)
        assert job is not None
        return job, taken

    def job(self, job_id: str) -> BatchJob | None:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(batch_jobs).where(batch_jobs.c.job_id == job_id)).first()
        return None if row is None else BatchJob(**row._asdict())

    def jobs(self, *, states: Iterable[str] | None = None, model: str | None = None,
             provider: str | None = None, ids: Iterable[str] | None = None) -> list[BatchJob]:
        """Jobs in the order they were created, filtered by state, model, provider or id."""
        query = sa.select(batch_jobs).order_by(batch_jobs.c.created_at, batch_jobs.c.job_id)
        if states is not None:
            query = query.where(batch_jobs.c.state.in_(list(states)))
        if model is not None:
            query = query.where(batch_jobs.c.model == model)
        if provider is not None:
            query = query.where(batch_jobs.c.provider == provider)
        if ids is not None:
            query = query.where(batch_jobs.c.job_id.in_(list(ids)))
        with self.engine.connect() as connection:
            return [BatchJob(**row._asdict()) for row in connection.execute(query)]

    def job_keys(self, job_id: str) -> list[str]:
        with self.engine.connect() as connection:
            return [key for (key,) in connection.execute(sa.select(batch_requests.c.request_key).where(
                batch_requests.c.job_id == job_id, batch_requests.c.state == "batched"))]

    def waiting_requests(self, keys: Sequence[str], job_id: str | None = None, *,
                         model: str | None = None) -> dict[str, tuple[str, str | None]]:
        """Key -> (request JSON, the structured-output form its job asked for) of those of
        ``keys`` (of ``model``) still waiting for an answer: batched in ``job_id``, or (``job_id``
        None) batched anywhere, pending or failed."""
        found: dict[str, tuple[str, str | None]] = {}
        waiting = batch_requests.c.state.in_(("batched",) if job_id is not None else
                                             ("batched", "pending", "failed"))
        with self.engine.connect() as connection:
            for start in range(0, len(keys), _GROUP):
                query = sa.select(batch_requests.c.request_key, batch_requests.c.request,
                                  batch_jobs.c.structured).select_from(batch_requests.outerjoin(
                                      batch_jobs, batch_jobs.c.job_id == batch_requests.c.job_id)).where(
                    batch_requests.c.request_key.in_(keys[start:start + _GROUP]), waiting,
                    batch_requests.c.request.is_not(None),
                    *([batch_requests.c.job_id == job_id] if job_id is not None else []),
                    *([batch_requests.c.model == model] if model is not None else []))
                found.update((key, (body, form)) for key, body, form in connection.execute(query))
        return found

    def known(self, keys: Sequence[str]) -> set[str]:
        """Those of ``keys`` the ledger has a row for."""
        found: set[str] = set()
        with self.engine.connect() as connection:
            for start in range(0, len(keys), _GROUP):
                found.update(connection.execute(sa.select(batch_requests.c.request_key).where(
                    batch_requests.c.request_key.in_(keys[start:start + _GROUP]))).scalars())
        return found

    def hold(self, job_id: str, worker: str, lease_s: float) -> bool:
        """Lease a job to ``worker`` unless another live worker holds it. A holder that was a
        process on this machine and has ended is taken over at once, as chunk leases are
        (:func:`~convoscope.store._chunks.owner_gone`), not when its lease runs out."""
        now = time.time()
        with self.engine.begin() as connection:
            holder = connection.execute(sa.select(batch_jobs.c.owner).where(
                batch_jobs.c.job_id == job_id)).scalar()
            dead = holder not in (None, worker) and owner_gone(holder)
            gone = [batch_jobs.c.owner == holder] if dead else []
            connection.execute(batch_jobs.update().where(
                batch_jobs.c.job_id == job_id,
                sa.or_(batch_jobs.c.owner.is_(None), batch_jobs.c.owner == worker,
                       batch_jobs.c.lease_until < now, *gone)
            ).values(owner=worker, lease_until=now + lease_s))
            owner = connection.execute(sa.select(batch_jobs.c.owner).where(
                batch_jobs.c.job_id == job_id)).scalar()
        return bool(owner == worker)

    def renew(self, job_id: str, worker: str, lease_s: float) -> None:
        """Extend ``worker``'s lease on a job it still holds (a no-op once it is let go)."""
        with self.engine.begin() as connection:
            connection.execute(batch_jobs.update().where(
                batch_jobs.c.job_id == job_id, batch_jobs.c.owner == worker
            ).values(lease_until=time.time() + lease_s))

    def release(self, job_id: str, worker: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(batch_jobs.update().where(
                batch_jobs.c.job_id == job_id, batch_jobs.c.owner == worker
            ).values(owner=None, lease_until=None))

    def update(self, job_id: str, **values: Any) -> None:
        """Record what the provider said (remote id, file ids, state, status, detail, times)."""
        with self.engine.begin() as connection:
            connection.execute(batch_jobs.update().where(batch_jobs.c.job_id == job_id)
                               .values(updated_at=time.time(), **values))

    def abandon(self, job_id: str, detail: str, *, status: str = "not submitted") -> None:
        """A job whose requests will not be answered through it (never sent, or an exported
        file cancelled): they are pending again, and the job is closed with ``status``."""
        now = time.time()
        with self.engine.begin() as connection:
            connection.execute(batch_requests.update().where(
                batch_requests.c.job_id == job_id, batch_requests.c.state == "batched"
            ).values(state="pending", job_id=None, updated_at=now))
            connection.execute(batch_jobs.update().where(batch_jobs.c.job_id == job_id).values(
                state="collected", provider_status=status, detail=detail, owner=None,
                lease_until=None, updated_at=now, ended_at=now, collected_at=now))

    # -- answers --------------------------------------------------------------------------------

    def answer(self, job_id: str | None, answers: dict[str, str], problems: dict[str, str]) -> int:
        """Write answers (key -> Generation JSON) and problems (key -> text) of waiting requests
        (of ``job_id``; None: any, as an import does). A row already answered keeps its answer,
        so each request is answered once. Returns how many rows changed."""
        now = time.time()
        changed = 0
        # (no IN list: an executemany takes no expanding parameters)
        waiting = (batch_requests.c.state == "batched" if job_id is not None
                   else batch_requests.c.state != "answered")
        with self.engine.begin() as connection:
            for state, values in (("answered", answers), ("failed", problems)):
                column = "answer" if state == "answered" else "problem"
                statement = batch_requests.update().where(
                    batch_requests.c.request_key == sa.bindparam("b_key"), waiting,
                    *([batch_requests.c.job_id == job_id] if job_id is not None else [])
                ).values({"state": state, "updated_at": now, column: sa.bindparam("b_value"),
                          **({"request": None} if state == "answered" else {})})
                rows = [{"b_key": key, "b_value": value} for key, value in sorted(values.items())]
                for start in range(0, len(rows), _GROUP):
                    result = connection.execute(statement, rows[start:start + _GROUP])
                    changed += max(result.rowcount, 0)
        return changed

    def finish(self, job_id: str, *, unanswered: str, **values: Any) -> BatchJob:
        """Close a job: requests it left without an answer fail with ``unanswered``; the job is
        ``collected`` with its counts."""
        now = time.time()
        with self.engine.begin() as connection:
            connection.execute(batch_requests.update().where(
                batch_requests.c.job_id == job_id, batch_requests.c.state == "batched"
            ).values(state="failed", problem=unanswered, updated_at=now))
            counts: dict[str, int] = dict(connection.execute(sa.select(
                batch_requests.c.state, sa.func.count()).where(batch_requests.c.job_id == job_id)
                .group_by(batch_requests.c.state)).all())
            connection.execute(batch_jobs.update().where(batch_jobs.c.job_id == job_id).values(
                state="collected", collected_at=now, updated_at=now, owner=None, lease_until=None,
                answered=counts.get("answered", 0), failed=counts.get("failed", 0), **values))
        job = self.job(job_id)
        assert job is not None
        return job

    def counts(self, job_id: str) -> dict[str, int]:
        """The job's requests by state."""
        with self.engine.connect() as connection:
            return dict(connection.execute(sa.select(batch_requests.c.state, sa.func.count()).where(
                batch_requests.c.job_id == job_id).group_by(batch_requests.c.state)).all())

    def adopt(self, *, provider: str, base_url: str, model: str, endpoint: str, remote_id: str,
              requests: dict[str, str], submitted_at: float) -> None:
        """Record a batch submitted before the ledger lived in the store (see
        :func:`convoscope.batch._model.adopt_json_ledger`)."""
        now = time.time()
        job_id = f"cb-{uuid.uuid4().hex[:20]}"
        with self.engine.begin() as connection:
            connection.execute(batch_jobs.insert().values(
                job_id=job_id, provider=provider, base_url=base_url, model=model, endpoint=endpoint,
                remote_id=remote_id, state="submitted", requests=len(requests), bytes=0, created_at=now,
                submitted_at=submitted_at, updated_at=now))
            rows = [{"request_key": key, "model": model, "job_id": job_id, "state": "batched",
                     "request": body, "attempts": 1, "updated_at": now} for key, body in requests.items()]
            for start in range(0, len(rows), _GROUP):
                connection.execute(insert_for(connection, batch_requests).on_conflict_do_nothing(
                    index_elements=["request_key"]), rows[start:start + _GROUP])

    def forget(self, job_ids: Sequence[str]) -> None:
        """Drop collected jobs from the ledger (their answered requests stay)."""
        with self.engine.begin() as connection:
            connection.execute(batch_jobs.delete().where(batch_jobs.c.job_id.in_(list(job_ids)),
                                                         batch_jobs.c.state == "collected"))
