"""A whole judging job: the async core, its sync edge, and the dispatch to the engine the options
name (this process, worker processes, or Ray). The top layer of ``runs/``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.criteria import Criterion
from convoscope.items import Item, ItemStream
from convoscope.items._stream import DEFAULT_CHUNK
from convoscope.judges import TieRule
from convoscope.runs._engine import Progress, Sink
from convoscope.runs._gate import GateRule, GateTally, gate_rules, watching
from convoscope.runs._here import _as_stream, _sync_edge, judge_here
from convoscope.runs._options import (
    BESIDE_STORE,
    EMBEDDED_DEFAULT,
    Engine,
    JudgeLike,
    Pool,
    RunOptions,
)
from convoscope.runs._result import RunResult
from convoscope.runs._run import DEFAULT_LEASE_S

if TYPE_CHECKING:
    from convoscope.batch._model import BatchFiles
    from convoscope.store import Store

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
    sample: int | None = None,
    stratify_by: str | None = None,
    seed: int = 0,
    gates: Sequence[str | GateRule] = (),
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
    :class:`~convoscope.batch._model.BatchFiles` writes batch files instead: docs/batch.md),
    ``batch_max_requests`` and ``batch_max_bytes`` (a batch service's caps, below the provider's),
    ``otel``; ``workers`` (processes sharing the run on this machine, default 1) and
    ``engine="ray"`` (the run on a Ray cluster at ``ray_address``; ``items`` may then be a Ray
    Dataset; see docs/runs.md). ``model_options`` add backend settings beyond those.
    ``sample``: judge a reproducible random sample of that many items (``stratify_by`` a field,
    ``seed``; :func:`~convoscope.items.sample_items`). ``gates``: release gates (``"overall=3.5"``,
    ``"follow-up:yes=0.9"``), checked against the criteria before any call; the result's ``gates``
    hold what each observed, and ``exit_code()`` is 5 when the run is below one.
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
    tally = GateTally(gate_rules(gates, criteria)) if gates else None
    if sample is not None:
        items = sampled_stream(_as_stream(items), sample, stratify_by=stratify_by, seed=seed)
    result = await _judge(items, criteria, judge, store, options, model_options, on_progress=on_progress,
                          on_verdicts=watching(tally, on_verdicts) if tally else on_verdicts,
                          collect=collect)
    return dataclasses.replace(result, gates=tuple(tally.results())) if tally else result


def sampled_stream(items: Iterable[Item] | ItemStream, size: int, *, stratify_by: str | None = None,
                   seed: int = 0) -> ItemStream:
    """A reproducible random sample of ``size`` items as a stream (one pass over the input; at most
    ``size`` items held per stratum)."""
    from convoscope.items import sample_items

    chosen = sample_items(items, size, stratify_by=stratify_by, seed=seed)
    return ItemStream(chosen, chunk_size=items.chunk_size if isinstance(items, ItemStream) else DEFAULT_CHUNK)


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


judge = _sync_edge(judge_async)
judge.__name__ = judge.__qualname__ = "judge"
judge.__doc__ = (":func:`judge_async` for scripts and notebooks, with the same arguments: works with "
                 "or without a running event loop (in Jupyter the run goes to a worker thread with "
                 "its own loop). Returns the run's :class:`RunResult`.")
