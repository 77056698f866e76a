"""Items from tables already in memory, and items and verdicts back out as tables.

Every kind of table goes through one adapter (:mod:`convoscope.items._tables`): pandas, polars,
pyarrow, Hugging Face datasets and lists of dicts. Rows go through the same column mapping and
validation as a CSV file; an error names the table (``pandas.DataFrame``, ``datasets.Dataset``),
the row (counted from 1) and the field.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel

from convoscope.items._model import Item
from convoscope.items._tables import check_kind, plain, table_kind, table_name, table_rows, to_table


def is_table(source: Any) -> bool:
    """A table in memory (pandas, polars, pyarrow, Hugging Face) or a list of dicts (not a path)."""
    return table_kind(source) is not None


def _rows(source: Any, split: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    return table_rows(source, split=split)


_plain = plain  # the name other modules import


def items_from_table(source: Any, *, columns: Any = None, split: str | None = None) -> list[Item]:
    """Validated items from a table (see :func:`is_table`) or a list of dicts, with the same
    ``ColumnMap`` as CSV files (row numbers count from 1). ``split`` names the split of a
    Hugging Face ``DatasetDict``."""
    from convoscope.items._io import ItemError, _table_rows, _validate  # one reader for all tables

    name = table_name(source)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for row_number, row in _table_rows(name, table_rows(source, split=split), columns,  # type: ignore[arg-type]
                                          empty_is_missing=False):
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


def items_to_table(items: Iterable[Item], *, kind: str = "pandas") -> Any:
    """Items as a table of ``kind`` (``pandas``, ``polars``, ``pyarrow`` or ``hf``) that
    :func:`items_from_table` reads back: ``context`` a list of ``{speaker, text}``, ``meta`` a
    dict (pandas) or its JSON text (typed tables)."""
    return records_to_table(list(items), kind=kind, model=Item)


def verdicts_to_table(verdicts: Iterable[Any], *, kind: str = "pandas") -> Any:
    """Verdicts as a table of ``kind`` (``pandas``, ``polars``, ``pyarrow`` or ``hf``) that
    :func:`convoscope.read_verdicts` reads back. In typed tables ``distribution`` is JSON text and
    ``value`` is text when numbers and labels are mixed."""
    records = list(verdicts)
    if records:
        return records_to_table(records, kind=kind, model=type(records[0]))
    from convoscope.judges import Verdict  # an empty table still has the verdict columns

    return records_to_table([], kind=kind, model=Verdict)


def records_to_table(records: list[BaseModel], *, kind: str, model: type[BaseModel]) -> Any:
    check_kind(kind)
    rows = [record.model_dump(mode="json") for record in records]
    if kind == "pandas":  # Python objects in cells; no pyarrow needed
        import pandas as pd

        return pd.DataFrame(rows, columns=list(model.model_fields))
    return to_table(rows, _schema(model, rows), kind=kind)


def _schema(model: type[BaseModel], rows: list[dict[str, Any]]) -> Any:
    """The Parquet schema of ``model`` (maps as JSON text), with a number-or-label column whose
    values are all whole numbers as integers, and sequences of models as lists of structs."""
    from convoscope.items._tables import pyarrow_or_hint
    from convoscope.items._write import arrow_schema

    pa = pyarrow_or_hint()
    base = arrow_schema(model)
    fields = []
    for field in base:
        values = [row.get(field.name) for row in rows if row.get(field.name) is not None]
        annotation = model.model_fields[field.name].annotation
        inner = _model_of_sequence(annotation)
        if inner is not None:
            struct = pa.struct([(name, pa.string()) for name in inner.model_fields])
            field = pa.field(field.name, pa.list_(struct))
        elif pa.types.is_string(field.type) and values and all(
                isinstance(value, int) and not isinstance(value, bool) for value in values):
            field = pa.field(field.name, pa.int64())
        fields.append(field)
    return pa.schema(fields)


def _model_of_sequence(annotation: Any) -> type[BaseModel] | None:
    """``Turn`` for ``tuple[Turn, ...]``: a sequence of models, kept as structs."""
    if typing.get_origin(annotation) not in (tuple, list):
        return None
    inner = typing.get_args(annotation)[0] if typing.get_args(annotation) else None
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None
