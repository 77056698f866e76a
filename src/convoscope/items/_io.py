"""Read items from JSONL, CSV or Parquet (writers are in ``_write``).

Every reader validates the whole file before anything is judged, and a bad row fails with an
:class:`ItemError` that names the file, the line (or row) and the field: text that is not in the
file's encoding or holds a NUL byte (the line, and a hint naming an encoding that reads it; see
:mod:`convoscope.items._text`, the one text reader), JSON nested deeper than :data:`MAX_NESTING`
levels (the line and the top-level field), a malformed record.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from convoscope.items._limits import MAX_NESTING, nesting_problem
from convoscope.items._model import Item
from convoscope.items._text import ItemError, open_text, read_text


@dataclass(frozen=True)
class ColumnMap:
    """Which columns (or JSON keys) hold which fields, for items and for ratings alike.

    Items: ``context`` may be a column holding a JSON list of turns, or plain text (one turn per
    line, optionally ``speaker: text``); unmapped columns go into ``meta``. Ratings
    (:func:`convoscope.analysis.read_ratings`): ``id`` is the item id — left at a default name
    (``id``, ``item_id`` or ``item``), whichever of them the file has is used — and ``rater``,
    ``criterion``, ``value``, ``unscored_reason``, ``expected_value``; a file without a criterion
    column gets ``default_criterion``.
    """

    id: str = "id"
    question: str = "question"
    context: str = "context"
    response: str = "response"
    reference: str = "reference"
    language: str = "language"
    system: str = "system"
    meta_columns: tuple[str, ...] | None = None
    extra: dict[str, str] = field(default_factory=dict)
    rater: str = "rater"
    criterion: str = "criterion"
    value: str = "value"
    unscored_reason: str = "unscored_reason"
    expected_value: str = "expected_value"
    default_criterion: str | None = None

    def field_of(self) -> dict[str, str]:
        names = ("id", "question", "context", "response", "reference", "language", "system")
        return {getattr(self, name): name for name in names}


def read_items(path: str | Path | Any, *, columns: ColumnMap | None = None,
               encoding: str = "utf-8", split: str | None = None) -> list[Item]:
    """Read and validate every item in a .jsonl, .json, .csv, .tsv or .parquet file — or in a
    table in memory: pandas, polars, pyarrow, a Hugging Face ``Dataset`` (or one ``split`` of a
    ``DatasetDict``), a list of dicts (row numbers count from 1).

    ``encoding`` is the text encoding of JSON and CSV files (e.g. ``cp949``, ``latin-1``)."""
    from convoscope.items._frames import is_table, items_from_table
    from convoscope.items._tables import not_a_source

    if is_table(path):
        return items_from_table(path, columns=columns, split=split)
    if not isinstance(path, str | Path):
        raise not_a_source(path)
    path = Path(path)
    if not path.exists():
        raise ItemError(path, None, None, "file not found")
    rows: Iterable[tuple[int, dict[str, Any]]] = records(path, encoding=encoding)
    if path.suffix.lower() in TABLE_SUFFIXES:
        rows = _table_rows(path, rows, columns)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        item = _validate(path, line, row)
        if item.id in seen:
            raise ItemError(path, line, "id", f"duplicate id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = line
        items.append(item)
    if not items:
        raise _no_items(path)
    return items


def _no_items(path: Path) -> ItemError:
    """Where an items file without items ends: line 1 of an empty file, else its last line."""
    if path.suffix.lower() == ".parquet":
        return ItemError(path, None, None, "no rows in the Parquet file")
    with path.open("rb") as handle:
        lines = sum(1 for _ in handle)
    if not lines:
        return ItemError(path, 1, None, "the file is empty: no items")
    problem = "a header but no rows" if path.suffix.lower() in (".csv", ".tsv") else "no items"
    return ItemError(path, lines, None, f"{problem} (the file ends here)")


def _validate(path: Path, line: int, row: dict[str, Any]) -> Item:
    return validate_record(Item, path, line, row, unknown="unknown field (put free-form data under 'meta')")


ModelT = TypeVar("ModelT", bound=BaseModel)


def validate_record(model: type[ModelT], path: Path, line: int, row: dict[str, Any], *,
                    unknown: str = "unknown field") -> ModelT:
    """``row`` as ``model``; the first problem becomes an ItemError naming file, line and field."""
    try:
        return model.model_validate(row)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or None
        message = unknown if first["type"] == "extra_forbidden" else first["msg"]
        raise ItemError(path, line, location, message) from None


TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


def records(path: str | Path, *, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, raw record) for every record of a .jsonl, .json, .csv, .tsv or .parquet file, the one
    reader behind items, ratings and verdict files. Lines are physical lines (JSON: entry
    numbers); a malformed record is an ItemError naming the file and the line."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return jsonl_records(path, encoding=encoding)
    if suffix == ".json":
        return _json_rows(path, encoding)
    if suffix in (".csv", ".tsv"):
        return csv_rows(path, delimiter="\t" if suffix == ".tsv" else ",", encoding=encoding)
    if suffix == ".parquet":
        return _parquet_rows(path)
    raise ItemError(path, None, None,
                    f"unknown file type '{suffix}' (use .jsonl, .json, .csv, .tsv, .parquet)")


def jsonl_records(path: Path, *, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) for every non-blank line of a JSONL file, whatever its name ends with."""
    with open_text(path, encoding=encoding) as lines:
        for number, text in enumerate(lines, start=1):  # \n, \r\n and \r end a line
            if not text.strip():
                continue
            row = _json_line(path, number, text.rstrip("\r\n"))
            if not isinstance(row, dict):
                raise ItemError(path, number, None, "each line must be a JSON object")
            yield number, row


