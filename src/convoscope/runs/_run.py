"""Judging runs: every (item, criterion) task judged until it has a verdict that is not a
transient failure, persisted as it goes, resumable, shareable by several workers.

A task's key is a hash of the request its judge renders (see :func:`convoscope.judges.judge_key`),
so a change to anything the judge would see is new work. A ``model_error`` never finishes a task:
the next run with the same inputs retries exactly those tasks (and, with ``retry_unscored``, the
parse failures and refusals too). Tasks are claimed with leases in the store, so several
processes can share one run without doing a task twice (see ``convoscope.store._tasks``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges import RETRYABLE_ON_REQUEST, TRANSIENT, Judge, Panel, Verdict, judge_key
from convoscope.metrics import MetricJudge, check_metric_inputs
from convoscope.models import task_context
from convoscope.runs._result import RunResult
from convoscope.runs._summary import RunSummary
from convoscope.store import Store, VerdictWriter

Progress = Callable[[int], None]
DEFAULT_LEASE_S = 120.0  # a dead worker's tasks are free again after this long


@dataclass(frozen=True)
class Task:
    """One (item, criterion) to judge, with its key and the requests rendered for it."""

    item: Item
    criterion: Criterion
    judge: Judge
    key: str
    requests: tuple[Any, ...] = ()  # per panel member (or the one judge); None: not rendered
    member_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The tasks of a run in judging order (criterion-major), and what did not apply."""

    tasks: tuple[Task, ...]
    not_applicable: int

    @property
    def keys(self) -> list[str]:
        return [task.key for task in self.tasks]


def applies(criterion: Criterion, item: Item) -> bool:
    """A response-level criterion needs a response; a dialogue-level one needs some turns.
    An item whose ``meta.kpis`` lists KPI names gets only those of the criteria that ask for
    relevance (the model-judged KPIs). Metric criteria (latency, answer length) apply to every
    response; they are computed from the log, never sent to a model."""
    if criterion.ask_relevance and not _marked_for(criterion, item):
        return False
    if criterion.granularity == "response" or not criterion.judged_by_model:
        return item.response is not None
    return bool(item.context) or item.response is not None


def _marked_for(criterion: Criterion, item: Item) -> bool:
    marked = item.meta.get("kpis")
    if marked is None:
        return True
    names = [part.strip() for part in marked.split(",")] if isinstance(marked, str) else marked
    return criterion.name in names or f"{criterion.suite}:{criterion.name}" in names


def plan_tasks(items: Sequence[Item], criteria: Sequence[Criterion], judge: Judge) -> Plan:
    """Render every task's request once and key it. Criterion-major order: consecutive prompts
    share the rubric prefix, which serving engines with prefix caching evaluate once."""
    metric_judge = MetricJudge()
    tasks: list[Task] = []
    skipped = 0
    for criterion in criteria:
        chosen: Judge = judge if criterion.judged_by_model else metric_judge
        for item in items:
            if applies(criterion, item):
                tasks.append(_task(chosen, item, criterion))
            else:
                skipped += 1
    return Plan(tuple(tasks), skipped)


def _task(judge: Judge, item: Item, criterion: Criterion) -> Task:
    if isinstance(judge, Panel):
        requests = tuple(_render(member, item, criterion) for member in judge.members)
        member_keys = tuple(_key(member, item, criterion, request)
                            for member, request in zip(judge.members, requests, strict=True))
        return Task(item, criterion, judge, judge.task_key(item, criterion, member_keys),
                    requests, member_keys)
    request = _render(judge, item, criterion)
    return Task(item, criterion, judge, _key(judge, item, criterion, request), (request,))


def _render(judge: Judge, item: Item, criterion: Criterion) -> Any:
    render = getattr(judge, "request", None)
    return render(item, criterion) if callable(render) else None


