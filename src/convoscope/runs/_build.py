"""Assemble judges from specs, and run a whole judging job: the async core and its sync edge."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item, ItemStream
from convoscope.judges import Judge, JudgeMode, Panel, PoolRule, RubricJudge, TieRule
from convoscope.models import Model
from convoscope.runs._engine import Progress, Sink
from convoscope.runs._result import RunResult
from convoscope.runs._run import DEFAULT_LEASE_S, run_judge
from convoscope.store import DEFAULT_STORE, Store

EMBEDDED_DEFAULT = "embedded"
BESIDE_STORE = "beside-store"  # the default response cache: <store>.cache.db next to a SQLite store

OFFLINE_WARNING = (
    "The embedded model is tiny. It lets you try convoscope offline; its scores carry no "
    "measured signal about quality. Point the judge (--judge) at a capable model before you publish."
)

T = TypeVar("T")
Pool = PoolRule | Literal["max-vote"]


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


def as_specs(judge: str | JudgeSpec | Sequence[str | JudgeSpec]) -> list[JudgeSpec]:
    """Specs from a model spec string, a JudgeSpec, or a list of either."""
    entries = [judge] if isinstance(judge, str | JudgeSpec) else list(judge)
    return [entry if isinstance(entry, JudgeSpec) else JudgeSpec(entry) for entry in entries]


def default_cache_path(store: Store) -> Path:
    """Beside a SQLite store (``run.db`` -> ``run.cache.db``); ``convoscope.cache.db`` in the
    working folder for a PostgreSQL store."""
    if store.engine.dialect.name == "sqlite":
        return Path(store.location).with_suffix(".cache.db")
    return Path("convoscope.cache.db")


def build_judge(
    specs: Sequence[JudgeSpec],
    *,
    pool: Pool = "majority",
    ties: TieRule = "low",
    quorum: int = 1,
    cache_path: str | Path | None = None,
    cache: Any = None,
    model_options: dict[str, Any] | None = None,
    max_tokens: int = 400,
    one_call: Sequence[Criterion] = (),
) -> tuple[Judge, list[Model]]:
    """One judge, or a panel when several specs are given. Also returns the models to close.

    ``pool="max-vote"`` is InCA's name for ``majority``. ``cache``: a ResponseCache shared by
    every model (or ``cache_path`` to open one). ``one_call``: criteria each judge answers
    together in a single chat call per item (:class:`~convoscope.judges.JointJudge`)."""
    from convoscope.judges import JointJudge
    from convoscope.models import open_model

    if not specs:
        raise ConfigError("at least one judge is needed")
    if cache is None and cache_path is not None:
        cache = cache_path
    models: dict[str, Model] = {}
    judges: list[Judge] = []
    for spec in specs:
        if spec.model not in models:
            models[spec.model] = open_model(spec.model, cache=cache, **(model_options or {}))
        model = models[spec.model]
        if one_call:
            if spec.mode == "completion":
                raise ConfigError("one call for several criteria needs chat mode, not completion mode")
            judges.append(JointJudge(model, tuple(one_call), persona=spec.persona,
                                     persona_name=spec.persona_name, max_tokens=max_tokens * len(one_call)))
            continue
        judges.append(RubricJudge(model, mode=spec.resolved_mode(), persona=spec.persona,
                                  persona_name=spec.persona_name, max_tokens=max_tokens))
    if len(judges) == 1:
        return judges[0], list(models.values())
    rule: PoolRule = "majority" if pool == "max-vote" else pool
    return Panel(tuple(judges), rule=rule, ties=ties, quorum=quorum), list(models.values())


async def judge_async(
    items: Iterable[Item] | ItemStream | str | Path | Any,
    criteria: Sequence[Criterion],
    judge: str | JudgeSpec | Sequence[str | JudgeSpec] = EMBEDDED_DEFAULT,
    *,
    store: Store | str | Path | None = None,
    cache_path: str | Path | None = BESIDE_STORE,
    pool: Pool = "majority",
    ties: TieRule = "low",
    quorum: int = 1,
    concurrency: int = 16,
    on_progress: Progress | None = None,
    max_tokens: int = 400,
    model_options: dict[str, Any] | None = None,
    one_call: bool = False,
    retry_unscored: bool = False,
    lease_s: float = DEFAULT_LEASE_S,
    on_verdicts: Sink | None = None,
    collect: bool = True,
) -> RunResult:
    """Judge ``items`` on ``criteria`` and return the run's :class:`RunResult` (the one async core).

    ``items``: a list or iterable of items, a path to an items file or a DataFrame / Hugging Face
    Dataset (both read lazily, in chunks), or an :class:`~convoscope.items.ItemStream`.
    ``on_verdicts(finals, members)`` sees verdicts as they are committed; ``collect=False`` keeps
    them out of the result (for runs too large to hold; the summary still counts them).

    ``judge``: a model spec (``"embedded"``, ``"openai:MODEL@URL"``), a :class:`JudgeSpec`, or
    a list of them (a panel pooled by ``pool``/``ties``/``quorum``). ``store``: a Store, a
    SQLite path or a PostgreSQL URL (default ``convoscope.db`` in the working folder); every
    verdict is written there as it is made, so running the same call again resumes, retrying
    transient failures (and, with ``retry_unscored``, parse failures and refusals).
    ``cache_path``: the response cache (default beside the store, see :func:`default_cache_path`;
    None: no cache). ``model_options`` go to every backend (``timeout``, ``rpm``, ...).
    ``one_call`` asks all model-judged criteria in a single chat call per item.
    ``lease_s``: how long a claimed task stays reserved for this process without a heartbeat."""
    owned = not isinstance(store, Store)
    opened = store if isinstance(store, Store) else Store(store if store is not None else DEFAULT_STORE)
    cache = _open_cache(opened, cache_path)
    joint = [criterion for criterion in criteria if criterion.judged_by_model] if one_call else []
    try:
        # The endpoint's in-flight limit follows the run's concurrency unless set on its own.
        options = {"max_concurrency": max(1, concurrency), **(model_options or {})}
        if options.get("batch"):
            options.setdefault("ledger", opened)  # the batch ledger lives in the store
        built, models = build_judge(as_specs(judge), pool=pool, ties=ties, quorum=quorum, cache=cache,
                                    model_options=options, max_tokens=max_tokens, one_call=joint)
        try:
            return await run_judge(_as_stream(items), criteria, built, store=opened,
                                   concurrency=concurrency, on_progress=on_progress,
                                   retry_unscored=retry_unscored, lease_s=lease_s,
                                   on_verdicts=on_verdicts, collect=collect)
        finally:
            for model in models:
                await model.aclose()
    finally:
        if cache is not None:
            await asyncio.to_thread(cache.close)
        if owned:
            opened.close()


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


def judge(items: Sequence[Item], criteria: Sequence[Criterion],
          judge: str | JudgeSpec | Sequence[str | JudgeSpec] = EMBEDDED_DEFAULT,
          **options: Any) -> RunResult:
    """:func:`judge_async` for scripts and notebooks: works with or without a running event
    loop (in Jupyter the run goes to a worker thread with its own loop)."""
    return run_sync(judge_async(items, criteria, judge, **options))


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, inside a running loop or not."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="convoscope-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()