def _json_line(path: Path, number: int, text: str) -> Any:
    deep = nesting_problem(text) if text.count("[") + text.count("{") > MAX_NESTING else None
    if deep is not None:
        raise ItemError(path, number + deep[0], deep[1], f"nested more than {MAX_NESTING} levels deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ItemError(path, number + error.lineno - 1, None,
                        f"not valid JSON at column {error.colno}: {error.msg.removesuffix(' at')}") from None


def _json_rows(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    data = _json_line(path, 1, read_text(path, encoding=encoding))
    if not isinstance(data, list):
        raise ItemError(path, None, None, "a .json file must hold a list of objects")
    for index, row in enumerate(data, start=1):
        if not isinstance(row, dict):
            raise ItemError(path, index, None, "each entry must be an object (line = entry number)")
        yield index, row


def csv_rows(path: Path, *, delimiter: str, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) for every record of a CSV/TSV file with a header; a row with too many or too
    few fields is an ItemError naming the line."""
    with open_text(path, encoding=encoding) as lines:
        reader = csv.DictReader(lines, delimiter=delimiter)
        for row in _csv_records(path, reader):
            # The header is line 1; a quoted field may span lines, so ask the reader.
            extra, short = row.get(None), [key for key, value in row.items() if value is None]
            if extra or short:
                # A field holding the delimiter without quotes shifts every later column: the
                # row would be read wrongly without a word, so it is refused.
                fields = len(reader.fieldnames or []) + len(extra or []) - len(short)
                raise ItemError(path, reader.line_num, None,
                                f"{fields} fields where the header has {len(reader.fieldnames or [])}"
                                f"; put a field that contains {delimiter!r} in double quotes")
            _refuse_nul(path, reader.line_num, row)
            yield reader.line_num, dict(row)


def _refuse_nul(path: Path, line: int, row: dict[str | Any, Any]) -> None:
    """A NUL byte is never text someone typed: the file is binary, truncated or mis-exported."""
    for key, value in row.items():
        if isinstance(value, str) and "\x00" in value:
            raise ItemError(path, line, key, "holds a NUL byte (a binary or damaged file, or the wrong "
                            "encoding: UTF-16 files need --encoding utf-16)")


def _csv_records(path: Path, reader: csv.DictReader[str]) -> Iterator[dict[str | Any, Any]]:
    """The reader's rows; a record the csv module cannot read (e.g. a field past its size
    limit) is an ItemError naming the line."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            # DictReader copies the line number only after a good row; its inner reader knows.
            raise ItemError(path, reader.reader.line_num, None, f"not readable as CSV ({error})") from None


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        hint = "reading Parquet needs pyarrow: pip install 'convoscope[parquet]'"
        raise ItemError(path, None, None, hint) from None
    import pyarrow as pa

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ItemError(path, None, None, f"not a readable Parquet file ({first})") from None
    yield from enumerate(table.to_pylist(), start=1)


def _table_rows(
    path: Path, rows: Iterable[tuple[int, dict[str, Any]]], columns: ColumnMap | None, *,
    empty_is_missing: bool = True,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a table as item fields. In a CSV file an empty cell is a missing one; a table in
    memory (``empty_is_missing=False``) has None for that, and an empty response stays one."""
    columns = columns or ColumnMap()
    mapping = columns.field_of()
    for line, row in rows:
        item: dict[str, Any] = {}
        meta: dict[str, Any] = {}
        for key, value in row.items():
            target = mapping.get(key)
            if target is None and key == "meta" and isinstance(explicit := _meta_of(value), dict):
                meta.update(explicit)  # a table written by items_to_table: its meta column
                continue
            if target is None:
                if columns.meta_columns is None or key in columns.meta_columns:
                    meta[key] = value
                continue
            if value is None or value == "" and (empty_is_missing or target == "context"):
                continue
            if target == "context" and isinstance(value, str) and _too_deep(value):
                raise ItemError(path, line, key, f"nested more than {MAX_NESTING} levels deep")
            item[target] = _parse_context(value) if target == "context" else value
        if meta:
            item["meta"] = meta
        yield line, item


def _meta_of(value: Any) -> Any:
    """A ``meta`` cell as a dict: a dict, or the JSON text of one (else None)."""
    if isinstance(value, dict) or value is None:
        return value or {}
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return None


def _too_deep(text: str) -> bool:
    return text.count("[") + text.count("{") > MAX_NESTING and nesting_problem(text) is not None


def _parse_context(value: Any) -> Any:
    if isinstance(value, list):
        return value
    text = str(value).strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    turns = []
    for index, line in enumerate(part for part in text.splitlines() if part.strip()):
        speaker, sep, said = line.partition(":")
        if sep and speaker.strip() and len(speaker.strip()) <= 20 and " " not in speaker.strip():
            turns.append({"speaker": speaker.strip(), "text": said.strip()})
        else:
            turns.append({"speaker": "A" if index % 2 == 0 else "B", "text": line.strip()})
    return turns