def _key(judge: Judge, item: Item, criterion: Criterion, request: Any) -> str:
    if request is not None:
        return str(judge.task_key(item, criterion, request))  # type: ignore[attr-defined]
    return judge_key(judge, item, criterion)


def run_id_for(keys: Sequence[str], judge: Judge) -> str:
    """The same tasks (by key) and judge give the same run id, so re-running resumes."""
    digest = hashlib.sha256(repr(sorted(judge.identity().items())).encode())
    for key in keys:
        digest.update(key.encode())
    return digest.hexdigest()[:16]


def worker_name() -> str:
    """Unique per process: host, pid and a random part (a pid can be reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def judge_items(items: Sequence[Item], criteria: Sequence[Criterion], judge: Judge, *,
                      store: Store, **options: Any) -> RunSummary:
    """:func:`run_judge` for its summary only."""
    return (await run_judge(items, criteria, judge, store=store, **options)).summary


async def run_judge(
    items: Sequence[Item],
    criteria: Sequence[Criterion],
    judge: Judge,
    *,
    store: Store,
    concurrency: int = 16,
    on_progress: Progress | None = None,
    spec: dict[str, Any] | None = None,
    retry_unscored: bool = False,
    lease_s: float = DEFAULT_LEASE_S,
) -> RunResult:
    """Judge every item on every applicable criterion with a built judge; every verdict goes to
    ``store`` as it is made, and the result is read back once at the end.

    Re-running with the same items, criteria and judge resumes the same run: finished tasks are
    skipped, transient failures (``model_error``) are retried, and with ``retry_unscored`` the
    parse failures and refusals too. Several processes may run this on one run at once."""
    from convoscope import __version__

    check_metric_inputs(list(items), list(criteria))  # bad timestamps fail before any model call
    started = time.perf_counter()
    plan = plan_tasks(items, criteria, judge)
    run_id = run_id_for(plan.keys, judge)
    retry = TRANSIENT | (RETRYABLE_ON_REQUEST if retry_unscored else frozenset())
    store.start_run(run_id, {"judge": judge.identity(), "criteria": [c.name for c in criteria],
                             "items": len(items), "convoscope_version": __version__, **(spec or {})})
    summary = RunSummary(run_id=run_id, store=store.location, worker=worker_name(),
                         total_tasks=len(plan.tasks), not_applicable=plan.not_applicable)
    todo = await asyncio.to_thread(_resume, store, run_id, plan, retry, summary)
    if on_progress and summary.resumed:
        on_progress(summary.resumed)
    stamp = {"run_id": run_id, "convoscope_version": __version__}
    engine = _Engine(store, run_id, summary, stamp, retry, lease_s, on_progress)
    try:
        await engine.run(todo, concurrency)
    finally:
        engine.close()
    summary.outstanding = await asyncio.to_thread(_outstanding, store, run_id, plan)
    summary.wall_time_s = time.perf_counter() - started
    store.finish_run(run_id, summary.as_dict())
    members = [key for task in plan.tasks for key in task.member_keys]
    return await asyncio.to_thread(RunResult.from_store, store, summary, plan.keys, members)


def _resume(store: Store, run_id: str, plan: Plan, retry: frozenset[str],
            summary: RunSummary) -> list[Task]:
    """The tasks still to do; registers the run's tasks for leasing."""
    states = store.task_states(run_id)
    done = {key for key in plan.keys if key in states and states[key] not in retry}
    todo = [task for task in plan.tasks if task.key not in done]
    summary.resumed = len(done)
    store.register_tasks(run_id, plan.keys, done)
    again = [task.key for task in todo if states.get(task.key, "") in RETRYABLE_ON_REQUEST]
    if again and retry & RETRYABLE_ON_REQUEST:
        store.reopen_tasks(run_id, again)
    return todo


def _outstanding(store: Store, run_id: str, plan: Plan) -> Any:
    from collections import Counter

    states = store.task_states(run_id)
    counts: Counter[str] = Counter()
    for key in plan.keys:
        if key not in states:
            counts["missing"] += 1
        elif states[key] is not None:
            counts[states[key]] += 1  # type: ignore[index]
    return counts


