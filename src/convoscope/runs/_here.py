"""A judging run in this process: judges built from their specs, the response cache, the run
itself (other processes may share it through the store), and the synchronous edge of async code."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from convoscope._gc import collections_spaced
from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item, ItemStream
from convoscope.judges import Judge, Panel, PoolRule, RubricJudge, TieRule
from convoscope.models import Model, capability_notes, route_notes, run_span
from convoscope.runs._engine import STOP_GRACE_S
from convoscope.runs._head import HeadStart, head_start
from convoscope.runs._options import BESIDE_STORE, JudgeSpec, Pool, RunOptions, judge_specs
from convoscope.runs._repeats import DEFAULT_REPEAT_TEMPERATURE
from convoscope.runs._result import RunResult
from convoscope.runs._run import run_judge
from convoscope.store._target import DEFAULT_STORE, is_store, new_sqlite_file

if TYPE_CHECKING:
    from convoscope.store import Store

T = TypeVar("T")


def default_cache_path(store: Store | Path) -> Path:
    """Beside a SQLite store (``run.db`` -> ``run.cache.db``; ``store`` may be the file of a
    store not yet set up); ``convoscope.cache.db`` in the working folder for a PostgreSQL store."""
    if isinstance(store, Path):
        return store.with_suffix(".cache.db")
    if store.engine.dialect.name == "sqlite":
        return Path(store.location).with_suffix(".cache.db")
    return Path("convoscope.cache.db")


def build_judge(
    specs: Sequence[JudgeSpec | Judge],
    *,
    pool: Pool = "majority",
    ties: TieRule = "unscored",
    quorum: int = 1,
    cache_path: str | Path | None = None,
    cache: Any = None,
    model_options: dict[str, Any] | None = None,
    max_tokens: int = 400,
    one_call: Sequence[Criterion] = (),
    repeats: int = 1,
    temperature: float | None = None,
) -> tuple[Judge, list[Model]]:
    """One judge, or a panel when several specs (or repeats) are given. Also returns the models
    to close.

    ``pool="max-vote"`` is InCA's name for ``majority``. ``cache``: a ResponseCache shared by
    every model (or ``cache_path`` to open one). ``one_call``: criteria each judge answers
    together in a single chat call per item (:class:`~convoscope.judges.JointJudge`).
    ``repeats``: ask each judge this many times, with seeds 0..N-1, pooled as a panel pools;
    ``temperature``: the judges' sampling temperature (default 0, or 0.7 with repeats: greedy
    decoding would give the same answer every time)."""
    from convoscope.judges import JointJudge
    from convoscope.judges._python import is_python_spec, python_judge_for

    if (model_options or {}).get("batch"):  # only a batch run loads the batch package
        from convoscope.batch import open_model
    else:
        from convoscope.models import open_model
    if not specs:
        raise ConfigError("at least one judge is needed")
    if repeats < 1:
        raise ConfigError(f"repeats must be at least 1, not {repeats}")
    if repeats > 1 and one_call:
        raise ConfigError("repeated judgements ask one criterion per call: leave out one-call")
    heat = temperature if temperature is not None else (DEFAULT_REPEAT_TEMPERATURE if repeats > 1 else 0.0)
    if cache is None and cache_path is not None:
        cache = cache_path
    models: dict[str, Model] = {}
    judges: list[Judge] = []
    for spec in specs:
        if not isinstance(spec, JudgeSpec) or is_python_spec(spec.model):
            judges.append(python_judge_for(spec))
            continue
        if spec.model not in models:
            models[spec.model] = open_model(spec.model, cache=cache, **(model_options or {}))
        model = models[spec.model]
        if one_call:
            if spec.mode == "completion":
                raise ConfigError("one call for several criteria needs chat mode, not completion mode")
            judges.append(JointJudge(model, tuple(one_call), persona=spec.persona,
                                     persona_name=spec.persona_name, max_tokens=max_tokens * len(one_call)))
            continue
        judges.extend(RubricJudge(model, mode=spec.resolved_mode(), persona=spec.persona,
                                  persona_name=spec.persona_name, max_tokens=max_tokens,
                                  temperature=heat, seed=repeat,
                                  repeat=repeat + 1 if repeats > 1 else None)
                      for repeat in range(repeats))
    if len(judges) == 1:
        return judges[0], list(models.values())
    rule: PoolRule = "majority" if pool == "max-vote" else pool
    name = None
    if len(specs) == 1 and repeats > 1:  # one judge asked N times: named after it
        name = f"{rule}×{repeats}({judges[0].rater.rsplit('~', 1)[0]})"
    return Panel(tuple(judges), rule=rule, ties=ties, quorum=quorum, name=name), list(models.values())


def run_judge_of(judge: Any, criteria: Sequence[Criterion], options: RunOptions, cache: Any,
                 model_options: dict[str, Any]) -> tuple[Judge, list[Model]]:
    """The judge a run with these options asks (its models to close): the same in every process.
    ``model_options``: ``options.model_options(extra)``, plus what this process adds (a ledger)."""
    joint = [criterion for criterion in criteria if criterion.judged_by_model] if options.one_call else []
    return build_judge(_specs(judge, options), pool=options.pool, ties=options.ties, quorum=options.quorum,
                       cache=cache, model_options=model_options,
                       max_tokens=options.max_tokens, one_call=joint, repeats=options.repeats,
                       temperature=options.temperature)


async def judge_here(items: Any, criteria: Sequence[Criterion], judge: Any, store: Store | str | Path | None,
                     options: RunOptions, extra: dict[str, Any] | None, *, early: bool = True,
                     **hooks: Any) -> RunResult:
    """The run in this process (other processes may share it through the store). ``early``: on
    a new SQLite store, send the first requests before the store is set up (runs._head; not
    when several processes start together on it). Young garbage collections are spaced out
    meanwhile (see convoscope._gc)."""
    with collections_spaced():
        return await _judge_here(items, criteria, judge, store, options, extra, early=early, **hooks)


async def _judge_here(items: Any, criteria: Sequence[Criterion], judge: Any, store: Store | str | Path | None,
                      options: RunOptions, extra: dict[str, Any] | None, *, early: bool,
                      **hooks: Any) -> RunResult:
    owned = not is_store(store)
    target = cast("str | Path", DEFAULT_STORE if store is None else store)  # when owned
    model_options = options.model_options(extra)
    # Not with a batch (its ledger is the store) nor traced calls (each in the run's span): this
    # run's option decides, not whether a traced model was ever made in the process (tracing()).
    new = early and owned and not model_options.get("batch") and not model_options.get("trace")
    fresh = new_sqlite_file(target) if new else None
    opened: Store | None = None
    if fresh is None:
        opened = store if is_store(store) else _open_store(target)
    cache = _open_cache(opened if opened is not None else cast(Path, fresh), options.cache_path)
    if fresh is not None and cache is not None:
        cache.hold()  # its answers are committed with their verdicts, once the store's writer joins
    stream, head = _as_stream(items), None
    try:
        if opened is not None and model_options.get("batch"):
            model_options.setdefault("ledger", opened)  # the batch ledger lives in the store
        built, models = run_judge_of(judge, criteria, options, cache, model_options)
        try:
            if opened is None:
                stream = stream if isinstance(stream, ItemStream) else ItemStream(list(stream))
                head = head_start(stream, criteria, built, options.concurrency)
                opened = await _store_after(head, target)
            if cache is not None and opened.engine.url.get_backend_name() == "sqlite":
                opened.response_cache = cache  # one transaction for a verdict and its answer (store/_writer)
            return await _run_here(stream, criteria, built, models, opened, options, model_options, head,
                                   **hooks)
        finally:
            if head is not None:
                await head.cancel()
            for model in models:
                await model.aclose()
    finally:
        if opened is not None and opened.response_cache is cache:
            opened.response_cache = None
        if cache is not None:
            await asyncio.to_thread(cache.close)
        if owned and opened is not None:
            opened.close()


async def _store_after(head: HeadStart | None, target: str | Path) -> Store:
    """The store, set up once the head start's first request is out, while they are in flight.
    Stopped before it is ready (SIGTERM, Ctrl-C), the calls in flight get the engine's grace to
    be answered: the response cache keeps their answers for the run that resumes."""
    try:
        if head is not None:
            await head.sent()
        return await asyncio.to_thread(_open_store, target)
    except asyncio.CancelledError:
        if head is not None:
            await head.cancel(STOP_GRACE_S)
        raise


def _open_store(target: str | Path) -> Store:
    from convoscope.store import Store  # SQLAlchemy: once the first requests are out (issue 39)

    return Store(target)


async def _run_here(stream: Any, criteria: Sequence[Criterion], built: Judge, models: list[Model],
                    store: Store, options: RunOptions, model_options: dict[str, Any], head: HeadStart | None,
                    **hooks: Any) -> RunResult:
    with run_span(model_options.get("trace"), judge=built.rater,
                  criteria=[criterion.name for criterion in criteria]) as span:
        result = await run_judge(stream, criteria, built, store=store, concurrency=options.concurrency,
                                 retry_unscored=options.retry_unscored, lease_s=options.lease_s,
                                 head=head, **hooks)
        if span is not None:
            span.set_attributes({"convoscope.run_id": result.run_id,
                                 "convoscope.tasks": result.summary.total_tasks})
    result.summary.routes.extend(route_notes(models))
    result.summary.notes.extend(capability_notes(models))
    return result


def _specs(judge: Any, options: RunOptions) -> list[JudgeSpec | Judge]:
    """JudgeSpecs and built judges as given; model spec strings with the run's mode and personas
    (a ``python:MODULE:NAME`` spec is a judge written in Python: no mode, no persona)."""
    from convoscope.judges._python import is_python_spec

    given: list[Any] = [judge] if isinstance(judge, str | JudgeSpec) or not isinstance(
        judge, Sequence) else list(judge)
    names = [entry for entry in given if isinstance(entry, str) and not is_python_spec(entry)]
    built = judge_specs(names, mode=options.mode, personas=options.personas) if names else []
    return [*built, *(JudgeSpec(entry) if isinstance(entry, str) else entry
                      for entry in given if not (isinstance(entry, str) and entry in names))]


def _as_stream(items: Any) -> Any:
    """Paths and tables are read lazily; lists and other iterables of items go as they are."""
    from convoscope.items._frames import is_table

    if isinstance(items, str | Path) or (is_table(items) and not _is_item_list(items)):
        return ItemStream(items)
    return items


def _is_item_list(items: Any) -> bool:
    return isinstance(items, list) and all(isinstance(item, Item) for item in items)


def _open_cache(store: Store | Path, cache_path: str | Path | None) -> Any:
    from convoscope.models import ResponseCache

    if cache_path is None:
        return None
    return ResponseCache(default_cache_path(store) if cache_path == BESIDE_STORE else cache_path)


P = ParamSpec("P")


def _sync_edge(core: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The synchronous twin of an async core, with its very signature (editors and type
    checkers see every keyword): it runs the core to completion, inside a running loop or not."""
    @functools.wraps(core)
    def edge(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(core(*args, **kwargs))

    return edge


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, inside a running loop or not."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="convoscope-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()
