"""Assemble judges from specs, and run a whole judging job: the async core and its sync edge."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item, ItemStream
from convoscope.judges import Judge, JudgeMode, Panel, PoolRule, RubricJudge, TieRule
from convoscope.models import Model, capability_notes, route_notes, run_span
from convoscope.runs._engine import Progress, Sink
from convoscope.runs._repeats import DEFAULT_REPEAT_TEMPERATURE
from convoscope.runs._result import RunResult
from convoscope.runs._run import DEFAULT_LEASE_S, run_judge
from convoscope.store import DEFAULT_STORE, Store

if TYPE_CHECKING:
    from convoscope.models._batch import BatchFiles

EMBEDDED_DEFAULT = "embedded"
BESIDE_STORE = "beside-store"  # the default response cache: <store>.cache.db next to a SQLite store

OFFLINE_WARNING = (
    "The embedded model is tiny. It lets you try convoscope offline; its scores carry no "
    "measured signal about quality. Point the judge (--judge) at a capable model before you publish."
)

T = TypeVar("T")
Pool = PoolRule | Literal["max-vote"]
Engine = Literal["local", "ray"]


@dataclass(frozen=True)
class JudgeSpec:
    """One judge by name: a model spec, a mode, an optional persona."""

    model: str
    mode: JudgeMode | None = None
    persona: str | None = None
    persona_name: str | None = None

    def resolved_mode(self) -> JudgeMode:
        if self.mode is not None:
            return self.mode
        # Tiny embedded models cannot follow a JSON instruction (MEASURED.md): read their
        # next-token distribution instead.
        return "completion" if is_embedded(self.model) else "chat"


JudgeLike = str | JudgeSpec | Judge  # a model spec, a python:MODULE:NAME spec, or a built judge


def is_embedded(model_spec: str) -> bool:
    return model_spec == "embedded" or model_spec.startswith("embedded:")


def judge_specs(models: Sequence[str], *, mode: str = "auto",
                personas: Sequence[str] = ()) -> list[JudgeSpec]:
    """One spec per model, or per (model, persona) when personas are given (a panel).

    ``personas``: library names (``brand-ambassador``, ...) or ``NAME=TEXT``."""
    from convoscope.judges import resolve_persona

    if mode not in ("auto", "chat", "completion"):
        raise ConfigError(f"unknown judge mode {mode!r}: use auto, chat or completion")
    chosen: JudgeMode | None = None if mode == "auto" else mode  # type: ignore[assignment]
    try:
        parsed = [resolve_persona(entry) for entry in personas]
    except ValueError as error:
        raise ConfigError(f"persona: {error}") from None
    if not parsed:
        return [JudgeSpec(model, chosen) for model in models]
    return [JudgeSpec(model, chosen, text, name) for model in models for name, text in parsed]


def as_specs(judge: JudgeLike | Sequence[JudgeLike]) -> list[JudgeSpec | Judge]:
    """Specs from a model spec string, a JudgeSpec, a built judge (e.g. a Python judge), or a list."""
    entries: list[JudgeLike] = [judge] if isinstance(judge, str | JudgeSpec) or not isinstance(
        judge, Sequence) else list(judge)
    return [JudgeSpec(entry) if isinstance(entry, str) else entry for entry in entries]


def default_cache_path(store: Store) -> Path:
    """Beside a SQLite store (``run.db`` -> ``run.cache.db``); ``convoscope.cache.db`` in the
    working folder for a PostgreSQL store."""
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


@dataclass(frozen=True)
class RunOptions:
    """Every setting of a judging run with its default — the one list that ``convoscope judge``
    and :func:`judge` / :func:`judge_async` share, by the same names (a test compares them)."""

    mode: str = "auto"
    personas: tuple[str, ...] = ()
    pool: Pool = "majority"
    ties: TieRule = "unscored"
    quorum: int = 1
    repeats: int = 1
    temperature: float | None = None
    max_tokens: int = 400
    one_call: bool = False
    concurrency: int = 8
    cache_path: str | Path | None = BESIDE_STORE
    retry_unscored: bool = False
    lease_s: float = DEFAULT_LEASE_S
    timeout: float | None = None
    deadline: float | None = None
    max_retries: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    api_key_env: tuple[str, ...] = ()
    allow_insecure_key: bool = False
    context_length: int | None = None
    batch: str | BatchFiles | None = None
    batch_max_requests: int | None = None
    batch_max_bytes: int | None = None
    otel: bool = False
    workers: int | None = None
    engine: Engine = "local"
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ("local", "ray"):
            raise ConfigError(f"engine must be 'local' or 'ray', not {self.engine!r}")
        _check_settings(self)
        if self.batch and (self.engine == "ray" or (self.workers or 1) > 1):
            raise ConfigError("a batch run keeps its ledger beside one process's cache: "
                              "not with several workers or the ray engine")

    def model_options(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """What every backend of the run is built with (the endpoint's in-flight limit follows
        the run's concurrency unless ``extra`` sets it)."""
        from convoscope.models import endpoint_options

        options = {"max_concurrency": max(1, self.concurrency), **endpoint_options(
            timeout=self.timeout, deadline=self.deadline, max_retries=self.max_retries, rpm=self.rpm,
            tpm=self.tpm, api_key_env=self.api_key_env, allow_insecure_key=self.allow_insecure_key,
            context_length=self.context_length)}
        if self.batch:
            options["batch"] = self.batch
            options.update({name: value for name, value in (("batch_max_requests", self.batch_max_requests),
                                                            ("batch_max_bytes", self.batch_max_bytes))
                            if value is not None})
        if self.otel:
            options["trace"] = True
        return {**options, **(extra or {})}


# Settings that must be whole numbers of at least 1, numbers above 0, or numbers of at least 0;
# None (unset) leaves a backend's default. Checked before a store, a file or a model is touched.
_AT_LEAST_ONE = ("concurrency", "max_tokens", "quorum", "repeats", "workers", "context_length",
                 "batch_max_requests", "batch_max_bytes")
_ABOVE_ZERO = ("lease_s", "timeout", "deadline", "rpm", "tpm")
_NOT_NEGATIVE = ("max_retries", "temperature")


def _check_settings(options: RunOptions) -> None:
    """A setting out of range is a one-line ConfigError naming it (by its option name), not a run
    that silently does nothing (``--concurrency 0``) or asks for empty answers (``--max-tokens 0``)."""
    for name in (*_AT_LEAST_ONE, *_ABOVE_ZERO, *_NOT_NEGATIVE):
        value = getattr(options, name)
        if value is None:
            continue
        flag = "--lease" if name == "lease_s" else "--" + name.replace("_", "-")
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise ConfigError(f"{name} ({flag}) must be a number, not {value!r}")
        if name in _AT_LEAST_ONE and (value < 1 or value != int(value)):
            raise ConfigError(f"{name} ({flag}) must be a whole number of at least 1, not {value}")
        if name in _ABOVE_ZERO and value <= 0:
            raise ConfigError(f"{name} ({flag}) must be above 0, not {value}")
        if name in _NOT_NEGATIVE and value < 0:
            raise ConfigError(f"{name} ({flag}) must be at least 0, not {value}")


async def judge_async(
    items: Iterable[Item] | ItemStream | str | Path | Any,
    criteria: Sequence[Criterion],
    judge: JudgeLike | Sequence[JudgeLike] = EMBEDDED_DEFAULT,
    *,
    store: Store | str | Path | None = None,
    mode: str = "auto",
    personas: Sequence[str] = (),
    pool: Pool = "majority",
    ties: TieRule = "unscored",
    quorum: int = 1,
    repeats: int = 1,
    temperature: float | None = None,
    max_tokens: int = 400,
    one_call: bool = False,
    concurrency: int = 8,
    cache_path: str | Path | None = BESIDE_STORE,
    retry_unscored: bool = False,
    lease_s: float = DEFAULT_LEASE_S,
    timeout: float | None = None,
    deadline: float | None = None,
    max_retries: int | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    api_key_env: Sequence[str] = (),
    allow_insecure_key: bool = False,
    context_length: int | None = None,
    batch: str | BatchFiles | None = None,
    batch_max_requests: int | None = None,
    batch_max_bytes: int | None = None,
    otel: bool = False,
    workers: int | None = None,
    engine: Engine = "local",
    ray_address: str | None = None,
    on_progress: Progress | None = None,
    on_verdicts: Sink | None = None,
    collect: bool = True,
    model_options: dict[str, Any] | None = None,
) -> RunResult:
    """Judge ``items`` on ``criteria`` and return the run's :class:`RunResult` (the one async core).

    ``items``: a list or iterable of items, a path to an items file or a DataFrame / Hugging Face
    Dataset (both read lazily, in chunks), or an :class:`~convoscope.items.ItemStream`.
    ``judge``: a model spec (``"embedded"``, ``"openai:MODEL@URL"``), a :class:`JudgeSpec`, a
    judge written in Python (:func:`~convoscope.judges.python_judge`, or ``"python:MODULE:NAME"``),
    or a list of them (a panel pooled by ``pool``/``ties``/``quorum``); ``mode`` and ``personas``
    apply to the ones given as strings. ``store``: a Store, a SQLite path or a PostgreSQL URL (default
    ``convoscope.db`` in the working folder); every verdict is written there as it is made, so
    running the same call again resumes, retrying transient failures (and, with
    ``retry_unscored``, parse failures, refusals and judge_error). ``repeats``: ask each judge N times (at
    ``temperature``, default 0.7 then) and pool them; the summary reports self-consistency.

    The other settings are those of ``convoscope judge``, by the same names and with the same
    defaults (see :class:`RunOptions` and ``convoscope judge --help``): ``cache_path`` (the response
    cache; default beside the store, None: none), ``lease_s``, the endpoint's ``timeout``,
    ``deadline``, ``max_retries``, ``rpm``, ``tpm``, ``api_key_env``, ``allow_insecure_key``,
    ``context_length``, ``batch`` (``openai`` or ``anthropic``; a
    :class:`~convoscope.models._batch.BatchFiles` writes batch files instead: docs/batch.md),
    ``batch_max_requests`` and ``batch_max_bytes`` (a batch service's caps, below the provider's),
    ``otel``; ``workers`` (processes sharing the run on this machine, default 1) and
    ``engine="ray"`` (the run on a Ray cluster at ``ray_address``; ``items`` may then be a Ray
    Dataset; see docs/runs.md). ``model_options`` add backend settings beyond those.
    ``on_verdicts(finals, members)`` sees verdicts as they are committed; ``collect=False`` keeps
    them out of the result (the summary still counts them)."""
    options = RunOptions(
        mode=mode, personas=tuple(personas), pool=pool, ties=ties, quorum=quorum, repeats=repeats,
        temperature=temperature, max_tokens=max_tokens, one_call=one_call, concurrency=concurrency,
        cache_path=cache_path, retry_unscored=retry_unscored, lease_s=lease_s, timeout=timeout,
        deadline=deadline, max_retries=max_retries, rpm=rpm, tpm=tpm, api_key_env=tuple(api_key_env),
        allow_insecure_key=allow_insecure_key, context_length=context_length, batch=batch,
        batch_max_requests=batch_max_requests, batch_max_bytes=batch_max_bytes, otel=otel,
        workers=workers, engine=engine, ray_address=ray_address)
    return await _judge(items, criteria, judge, store, options, model_options,
                        on_progress=on_progress, on_verdicts=on_verdicts, collect=collect)


async def _judge(items: Any, criteria: Sequence[Criterion], judge: Any, store: Store | str | Path | None,
                 options: RunOptions, extra: dict[str, Any] | None, **hooks: Any) -> RunResult:
    """The run on the engine its options name: here, on this machine's cores, or on Ray."""
    if options.engine == "ray":
        from convoscope.runs._ray import judge_on_ray

        return await judge_on_ray(items, criteria, judge, store, options, extra, **hooks)
    if (options.workers or 1) > 1:
        from convoscope.runs._workers import judge_on_workers

        return await judge_on_workers(items, criteria, judge, store, options, extra, **hooks)
    return await judge_here(items, criteria, judge, store, options, extra, **hooks)


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
                     options: RunOptions, extra: dict[str, Any] | None, **hooks: Any) -> RunResult:
    """The run in this process (other processes may share it through the store)."""
    owned = not isinstance(store, Store)
    opened = store if isinstance(store, Store) else Store(store if store is not None else DEFAULT_STORE)
    cache = _open_cache(opened, options.cache_path)
    if cache is not None and opened.engine.url.get_backend_name() == "sqlite":
        opened.response_cache = cache  # one transaction for a verdict and its answer (store/_writer.py)
    try:
        model_options = options.model_options(extra)
        if model_options.get("batch"):
            model_options.setdefault("ledger", opened)  # the batch ledger lives in the store
        built, models = run_judge_of(judge, criteria, options, cache, model_options)
        try:
            with run_span(model_options.get("trace"), judge=built.rater,
                          criteria=[criterion.name for criterion in criteria]) as span:
                result = await run_judge(_as_stream(items), criteria, built, store=opened,
                                         concurrency=options.concurrency,
                                         retry_unscored=options.retry_unscored, lease_s=options.lease_s,
                                         **hooks)
                if span is not None:
                    span.set_attributes({"convoscope.run_id": result.run_id,
                                         "convoscope.tasks": result.summary.total_tasks})
            result.summary.routes.extend(route_notes(models))
            result.summary.notes.extend(capability_notes(models))
            return result
        finally:
            for model in models:
                await model.aclose()
    finally:
        if opened.response_cache is cache:
            opened.response_cache = None
        if cache is not None:
            await asyncio.to_thread(cache.close)
        if owned:
            opened.close()


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


def _open_cache(store: Store, cache_path: str | Path | None) -> Any:
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


judge = _sync_edge(judge_async)
judge.__name__ = judge.__qualname__ = "judge"
judge.__doc__ = (":func:`judge_async` for scripts and notebooks, with the same arguments: works with "
                 "or without a running event loop (in Jupyter the run goes to a worker thread with "
                 "its own loop). Returns the run's :class:`RunResult`.")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, inside a running loop or not."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="convoscope-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()
