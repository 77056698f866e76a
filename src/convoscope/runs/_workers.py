"""One run on the cores of one machine: this process and ``workers - 1`` more share it.

Every process runs the local engine on the same input; they divide it through the store's chunk
leases (:mod:`convoscope.store._chunks`): each claims the next chunk nobody holds, so no task is
judged twice, and a process that dies leaves its chunks to the others once its lease runs out
(``lease_s``). The calls a dead process had in flight are asked again by the one that takes its
chunk over (at most ``concurrency`` calls); verdicts are stored once per task key whatever
happens. The extra processes are started fresh (``spawn``: a copy of a process that has loaded a
model or opened connections is not safe), judge with the same settings, and send their summary
back. This process does not wait for them to start (a spawned process spends most of a second
importing before it can judge): it judges from its own start, and each of the others claims the
chunks nobody holds yet once it has loaded. It streams every verdict (its own and those the others
commit) to the caller, waits for all of them and returns one result whose summary counts what all
of them did.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import multiprocessing
import pickle
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.runs._engine import STOP_GRACE_S
from convoscope.runs._here import judge_here, run_sync
from convoscope.runs._options import RunOptions
from convoscope.runs._result import RunResult
from convoscope.runs._stop import Terminated, until_terminated
from convoscope.runs._summary import RunSummary
from convoscope.store import DEFAULT_STORE, Store, store_url

_STOP_S = STOP_GRACE_S + 20.0  # how long a stopped worker may take: its calls in flight, then commits
_ADDED = ("verdicts", "scored", "retried", "deferred")  # and the usage, merged as UsageTotals merge


async def judge_on_workers(items: Any, criteria: Sequence[Criterion], judge: Any,
                           store: Store | str | Path | None, options: RunOptions,
                           extra: dict[str, Any] | None, **hooks: Any) -> RunResult:
    """The run in this process and ``options.workers - 1`` others (see the module docstring).
    ``hooks`` (``on_progress``, ``on_verdicts``, ``collect``) see the verdicts of every process,
    as this one finds them committed. A worker's failure is raised here once this process has
    finished (the verdicts made before it stay in the store)."""
    alone = dataclasses.replace(options, workers=None)
    location = store.url if isinstance(store, Store) else store_url(store or DEFAULT_STORE)
    arguments = (items, list(criteria), judge, location, alone, extra)
    try:
        pickle.dumps(arguments)
    except Exception as error:
        raise ConfigError(f"several workers need items they can all read (a file, a list, a table): "
                          f"{type(error).__name__}: {error}") from None
    context = multiprocessing.get_context("spawn")
    started: list[tuple[Any, Connection]] = []
    try:
        for _ in range((options.workers or 1) - 1):
            receiving, sending = context.Pipe(duplex=False)
            process = context.Process(target=_worker, args=(sending, *arguments), daemon=False)
            process.start()
            sending.close()
            started.append((process, receiving))
        # Stopped early, this process stops the others before it passes on what they stored.
        result = await judge_here(items, criteria, judge, store, alone, extra, early=False,
                                  on_stop=functools.partial(_stop, started), **hooks)
        outcomes = [await asyncio.to_thread(_outcome, process, receiving) for process, receiving in started]
    except BaseException:
        await asyncio.to_thread(_stop, started)
        raise
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    others = [outcome for outcome in outcomes if isinstance(outcome, RunSummary)]
    summary = merged_summary(result.summary, others)
    _record(store, summary)
    return dataclasses.replace(result, summary=summary)


def _worker(sending: Connection, items: Any, criteria: list[Criterion], judge: Any, store: str,
            options: RunOptions, extra: dict[str, Any] | None) -> None:
    """A worker process: the local engine with the run's settings; its summary goes back.
    SIGTERM stops it as it stops the command: the calls in flight are given time to be answered
    and stored, then everything judged is committed."""
    try:
        result = run_sync(until_terminated(judge_here(items, criteria, judge, store, options, extra,
                                                      early=False, collect=False)))
        sending.send(result.summary)
    except (KeyboardInterrupt, Terminated):
        sending.send(None)
    except Exception as error:
        sending.send(_sendable(error))
    finally:
        sending.close()


def _sendable(error: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"a worker failed: {type(error).__name__}: {error}")


def _outcome(process: Any, receiving: Connection) -> RunSummary | BaseException | None:
    try:
        outcome = receiving.recv()
    except EOFError:  # died without a word (killed): its chunks were taken over
        outcome = None
    process.join()
    return outcome


def _stop(started: list[tuple[Any, Connection]]) -> None:
    """SIGTERM every worker still running and wait for each to commit what it judged (it may be
    called twice: once before this process passes on what they stored, once on the way out)."""
    for process, _ in started:
        if process.is_alive():
            process.terminate()
    for process, receiving in started:
        process.join(_STOP_S)
        if process.is_alive():
            process.kill()
            process.join()
        receiving.close()


def merged_summary(own: RunSummary, others: Sequence[RunSummary]) -> RunSummary:
    """One summary for the run: what every process judged, called and spent, added up; the
    tasks and what is outstanding as this process saw them at the end (it waits for every
    chunk). Tasks no process judged now were finished before (``resumed``)."""
    merged = dataclasses.replace(own, unscored=own.unscored.copy(), outstanding=own.outstanding.copy(),
                                 members={rater: tally.copy() for rater, tally in own.members.items()},
                                 notes=list(own.notes), usage=own.usage.model_copy())
    for other in others:
        merged.usage.merge(other.usage)
        for name in _ADDED:
            setattr(merged, name, getattr(merged, name) + getattr(other, name))
        merged.unscored.update(other.unscored)
        for rater, tally in other.members.items():
            merged.members.setdefault(rater, type(tally)()).update(tally)
        merged.notes.extend(note for note in other.notes if note not in merged.notes)
    merged.done_elsewhere = 0
    merged.resumed = max(0, merged.total_tasks - merged.verdicts - merged.outstanding.get("missing", 0))
    merged.worker = (f"{own.worker} and {len(others)} more "
                     f"(which judged {sum(other.verdicts for other in others)})")
    return merged


def _record(store: Store | str | Path | None, summary: RunSummary) -> None:
    """The merged summary replaces the one each process left on the run."""
    opened = store if isinstance(store, Store) else Store(store if store is not None else DEFAULT_STORE)
    try:
        opened.finish_run(summary.run_id, summary.as_dict())
    finally:
        if not isinstance(store, Store):
            opened.close()
