"""A judging run spread over a Ray cluster with Ray Data (extra ``ray``).

The items are a Ray Dataset (:func:`items_dataset` reads a JSONL, CSV or Parquet file as one);
:func:`verdicts_dataset` maps :class:`~convoscope.runs.JudgeBatch` over its blocks on a pool of
actors, one judge per actor, every actor writing to the shared store; :func:`judge_dataset` runs
that, streams the verdicts back to the driver — which writes them as Parquet files and counts the
run's summary as the local engine does — and returns a :class:`RunResult`. A block judged again
(Ray retries the blocks of a lost worker) or a run started again judges only the tasks the store
does not hold.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from convoscope.criteria import Criterion
from convoscope.errors import ConvoscopeError, LocatedError, missing_extra
from convoscope.items import ColumnMap, ItemError
from convoscope.judges import Verdict
from convoscope.runs._batchfn import (
    EXTRA_COLUMNS,
    BatchSettings,
    JudgeBatch,
    Rows,
    batch_settings,
    verdict_schema,
    verdicts_from_table,
)
from convoscope.runs._build import BESIDE_STORE, EMBEDDED_DEFAULT, JudgeSpec
from convoscope.runs._engine import Progress, Sink
from convoscope.runs._plan import worker_name
from convoscope.runs._result import RunResult
from convoscope.runs._summary import RunSummary
from convoscope.store import Store

PART_ROWS = 1_000_000  # verdicts per Parquet file of --out
_ROW_GROUP = 10_000


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
        if target in (None, "local"):
            ray.init(address="local", include_dashboard=False, **quiet)  # type: ignore[arg-type]
        else:
            ray.init(address=target, **quiet)  # type: ignore[arg-type]
    return ray


def items_dataset(path: str | Path, *, encoding: str = "utf-8", limit: int | None = None) -> tuple[Any, Rows]:
    """A JSONL, CSV/TSV or Parquet items file as a Ray Dataset, and how its rows read
    (the ``rows`` of :func:`judge_dataset`). JSON lines are read as text and parsed by the
    batch function (one reader with the local engine; no column types guessed); CSV columns
    are read as text, as the local reader does."""
    ray = connect()
    source = Path(path)
    if not source.exists():
        raise ItemError(source, None, None, "file not found")
    suffix = source.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        dataset, rows = ray.data.read_text(str(source.resolve()), encoding=encoding), "lines"
    elif suffix in (".csv", ".tsv"):
        dataset, rows = _read_csv(ray, source, encoding, "\t" if suffix == ".tsv" else ","), "table"
    elif suffix == ".parquet":
        dataset, rows = ray.data.read_parquet(str(source.resolve())), "table"
    else:
        raise ItemError(source, None, None, "a run on Ray reads .jsonl, .csv, .tsv or .parquet files")
    return (dataset.limit(limit) if limit is not None else dataset), rows  # type: ignore[return-value]


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
    (default: from one up to what the cluster's CPUs allow); lazy, as Ray Datasets are."""
    ray = connect()
    if workers is None:
        cpus = int(ray.cluster_resources().get("CPU", 1) // max(cpus_per_worker, 0.01))
        compute = ray.data.ActorPoolStrategy(min_size=1, max_size=max(1, cpus - 1))
    else:
        compute = ray.data.ActorPoolStrategy(size=workers)
    return dataset.map_batches(JudgeBatch, fn_constructor_kwargs={"settings": settings}, compute=compute,
                               batch_size=batch_size, batch_format="pyarrow", num_cpus=cpus_per_worker)


def judge_dataset(
    dataset: Any,
    criteria: Sequence[Criterion],
    judge: str | JudgeSpec | Sequence[str | JudgeSpec] = EMBEDDED_DEFAULT,
    *,
    store: Store | str | Path,
    out: str | Path | None = None,
    rows: Rows = "table",
    columns: ColumnMap | None = None,
    source: str | None = None,
    cache_path: str | Path | None = BESIDE_STORE,
    workers: int | None = None,
    cpus_per_worker: float = 1.0,
    batch_size: int = 64,
    on_progress: Progress | None = None,
    on_verdicts: Sink | None = None,
    collect: bool = True,
    **options: Any,
) -> RunResult:
    """Judge the items of a Ray Dataset on a Ray cluster; verdicts go to ``store`` as they are
    made (PostgreSQL when the workers are on several machines) and, with ``out``, to Parquet
    files in that directory (``part-00000.parquet``, …; what ``--out`` writes, members first).

    ``rows``: how the dataset's rows read (``"table"``: columns as in a CSV file, mapped by
    ``columns``; ``"records"``: item-shaped rows; ``"lines"``: JSON text in a ``text`` column).
    ``source`` names the input in the run's id (default: the dataset's files). Connect first
    with :func:`connect` (or ``ray.init``) to use a cluster; otherwise a local instance starts.
    ``options`` as for :func:`batch_settings` (``concurrency`` is per worker). Returns what the
    local engine returns; its summary counts what the workers did."""
    connect()
    started = time.perf_counter()
    named = source or ",".join(dataset.input_files()) or "<ray-dataset>"
    settings = batch_settings(criteria, judge, store=store, source=named, cache_path=cache_path,
                              rows=rows, columns=columns, **options)
    opened = store if isinstance(store, Store) else Store(store)
    try:
        return _run(dataset, settings, opened, out, workers=workers, cpus_per_worker=cpus_per_worker,
                    batch_size=batch_size, on_progress=on_progress, on_verdicts=on_verdicts,
                    collect=collect, started=started)
    finally:
        if not isinstance(store, Store):
            opened.close()


def _run(dataset: Any, settings: BatchSettings, store: Store, out: str | Path | None, *,
         workers: int | None, cpus_per_worker: float, batch_size: int, on_progress: Progress | None,
         on_verdicts: Sink | None, collect: bool, started: float) -> RunResult:
    from convoscope import __version__

    store.start_run(settings.run_id, {"judge": [spec.model for spec in settings.judges],
                                      "criteria": [c.name for c in settings.criteria],
                                      "source": settings.source, "engine": "ray",
                                      "convoscope_version": __version__})
    summary = RunSummary(run_id=settings.run_id, store=store.location, worker=f"ray:{worker_name()}")
    tally = _Tally(summary, collect)
    parts = _Parts(Path(out), settings.criteria) if out is not None else None
    mapped = verdicts_dataset(dataset, settings, workers=workers, cpus_per_worker=cpus_per_worker,
                              batch_size=batch_size)
    try:
        for table in _batches(mapped):
            finals, members = tally.add(table)
            if parts is not None:
                parts.write(table)
            if on_verdicts is not None:
                on_verdicts(finals, members)
            if on_progress is not None and finals:
                on_progress(len(finals))
    finally:
        if parts is not None:
            parts.close()
    summary.wall_time_s = time.perf_counter() - started
    store.finish_run(settings.run_id, summary.as_dict())
    return RunResult(settings.run_id, tuple(tally.finals), summary, tuple(tally.members), store.location)


def _batches(mapped: Any) -> Iterator[Any]:
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

    def add(self, table: Any) -> tuple[list[Verdict], list[Verdict]]:
        summary = self.summary
        finals: list[Verdict] = []
        members: list[Verdict] = []
        pending: list[Verdict] = []
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
        if self.collect:
            self.finals.extend(finals)
            self.members.extend(members)
        return finals, members


class _Parts:
    """Verdicts as Parquet files in a directory: ``part-00000.parquet``, … (the files of an
    earlier run there are replaced); members and final verdicts, the columns of ``--out``."""

    def __init__(self, directory: Path, criteria: Sequence[Criterion]) -> None:
        import pyarrow as pa

        if directory.exists() and not directory.is_dir():
            raise LocatedError(directory, "is a file: a run on Ray writes a directory of Parquet files")
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for old in directory.glob("part-*.parquet"):
                old.unlink()
        except OSError as error:
            raise LocatedError(directory, f"could not be written ({error.strerror or error})") from None
        self.directory = directory
        full = verdict_schema(criteria)
        self.schema = pa.schema([field for field in full if field.name not in EXTRA_COLUMNS])
        self.count = 0
        self._writer: Any = None
        self._in_part = 0
        self._pending: list[Any] = []
        self._pending_rows = 0

    def write(self, table: Any) -> None:
        import pyarrow.compute as pc

        table = table.filter(pc.not_equal(table["origin"], "skipped"))
        self._pending.append(table.drop_columns(list(EXTRA_COLUMNS)))
        self._pending_rows += table.num_rows
        self.count += table.num_rows
        if self._pending_rows >= _ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._pending:
            return
        table = pa.concat_tables(self._pending)
        self._pending, self._pending_rows = [], 0
        if self._writer is not None and self._in_part + table.num_rows > PART_ROWS:
            self._writer.close()
            self._writer = None
        if self._writer is None:
            index = len(list(self.directory.glob("part-*.parquet")))
            self._writer = pq.ParquetWriter(str(self.directory / f"part-{index:05d}.parquet"), self.schema)
            self._in_part = 0
        self._writer.write_table(table)
        self._in_part += table.num_rows

    def close(self) -> None:
        self._flush()
        if self._writer is None:
            import pyarrow.parquet as pq

            pq.write_table(self.schema.empty_table(), str(self.directory / "part-00000.parquet"))
        else:
            self._writer.close()


__all__ = ["connect", "items_dataset", "judge_dataset", "verdicts_dataset"]
