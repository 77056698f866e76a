"""The per-batch work of a run as one picklable callable: items in, verdict rows out.

:class:`JudgeBatch` is what a distributed engine maps over a table of items — Ray Data's
``map_batches``, Spark's ``mapInPandas``, Dask's ``map_partitions``. It is built from picklable
:class:`BatchSettings` (judge specs, criteria, model options, the store's URL) and builds its
judge once per worker process, on first use. For each batch it renders and keys every task as the
local engine does (:func:`~convoscope.runs.plan_tasks`), passes on the verdicts the shared store
already holds (by key, whichever run or worker made them), judges the rest with bounded
concurrency and commits them to the store as they are made. Running a batch again — a lost worker,
a retried block, a re-run — therefore judges only what is missing. The response cache is a file
beside a SQLite store (shared by the processes of one machine) or one the caller names; never a
file private to one worker.

A batch is a pyarrow Table or a pandas DataFrame whose rows are items: ``"table"`` rows are
columns mapped as for CSV and Parquet files (:class:`~convoscope.items.ColumnMap`), ``"records"``
rows are item-shaped (nested ``context``, ``meta``), ``"lines"`` rows hold one JSON item per row in
a ``text`` column (a JSONL file read as text). The result is a pyarrow Table: one row per verdict
(a panel's members before its pooled verdict), the columns of :class:`~convoscope.judges.Verdict`
as ``--out`` writes them to Parquet, plus ``task_key``, ``member`` and ``origin`` (``judged``,
``retried``: judged again after a transient failure, ``stored``: found in the store, ``skipped``:
a criterion that does not apply to the item — no verdict, drop these rows before writing).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from convoscope._gc import collections_spaced
from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import ColumnMap, Item, ItemError, validate_record
from convoscope.judges import RETRYABLE_ON_REQUEST, TRANSIENT, Judge, Verdict
from convoscope.runs._engine import judge_task
from convoscope.runs._here import default_cache_path, run_judge_of, run_sync
from convoscope.runs._options import BESIDE_STORE, EMBEDDED_DEFAULT, JudgeSpec, RunOptions
from convoscope.runs._plan import Task, applies, plan_tasks, run_id_for

if TYPE_CHECKING:
    from convoscope.store import Store

Rows = Literal["table", "records", "lines"]
Output = tuple[list[tuple[str, Verdict]], str, "Verdict | None", str]  # members, key, final, origin
EXTRA_COLUMNS = ("task_key", "member", "origin")


@dataclass(frozen=True)
class BatchSettings:
    """Everything a worker needs to judge a batch; picklable, built on the driver.

    ``store``: the store's URL (every worker writes there); ``cache``: the response cache file,
    or None; ``run_id``: the run the verdicts are recorded under; ``options``: the run's settings
    (``concurrency`` is per worker). See :func:`batch_settings`."""

    criteria: tuple[Criterion, ...]
    judges: tuple[Any, ...]  # JudgeSpecs (and judges written in Python)
    store: str
    run_id: str
    cache: str | None = None
    options: RunOptions = field(default_factory=RunOptions)
    model_options: dict[str, Any] = field(default_factory=dict)
    rows: Rows = "table"
    columns: ColumnMap | None = None
    source: str = "<dataset>"
    identity: Any = None  # the judge's, as the run records it

    def build(self, cache: Any = None) -> tuple[Judge, list[Any]]:
        """The judge these settings describe (the local engine's), and its models (to close)."""
        return run_judge_of(list(self.judges), self.criteria, self.options, cache,
                            self.options.model_options(self.model_options))


def batch_settings(criteria: Sequence[Criterion], judge: Any = EMBEDDED_DEFAULT, *,
                   store: Store | str | Path, source: str = "<dataset>", rows: Rows = "table",
                   columns: ColumnMap | None = None, options: RunOptions | None = None,
                   model_options: dict[str, Any] | None = None, **settings: Any) -> BatchSettings:
    """Settings for :class:`JudgeBatch`, with the run id the local engine gives the same judge,
    criteria and ``source`` (a file's resolved path, or a name for the dataset).

    ``settings``: those of :func:`~convoscope.runs.judge` (``pool``, ``concurrency`` — per
    worker —, ``cache_path``, ``retry_unscored``, ``timeout``, …), or ``options`` as a
    :class:`~convoscope.runs.RunOptions`. The response cache is beside a SQLite store by default
    (every process of that machine shares it); with a PostgreSQL store there is none unless
    ``cache_path`` names a file every worker can reach."""
    if rows not in ("table", "records", "lines"):
        raise ConfigError(f"rows must be 'table', 'records' or 'lines', not {rows!r}")
    chosen = options if options is not None else RunOptions(**settings)
    if chosen.batch:
        raise ConfigError("a batch run keeps its ledger beside one process's cache: not per batch")
    from convoscope.store import Store

    opened = store if isinstance(store, Store) else Store(store)
    try:
        cache = _cache_location(opened, chosen.cache_path)
        found = BatchSettings(tuple(criteria), _given(judge), opened.url, "", cache, chosen,
                              dict(model_options or {}), rows=rows, columns=columns, source=source)
    finally:
        if not isinstance(store, Store):
            opened.close()
    built, models = found.build()
    try:
        run_id, identity = run_id_for(built, criteria, source), built.identity()
    finally:
        run_sync(_close_models(models))
    return replace(found, run_id=run_id, identity=identity)


def _given(judge: Any) -> tuple[Any, ...]:
    """The judges as given (model specs keep the run's mode and personas, applied when built)."""
    single = isinstance(judge, str | JudgeSpec) or not isinstance(judge, Sequence)
    return (judge,) if single else tuple(judge)


def _cache_location(store: Store, cache_path: str | Path | None) -> str | None:
    if cache_path is None:
        return None
    if cache_path == BESIDE_STORE:
        if store.engine.dialect.name != "sqlite":
            return None  # a file in each worker's folder would not be shared: no cache
        return str(default_cache_path(store).resolve())
    return str(Path(cache_path).expanduser().resolve())


class JudgeBatch:
    """Judge one batch of items per call (see the module docstring); picklable before and after
    use. The judge, its models, the cache and the store are opened on the first call in each
    process and kept for the next calls, on one event loop of their own; :meth:`close` ends them."""

    def __init__(self, settings: BatchSettings) -> None:
        self.settings = settings
        self._worker: _Worker | None = None
        self._opening = threading.Lock()  # threads of one process (Dask) share one worker

    def __call__(self, batch: Any) -> Any:
        """The verdict rows of ``batch``: a pandas DataFrame for a DataFrame, else a pyarrow Table."""
        items = batch_items(batch, self.settings)
        with self._opening:
            if self._worker is None:
                self._worker = _Worker(self.settings)
        table = self._worker.judge(items)
        return table.to_pandas() if type(batch).__name__ == "DataFrame" else table

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self.settings}  # what a process opened stays with that process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["settings"])  # type: ignore[misc]

    def close(self) -> None:
        with self._opening:
            if self._worker is not None:
                self._worker.close()
                self._worker = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutting down: the writers have committed every batch
            pass


