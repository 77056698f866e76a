"""Answers are committed by one writer thread, in groups: the answers that arrive while a commit is
under way go into the next one. Each request still waits until its own answer is committed (a
kill loses nothing that was acknowledged); thirty annotators answering at once cost a few commits,
not thirty, and the writer keeps one connection open while it is busy (no pool checkout, no
liveness ping per answer). On PostgreSQL, where every commit is a flush to disk and every
statement a round trip to another process, this is what lets it keep up with SQLite.

The thread stops after a few idle seconds and starts again with the next answer, so a campaign
opened for a report leaves no thread behind.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from dataclasses import dataclass, field

import sqlalchemy as sa

from convoscope.judges import Verdict
from convoscope.store import Store

IDLE_SECONDS = 2.0
GROUP = 500  # answers in one commit at most


@dataclass
class _Pending:
    rows: list[tuple[str, Verdict]]
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class AnswerWriter:
    """Commits one run's answers from a background thread, grouping those that arrive together."""

    def __init__(self, store: Store, run_id: str):
        self.store, self.run_id = store, run_id
        self.commits = 0
        self._queue: queue.Queue[_Pending] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def write(self, rows: list[tuple[str, Verdict]]) -> None:
        """Commit ``rows`` (task key, verdict); returns once they are committed, or raises why not."""
        if not rows:
            return
        pending = _Pending(rows)
        self._queue.put(pending)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=f"answers:{self.run_id}", daemon=True)
                self._thread.start()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    def _run(self) -> None:
        connection: sa.Connection | None = None
        try:
            while True:
                try:
                    first = self._queue.get(timeout=IDLE_SECONDS)
                except queue.Empty:
                    with self._lock:  # stop only if nothing arrived meanwhile
                        if self._queue.empty():
                            self._thread = None
                            return
                    continue
                group = [first, *self._drain()]
                connection = self._commit(group, connection)
        finally:
            if connection is not None:
                connection.close()

    def _drain(self) -> list[_Pending]:
        group: list[_Pending] = []
        with contextlib.suppress(queue.Empty):
            while sum(len(p.rows) for p in group) < GROUP:
                group.append(self._queue.get_nowait())
        return group

    def _commit(self, group: list[_Pending], connection: sa.Connection | None) -> sa.Connection | None:
        rows = [row for pending in group for row in pending.rows]
        try:
            connection = connection if connection is not None else self.store.engine.connect()
            with connection.begin():
                self.store.write(connection, rows, scope=self.run_id)  # a campaign is its own scope
            self.commits += 1
        except Exception as error:  # each waiting request raises it; the next group reconnects
            for pending in group:
                pending.error = error
            if connection is not None:
                with contextlib.suppress(Exception):
                    connection.close()
            connection = None
        for pending in group:
            pending.done.set()
        return connection
