"""Read ratings in long format (one rating per row) from CSV, TSV, JSONL or JSON.

Columns: the item id (``item_id``; ``item`` and ``id`` are accepted too), rater, criterion,
value, and optionally unscored_reason, language, system and expected_value — named by the one
column mapping of the library, :class:`convoscope.ColumnMap`. The verdict JSONL that
``convoscope judge`` writes is already in this format.
Values that look like numbers become numbers; empty, ``NA``, ``nan``, ``null`` and ``None`` mean
missing. A bad row raises :class:`convoscope.items.ItemError` naming file, line and field.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from convoscope.analysis._tables import Rating
from convoscope.items import ColumnMap, ItemError, records

_MISSING_TEXT = {"", "na", "n/a", "nan", "null", "none"}
ITEM_ID_NAMES = ("item_id", "item", "id")  # one vocabulary: verdicts say item_id, items say id


def RatingColumns(*, item: str | None = None, **fields: Any) -> ColumnMap:  # noqa: N802 (old class name)
    """Deprecated: the rating columns are named by :class:`convoscope.ColumnMap` (``item`` is its
    ``id``). Returns the equivalent ColumnMap, with a DeprecationWarning."""
    warnings.warn("RatingColumns(...) is now ColumnMap(...) (item= is id=); RatingColumns goes in the "
                  "next release", DeprecationWarning, stacklevel=2)
    if item is not None:
        fields["id"] = item
    return ColumnMap(**fields)


def id_column(row: Mapping[str, Any], columns: ColumnMap) -> str:
    """The column holding the item id: the mapped one, or — when the mapping keeps a default
    name — the first of ``item_id``, ``item``, ``id`` the row has."""
    if columns.id not in ITEM_ID_NAMES:
        return columns.id
    return next((name for name in ITEM_ID_NAMES if name in row), columns.id)


def read_ratings(path: str | Path, *, columns: ColumnMap | None = None) -> list[Rating]:
    """Every rating in a .csv, .tsv, .jsonl or .json file (or a ``.cvs.zip`` run archive's final
    verdicts), validated.

    Example: ``read_ratings("humans.csv", columns=ColumnMap(id="id", rater="annotator"))``.
    """
    path = Path(path)
    columns = columns or ColumnMap()
    if not path.exists():
        raise ItemError(path, None, None, "file not found")
    ratings: list[Rating] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in _rows(path):
        rating = _rating(path, line, row, columns)
        key = (rating.criterion, rating.rater, rating.item_id)
        if key in seen:
            raise ItemError(path, line, columns.rater, f"rater {rating.rater!r} already rated item "
                            f"{rating.item_id!r} on {rating.criterion!r} (line {seen[key]})")
        seen[key] = line
        ratings.append(rating)
    if not ratings:
        raise ItemError(path, None, None, "no ratings in file")
    return ratings


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    from convoscope.archive._format import is_archive

    if is_archive(path):  # a run archive (export-run): its final verdicts, numbered from 1
        from convoscope.archive import read_run_archive

        verdicts = read_run_archive(path).iter_verdicts()
        return ((line, verdict.model_dump(mode="json")) for line, verdict in enumerate(verdicts, start=1))
    if path.suffix.lower() == ".parquet":
        raise ItemError(path, None, None, "unknown file type '.parquet' (use .csv, .tsv, .jsonl, .json)")
    return records(path)


def _rating(path: Path, line: int, row: dict[str, Any], columns: ColumnMap) -> Rating:
    def required(name: str) -> str:
        if name not in row:
            present = ", ".join(sorted(row)) or "none"
            raise ItemError(path, line, name, f"missing (columns present: {present})")
        text = _text(row[name])
        if text is None:
            raise ItemError(path, line, name, "is empty")
        return text

    if columns.criterion in row or columns.default_criterion is None:
        criterion = required(columns.criterion)
    else:
        criterion = columns.default_criterion
    if columns.value not in row:
        required(columns.value)
    return Rating(
        item_id=required(id_column(row, columns)), criterion=criterion, rater=required(columns.rater),
        value=parse_value(row[columns.value], path=path, line=line, field=columns.value),
        unscored_reason=_text(row.get(columns.unscored_reason)),
        language=_text(row.get(columns.language)), system=_text(row.get(columns.system)),
        expected_value=_number(row.get(columns.expected_value), path, line, columns.expected_value),
        source=f"{path}:{line}",
    )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def parse_value(value: Any, *, path: Path | str = "<input>", line: int | None = None,
                field: str = "value") -> int | float | str | None:
    """A rating as a number, a label, or None for missing."""
    if value is None or isinstance(value, bool | int):
        return None if value is None else int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return int(value) if value.is_integer() else value
    if not isinstance(value, str):
        raise ItemError(path, line, field, f"must be a number or a label, got {type(value).__name__}")
    text = value.strip()
    if text.lower() in _MISSING_TEXT:
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isinf(number):
        raise ItemError(path, line, field, f"{text!r} is not a finite number")
    return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number


def _number(value: Any, path: Path, line: int, field: str) -> float | None:
    parsed = parse_value(value, path=path, line=line, field=field)
    if parsed is None:
        return None
    if isinstance(parsed, str):
        raise ItemError(path, line, field, f"must be a number, got {parsed!r}")
    return float(parsed)
