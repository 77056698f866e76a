"""One writer thread per run: verdicts leave the event loop and are committed in groups.

``put`` only queues a task's verdict rows; the thread commits whatever has queued up (up to
``batch`` tasks) in one transaction, together with the tasks' lease state, so the event loop never
waits for the disk and a burst of verdicts costs one commit. :meth:`flush` waits for everything
queued so far; :meth:`close` flushes and stops (a run calls it in ``finally``, so Ctrl-C loses
nothing that was judged). A failed commit is retried a few times (a busy SQLite file), then
raised from the next ``put``/``flush``, so a run never goes on judging into a store it cannot write.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from convoscope.judges import Verdict
from convoscope.store._store import Store
from convoscope.store._tasks import settle_tasks


@dataclass(frozen=True)
class _Entry:
    rows: list[tuple[str, Verdict]]
    task_key: str
    finished: bool


class VerdictWriter:
    """Writes one run's verdicts from a background thread, in grouped transactions."""

    def __init__(self, store: Store, run_id: str, *, supersede: Iterable[str] = (),
                 batch: int = 500) -> None:
        self.store, self.run_id = store, run_id
        self.supersede = tuple(sorted(supersede))
        self.commits = 0
        self._batch = batch
        self._queue: queue.Queue[_Entry | threading.Event | None] = queue.Queue()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"verdict-writer:{run_id}", daemon=True)
        self._thread.start()

    def put(self, rows: list[tuple[str, Verdict]], task_key: str, *, finished: bool) -> None:
        """Queue a task's verdicts (members first, the final one last)."""
        self._raise_if_failed()
        self._queue.put(_Entry(rows, task_key, finished))

    def flush(self) -> None:
        """Block until everything queued so far is committed."""
        if not self._closed and self._thread.is_alive():
            done = threading.Event()
            self._queue.put(done)
            done.wait()
        self._raise_if_failed()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join()
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            entries, waiters, stop = self._drain(first)
            if entries and self._error is None:
                try:
                    self._commit(entries)
                except Exception as error:  # surfaced on the event loop's next put/flush
                    self._error = error
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    def _drain(self, first: _Entry | threading.Event) -> tuple[list[_Entry], list[threading.Event], bool]:
        entries: list[_Entry] = []
        waiters: list[threading.Event] = []
        entry: _Entry | threading.Event | None = first
        while True:
            if isinstance(entry, threading.Event):
                waiters.append(entry)
            elif entry is not None:
                entries.append(entry)
            if len(entries) >= self._batch:
                return entries, waiters, False
            try:
                entry = self._queue.get_nowait()
            except queue.Empty:
                return entries, waiters, False
            if entry is None:  # close() came in: write this group, then stop
                return entries, waiters, True

    def _commit(self, entries: list[_Entry]) -> None:
        rows = [row for entry in entries for row in entry.rows]
        finished = [entry.task_key for entry in entries if entry.finished]
        failed = [entry.task_key for entry in entries if not entry.finished]
        for attempt in Retrying(retry=retry_if_exception_type(sa.exc.OperationalError),
                                stop=stop_after_attempt(5), wait=wait_exponential(0.2, max=5),
                                reraise=True):
            with attempt, self.store.engine.begin() as connection:
                self.store.write(connection, self.run_id, rows, supersede=self.supersede)
                settle_tasks(connection, self.run_id, finished, failed)
        self.commits += 1