class _Engine:
    """Claims tasks in small groups, judges them with ``concurrency`` workers, hands verdicts
    to the store's writer thread, and renews its leases while it works."""

    def __init__(self, store: Store, run_id: str, summary: RunSummary, stamp: dict[str, Any],
                 retry: frozenset[str], lease_s: float, on_progress: Progress | None) -> None:
        self.store, self.run_id, self.summary, self.stamp = store, run_id, summary, stamp
        self.lease_s, self.on_progress = lease_s, on_progress
        self.writer = VerdictWriter(store, run_id, supersede=retry)
        self.previous: set[str] = set()

    async def run(self, todo: list[Task], concurrency: int) -> None:
        if not todo:
            return
        states = await asyncio.to_thread(self.store.task_states, self.run_id)
        self.previous = {task.key for task in todo if task.key in states}
        workers = max(1, concurrency)
        queue: asyncio.Queue[Task | None] = asyncio.Queue(maxsize=workers)
        heartbeat = asyncio.ensure_future(self._heartbeat())
        try:
            await asyncio.gather(self._feed(todo, queue, workers, batch=min(500, max(16, 2 * workers))),
                                 *(self._work(queue) for _ in range(workers)))
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _feed(self, todo: list[Task], queue: asyncio.Queue[Task | None], workers: int,
                    batch: int) -> None:
        pending: deque[Task] = deque(todo)
        deferred: list[Task] = []
        while pending or deferred:
            if not pending:  # the rest is held by other workers: wait for them, or for their
                await asyncio.sleep(min(2.0, self.lease_s / 4))  # leases to run out
                pending.extend(deferred)
                deferred.clear()
            chunk = [pending.popleft() for _ in range(min(batch, len(pending)))]
            claimed, finished = await asyncio.to_thread(
                self.store.claim, self.run_id, self.summary.worker, [t.key for t in chunk], self.lease_s)
            for task in chunk:
                if task.key in claimed:
                    await queue.put(task)
                elif task.key in finished:
                    self._progress_elsewhere()
                else:
                    deferred.append(task)
        for _ in range(workers):
            await queue.put(None)

    def _progress_elsewhere(self) -> None:
        self.summary.done_elsewhere += 1
        if self.on_progress:
            self.on_progress(1)

    async def _work(self, queue: asyncio.Queue[Task | None]) -> None:
        while (task := await queue.get()) is not None:
            with task_context(run_id=self.run_id, item_id=task.item.id, criterion=task.criterion.name,
                              task_key=task.key, judge=task.judge.rater):  # for tracing spans
                final, members = await _judge_one(task)
            final = final.model_copy(update=self.stamp)
            members = [member.model_copy(update=self.stamp) for member in members]
            rows = [*zip(task.member_keys, members, strict=True), (task.key, final)]
            self.writer.put(rows, task.key, finished=not final.transient)
            self.summary.count(final, members)
            self.summary.retried += task.key in self.previous
            if self.on_progress:
                self.on_progress(1)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            await asyncio.to_thread(self.store.renew, self.run_id, self.summary.worker, self.lease_s)

    def close(self) -> None:
        """Commit everything judged (also on Ctrl-C) and give back the leases still held."""
        try:
            self.writer.close()
        finally:
            self.store.release(self.run_id, self.summary.worker)


async def _judge_one(task: Task) -> tuple[Verdict, list[Verdict]]:
    judge = task.judge
    if isinstance(judge, Panel):
        return await judge.judge_all(task.item, task.criterion, requests=task.requests)
    request = task.requests[0] if task.requests else None
    if request is not None:
        return await judge(task.item, task.criterion, request=request), []  # type: ignore[call-arg]
    return await judge(task.item, task.criterion), []
