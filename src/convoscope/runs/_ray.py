"""A judging run spread over a Ray cluster with Ray Data (extra ``ray``).

The items are a Ray Dataset (:func:`items_dataset` reads a JSONL, CSV or Parquet file as one);
:func:`verdicts_dataset` maps :class:`~convoscope.runs.JudgeBatch` over its blocks on a pool of
actors, one judge per actor, every actor writing to the shared store; :func:`judge_dataset` runs
that and streams the verdicts back to this process, which counts the run's summary as the local
engine does and hands them on (``convoscope judge --engine ray --out`` writes them as the local
engine does). A block judged again (Ray retries the blocks of a lost worker) or a run started
again judges only the tasks the store does not hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.criteria import Criterion
from convoscope.errors import ConvoscopeError, missing_extra
from convoscope.items import ColumnMap, ItemError
from convoscope.judges import Verdict
from convoscope.runs import _ray_blocks as _blocks
from convoscope.runs._batchfn import BatchSettings, JudgeBatch, Rows, batch_settings, verdicts_from_table
from convoscope.runs._engine import STOP_GRACE_S, Progress, Sink
from convoscope.runs._options import EMBEDDED_DEFAULT, RunOptions
from convoscope.runs._ray_nodes import ask_nodes, check_nodes, worker_cpus
from convoscope.runs._repeats import ConsistencyTally
from convoscope.runs._result import RunResult
from convoscope.runs._summary import RunSummary
from convoscope.store._owner import worker_name
from convoscope.store._target import DEFAULT_STORE

if TYPE_CHECKING:
    from convoscope.store import Store


def connect(address: str | None = None) -> Any:
    """Ray, connected: to the cluster at ``address`` (``HOST:PORT``, ``ray://…``, ``auto``), to
    ``RAY_ADDRESS`` when set, else to a new local instance. Ray's usage statistics stay off."""
    try:
        import ray
    except ImportError as error:
        raise missing_extra(error, "a run on Ray") or error from None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no telemetry
        target = address or os.environ.get("RAY_ADDRESS")
        quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
        with _keeping_sigterm():
            if target in (None, "local"):
                ray.init(address="local", include_dashboard=False, **quiet)  # type: ignore[arg-type]
            else:
                ray.init(address=target, **quiet)  # type: ignore[arg-type]
    return ray


@contextlib.contextmanager
def _keeping_sigterm() -> Iterator[None]:
    """Ray's core installs its own SIGTERM handler (a stack dump, then abort: exit -6), which would
    end a run without its stop; the handler in place before ``ray.init`` is put back after it."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and before is not None:
            signal.signal(signal.SIGTERM, before)


def items_dataset(path: str | Path, *, encoding: str = "utf-8", limit: int | None = None,
                  rows_per_block: int | None = None) -> tuple[Any, Rows]:
    """A JSONL, CSV/TSV or Parquet items file as a Ray Dataset, and how its rows read
    (the ``rows`` of :func:`judge_dataset`). JSON lines are read as text and parsed by the
    batch function (one reader with the local engine; no column types guessed); CSV columns
    are read as text, as the local reader does. ``rows_per_block``: the file is cut into blocks
    of about that many rows as it is read (by bytes, estimated from its first rows), and
    :func:`verdicts_dataset` with that ``batch_size`` maps them as they are; otherwise Ray's own
    blocks (one for a file of up to 128 MB), which it cuts first."""
    ray = connect()
    source = Path(path)
    if not source.exists():
        raise ItemError(source, None, None, "file not found")
    suffix = source.suffix.lower()
    kinds: dict[str, _blocks.Kind] = {".jsonl": "lines", ".ndjson": "lines", ".csv": "csv", ".tsv": "csv",
                                      ".parquet": "parquet"}
    kind = kinds.get(suffix)
    if kind is None:
        raise ItemError(source, None, None, "a run on Ray reads .jsonl, .csv, .tsv or .parquet files")
    delimiter = "\t" if suffix == ".tsv" else ","
    size = (None if rows_per_block is None
            else _blocks.bytes_for(rows_per_block, _blocks.row_bytes(source, kind, delimiter=delimiter)))
    with _blocks.block_size(ray, size):
        if kind == "lines":
            dataset, rows = ray.data.read_text(str(source.resolve()), encoding=encoding), "lines"
        elif kind == "csv":
            dataset, rows = _read_csv(ray, source, encoding, delimiter), "table"
        else:
            dataset, rows = ray.data.read_parquet(str(source.resolve())), "table"
        if limit is not None:
            dataset = dataset.limit(limit)
    if size is not None and rows_per_block is not None:
        _blocks.mark_cut(dataset, rows_per_block)
    return dataset, rows  # type: ignore[return-value]


def _read_csv(ray: Any, path: Path, encoding: str, delimiter: str) -> Any:
    import csv

    import pyarrow as pa
    from pyarrow import csv as arrow_csv

    with path.open(encoding=encoding, newline="") as handle:
        header = next(csv.reader(handle, delimiter=delimiter), [])
    return ray.data.read_csv(
        str(path.resolve()), read_options=arrow_csv.ReadOptions(encoding=encoding),
        parse_options=arrow_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=arrow_csv.ConvertOptions(column_types={name: pa.string() for name in header}))


def verdicts_dataset(dataset: Any, settings: BatchSettings, *, workers: int | None = None,
                     cpus_per_worker: float = 1.0, batch_size: int = 64) -> Any:
    """``dataset`` mapped to verdict rows by :class:`JudgeBatch` on a pool of ``workers`` actors
    (default: from one up to what the cluster's CPUs allow); lazy, as Ray Datasets are. The
    dataset is cut into blocks of ``batch_size`` rows first (streaming), so that every worker
    gets work and a lost worker's blocks, judged again elsewhere, are small. A file read by
    :func:`items_dataset` with ``rows_per_block=batch_size`` already is, and each of its blocks
    is one batch: batches of exactly ``batch_size`` rows cut across blocks of about as many cost
    a copy of each block (an actor's steady rate went from 2,900 to 2,100 verdicts/s)."""
    ray = connect()
    cluster_cpus = float(ray.cluster_resources().get("CPU", 0))
    if workers is None:
        cpus = int((cluster_cpus or 1) // max(cpus_per_worker, 0.01))
        most = max(1, cpus - 1)
        compute = ray.data.ActorPoolStrategy(min_size=1, max_size=most)
    else:
        most = workers
        compute = ray.data.ActorPoolStrategy(size=workers)
    cut = _blocks.cut_at(dataset) == batch_size  # read in blocks of a batch (items_dataset)
    blocks = dataset if cut else dataset.repartition(target_num_rows_per_block=batch_size)
    return blocks.map_batches(JudgeBatch, fn_constructor_kwargs={"settings": settings}, compute=compute,
                               batch_size=None if cut else batch_size, batch_format="pyarrow",
                               num_cpus=worker_cpus(cluster_cpus, most, cpus_per_worker))


def judge_dataset(
    dataset: Any,
    criteria: Sequence[Criterion],
    judge: Any = EMBEDDED_DEFAULT,
    *,
    store: Store | str | Path,
    rows: Rows = "table",
    columns: ColumnMap | None = None,
    source: str | None = None,
    batch_size: int = 64,
    cpus_per_worker: float = 1.0,
    on_progress: Progress | None = None,
    on_verdicts: Sink | None = None,
    collect: bool = True,
    stop: threading.Event | None = None,
    model_options: dict[str, Any] | None = None,
    **settings: Any,
) -> RunResult:
    """Judge the items of a Ray Dataset on a Ray cluster: :class:`~convoscope.runs.JudgeBatch` on
    a pool of actors (``workers`` of them; default as many as the cluster's CPUs allow), every
    verdict to ``store`` as it is made (PostgreSQL when the workers are on several machines); the
    verdicts come back to this process, which counts the run's summary as the local engine does
    and passes them to ``on_verdicts``. To keep them out of this process, write
    :func:`verdicts_dataset` with Ray Data instead (e.g. ``.write_parquet(folder)``).

    ``rows``: how the dataset's rows read (``"table"``: columns as in a CSV file, mapped by
    ``columns``; ``"records"``: item-shaped rows; ``"lines"``: JSON text in a ``text`` column).
    ``source`` names the input in the run's id (default: the dataset's files). ``settings``: those
    of :func:`~convoscope.runs.judge` (``concurrency`` is per worker; ``ray_address`` picks the
    cluster, else RAY_ADDRESS, else a local instance). ``stop``: set it to end the run early (the
    batches under way are finished and committed)."""
    options = RunOptions(**settings)
    ask_nodes(connect(options.ray_address))  # answered while the run is set up
    started = time.perf_counter()
    named = source or ",".join(dataset.input_files()) or "<ray-dataset>"
    prepared = batch_settings(criteria, judge, store=store, source=named, rows=rows, columns=columns,
                              options=options, model_options=model_options)
    from convoscope.store import Store

    opened = store if isinstance(store, Store) else Store(store)
    try:
        return _run(dataset, prepared, opened, batch_size=batch_size, cpus_per_worker=cpus_per_worker,
                    on_progress=on_progress, on_verdicts=on_verdicts, collect=collect, stop=stop,
                    started=started)
    finally:
        if not isinstance(store, Store):
            opened.close()


async def judge_on_ray(items: Any, criteria: Sequence[Criterion], judge: Any,
                       store: Store | str | Path | None, options: RunOptions,
                       extra: dict[str, Any] | None, **hooks: Any) -> RunResult:
    """``judge(..., engine="ray")``: ``items`` a Ray Dataset, a file (or an ItemStream over one:
    read by Ray), or items in memory; the run id is the local engine's for the same input."""
    from convoscope.items import ItemStream
    from convoscope.runs._run import _source

    ask_nodes(connect(options.ray_address))  # answered while the items are set up
    stream = items if isinstance(items, ItemStream) else None
    rows: Rows = "records"
    if _is_dataset(items):
        dataset, columns, source = items, None, None
    elif stream is None and isinstance(items, str | Path):
        stream = ItemStream(items)
    if stream is not None and isinstance(stream.source, str | Path):
        dataset, rows = items_dataset(stream.source, encoding=stream.encoding, limit=stream.limit,
                                      rows_per_block=stream.chunk_size)
        columns, source = stream.columns, stream.name
    elif not _is_dataset(items):
        stream = stream or ItemStream(items if isinstance(items, list | tuple) else list(items))
        listed = list(stream)
        blocks = max(1, -(-len(listed) // stream.chunk_size))  # of at most a chunk each
        dataset = _blocks.mark_cut(_ray().data.from_items(
            [item.model_dump(mode="json", exclude_none=True) for item in listed], override_num_blocks=blocks),
            stream.chunk_size)
        columns, source = None, _source(ItemStream(listed, chunk_size=stream.chunk_size))
    stop = threading.Event()
    work = asyncio.ensure_future(asyncio.to_thread(
        judge_dataset, dataset, criteria, judge, store=store if store is not None else DEFAULT_STORE,
        rows=rows, columns=columns, source=source, model_options=extra, stop=stop,
        batch_size=stream.chunk_size if stream is not None else 64, **hooks, **_settings(options)))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        # Ctrl-C, SIGTERM: the run takes the batch under way, stops the workers and passes on
        # what they stored; it is given a bounded time for that (a second signal ends the wait).
        stop.set()
        await asyncio.wait({work}, timeout=STOP_GRACE_S + _SETTLE_S + 5.0)
        raise


def _settings(options: RunOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in RunOptions.__dataclass_fields__}


def _is_dataset(items: Any) -> bool:
    return type(items).__module__.startswith("ray.data")


def _ray() -> Any:
    import ray

    return ray


def _run(dataset: Any, settings: BatchSettings, store: Store, *, batch_size: int, cpus_per_worker: float,
         on_progress: Progress | None, on_verdicts: Sink | None, collect: bool,
         stop: threading.Event | None, started: float) -> RunResult:
    from convoscope import __version__

    check_nodes(_ray())  # before the run is recorded: a node that cannot run it stops it at once
    store.start_run(settings.run_id, {"judge": settings.identity,
                                      "criteria": [c.name for c in settings.criteria],
                                      "source": settings.source, "engine": "ray",
                                      "convoscope_version": __version__})
    summary = RunSummary(run_id=settings.run_id, store=store.location, worker=f"ray:{worker_name()}")
    tally = _Tally(summary, collect)
    mapped = verdicts_dataset(dataset, settings, workers=settings.options.workers,
                              cpus_per_worker=cpus_per_worker, batch_size=batch_size)
    batches = _batches(mapped)
    for table in batches:
        _hand_on(tally.add(table), on_verdicts, on_progress)
        if stop is not None and stop.is_set():
            break
    if stop is not None and stop.is_set():
        batches.close()  # Ray Data shuts its executor down: the workers stop taking blocks
        _settle(store, settings.run_id)
        _hand_on(tally.rest(store, settings.run_id), on_verdicts, on_progress)
    summary.self_consistency = [result.as_dict() for result in tally.consistency.results()]
    summary.wall_time_s = time.perf_counter() - started
    store.finish_run(settings.run_id, summary.as_dict())
    return RunResult(settings.run_id, tuple(tally.finals), summary, tuple(tally.members), store.location)


def _hand_on(found: tuple[list[Verdict], list[Verdict]], on_verdicts: Sink | None,
             on_progress: Progress | None) -> None:
    finals, members = found
    if on_verdicts is not None and (finals or members):
        on_verdicts(finals, members)
    if on_progress is not None and finals:
        on_progress(len(finals))


_SETTLE_S = 5.0  # after a stop, how long the stopped workers' last commits are waited for, at most


def _settle(store: Store, run_id: str) -> None:
    """Wait until the run's stored verdicts stop changing (a worker told to stop may be
    committing its batch), for at most ``_SETTLE_S``."""
    deadline = time.monotonic() + _SETTLE_S
    seen = _stored_count(store, run_id)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _stored_count(store, run_id)
        if now == seen:
            return
        seen = now


def _stored_count(store: Store, run_id: str) -> int:
    import sqlalchemy as sa

    from convoscope.store._schema import SHARED, run_tasks, verdicts

    query = (sa.select(sa.func.count()).select_from(verdicts)
             .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key,
                                      verdicts.c.scope == SHARED))
             .where(run_tasks.c.run_id == run_id))
    with store.engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def _stored_rows(store: Store, run_id: str, passed: frozenset[str] | set[str]) -> list[tuple[str, str, bool]]:
    """(task key, verdict JSON, member?) of the run's stored verdicts not in ``passed``, in the
    run's order of keys."""
    import sqlalchemy as sa

    from convoscope.store._schema import SHARED, run_tasks, verdicts

    query = (sa.select(verdicts.c.task_key, verdicts.c.data, run_tasks.c.member)
             .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key,
                                      verdicts.c.scope == SHARED))
             .where(run_tasks.c.run_id == run_id).order_by(run_tasks.c.chunk, run_tasks.c.position))
    with store.engine.connect() as connection:
        return [(key, data, bool(member)) for key, data, member in connection.execute(query)
                if key not in passed]


def _batches(mapped: Any) -> Generator[Any, None, None]:
    """The verdict tables as the workers finish them; a user's error (bad input, a setting)
    raised in a worker comes out as itself, not wrapped in Ray's task error."""
    try:
        yield from mapped.iter_batches(batch_size=None, batch_format="pyarrow")
    except Exception as error:
        cause = _user_error(error)
        if cause is None:
            raise
        raise cause from None


def _user_error(error: BaseException | None) -> ConvoscopeError | None:
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, ConvoscopeError) and type(error).__module__.startswith("convoscope"):
            return error
        error = getattr(error, "cause", None) or error.__cause__
        seen += 1
    return None


class _Tally:
    """The run's summary, counted from the verdict rows as they arrive (as the engine counts)."""

    def __init__(self, summary: RunSummary, collect: bool) -> None:
        self.summary, self.collect = summary, collect
        self.finals: list[Verdict] = []
        self.members: list[Verdict] = []
        self.consistency = ConsistencyTally()  # with repeats: how far each judge agrees with itself
        self.passed: set[str] = set()  # the task keys handed on

    def rest(self, store: Store, run_id: str) -> tuple[list[Verdict], list[Verdict]]:
        """What the store holds for the run and was never handed on (a stopped run's workers
        committed it, but its batch never came back): handed on now, so ``--out`` is the store."""
        finals: list[Verdict] = []
        members: list[Verdict] = []
        for key, data, member in _stored_rows(store, run_id, self.passed):
            verdict = Verdict.model_validate_json(data)
            (members if member else finals).append(verdict)
            self.passed.add(key)
            if not member:
                self.summary.total_tasks += 1
                self.summary.count(verdict, [])
        if self.collect:
            self.finals.extend(finals)
            self.members.extend(members)
        return finals, members

    def add(self, table: Any) -> tuple[list[Verdict], list[Verdict]]:
        summary = self.summary
        finals: list[Verdict] = []
        members: list[Verdict] = []
        pending: list[Verdict] = []
        self.passed.update(key for key in table.column("task_key").to_pylist() if key)
        for verdict, member, origin in verdicts_from_table(table):
            if origin == "skipped":
                summary.not_applicable += 1
                continue
            if member:
                pending.append(verdict)
                continue
            summary.total_tasks += 1
            if origin == "stored":
                summary.resumed += 1
            else:
                summary.retried += origin == "retried"
                summary.count(verdict, pending)
            if verdict.unscored_reason is not None:
                summary.outstanding[verdict.unscored_reason] += 1
            finals.append(verdict)
            members.extend(pending)
            pending = []
        self.consistency.add(members)
        if self.collect:
            self.finals.extend(finals)
            self.members.extend(members)
        return finals, members


__all__ = ["connect", "items_dataset", "judge_dataset", "judge_on_ray", "verdicts_dataset"]
