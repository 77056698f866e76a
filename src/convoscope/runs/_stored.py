"""What a run's sink (``--out``) is given beside the verdicts judged now: the stored verdicts of
the chunks found finished (by an earlier run or another worker), and whether what the sink held
before the run is stale, so that it must be written again at the end.

The engine (:mod:`convoscope.runs._engine`) tells it which chunks it found finished and which it
judges; this side reads their verdicts back from the store, a few chunks at a time, after the
pass has queued the new chunks' tasks (a new input asks its first question before reading every
finished verdict back), and after an early stop passes on what other workers stored.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from convoscope._deferred import Deferred
from convoscope.judges import Verdict

if TYPE_CHECKING:
    from convoscope.runs._engine import EngineOptions
    from convoscope.store import Store, VerdictWriter, _chunks
    from convoscope.store._chunks import ChunkState
else:  # imported with the store (SQLAlchemy: issue 39)
    _chunks = Deferred("convoscope.store._chunks")

CATCH_UP_CHUNKS = 64  # chunks whose stored verdicts are read back at once


class StoredFeed:
    """The sink's side of a run: the chunks whose verdicts reached it from this process
    (``passed_on``), those waiting to be read back (``unpassed``), and ``stale``."""

    def __init__(self, store: Store, run_id: str, writer: VerdictWriter, options: EngineOptions) -> None:
        self.store, self.run_id, self.writer, self.options = store, run_id, writer, options
        self.passed_on: set[int] = set()  # chunks whose verdicts reach the sink from this process
        self.unpassed: list[int] = []  # finished chunks whose verdicts the sink gets after the pass
        self.known: dict[int, ChunkState] = {}  # the chunks as the store knew them at the start
        self._stale = False

    @property
    def stale(self) -> bool:
        """The sink holds verdicts this run replaced: it must be written again."""
        return self._stale

    @stale.setter
    def stale(self, value: bool) -> None:
        if value and not self._stale and self.options.on_stale is not None:
            self.options.on_stale()
        self._stale = self._stale or value

    def finished(self, index: int, state: ChunkState) -> None:
        """Chunk ``index`` was found finished: its verdicts go to the sink after the pass, unless
        the sink holds them already (an earlier run put them there) or there is no sink."""
        if self.in_sink(index, state) or self.options.sink is None:
            self.passed_on.add(index)
            return
        self.stale |= self.covered(index)
        self.unpassed.append(index)

    async def pass_on_finished(self) -> None:
        """The stored verdicts of the finished chunks found so far, to the sink."""
        while self.unpassed:
            size = 1 if self.options.order is not None else CATCH_UP_CHUNKS
            batch, self.unpassed = self.unpassed[:size], self.unpassed[size:]
            finals, members = await asyncio.to_thread(self.stored_verdicts, batch)
            if self.options.order is not None:
                self.options.order.update({(verdict.item_id, verdict.criterion): (batch[0], place)
                                           for place, verdict in enumerate(finals)})
            self.writer.emit(finals, members)
            self.passed_on.update(batch)

    def covered(self, index: int) -> bool:
        """Whether the sink held this chunk's verdicts (as they were) before this run."""
        held = self.options.held
        return held is not None and index < held.chunks

    def in_sink(self, index: int, state: ChunkState) -> bool:
        """A chunk finished before the sink last held the run, unchanged since: nothing to pass on."""
        held = self.options.held
        return self.covered(index) and held is not None and state.state == "done" \
            and (state.finished_at or math.inf) <= held.until

    def held_keys(self, index: int, wanted: set[str]) -> set[str]:
        """The keys of chunk ``index`` whose verdicts the sink holds from before this run: those the
        chunk had when it finished, if that was before the sink last held the run. Keys it had that
        it no longer asks for (an edited row) leave the sink stale."""
        if self.options.sink is None or not self.covered(index):
            return set()
        state = self.known.get(index)
        if state is None or state.state == "pending" \
                or not self.in_sink(index, replace(state, state="done")):
            self.stale = True
            return set()
        had = set(_chunks.chunk_task_keys(self.store.engine, self.run_id, index))
        self.stale |= not had <= wanted
        return had & wanted

    def stored_batches(self, indices: list[int]) -> Iterator[tuple[list[Verdict], list[Verdict]]]:
        """The stored verdicts of these chunks, in run order, a few chunks at a time."""
        for start in range(0, len(indices), CATCH_UP_CHUNKS):
            yield self.stored_verdicts(indices[start:start + CATCH_UP_CHUNKS])

    def stored_verdicts(self, indices: list[int], passed: set[str] | frozenset[str] = frozenset()
                        ) -> tuple[list[Verdict], list[Verdict]]:
        """The stored final and member verdicts of these chunks, but those keyed in ``passed``."""
        keys = [(key, member) for key, member in _chunks.chunk_keys(self.store.engine, self.run_id, indices)
                if key not in passed]
        found = self.store.verdicts_by_key([key for key, _ in keys])
        finals = [found[key] for key, member in keys if not member and key in found]
        members = [found[key] for key, member in keys if member and key in found]
        return finals, members

    def pass_on_the_rest(self, unfinished: Iterable[tuple[int, set[str]]]) -> None:
        """After an early stop: pass the sink the stored verdicts of the run's chunks this process
        did not pass on (chunks other workers held, or that the stop came before), a few chunks at
        a time, so that ``--out`` holds what the store holds for the run. ``unfinished``: the
        chunks this process left open, with the keys it passed on from each."""
        sink = self.options.sink
        if sink is None:
            return
        # A chunk this process left unfinished may have been taken up by another worker since
        # (its lease was given back): what was stored beyond what this process passed on, too.
        for index, passed in unfinished:
            finals, members = self.stored_verdicts([index], passed)
            if finals or members:
                sink(finals, members)
        # Not those the sink held before this run (a stop while finished chunks are being skipped).
        rest = sorted(index for index, state in _chunks.chunk_states(self.store.engine, self.run_id).items()
                      if index not in self.passed_on and not self.in_sink(index, state))
        for start in range(0, len(rest), CATCH_UP_CHUNKS):
            finals, members = self.stored_verdicts(rest[start:start + CATCH_UP_CHUNKS])
            if finals or members:
                sink(finals, members)
            self.passed_on.update(rest[start:start + CATCH_UP_CHUNKS])
