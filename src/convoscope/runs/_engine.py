"""The local engine: streams a run's input chunk by chunk, judges with bounded concurrency.

For every chunk, in input order: a chunk the store knows as done (same content) is skipped
without being parsed or rendered; otherwise the worker claims it (a chunk another live worker
holds is left to that worker), parses and renders it, registers its task keys, and looks up which
tasks are already stored (by key, whichever run stored them). Stored verdicts that are final are
passed on as they are; the rest go to ``concurrency`` workers through a bounded queue, so reading
never runs more than a few chunks ahead of judging and memory stays flat however long the input.
A chunk is finished in the store (done, or failed when a verdict is a transient failure) in the
same transaction as its last verdict. At the end the engine waits for chunks other workers hold,
and takes over those whose worker died (its lease ran out). What the sink (``--out``) is given of
the chunks found finished, and whether it must be written again, is :mod:`convoscope.runs._stored`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convoscope._deferred import Deferred
from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.items._prefix import Prefix
from convoscope.items._stream import ItemStream, RawChunk
from convoscope.judges import Judge, Panel, Verdict
from convoscope.metrics import check_metric_inputs
from convoscope.models import task_context
from convoscope.models._otel import tracing
from convoscope.runs._out import Held
from convoscope.runs._plan import Plan, Task, plan_tasks
from convoscope.runs._stored import StoredFeed
from convoscope.runs._summary import RunSummary

if TYPE_CHECKING:
    from convoscope.runs._head import HeadStart
    from convoscope.store import Store, _chunks
    from convoscope.store._chunks import ChunkState
else:  # the store's chunk bookkeeping, imported with the store (SQLAlchemy: issue 39)
    _chunks = Deferred("convoscope.store._chunks")

Progress = Callable[[int], None]
STOP_GRACE_S = 10.0  # on SIGTERM or Ctrl-C, how long the calls in flight may take to be answered
Sink = Callable[[list[Verdict], list[Verdict]], None]


@dataclass
class _Open:
    """A chunk this worker is judging: tasks not yet handed to the writer, and its outcome."""

    index: int
    remaining: int
    outcome: Counter[str] = field(default_factory=Counter)
    passed: set[str] = field(default_factory=set)  # task keys whose verdicts went to the sink


@dataclass
class EngineOptions:
    concurrency: int = 16
    lease_s: float = 120.0
    retry: frozenset[str] = frozenset()
    again: bool = False  # claim finished chunks again (to retry unscored verdicts on request)
    on_progress: Progress | None = None
    sink: Sink | None = None
    order: dict[tuple[str, str], tuple[int, int]] | None = None  # filled: (item, criterion) -> place
    stop_grace_s: float = STOP_GRACE_S
    held: Held | None = None  # what the sink already holds from earlier runs (not passed on again)
    on_stale: Callable[[], None] | None = None  # the sink will be written again at the end
    # Done prefixes to try (see items._prefix): this run's own, recorded by its last run, or
    # other runs' of the same judge and criteria (a renamed input), as (run id, prefix).
    prefixes: list[tuple[str, Prefix]] = field(default_factory=list)
    head: HeadStart | None = None  # calls sent before the store was set up (see runs._head)


def _all_done(known: dict[int, ChunkState], chunks: int) -> bool:
    return all(index in known and known[index].state == "done" for index in range(chunks))


def held_waits(lease_s: float) -> Iterator[float]:
    """The pauses between looks at the chunks other workers still hold at the end of a run: from
    50 ms (the other process usually finishes its last chunk moments after this one; a fixed 2 s
    cost every ``--workers 2`` run up to 2 s), doubling up to min(2 s, lease / 4)."""
    cap = min(2.0, lease_s / 4)
    wait = min(0.05, cap)
    while True:
        yield wait
        wait = min(cap, 2 * wait)


class Engine:
    def __init__(self, store: Store, run_id: str, judge: Judge, criteria: Sequence[Criterion],
                 summary: RunSummary, stamp: dict[str, Any], options: EngineOptions) -> None:
        self.store, self.run_id, self.judge, self.criteria = store, run_id, judge, list(criteria)
        self.summary, self.stamp, self.options = summary, stamp, options
        from convoscope.store import VerdictWriter

        self.writer = VerdictWriter(store, run_id, supersede=options.retry, on_commit=options.sink)
        self.open: dict[int, _Open] = {}
        self.seen: dict[int, int] = {}  # chunk index -> its number of items
        self.taking: tuple[str, int] | None = None  # another run's done prefix to record as this run's
        self.started = time.time()
        self.stream_name = "<items>"
        self.sink_side = StoredFeed(store, run_id, self.writer, options)  # stored verdicts, --out

    # -- the run ----------------------------------------------------------------------------

    async def run(self, stream: ItemStream) -> None:
        self.stream_name = stream.name
        workers = max(1, self.options.concurrency)
        queue: asyncio.Queue[Task | None] = asyncio.Queue(maxsize=2 * workers)
        heartbeat = asyncio.ensure_future(self._heartbeat())
        feeder = asyncio.ensure_future(self._feed(stream, queue, workers))
        judging = [asyncio.ensure_future(self._work(queue)) for _ in range(workers)]
        try:
            # asyncio.wait, unlike gather, leaves the tasks running when this run is cancelled
            # (SIGTERM, Ctrl-C): the calls in flight are then given time to be answered and stored.
            await asyncio.wait([feeder, *judging], return_when=asyncio.FIRST_EXCEPTION)
            for task in (feeder, *judging):
                if task.done() and not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        except asyncio.CancelledError:  # a stop (SIGTERM, Ctrl-C): keep what is being answered
            await self._wind_down(feeder, judging, self.options.stop_grace_s)
            raise
        except BaseException:  # bad input, a failed write: stop at once
            await self._wind_down(feeder, judging, 0.0)
            raise
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _wind_down(self, feeder: asyncio.Future[None], judging: Sequence[asyncio.Future[None]],
                         grace_s: float) -> None:
        """Stopping early: nothing new is started (the feeder drops the queued tasks, never judged:
        a re-run does them), and the calls in flight have ``grace_s`` to be answered and handed to
        the writer, so an answer already paid for is kept. Then the rest is cancelled (also at
        once on a second Ctrl-C or SIGTERM)."""
        feeder.cancel()
        try:
            running = [task for task in judging if not task.done()]
            if running and grace_s > 0:
                await asyncio.wait(running, timeout=grace_s)
        finally:
            for task in judging:
                task.cancel()
            await asyncio.gather(feeder, *judging, return_exceptions=True)

    async def _feed(self, stream: ItemStream, queue: asyncio.Queue[Task | None], workers: int) -> None:
        try:
            known = await asyncio.to_thread(_chunks.chunk_states, self.store.engine, self.run_id)
            self.sink_side.known = known
            await self._skip_prefix(stream, known)
            held = await self._pass(stream.chunks(), known, queue, None)
            await self._take_chunks()
            await self.sink_side.pass_on_finished()
            waits = held_waits(self.options.lease_s)
            while held:
                await asyncio.sleep(next(waits))
                held = await self._settle_held(stream, held, queue)
                await self.sink_side.pass_on_finished()
        except BaseException:
            # Stopping early (an error, Ctrl-C): the queued tasks are dropped, never judged (a
            # re-run does them), and every worker is told to stop without waiting for room.
            while not queue.empty():
                queue.get_nowait()
            for _ in range(workers):
                queue.put_nowait(None)
            raise
        for _ in range(workers):
            await queue.put(None)

    async def _skip_prefix(self, stream: ItemStream, known: dict[int, ChunkState]) -> None:
        """Count the chunks of a done prefix without reading them, when the input still starts
        with its bytes and the store still has each of them done: the run's own prefix, or
        another run's (same judge and criteria, another file), whose chunks become this run's."""
        if self.options.again:
            return
        for owner, prefix in self.options.prefixes:
            if owner == self.run_id and not _all_done(known, prefix.chunks):
                return
            theirs = None
            if owner != self.run_id:
                theirs = await asyncio.to_thread(_chunks.takeable, self.store.engine, self.run_id, owner,
                                                 prefix.chunks)
                if theirs is None:
                    continue
            if not await asyncio.to_thread(stream.skip, prefix):
                continue
            if theirs is not None:  # recorded as this run's after the pass (see _take_chunks)
                known.update((state.chunk, state) for state in theirs)
                self.taking = (owner, prefix.chunks)
            for index in range(prefix.chunks):
                self.seen[index] = prefix.chunk_size
                await self._found_finished(index, known[index])
            return

    async def _take_chunks(self) -> None:
        """Another run's done prefix, skipped: its chunks and their tasks become this run's, in
        one transaction, once the new chunks' tasks are queued (a million tasks take seconds to
        copy). Should they be gone meanwhile (that run judged again), they stay unrecorded here:
        counted as missing, so the exit says work is outstanding, and the next run reads them."""
        if self.taking is not None:
            owner, chunks = self.taking
            self.taking = None
            await asyncio.to_thread(_chunks.take_chunks, self.store.engine, self.run_id, owner, chunks)

    async def _pass(self, chunks: Iterator[RawChunk], known: dict[int, ChunkState],
                    queue: asyncio.Queue[Task | None], only: set[int] | None) -> set[int]:
        """One pass over the input; returns the chunks other live workers hold."""
        held: set[int] = set()
        while (raw := await asyncio.to_thread(next, chunks, None)) is not None:
            if only is not None and raw.index not in only:
                continue
            self.seen[raw.index] = raw.size
            state = known.get(raw.index)
            if state is not None and state.state == "done" and state.fingerprint == raw.fingerprint \
                    and not self.options.again:
                # Not parsed or rendered, but its ids still count: a later chunk may repeat one.
                await asyncio.to_thread(raw.check_ids)
                await self._found_finished(raw.index, state)
                continue
            claim = await asyncio.to_thread(_chunks.claim_chunk, self.store.engine, self.run_id, raw.index,
                                            raw.fingerprint, self.summary.worker, self.options.lease_s,
                                            again=self.options.again)
            if claim in ("held", "done"):
                await asyncio.to_thread(raw.check_ids)
            if claim == "held":
                held.add(raw.index)
            elif claim == "done":
                latest = await asyncio.to_thread(_chunks.chunk_states, self.store.engine, self.run_id)
                await self._found_finished(raw.index, latest[raw.index])
            else:
                await self._judge_chunk(raw, queue)
        return held

    async def _settle_held(self, stream: ItemStream, held: set[int],
                           queue: asyncio.Queue[Task | None]) -> set[int]:
        """Chunks held by others: count those they finished; take over those whose lease ran out."""
        states = await asyncio.to_thread(_chunks.chunk_states, self.store.engine, self.run_id)
        now = time.time()
        waiting: set[int] = set()
        expired: set[int] = set()
        for index in held:
            state = states[index]
            if state.state == "done" or (state.finished_at or 0) >= self.started:
                await self._found_finished(index, state, counted=True)
            elif state.owner is None or (state.lease_until or 0) < now or _chunks.owner_gone(state.owner):
                expired.add(index)
            else:
                waiting.add(index)
        if expired:
            waiting |= await self._pass(stream.chunks(), {}, queue, expired)
        return waiting

    async def _found_finished(self, index: int, state: ChunkState, *, counted: bool = False) -> None:
        """A chunk finished before (or by another worker): count it, pass its verdicts on."""
        tasks = sum(count for reason, count in state.outcome.items() if reason != "skipped")
        self.summary.total_tasks += tasks
        if counted:
            self.summary.done_elsewhere += tasks
        else:
            self.summary.resumed += tasks
        self.summary.not_applicable += state.outcome.get("skipped", 0)
        self._progress(tasks)
        self.sink_side.finished(index, state)

    async def _judge_chunk(self, raw: RawChunk, queue: asyncio.Queue[Task | None]) -> None:
        plan, states, stored, before = await asyncio.to_thread(self._prepare, raw)
        todo: list[Task] = []
        chunk = _Open(raw.index, 0, Counter({"skipped": plan.not_applicable} if plan.not_applicable else {}))
        self.summary.not_applicable += plan.not_applicable
        finals: list[Verdict] = []
        members: list[Verdict] = []
        for task in plan.tasks:
            state = states.get(task.key, "missing")
            if state != "missing" and (state is None or state not in self.options.retry):
                chunk.outcome[state or "scored"] += 1
                self.summary.resumed += 1
                if task.key in stored and task.key not in before:  # else in the sink already
                    finals.append(stored[task.key])
                    members.extend(stored[key] for key in task.member_keys if key in stored)
                chunk.passed.update((task.key, *task.member_keys))
            else:
                todo.append(task)
                self.summary.retried += state != "missing"
                self.sink_side.stale |= task.key in before  # the sink holds the verdict it replaces
        self.writer.emit(finals, members)
        self.sink_side.passed_on.add(raw.index)  # what is stored now, and what this process judges later
        self._progress(len(plan.tasks) - len(todo))
        self.summary.total_tasks += len(plan.tasks)
        chunk.remaining = len(todo)
        if not todo:
            self.writer.finish(raw.index, chunk.outcome)
            return
        self.open[raw.index] = chunk
        for task in todo:
            await queue.put(task)

    def _prepare(self, raw: RawChunk) -> tuple[Plan, dict[str, str | None], dict[str, Verdict], set[str]]:
        """Parse, check, render and key a chunk; register its keys; read what is stored. The last:
        the keys of the chunk the sink held before this run (those it still asks for)."""
        items: list[Item] = raw.items()
        # Bad timestamps fail before any model call on the chunk, naming the file's line.
        source = None if self.stream_name.startswith("<") else self.stream_name
        check_metric_inputs(items, self.criteria, source=source, start=raw.start)
        head = self.options.head
        plan = plan_tasks(items, self.criteria, self.judge, chunk=raw.index,
                          rendered=head.rendered if head is not None else None)
        if self.options.order is not None:
            self.options.order.update({(task.item.id, task.criterion.name): (task.chunk, task.position)
                                       for task in plan.tasks})
        _prefetch(plan, head.keys if head is not None else frozenset())
        keys = [(key, task.position, True) for task in plan.tasks for key in task.member_keys]
        keys += [(task.key, task.position, False) for task in plan.tasks]
        before = self.sink_side.held_keys(raw.index, {key for key, _, _ in keys})
        with self.store.engine.begin() as connection:
            _chunks.register_tasks(connection, self.run_id, raw.index, keys)
        if self.options.sink is None:
            return plan, self.store.task_states(plan.keys), {}, before
        stored = self.store.verdicts_by_key([key for key, _, _ in keys])
        finals = set(plan.keys)
        states: dict[str, str | None] = {key: verdict.unscored_reason for key, verdict in stored.items()
                                         if key in finals}
        return plan, states, stored, before

    async def _work(self, queue: asyncio.Queue[Task | None]) -> None:
        while (task := await queue.get()) is not None:
            early = self.options.head.take(task.key) if self.options.head is not None else None
            if early is not None:  # sent before the store was ready: its outcome, not a new call
                final, members = await early
            elif tracing():  # the attributes of the call's span
                with task_context(run_id=self.run_id, item_id=task.item.id, criterion=task.criterion.name,
                                  task_key=task.key, judge=task.judge.rater):
                    final, members = await judge_task(task)
            else:
                final, members = await judge_task(task)
            final = final.model_copy(update=self.stamp)
            members = [member.model_copy(update=self.stamp) for member in members]
            self.writer.put([*zip(task.member_keys, members, strict=True), (task.key, final)],
                            members=len(members))
            self.summary.count(final, members)
            chunk = self.open[task.chunk]
            if self.options.sink is not None:
                chunk.passed.update((task.key, *task.member_keys))
            chunk.outcome[final.unscored_reason or "scored"] += 1
            chunk.remaining -= 1
            if chunk.remaining == 0:
                self.writer.finish(chunk.index, chunk.outcome)
                del self.open[chunk.index]
            self._progress(1)

    def _progress(self, count: int) -> None:
        if self.options.on_progress and count:
            self.options.on_progress(count)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.options.lease_s / 3)
            await asyncio.to_thread(_chunks.renew_leases, self.store.engine, self.run_id,
                                    self.summary.worker, self.options.lease_s)

    # -- the end ----------------------------------------------------------------------------

    def outstanding(self) -> Counter[str]:
        """The run's unscored verdicts by reason over the chunks of this input, read from the
        store (``missing``: tasks with no verdict yet, in chunks that are not finished)."""
        states = _chunks.chunk_states(self.store.engine, self.run_id)
        counts: Counter[str] = Counter()
        for index, size in self.seen.items():
            state = states.get(index)
            if state is None or state.state == "pending":
                mine = self.open.get(index)
                counts["missing"] += mine.remaining if mine is not None else size * len(self.criteria)
                continue
            counts.update({reason: n for reason, n in state.outcome.items()
                           if reason not in ("scored", "skipped")})
        return counts

    def close(self) -> None:
        """Commit everything judged (also on Ctrl-C) and give back the leases still held."""
        try:
            self.writer.close()
        finally:
            _chunks.release_leases(self.store.engine, self.run_id, self.summary.worker)


def _prefetch(plan: Plan, asked: frozenset[str]) -> None:
    """Let cached models key and look up a chunk's requests at once, off the event loop. Not the
    requests ``asked`` already (runs._head): their lookups, kept by the request's id until it is
    sent, would never be taken, and a later request given the same id would find them."""
    wanted: dict[int, tuple[Any, list[Any]]] = {}
    for task in plan.tasks:
        if task.key in asked:
            continue
        judges = task.judge.members if isinstance(task.judge, Panel) else (task.judge,)
        for judge, request in zip(judges, task.requests, strict=False):
            model = getattr(judge, "model", None)
            if request is not None and callable(getattr(model, "prefetch", None)):
                # A pairwise judge renders both orders of a pair: a tuple of requests.
                parts = request if isinstance(request, tuple | list) else (request,)
                wanted.setdefault(id(model), (model, []))[1].extend(parts)
    for model, requests in wanted.values():
        model.prefetch(requests)


async def judge_task(task: Task) -> tuple[Verdict, list[Verdict]]:
    """The final verdict of one task, and its panel members' verdicts."""
    judge = task.judge
    if isinstance(judge, Panel):
        return await judge.judge_all(task.item, task.criterion, requests=task.requests)
    request = task.requests[0] if task.requests else None
    if request is not None:
        return await judge(task.item, task.criterion, request=request), []  # type: ignore[call-arg]
    return await judge(task.item, task.criterion), []
