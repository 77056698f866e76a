"""Items from tables already in memory: pandas DataFrames, Hugging Face datasets, lists of dicts.

They go through the same column mapping and validation as a CSV file; an error names the table
(``DataFrame``, ``Dataset``), the row (counted from 1) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from convoscope.items._model import Item


def is_table(source: Any) -> bool:
    """A DataFrame, a Hugging Face Dataset, or a list of dicts (not a path)."""
    kind = type(source).__name__
    return kind in ("DataFrame", "Dataset") or (isinstance(source, list) and
                                                 all(isinstance(row, Mapping) for row in source))


def _rows(source: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    if type(source).__name__ == "DataFrame":
        records: Iterable[Mapping[str, Any]] = source.to_dict(orient="records")
    else:  # a Hugging Face Dataset iterates as dicts, as does a list of dicts
        records = source
    for number, row in enumerate(records, start=1):
        yield number, {str(key): _plain(value) for key, value in row.items()}


def _plain(value: Any) -> Any:
    """NaN and numpy scalars as Python values (pandas fills missing cells with NaN)."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, list | dict | str):
        value = value.item() if getattr(value, "ndim", 0) == 0 else value.tolist()
    if isinstance(value, float) and value != value:
        return None
    return value


def items_from_table(source: Any, *, columns: Any = None) -> list[Item]:
    """Validated items from a DataFrame, a Hugging Face Dataset or a list of dicts, with the same
    ``ColumnMap`` as CSV files (row numbers count from 1)."""
    from convoscope.items._io import ItemError, _table_rows, _validate  # one reader for all tables

    name = type(source).__name__ if not isinstance(source, list) else "records"
    items: list[Item] = []
    seen: dict[str, int] = {}
    for row_number, row in _table_rows(name, _rows(source), columns):  # type: ignore[arg-type]
        row.setdefault("id", str(row_number))
        item = _validate(name, row_number, row)  # type: ignore[arg-type]
        if item.id in seen:
            raise ItemError(name, row_number, "id",
                            f"duplicate id {item.id!r} (first in row {seen[item.id]})")
        seen[item.id] = row_number
        items.append(item)
    if not items:
        raise ItemError(name, None, None, "no items in the table")
    return items


def verdicts_to_table(verdicts: Iterable[Any], *, kind: str = "pandas") -> Any:
    """Verdicts as a pandas DataFrame (``kind="pandas"``) or a Hugging Face Dataset (``"hf"``)."""
    rows = [verdict.model_dump(mode="json") for verdict in verdicts]
    if kind == "hf":
        try:
            from datasets import Dataset
        except ImportError:
            from convoscope.errors import ConfigError

            raise ConfigError("Hugging Face datasets need: pip install 'convoscope[hf]'") from None
        for row in rows:  # one type per column: lists and dicts as JSON text
            for key in ("options", "distribution"):
                row[key] = None if row[key] is None else json.dumps(row[key])
            row["value"] = None if row["value"] is None else str(row["value"])
        return Dataset.from_list(rows)
    import pandas as pd

    return pd.DataFrame(rows)
