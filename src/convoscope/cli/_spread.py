"""``convoscope judge --engine ray``: the run on a Ray cluster, with the local run's progress,
gates, summary and exit status (``--workers N`` needs nothing here: the local engine shares the
run with N - 1 more processes, see :mod:`convoscope.runs._workers`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from convoscope.cli._progress import RunProgress
from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import ColumnMap
from convoscope.judges import Verdict
from convoscope.runs import GateTally, RunResult
from convoscope.store import Store


def run_on_ray(console: Console, items_path: Path, criteria: list[Criterion], specs: list[Any],
               store: Store, out: Path | None, tally: GateTally, every: float, options: dict[str, Any], *,
               address: str | None, workers: int | None, columns: ColumnMap, encoding: str,
               limit: int | None, batch_size: int, count_total: Callable[[], int | None],
               reference_candidates: bool = False) -> RunResult:
    """Read ITEMS as a Ray Dataset, judge it on the cluster, write --out as a directory."""
    from convoscope.runs import connect, items_dataset, judge_dataset

    if reference_candidates:
        raise ConfigError("--reference-candidates groups the candidates of a context, which needs the "
                          "whole file in one process: not with --engine ray")
    if options["model_options"].get("batch"):
        raise ConfigError("--batch keeps its batches in one process's cache: not with --engine ray")
    if out is not None and out.suffix:
        raise ConfigError(f"--out {out}: with --engine ray, name a directory for the Parquet files")
    connect(address)
    _quiet_ray_data()
    dataset, rows = items_dataset(items_path, encoding=encoding, limit=limit)
    settings = {key: value for key, value in options.items() if key != "lease_s"}
    with RunProgress(console, every=every, count_total=count_total) as progress:
        def on_verdicts(finals: list[Verdict], _members: list[Verdict]) -> None:
            tally.add(finals)
            progress.unscored.update(v.unscored_reason for v in finals if v.unscored_reason)

        result = judge_dataset(dataset, criteria, specs, store=store, out=out, rows=rows, columns=columns,
                               source=str(items_path.resolve()), workers=workers, batch_size=batch_size,
                               on_progress=progress.advance, on_verdicts=on_verdicts, collect=False,
                               **settings)
    if out is not None:
        console.print(f"Wrote the verdicts to {escape(str(out))}/part-*.parquet")
    return result


def _quiet_ray_data() -> None:
    """Our progress line, not Ray Data's progress bars and execution log."""
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