class _Worker:
    """One process's judge, store and cache, driven on a private event loop thread (the models'
    HTTP clients belong to one loop, and callers may be threads or a running loop)."""

    def __init__(self, settings: BatchSettings) -> None:
        from convoscope.models import ResponseCache

        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="convoscope-batch", daemon=True)
        self.thread.start()
        from convoscope.store import Store

        self.store = Store(settings.store)
        self.cache = ResponseCache(settings.cache) if settings.cache else None
        self.judge_, self.models = settings.build(self.cache)
        self.retry = TRANSIENT | (RETRYABLE_ON_REQUEST if settings.options.retry_unscored else frozenset())

    def judge(self, items: list[Item]) -> Any:
        with collections_spaced():  # as a local run (convoscope._gc); the setting is the process's
            future = asyncio.run_coroutine_threadsafe(self._judge(items), self.loop)
            return future.result()

    async def _judge(self, items: list[Item]) -> Any:
        from convoscope import __version__
        from convoscope.metrics import check_metric_inputs

        check_metric_inputs(items, list(self.settings.criteria))  # bad timestamps: before any call
        plan = plan_tasks(items, self.settings.criteria, self.judge_)
        stored = await asyncio.to_thread(self._register, plan.tasks)
        outputs: list[Output] = []
        todo: list[tuple[int, Task, str]] = []
        for task in plan.tasks:
            found = stored.get(task.key)
            if found is not None and (found.unscored_reason or "") not in self.retry:
                members = [(key, stored[key]) for key in task.member_keys if key in stored]
                outputs.append((members, task.key, found, "stored"))
            else:
                outputs.append(([], task.key, None, "pending"))
                todo.append((len(outputs) - 1, task, "judged" if found is None else "retried"))
        stamp = {"run_id": self.settings.run_id, "convoscope_version": __version__}
        from convoscope.store import VerdictWriter

        writer = VerdictWriter(self.store, self.settings.run_id, supersede=self.retry)
        limit = asyncio.Semaphore(max(1, self.settings.options.concurrency))

        async def one(place: int, task: Task, origin: str) -> None:
            async with limit:
                final, members = await judge_task(task)
            final = final.model_copy(update=stamp)
            keyed = [(key, member.model_copy(update=stamp))
                     for key, member in zip(task.member_keys, members, strict=True)]
            writer.put([*keyed, (task.key, final)], members=len(keyed))
            outputs[place] = (keyed, task.key, final, origin)

        try:
            await asyncio.gather(*(one(*entry) for entry in todo))
        finally:
            writer.close()  # every verdict of the batch committed before its rows are returned
            if self.cache is not None and todo:
                await asyncio.to_thread(self.cache.flush)
        return verdict_table([*outputs, *_skipped(items, self.settings.criteria)], self.settings.criteria)

    def _register(self, tasks: Sequence[Task]) -> dict[str, Verdict]:
        """Record the batch's keys under the run (the store lists a run's verdicts by them) and
        read which are stored. A distributed run keeps no input order: positions follow the key."""
        from convoscope.store._chunks import register_tasks

        keys = [(key, int(key[:7], 16), True) for task in tasks for key in task.member_keys]
        keys += [(task.key, int(task.key[:7], 16), False) for task in tasks]
        with self.store.engine.begin() as connection:
            register_tasks(connection, self.settings.run_id, 0, keys)
        return self.store.verdicts_by_key([key for key, _, _ in keys])

    def close(self) -> None:
        async def end() -> None:
            await _close_models(self.models)

        try:
            asyncio.run_coroutine_threadsafe(end(), self.loop).result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            if self.cache is not None:
                self.cache.close()
            self.store.close()


