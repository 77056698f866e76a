"""One adapter between convoscope's records and the tables people hold in memory.

Reading: pandas, polars (eager or lazy), pyarrow ``Table`` / ``RecordBatch`` / ``dataset.Dataset``,
Hugging Face ``Dataset`` / ``IterableDataset`` / ``DatasetDict`` (one split, by name) and lists
of dicts all become ``(row number, dict)`` pairs of plain Python values. Narwhals reads the
dataframe libraries it knows (pandas, polars, pyarrow and others), so no library is told apart
by its class name alone (polars and pandas both call theirs ``DataFrame``); Hugging Face and
pyarrow datasets are read batch by batch as Arrow tables.

Writing: records become one typed Arrow table (maps as JSON text, lists as lists, a column that
mixes numbers and labels as text), then the kind asked for: ``"pyarrow"``, ``"polars"``, ``"hf"``;
``"pandas"`` keeps Python objects in its cells, as pandas users expect.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from convoscope.errors import ConfigError

KINDS = ("pandas", "polars", "pyarrow", "hf")
_BATCH_ROWS = 1024
_HF_KINDS = ("Dataset", "IterableDataset", "DatasetDict", "IterableDatasetDict")


def table_kind(source: Any) -> str | None:
    """What kind of table ``source`` is (``"hf"``, ``"pyarrow-dataset"``, ``"pyarrow-batch"``,
    ``"narwhals"``, ``"records"``), or None when it is none."""
    if isinstance(source, list):
        return "records" if all(isinstance(row, Mapping) for row in source) else None
    module = type(source).__module__.partition(".")[0]
    if module == "datasets" and type(source).__name__ in _HF_KINDS:
        return "hf"
    if module == "pyarrow" and hasattr(source, "to_batches") and hasattr(source, "files"):
        return "pyarrow-dataset"
    if module == "pyarrow" and type(source).__name__ == "RecordBatch":
        return "pyarrow-batch"
    if module in ("builtins", "pathlib", "convoscope"):
        return None
    import narwhals as nw

    native = nw.from_native(source, pass_through=True)
    return "narwhals" if native is not source else None


def table_name(source: Any) -> str:
    """How an error names the table: its library and class (``polars.DataFrame``)."""
    if isinstance(source, list):
        return "records"
    return f"{type(source).__module__.partition('.')[0]}.{type(source).__name__}"


def table_rows(source: Any, *, split: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number from 1, row of plain Python values) for every row of a table."""
    rows = _raw_rows(source, split)
    for number, row in enumerate(rows, start=1):
        yield number, {str(key): plain(value) for key, value in row.items()}


def _raw_rows(source: Any, split: str | None) -> Iterable[Mapping[str, Any]]:
    kind = table_kind(source)
    if kind is None:
        raise not_a_source(source)
    if split is not None and kind != "hf":
        raise ConfigError(f"split={split!r} names a part of a Hugging Face DatasetDict, "
                          f"not of a {table_name(source)}")
    if kind == "records":
        return source
    if kind == "pyarrow-batch":
        return source.to_pylist()
    if kind == "hf":
        return _hf_rows(one_split(source, split))
    if kind == "pyarrow-dataset":
        return (row for batch in source.to_batches(batch_size=_BATCH_ROWS) for row in batch.to_pylist())
    return _narwhals_rows(source)


def not_a_source(source: Any) -> ConfigError:
    """The one-line error for an object that is neither a path nor a table this adapter reads."""
    return ConfigError(f"cannot read items or verdicts from a {table_name(source)}: give a file path, a "
                       "list of dicts, or a pandas, polars, pyarrow or Hugging Face table")


def one_split(source: Any, split: str | None) -> Any:
    """The split of a DatasetDict that ``split`` names (a Dataset passes through)."""
    if not type(source).__name__.endswith("Dict"):
        if split is not None:
            raise ConfigError(f"split={split!r} names a part of a DatasetDict; this is one Dataset")
        return source
    names = ", ".join(source) or "none"
    if split is None:
        example = next(iter(source), "train")
        raise ConfigError(f"a DatasetDict holds splits ({names}): name one, e.g. split={example!r} "
                          f"(or pass the dataset's [{example!r}])")
    if split not in source:
        raise ConfigError(f"the DatasetDict has no split {split!r} (its splits: {names})")
    return source[split]


def _hf_rows(dataset: Any) -> Iterator[Mapping[str, Any]]:
    if type(dataset).__name__ == "IterableDataset":
        yield from dataset
        return
    # Arrow batches, with any select/shuffle/filter of the dataset applied (its indices mapping).
    for batch in dataset.with_format("arrow").iter(batch_size=_BATCH_ROWS):
        yield from batch.to_pylist()


def _narwhals_rows(source: Any) -> Iterator[Mapping[str, Any]]:
    import narwhals as nw

    frame: Any = nw.from_native(source)
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect()
    if frame.implementation.is_pyarrow():
        for batch in frame.to_native().to_batches(max_chunksize=_BATCH_ROWS):
            yield from batch.to_pylist()
        return
    yield from frame.iter_rows(named=True)


def plain(value: Any) -> Any:
    """Cells as Python values: NaN (pandas' missing) as None, numpy scalars and arrays as numbers
    and lists, inside lists and dicts too."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if value != value else value
    if isinstance(value, Mapping):
        return {str(key): plain(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [plain(inner) for inner in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return plain(value.tolist())
    return value


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ConfigError(f"unknown table kind {kind!r} (use {', '.join(KINDS)})")


def pyarrow_or_hint() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ConfigError("typed tables (polars, pyarrow, hf) need pyarrow: "
                          "pip install 'convoscope[parquet]'") from None
    return pyarrow


def to_table(rows: list[dict[str, Any]], schema: Any, *, kind: str) -> Any:
    """``rows`` (plain values) as a typed table of ``kind`` (``pyarrow``, ``polars``, ``hf``)."""
    check_kind(kind)
    pa = pyarrow_or_hint()
    typed = [{name: _typed(row.get(name), schema.field(name).type) for name in schema.names} for row in rows]
    table = pa.Table.from_pylist(typed, schema=schema)
    if kind == "pyarrow":
        return table
    if kind == "polars":
        import narwhals as nw

        _needs("polars", "polars tables need polars: pip install polars")
        return nw.from_native(table, eager_only=True).to_polars()
    _needs("datasets", "Hugging Face datasets need: pip install 'convoscope[hf]'")
    from datasets import Dataset

    return Dataset(table)


def _typed(value: Any, arrow_type: Any) -> Any:
    """A value as its Arrow column holds it: maps as JSON text, other values in a text column as
    their text."""
    import pyarrow as pa

    if value is None or not pa.types.is_string(arrow_type) or isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _needs(module: str, hint: str) -> None:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:  # a folder of the same name is not the library
        raise ConfigError(hint)
