"""A run on a new SQLite store sends its first requests before the store is set up (issue 39).

Setting up the store costs about a quarter of a second of CPU (SQLAlchemy's import, the tables),
and a store that holds nothing cannot spare the run any call. So the first tasks of the input's
first chunk, as many as the run keeps in flight, are rendered and sent at once; the store is set
up while they are in flight; then the engine plans the run as it always does, and its workers take
these calls' outcomes instead of asking again (:meth:`HeadStart.take`). Only the order changes:
each answer is stored when the engine reaches its task, like any other, and the response cache
keeps it as soon as it arrives (a run stopped before the store is ready finds it there). A first
chunk the head start cannot read or render is left to the engine, which fails on it as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.items._stream import ItemStream
from convoscope.judges import Judge, Verdict
from convoscope.metrics import check_metric_inputs
from convoscope.runs._engine import judge_task
from convoscope.runs._plan import Task, plan_tasks

FIRST_ANSWER_WAIT_S = 0.5  # the store is set up once an answer is back, or after this long

Outcome = tuple[Verdict, list[Verdict]]


class HeadStart:
    """The calls sent before the store was ready, by task key."""

    def __init__(self, calls: dict[str, asyncio.Future[Outcome]], tasks: Sequence[Task]) -> None:
        self._calls = calls
        self.keys = frozenset(calls)  # the tasks asked early (never prefetched by the engine)
        self._tasks = {(task.item.id, task.criterion.name): task for task in tasks}

    def rendered(self, item: Item, criterion: Criterion) -> Task | None:
        """The task rendered for this item and criterion, when the engine meets them again (the
        same item: its request is not rendered twice)."""
        task = self._tasks.get((item.id, criterion.name))
        if task is None or task.item != item or task.criterion != criterion:
            return None
        del self._tasks[(item.id, criterion.name)]
        return task

    def take(self, key: str) -> asyncio.Future[Outcome] | None:
        """The call already made for this task (once), or None."""
        return self._calls.pop(key, None)

    async def sent(self) -> None:
        """Until the first call is answered (so its request has left; the store's set-up,
        started after, does not delay it), or FIRST_ANSWER_WAIT_S has passed (a slow endpoint)."""
        if self._calls:
            await asyncio.wait(list(self._calls.values()), timeout=FIRST_ANSWER_WAIT_S,
                               return_when=asyncio.FIRST_COMPLETED)

    async def cancel(self, grace_s: float = 0.0) -> None:
        """Cancel the calls no task took (a run stopped before its engine took them), after
        ``grace_s`` for them to be answered (their answers then wait in the response cache)."""
        calls, self._calls = list(self._calls.values()), {}
        try:
            if calls and grace_s > 0:
                await asyncio.wait(calls, timeout=grace_s)  # a second stop ends the wait
        finally:
            for call in calls:
                call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)


def head_start(stream: ItemStream, criteria: Sequence[Criterion], judge: Judge,
               calls: int) -> HeadStart | None:
    """Send the first ``calls`` tasks of the first chunk (None: nothing to send, or a first chunk
    that fails: the engine reports it, naming file and line, before any call as ever)."""
    chunks = stream.chunks()
    try:
        first = next(chunks, None)
        if first is None:
            return None
        items = first.items()[:max(1, calls)]
        source = None if stream.name.startswith("<") else stream.name
        check_metric_inputs(items, list(criteria), source=source, start=first.start)
        tasks = plan_tasks(items, criteria, judge).tasks[:max(1, calls)]
    except Exception:
        return None
    finally:
        close = getattr(chunks, "close", None)  # a generator: the engine reads the input again
        if close is not None:
            close()
    started: dict[str, asyncio.Future[Outcome]] = {}
    for task in tasks:
        if task.key not in started:
            started[task.key] = asyncio.ensure_future(judge_task(task))
    return HeadStart(started, tasks) if started else None