def _skipped(items: Sequence[Item], criteria: Sequence[Criterion]) -> list[Output]:
    """A row for each (item, criterion) the criterion does not apply to, so whoever reads the
    rows can count them (the local engine's ``not applicable``); no verdict, no rater."""
    return [([], "", Verdict(item_id=item.id, criterion=criterion.name, rater="", value=None), "skipped")
            for criterion in criteria for item in items if not applies(criterion, item)]


async def _close_models(models: list[Any]) -> None:
    for model in models:
        await model.aclose()


# -- items in -------------------------------------------------------------------------------

def batch_items(batch: Any, settings: BatchSettings) -> list[Item]:
    """The items of a batch (pyarrow Table, pandas DataFrame or list of dicts), validated; a bad
    row is an ItemError naming the source, the field and the item's id (batches carry no line)."""
    rows = _rows_of(batch)
    if settings.rows == "lines":
        return [_item(settings.source, _line_record(settings.source, row)) for row in rows]
    if settings.rows == "records":
        return [_item(settings.source, {k: v for k, v in row.items() if v is not None}) for row in rows]
    from convoscope.items._io import _table_rows

    mapped = _table_rows(Path(settings.source), enumerate(rows, start=1), settings.columns)
    return [_item(settings.source, row) for _, row in mapped]


