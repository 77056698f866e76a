"""Judging runs: every (item, criterion) task judged until it has a verdict that is not a
transient failure, persisted as it goes, resumable, shareable by several workers, streaming.

A task is identified by what it asks (its key), so a verdict is stored once whichever run asks for
it: judging a file that gained items judges only the new ones. A ``model_error`` never finishes a
task: the next run retries exactly those tasks (and, with ``retry_unscored``, the parse failures
and refusals too). The input is read lazily in chunks that workers claim (see
:mod:`convoscope.runs._engine` and :mod:`convoscope.store._chunks`), so a run of any size starts
judging at once and holds only a few chunks in memory.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from convoscope._deferred import Deferred
from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.items._prefix import Prefix
from convoscope.items._stream import DEFAULT_CHUNK, ItemStream
from convoscope.judges import RETRYABLE_ON_REQUEST, TRANSIENT, Judge, Panel, Verdict
from convoscope.runs._engine import Engine, EngineOptions, Progress, Sink, judge_task
from convoscope.runs._out import VerdictFile
from convoscope.runs._plan import Task, applies, plan_tasks, run_id_for
from convoscope.runs._repeats import ConsistencyTally
from convoscope.runs._result import RunResult
from convoscope.runs._summary import RunSummary
from convoscope.store._owner import worker_name

if TYPE_CHECKING:
    from convoscope.runs._head import HeadStart
    from convoscope.store import Store, _chunks
else:  # imported with the store (SQLAlchemy: issue 39)
    _chunks = Deferred("convoscope.store._chunks")

DEFAULT_LEASE_S = 120.0  # a dead worker's chunks are free again after this long

__all__ = ["DEFAULT_LEASE_S", "Task", "applies", "judge_items", "judge_task", "plan_tasks",
           "run_id_for", "run_judge", "worker_name"]


async def judge_items(items: Iterable[Item] | ItemStream, criteria: Sequence[Criterion], judge: Judge, *,
                      store: Store, **options: Any) -> RunSummary:
    """:func:`run_judge` for its summary only."""
    return (await run_judge(items, criteria, judge, store=store, collect=False, **options)).summary


async def run_judge(
    items: Iterable[Item] | ItemStream,
    criteria: Sequence[Criterion],
    judge: Judge,
    *,
    store: Store,
    concurrency: int = 16,
    on_progress: Progress | None = None,
    spec: dict[str, Any] | None = None,
    retry_unscored: bool = False,
    lease_s: float = DEFAULT_LEASE_S,
    on_verdicts: Sink | None = None,
    collect: bool = True,
    on_stop: Callable[[], None] | None = None,
    head: HeadStart | None = None,
) -> RunResult:
    """Judge every item on every applicable criterion with a built judge; every verdict goes to
    ``store`` as it is made.

    ``items``: a list or any iterable of items, or an :class:`ItemStream` over a file or table
    (read lazily). Re-running with the same items, criteria and judge resumes: tasks already
    stored are not judged again, transient failures (``model_error``) are, and with
    ``retry_unscored`` the parse failures and refusals too. Several processes may run this on
    one run at once. ``on_verdicts(finals, members)`` receives the verdicts in the order they are
    committed (those found stored included), from the store's writer thread; ``collect=False``
    keeps them out of the returned result (whose summary still counts everything).

    Stopped early (cancelled: SIGTERM, Ctrl-C; or an error), the calls in flight get a bounded
    time to be answered and stored; then ``on_stop()`` (other workers sharing the run are
    stopped there, and commit what they judged), and ``on_verdicts`` gets the stored verdicts of
    the run's chunks it has not seen, so what it was given equals what the store holds.
    ``head``: calls sent before the store was set up (:mod:`convoscope.runs._head`)."""
    from convoscope import __version__

    started = time.perf_counter()
    stream = items if isinstance(items, ItemStream) else ItemStream(_listed(items), chunk_size=DEFAULT_CHUNK)
    run_id = run_id_for(judge, criteria, _source(stream))
    config = run_id_for(judge, criteria, "")  # the same for every input: see _done_prefixes
    retry = TRANSIENT | (RETRYABLE_ON_REQUEST if retry_unscored else frozenset())
    store.start_run(run_id, {"judge": judge.identity(), "criteria": [c.name for c in criteria],
                             "source": stream.name, "config": config, "convoscope_version": __version__,
                             **(spec or {})})
    summary = RunSummary(run_id=run_id, store=store.location, worker=worker_name())
    finals: list[Verdict] = []
    members: list[Verdict] = []
    repeated = _has_repeats(judge)
    consistency = ConsistencyTally()

    def sink(committed: list[Verdict], committed_members: list[Verdict]) -> None:
        if collect:
            finals.extend(committed)
            members.extend(committed_members)
        if repeated:
            consistency.add(committed_members)
        if on_verdicts is not None:
            on_verdicts(committed, committed_members)

    # A file sink that holds the run's finished chunks already is appended to (see runs._out).
    kept = on_verdicts if isinstance(on_verdicts, VerdictFile) else None
    held = None
    if kept is not None and not (collect or repeated or retry_unscored):
        held = await asyncio.to_thread(kept.resume, store, run_id)
    options = EngineOptions(concurrency=concurrency, lease_s=lease_s, retry=retry,
                            again=retry_unscored, on_progress=on_progress,
                            sink=sink if collect or repeated or on_verdicts is not None else None,
                            order={} if collect else None, held=held,
                            on_stale=kept.stale if held is not None else None,  # type: ignore[union-attr]
                            prefixes=await asyncio.to_thread(_done_prefixes, store, run_id, config),
                            head=head)
    stamp = {"run_id": run_id, "convoscope_version": __version__}
    engine = Engine(store, run_id, judge, criteria, summary, stamp, options)
    try:
        await engine.run(stream)
    except BaseException:
        engine.close()
        await asyncio.to_thread(_after_an_early_stop, engine, on_stop)
        if kept is not None and engine.sink_side.stale:
            everything = sorted(set(_chunks.chunk_states(store.engine, run_id)) | set(engine.seen))
            await asyncio.to_thread(kept.rewrite, engine.sink_side.stored_batches(everything))
        raise
    engine.close()
    await asyncio.to_thread(_record_prefix, stream, store, run_id)
    if kept is not None:
        await asyncio.to_thread(_settle_the_file, kept, engine, held)
    summary.outstanding = engine.outstanding()
    summary.self_consistency = [result.as_dict() for result in consistency.results()]
    summary.wall_time_s = time.perf_counter() - started
    store.finish_run(run_id, summary.as_dict())
    if options.order:  # input order (criterion-major within a chunk), as the tasks were planned
        last = (len(options.order), 0)
        finals.sort(key=lambda v: options.order.get((v.item_id, v.criterion), last))  # type: ignore[union-attr]
        members.sort(key=lambda v: options.order.get((v.item_id, v.criterion), last))  # type: ignore[union-attr]
    return RunResult(run_id, tuple(finals), summary, tuple(members), store.location)


def _done_prefixes(store: Store, run_id: str, config: str) -> list[tuple[str, Prefix]]:
    """The done prefix the run may skip: its own (recorded by its last run) or, for a new run
    (a renamed or copied input), those of other runs of the same judge and criteria, which the
    input may start with (see Engine._skip_prefix)."""
    own = _chunks.load_prefix(store.engine, run_id)
    return [(run_id, own)] if own is not None else _chunks.related_prefixes(store.engine, run_id, config)


def _record_prefix(stream: ItemStream, store: Store, run_id: str) -> None:
    """After a run that ended well: its first chunks that are done, as read by this run, become
    the run's done prefix, which the next run skips unread (see items._prefix)."""
    states = _chunks.chunk_states(store.engine, run_id)

    def finished(index: int, fingerprint: str) -> bool:
        state = states.get(index)
        return state is not None and state.state == "done" and state.fingerprint == fingerprint

    prefix = stream.done_prefix(finished)
    if prefix is not None:
        _chunks.save_prefix(store.engine, run_id, prefix, only_longer=stream.skipped is not None)


