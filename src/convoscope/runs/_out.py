"""``--out`` across runs of the same command: appended to while it holds what the store holds.

A run that resumes or grows used to write ``--out`` again from its first line, reading every
verdict it had finished before back from the store (about 25 µs a verdict: 25 s before the first
new request of a run near its millionth verdict). Now a run that ends having passed every chunk
of its input to the file records the file (size, modification time, inode) and how far it holds
the run (its first ``chunks`` chunks, as finished by ``until``) in the run's summary. The next run
of the same command finds the file unchanged and appends to it: finished chunks are counted from
the store, not read; only what is new reaches the file. Whatever it cannot account for that way (a
chunk of the file judged again, an old row edited, a shorter input) makes the run write the file
again at its end, streamed from the store in run order, so ``--out`` still equals the store.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.judges import Verdict

if TYPE_CHECKING:
    from convoscope.store import Store

Batch = tuple[list[Verdict], list[Verdict]]


@dataclass(frozen=True)
class Held:
    """The file already holds the verdicts of the run's chunks ``0 .. chunks - 1`` as they were
    when ``until`` (a time.time()) passed."""

    chunks: float
    until: float


EVERYTHING = Held(math.inf, math.inf)  # no file: nothing already finished needs to be passed on


class VerdictFile:
    """A sink (``on_verdicts``) for a run's verdicts that a later run of the same command can
    append to. ``opener(append)`` opens the file (a RecordStream); ``path`` None: no file, and
    ``also`` alone sees the verdicts. ``every``: ``also`` needs every verdict of the run, those
    finished before included (gates): then the file is written whole, as before."""

    def __init__(self, path: Path | None, opener: Callable[[bool], Any],
                 also: Callable[[list[Verdict], list[Verdict]], None] | None = None, *,
                 every: bool = False) -> None:
        self.path, self.opener, self.also, self.every = path, opener, also, every
        self.stream: Any = None
        self.count = 0
        self._mark: tuple[Store, str, int, float] | None = None
        self._dropping = False  # the file is to be written again at the end: appending is wasted

    def __call__(self, finals: list[Verdict], members: list[Verdict]) -> None:
        if self.also is not None:
            self.also(finals, members)
        self._write([*members, *finals])

    def resume(self, store: Store, run_id: str) -> Held | None:
        """Open the file for ``run_id``: appended to (and what it holds returned) when the run's
        last complete pass left it as it is now; otherwise written from its start (None)."""
        if self.every:
            return None
        if self.path is None:
            return EVERYTHING
        from convoscope.store._outputs import output_mark

        mark = output_mark(store, run_id, str(self.path.resolve()))
        if mark is not None and _unchanged(self.path, mark) and self.path.suffix.lower() != ".parquet":
            self.stream = self.opener(True)
            self.count = int(mark.get("verdicts", 0))
            return Held(float(mark["chunks"]), float(mark["until"]))
        return None

    def stale(self) -> None:
        """The file will be written again at the run's end (:meth:`rewrite`): stop appending."""
        self._dropping = True

    def rewrite(self, batches: Iterable[Batch]) -> None:
        """Write the file again from its start with these verdicts (streamed from the store)."""
        if self.path is None:
            return
        if self.stream is not None:
            self.stream.close()
        self.stream, self.count, self._dropping = self.opener(False), 0, False
        for finals, members in batches:
            self._write([*members, *finals])

    def completed(self, store: Store, run_id: str, chunks: int, until: float) -> None:
        """The run ended with every chunk of its input passed on: record it when the file closes."""
        self._mark = (store, run_id, chunks, until)

    def close(self) -> None:
        if self.path is None:
            return
        if self.stream is None:
            self.stream = self.opener(False)
        self.stream.close()
        if self._mark is not None:
            from convoscope.store._outputs import record_output

            store, run_id, chunks, until = self._mark
            found = self.path.stat()
            record_output(store, run_id, str(self.path.resolve()), {
                "size": found.st_size, "mtime_ns": found.st_mtime_ns, "inode": found.st_ino,
                "chunks": chunks, "until": until, "verdicts": self.count})

    def _write(self, records: list[Verdict]) -> None:
        if self.path is None or self._dropping:
            return
        if self.stream is None:
            self.stream = self.opener(False)
        self.stream.write(records)
        self.count += len(records)


def _unchanged(path: Path, mark: dict[str, Any]) -> bool:
    try:
        found = os.stat(path)
    except OSError:
        return False
    return (found.st_size, found.st_mtime_ns, found.st_ino) == (
        mark.get("size"), mark.get("mtime_ns"), mark.get("inode"))