def _rows_of(batch: Any) -> list[dict[str, Any]]:
    if hasattr(batch, "to_pylist"):  # pyarrow: nested values arrive as Python lists and dicts
        return list(batch.to_pylist())
    if hasattr(batch, "to_dict"):  # pandas: numpy arrays and NaN become lists and None
        return [{str(key): _plain(value) for key, value in row.items()}
                for row in batch.to_dict(orient="records")]
    return [dict(row) for row in batch]


def _plain(value: Any) -> Any:
    from convoscope.items._frames import _plain as plain_scalar

    if isinstance(value, dict):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple) or getattr(value, "ndim", 0) == 1:
        return [_plain(inner) for inner in value]
    return plain_scalar(value)


def _line_record(source: str, row: dict[str, Any]) -> dict[str, Any]:
    import json

    text = str(row.get("text"))
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise ItemError(source, None, None, f"a line is not JSON ({error.msg}): {text[:60]!r}") from None
    if not isinstance(record, dict):
        raise ItemError(source, None, None, f"each line must be a JSON object: {text[:60]!r}")
    return record


def _item(source: str, row: dict[str, Any]) -> Item:
    try:
        return validate_record(Item, Path(source), None, row,  # type: ignore[arg-type]
                               unknown="unknown field (put free-form data under 'meta')")
    except ItemError as error:
        where = f" (item {row['id']!r})" if isinstance(row.get("id"), str | int) else ""
        raise ItemError(source, None, error.field, f"{error.problem}{where}") from None


# -- verdict rows out -------------------------------------------------------------------------

def verdict_schema(criteria: Sequence[Criterion]) -> Any:
    """The Parquet schema of verdicts as ``--out`` writes them (``value`` numeric when every
    scale is), plus the columns :class:`JudgeBatch` adds."""
    import pyarrow as pa

    from convoscope.items._write import arrow_schema

    numeric = all(criterion.scale.is_numeric() for criterion in criteria)
    schema = arrow_schema(Verdict, number_columns=("value",) if numeric else (),
                          text_columns=() if numeric else ("value",))
    extra = [pa.field("task_key", pa.string()), pa.field("member", pa.bool_()),
             pa.field("origin", pa.string())]
    return pa.schema([*schema, *extra])


def verdict_table(outputs: Sequence[Output], criteria: Sequence[Criterion]) -> Any:
    """One row per verdict: each task's members, then its final verdict, in the batch's order."""
    import json

    import pyarrow as pa

    schema = verdict_schema(criteria)
    text_value = schema.field("value").type == pa.string()
    rows: list[dict[str, Any]] = []
    for members, final_key, final, origin in outputs:
        for key, verdict, member in [*((key, v, True) for key, v in members), (final_key, final, False)]:
            row = verdict.model_dump(mode="json")  # type: ignore[union-attr]
            row["distribution"] = None if row["distribution"] is None else json.dumps(row["distribution"])
            if text_value and row["value"] is not None:
                row["value"] = str(row["value"])
            rows.append({**row, "task_key": key, "member": member, "origin": origin})
    return pa.Table.from_pylist(rows, schema=schema)


def verdicts_from_table(table: Any) -> list[tuple[Verdict, bool, str]]:
    """The verdicts of a :class:`JudgeBatch` result: (verdict, member?, origin) per row."""
    import json

    found = []
    for row in table.to_pylist():
        member, origin = row.pop("member"), row.pop("origin")
        row.pop("task_key")
        if isinstance(row["distribution"], str):
            row["distribution"] = json.loads(row["distribution"])
        if isinstance(row["value"], str) and row["value"].lstrip("-").isdigit():
            row["value"] = int(row["value"])
        found.append((Verdict.model_validate({k: v for k, v in row.items() if v is not None or k == "value"}),
                      bool(member), str(origin)))
    return found