def _settle_the_file(kept: VerdictFile, engine: Engine, held: Any) -> None:
    """At the end of a run: a file that holds verdicts this run replaced, or chunks beyond a
    shorter input, is written again from the store; then it is noted as holding the whole run."""
    seen = sorted(engine.seen)
    if held is not None and (engine.sink_side.stale or len(seen) < held.chunks):
        kept.rewrite(engine.sink_side.stored_batches(seen))
    kept.completed(engine.store, engine.run_id, len(seen), time.time())


def _after_an_early_stop(engine: Engine, on_stop: Callable[[], None] | None) -> None:
    try:
        if on_stop is not None:
            on_stop()
    finally:
        engine.sink_side.pass_on_the_rest((chunk.index, chunk.passed) for chunk in engine.open.values())


def _has_repeats(judge: Judge) -> bool:
    members = judge.members if isinstance(judge, Panel) else (judge,)
    return any(getattr(member, "repeat", None) is not None for member in members)


def _listed(items: Iterable[Item]) -> Iterable[Item]:
    return items if isinstance(items, list | tuple) else list(items)


def _source(stream: ItemStream) -> str:
    """What names the input in the run's id: a file's path; the content of items in memory."""
    if not stream.name.startswith("<"):
        return stream.name
    digest = hashlib.sha256()
    for chunk in stream.chunks():
        digest.update(chunk.fingerprint.encode())
    return f"{stream.name}:{digest.hexdigest()[:16]}"
