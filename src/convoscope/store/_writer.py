"""One writer thread per run: verdicts leave the event loop and are committed in groups.

``put`` hands a task's verdict rows over; the event loop gathers what arrives within 50 ms (or
256 tasks) into one hand-over, so the writer thread wakes once per group, not once per verdict.
The thread commits whatever has queued up (up to ``batch`` tasks; while busy it gathers for
``LINGER_S`` after each commit, see :mod:`convoscope._gather`) in one transaction,
together with the chunks that are now finished, then passes the committed verdicts to
``on_commit`` (a stream to ``--out``, a result being collected) in the order they were committed;
verdicts found already stored (``emit``) go through the same thread, so one thread writes the
output. :meth:`flush` waits for everything handed over so far; :meth:`close` flushes and stops (a
run calls it in ``finally``, so Ctrl-C loses nothing that was judged). A failed commit is retried a
few times (a busy SQLite file), then raised from the next ``put``/``flush``, so a run never goes on
judging into a store it cannot write.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from convoscope._gather import gather
from convoscope.judges import Verdict
from convoscope.store._chunks import finish_chunk
from convoscope.store._store import Store

# A busy writer gathers this long after each commit before the next one: each commit rewrites
# the pages it touches (both tables' and their indexes'), so larger groups cost less per verdict.
LINGER_S = 0.25
OnCommit = Callable[[list[Verdict], list[Verdict]], None]  # (final verdicts, panel members')
# A hand-over wakes the writer thread, which then takes the GIL from the event loop: every 50 ms
# (or 256 tasks) rather than every 5 ms (or 64) took a third of the writer's CPU off (issue 39).
_HAND_OVER_S = 0.05
_HAND_OVER_AT = 256


@dataclass(frozen=True)
class _Judged:
    rows: list[tuple[str, Verdict]]  # members first, the final verdict last
    members: int


@dataclass(frozen=True)
class _Finished:
    chunk: int
    outcome: Counter[str]


@dataclass(frozen=True)
class _Found:
    finals: list[Verdict]
    members: list[Verdict] = field(default_factory=list)


@dataclass(frozen=True)
class _Answer:
    """A model's answer for the response cache, committed with the verdicts."""

    key: str
    generation: Any


_Entry = _Judged | _Finished | _Found | _Answer


