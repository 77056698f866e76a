"""What a writer thread commits in one transaction: the response cache's and the verdict writer's.

A commit costs far more than a row (SQLite rewrites every page the transaction touched: the table's
and each index's), so a writer that is busy lingers a little after each commit and takes what has
arrived meanwhile, up to its batch size. A writer that was idle commits at once, and a flush (a
waiting :class:`threading.Event`) never waits for the linger.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, TypeVar

T = TypeVar("T")

LINGER_S = 0.05  # after a commit, gather this long before the next one


def gather(source: queue.Queue[Any], first: list[T] | threading.Event, *, batch: int,
           until: float) -> tuple[list[T], list[threading.Event], bool]:
    """``first``, then what else arrives on ``source`` before the monotonic time ``until`` (at
    least what is queued already), up to ``batch`` rows: (rows, flush waiters, whether a ``None``
    came in, which asks the writer to stop after this group)."""
    rows: list[T] = []
    waiters: list[threading.Event] = []
    entry: Any = first
    while True:
        if isinstance(entry, threading.Event):
            waiters.append(entry)
        elif entry is not None:
            rows.extend(entry)
        if len(rows) >= batch:
            return rows, waiters, False
        wait = 0.0 if waiters else until - time.monotonic()
        try:
            entry = source.get(timeout=wait) if wait > 0 else source.get_nowait()
        except queue.Empty:
            return rows, waiters, False
        if entry is None:
            return rows, waiters, True
