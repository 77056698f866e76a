"""Each run as a stream of slim rows sorted by (criterion, item_id), and the ordered merge of two.

A run in a store is read with one ``ORDER BY criterion, item_id`` query per side: the database
sorts (SQLite spills a large sort to a temporary file), and Python holds one row of each side at
a time. A verdict file or an archive is already in memory when read, so its rows are sorted there.
Equal keys keep the run's order, so when a run holds two verdicts for one item and criterion the
merge keeps the last, as the run itself would read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from convoscope.errors import ConfigError

BATCH = 1000  # rows fetched from the database at a time, per side
ARCHIVE_HELD_UP_TO = 200_000  # final verdicts; a larger archive goes into a scratch store to be streamed


class Row(NamedTuple):
    """What a comparison needs of one verdict (the rest of it stays in the store)."""

    criterion: str
    item_id: str
    value: int | str | None
    reason: str | None
    system: str | None
    language: str | None
    task_key: str | None = None


@dataclass
class Source:
    """One side: its label, its spec, and a function that opens its sorted rows."""

    label: str
    spec: dict[str, Any]
    open_rows: Callable[[], Iterator[Row]]
    close: Callable[[], None] = lambda: None
    store: Any = None  # the open Store when the side is a stored run
    run_id: str | None = None
    archive: Any = None  # the RunArchive when the side is one
    repeated: list[int] = field(default_factory=lambda: [0])


def from_verdicts(
    label: str, verdicts: Iterable[Any], spec: dict[str, Any], *, rater: str | None = None,
    keys: Iterable[str | None] = (), archive: Any = None, choose: bool = True,
) -> Source:
    """A side held in memory (a verdict file, a list, a RunResult, an archive): one rater's
    verdicts (see :func:`pick_rater`), sorted here, stably."""
    held = list(verdicts)
    keyed = list(keys) or [None] * len(held)
    chosen = pick_rater(label, sorted({v.rater for v in held}), rater) if choose or rater else None
    rows = [
        Row(v.criterion, v.item_id, v.value, v.reason, v.system, v.language, key)
        for v, key in zip(held, keyed, strict=True)
        if chosen is None or v.rater == chosen
    ]
    rows.sort(key=lambda row: (row.criterion, row.item_id))
    return Source(label, spec, lambda: iter(rows), archive=archive)


def open_source(reference: Any, *, store: str | Path | None, rater: str | None) -> Source:
    """A verdict file, a run archive, a run id in ``store``, a RunSide, a RunResult or a list."""
    from convoscope.comparison._load import VERDICT_SUFFIXES, RunSide

    if isinstance(reference, Source):  # rows already sorted, e.g. made by a caller's own reader
        return reference
    if isinstance(reference, RunSide):
        return from_verdicts(reference.label, reference.verdicts, reference.spec, rater=rater, choose=False)
    if hasattr(reference, "run_id") and hasattr(reference, "verdicts"):  # a RunResult
        return from_verdicts(str(reference.run_id), reference.verdicts, {}, rater=rater)
    if isinstance(reference, list | tuple):
        return from_verdicts("verdicts", reference, {}, rater=rater)
    path = Path(str(reference))
    from convoscope.archive import is_archive, read_run_archive

    if is_archive(path):
        archive = read_run_archive(path)
        if int(archive.manifest.get("counts", {}).get("final", 0)) > ARCHIVE_HELD_UP_TO:
            return _scratch_store(archive, rater)
        rows = [row for row in archive.iter_rows() if row.final]
        return from_verdicts(archive.run_id, [row.verdict for row in rows], archive.spec, rater=rater,
                             keys=[row.task_key for row in rows], archive=archive)
    if path.suffix.lower() in VERDICT_SUFFIXES or path.exists():
        from convoscope.judges import read_verdicts

        return from_verdicts(path.name, read_verdicts(path), {}, rater=rater)
    if store is None:
        raise ConfigError(f"{reference}: no such verdict file, and no --store to find a run of that id in")
    return from_store(str(reference), store, rater)


def open_run(run_id: str, store: str | Path) -> tuple[Any, str]:
    """``store`` opened (an existing one: a comparison never creates a store) and the one run id
    in it equal to ``run_id`` or starting with it; the store is closed again when there is none."""
    from convoscope.archive._export import find_run
    from convoscope.store import Store

    if "://" not in str(store) and not Path(str(store)).is_file():
        raise ConfigError(f"{store}: no such store")
    opened = Store(store)
    try:
        return opened, find_run(opened, run_id)
    except BaseException:
        opened.close()
        raise


def from_store(run_id: str, store: str | Path, rater: str | None) -> Source:
    """A run in a store, streamed in (criterion, item_id) order by the database."""
    opened, run = open_run(run_id, store)
    try:
        rater = _the_rater(opened, run, rater)
    except BaseException:
        opened.close()
        raise
    spec = opened.run_spec(run) or {}
    return Source(run, spec, lambda: _stored_rows(opened, run, rater), opened.close, opened, run)


def _scratch_store(archive: Any, rater: str | None) -> Source:
    """A large archive imported into a store in a temporary folder (removed when the comparison
    closes the side), then streamed from there like any stored run."""
    import shutil
    import tempfile

    from convoscope.archive import import_run

    folder = tempfile.mkdtemp(prefix="convoscope-compare-")
    try:
        store = Path(folder) / "archive.db"
        import_run(archive.path, store)
        source = from_store(archive.run_id, store, rater)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    close = source.close

    def close_and_remove() -> None:
        close()
        shutil.rmtree(folder, ignore_errors=True)

    source.spec, source.archive, source.close = archive.spec, archive, close_and_remove
    return source


def _final(run_id: str, *columns: Any) -> Any:
    """The run's final verdicts (not a panel's members), each with its place in the run."""
    import sqlalchemy as sa

    from convoscope.store._schema import SHARED, run_tasks, verdicts

    asked = (
        sa.select(*columns, run_tasks.c.chunk.label("first"), run_tasks.c.position.label("then"))
        .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key, verdicts.c.scope == SHARED))
        .where(run_tasks.c.run_id == run_id, ~run_tasks.c.member)
    )
    own = sa.select(*columns, sa.literal(0).label("first"), verdicts.c.id.label("then")).where(
        verdicts.c.scope == run_id
    )
    return sa.union_all(asked, own).subquery()


def _the_rater(opened: Any, run_id: str, rater: str | None) -> str | None:
    """The rater whose verdicts are the run (as :func:`convoscope.comparison.load_side` picks it)."""
    import sqlalchemy as sa

    from convoscope.store._schema import verdicts

    union = _final(run_id, verdicts.c.rater)
    with opened.engine.connect() as connection:
        raters = sorted(row[0] for row in connection.execute(sa.select(union.c.rater).distinct()))
    return pick_rater(run_id, raters, rater)


def pick_rater(label: str, raters: list[str], rater: str | None) -> str | None:
    """The rater that is the run: the one asked for, the only one, or a panel's pooled verdicts
    (None: take every verdict)."""
    if rater is not None:
        if rater not in raters:
            raise ConfigError(f"{label}: no verdict by rater {rater!r} (raters: {', '.join(raters)})")
        return rater
    if len(raters) <= 1:
        return None
    pooled = [name for name in raters if name.startswith("panel:")]
    if len(pooled) == 1:  # a panel's verdicts: its pooled ones are the run's
        return pooled[0]
    raise ConfigError(
        f"{label}: verdicts by {len(raters)} raters ({', '.join(raters[:6])}); "
        "say which one is the run with --rater-a / --rater-b"
    )


def _stored_rows(opened: Any, run_id: str, rater: str | None) -> Iterator[Row]:
    import sqlalchemy as sa

    from convoscope.store._schema import verdicts

    sqlite = opened.engine.dialect.name == "sqlite"
    if sqlite:  # only the fields compared leave the database, and only they are sorted
        fields = [sa.func.json_extract(verdicts.c.data, f"$.{name}").label(name)
                  for name in ("value", "reason", "system", "language")]
    else:
        fields = [verdicts.c.data]
    union = _final(run_id, verdicts.c.criterion, verdicts.c.item_id, verdicts.c.task_key, verdicts.c.rater,
                   *fields)
    criterion, item = union.c.criterion, union.c.item_id
    if not sqlite:  # byte order, as Python compares strings (a locale's collation would not)
        criterion, item = criterion.collate("C"), item.collate("C")
    query = sa.select(union).order_by(criterion, item, union.c.first, union.c.then)
    if rater is not None:
        query = query.where(union.c.rater == rater)
    with opened.engine.connect() as connection:
        result = connection.execution_options(yield_per=BATCH).execute(query)
        for row in result:
            if sqlite:
                yield Row(row.criterion, row.item_id, row.value, row.reason, row.system, row.language,
                          row.task_key)
            else:
                data = json.loads(row.data)
                yield Row(row.criterion, row.item_id, data.get("value"), data.get("reason"),
                          data.get("system"), data.get("language"), row.task_key)


def last_of_each(rows: Iterator[Row], label: str, repeated: list[int]) -> Iterator[Row]:
    """One row per (criterion, item_id), the last in the run's order; refuses unsorted input
    (a merge of unsorted streams would pair the wrong items silently)."""
    previous: Row | None = None
    for row in rows:
        if previous is not None:
            before, now = (previous.criterion, previous.item_id), (row.criterion, row.item_id)
            if now == before:
                repeated[0] += 1
                previous = row
                continue
            if now < before:
                raise ConfigError(f"{label}: verdicts came out of order ({before} before {now})")
            yield previous
        previous = row
    if previous is not None:
        yield previous


def merge(a: Iterator[Row], b: Iterator[Row]) -> Iterator[tuple[Row | None, Row | None]]:
    """Pairs of rows with the same (criterion, item_id), and rows found on one side only."""
    first, second = next(a, None), next(b, None)
    while first is not None or second is not None:
        key_a = (first.criterion, first.item_id) if first is not None else None
        key_b = (second.criterion, second.item_id) if second is not None else None
        if key_b is None or (key_a is not None and key_a < key_b):
            yield first, None
            first = next(a, None)
        elif key_a is None or key_b < key_a:
            yield None, second
            second = next(b, None)
        else:
            yield first, second
            first, second = next(a, None), next(b, None)