class VerdictWriter:
    """Writes one run's verdicts from a background thread, in grouped transactions."""

    def __init__(self, store: Store, run_id: str, *, supersede: Iterable[str] = (),
                 on_commit: OnCommit | None = None, batch: int = 500) -> None:
        self.store, self.run_id = store, run_id
        self.supersede = tuple(sorted(supersede))
        self.on_commit = on_commit
        self.commits = 0
        self._committed = 0.0  # when the last commit ended (monotonic)
        self.handovers = 0
        self._batch = batch
        self.linger_s = LINGER_S
        self._queue: queue.Queue[list[_Entry] | threading.Event | None] = queue.Queue()
        self._gathered: list[_Entry] = []
        self._scheduled: asyncio.TimerHandle | None = None
        self._error: BaseException | None = None
        self._closed = False
        self._connection: sa.Connection | None = None  # the writer thread's (see _connected)
        self._thread = threading.Thread(target=self._loop, name=f"verdict-writer:{run_id}", daemon=True)
        self._thread.start()
        # The store's response cache (a SQLite store's, see Store.response_cache): its answers are
        # committed here, in the transaction of the verdicts, not by a second writer.
        self._cache = store.response_cache
        if self._cache is not None:
            self._cache.join(lambda key, generation: self._hand(_Answer(key, generation)))

    # -- handing over (event loop side) -----------------------------------------------------

    def put(self, rows: list[tuple[str, Verdict]], *, members: int = 0) -> None:
        """Queue a task's verdicts: ``members`` panel members' first, the final one last."""
        self._hand(_Judged(rows, members))

    def finish(self, chunk: int, outcome: Counter[str]) -> None:
        """Mark a chunk finished once everything handed over before is committed."""
        self._hand(_Finished(chunk, outcome))

    def emit(self, finals: list[Verdict], members: list[Verdict]) -> None:
        """Pass verdicts that were already stored to ``on_commit``, in turn with the others."""
        if self.on_commit is not None and (finals or members):
            self._hand(_Found(finals, members))

    def _hand(self, entry: _Entry) -> None:
        self._raise_if_failed()
        self._gathered.append(entry)
        if len(self._gathered) >= _HAND_OVER_AT:
            self._hand_over()
            return
        if self._scheduled is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # called from plain threads: no loop to gather on
                self._hand_over()
                return
            self._scheduled = loop.call_later(_HAND_OVER_S, self._hand_over)

    def _hand_over(self) -> None:
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        if self._gathered:
            entries, self._gathered = self._gathered, []
            self._queue.put(entries)
            self.handovers += 1

    def flush(self) -> None:
        """Block until everything handed over so far is committed."""
        self._hand_over()
        if not self._closed and self._thread.is_alive():
            done = threading.Event()
            self._queue.put(done)
            done.wait()
        self._raise_if_failed()

    def close(self) -> None:
        if not self._closed:
            self._hand_over()
            self._closed = True
            self._queue.put(None)
            self._thread.join()
            if self._cache is not None:
                self._cache.leave()
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    # -- committing (writer thread) ---------------------------------------------------------

    def _loop(self) -> None:
        try:
            self._serve()
        finally:
            self._disconnect()

    def _serve(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            entries, waiters, stop = gather(self._queue, first, batch=self._batch,
                                            until=self._committed + self.linger_s)
            if entries and self._error is None:
                try:
                    self._commit(entries)
                    self._pass_on(entries)
                except Exception as error:  # surfaced on the event loop's next put/flush
                    self._error = error
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    def _commit(self, entries: list[_Entry]) -> None:
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        rows = [row for entry in entries if isinstance(entry, _Judged) for row in entry.rows]
        finished = [entry for entry in entries if isinstance(entry, _Finished)]
        answers = [(entry.key, entry.generation) for entry in entries if isinstance(entry, _Answer)]
        if not rows and not finished and not answers:
            return
        for attempt in Retrying(retry=retry_if_exception_type(sa.exc.OperationalError),
                                stop=stop_after_attempt(5), wait=wait_exponential(0.2, max=5),
                                reraise=True):
            with attempt:
                connection = self._connected()
                try:
                    with connection.begin():
                        if answers:  # first: the cache's file is attached outside a transaction
                            self._cache.write_into(connection, answers)
                        if rows:
                            self.store.write(connection, rows, run_id=self.run_id, supersede=self.supersede)
                        for entry in finished:
                            finish_chunk(connection, self.run_id, entry.chunk, entry.outcome)
                except sa.exc.DBAPIError:
                    self._disconnect()  # the next try starts on a connection of its own
                    raise
        self._committed = time.monotonic()
        self.commits += 1
        if answers:
            self._cache.committed(answers)

    def _connected(self) -> sa.Connection:
        """The writer thread's own connection, kept from commit to commit: a connection taken
        from the pool for each commit came back with a cold page cache whenever another
        connection had written meanwhile (SQLite), and cost a checkout and a reset each time."""
        if self._connection is None:
            self._connection = self.store.engine.connect()
        return self._connection

    def _disconnect(self) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            try:
                connection.close()
            except sa.exc.DBAPIError:
                connection.invalidate()

    def _pass_on(self, entries: list[_Entry]) -> None:
        if self.on_commit is None:
            return
        finals: list[Verdict] = []
        members: list[Verdict] = []
        for entry in entries:
            if isinstance(entry, _Judged):
                members.extend(verdict for _, verdict in entry.rows[:entry.members])
                finals.append(entry.rows[-1][1])
            elif isinstance(entry, _Found):
                finals.extend(entry.finals)
                members.extend(entry.members)
        if finals or members:
            self.on_commit(finals, members)
