"""Items read lazily, in chunks, from a file, a table or any iterable.

A run of a million items never holds them all: :class:`ItemStream` yields :class:`RawChunk`s of
``chunk_size`` records in input order. A chunk's ``fingerprint`` is a hash of its records as read
(the raw lines of a JSONL file), so a resumed run can tell a chunk it has finished from a changed
one without parsing or rendering it; :meth:`RawChunk.items` parses and validates on demand, with
errors that name the file, the line and the field. Duplicate ids are found across the whole input
(a set of 64-bit hashes of the ids seen, not the ids themselves).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoscope.items._io import (
    TABLE_SUFFIXES,
    ColumnMap,
    ItemError,
    _json_line,
    _table_rows,
    _validate,
    records,
)
from convoscope.items._model import Item
from convoscope.items._text import open_text

DEFAULT_CHUNK = 256


@dataclass(frozen=True)
class RawChunk:
    """``size`` records of the input as read; ``items()`` parses and validates them."""

    index: int
    fingerprint: str
    size: int
    start: int  # the number of records before this chunk
    parse: Callable[[], list[Item]]

    def items(self) -> list[Item]:
        return self.parse()


class ItemStream:
    """The items of ``source`` in chunks: a path (.jsonl, .json, .csv, .tsv, .parquet), a pandas
    DataFrame, a Hugging Face Dataset, a list of dicts, or any iterable of :class:`Item`.

    ``name`` is what a run records as its input (a resolved path, or the kind of table)."""

    def __init__(self, source: Any, *, columns: ColumnMap | None = None, encoding: str = "utf-8",
                 chunk_size: int = DEFAULT_CHUNK, limit: int | None = None) -> None:
        from convoscope.items._frames import is_table

        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.source, self.columns, self.encoding = source, columns, encoding
        self.chunk_size, self.limit = chunk_size, limit
        if isinstance(source, str | Path):
            path = Path(source)
            if not path.exists():
                raise ItemError(path, None, None, "file not found")
            self.name = str(path.resolve())
        elif is_table(source):
            self.name = f"<{type(source).__name__}>"
        else:
            self.name = "<items>"

    def chunks(self) -> Iterator[RawChunk]:
        """Every chunk, in input order; the input is read again on every call."""
        seen: set[int] = set()
        count = 0
        for index, raw in enumerate(_grouped(self._records(), self.chunk_size, self.limit)):
            digest = hashlib.sha256()
            for record in raw:
                digest.update(record[1])
                digest.update(b"\n")
            yield RawChunk(index, digest.hexdigest(), len(raw), count, self._parser(raw, seen))
            count += len(raw)
        if count == 0:
            raise self._empty()

    def __iter__(self) -> Iterator[Item]:
        """Every item, parsed and validated, in input order (one chunk in memory at a time)."""
        for chunk in self.chunks():
            yield from chunk.items()

    def check_start(self) -> None:
        """Read and validate the first chunk now: a file that is unreadable from its first lines
        (wrong encoding, not JSON, a bad row) fails before anything else happens. Later rows are
        checked as the run reaches them."""
        first = next(iter(self.chunks()), None)
        if first is not None:
            first.items()

    def count(self) -> int | None:
        """How many records the input has (for progress); None when it cannot tell cheaply."""
        source, found = self.source, None
        if isinstance(source, str | Path):
            path = Path(source)
            suffix = path.suffix.lower()
            if suffix in (".jsonl", ".ndjson"):
                with path.open("rb") as handle:
                    found = sum(1 for line in handle if line.strip())
            elif suffix == ".parquet":
                import pyarrow.parquet as pq

                found = pq.ParquetFile(path).metadata.num_rows
            else:
                found = sum(1 for _ in records(path, encoding=self.encoding))
        elif hasattr(source, "__len__"):
            found = len(source)
        if found is not None and self.limit is not None:
            found = min(found, self.limit)
        return found

    def _records(self) -> Iterator[tuple[int, bytes, Any]]:
        """(line, bytes to fingerprint, the record for the parser) for every record."""
        from convoscope.items._frames import _rows, is_table

        source = self.source
        if isinstance(source, str | Path):
            path = Path(source)
            if path.suffix.lower() in (".jsonl", ".ndjson"):
                yield from _jsonl_lines(path, self.encoding)
                return
            rows: Iterable[tuple[int, dict[str, Any]]] = records(path, encoding=self.encoding)
            if path.suffix.lower() in TABLE_SUFFIXES:
                rows = _table_rows(path, rows, self.columns)
            for line, row in rows:
                yield line, _row_bytes(row), row
        elif is_table(source):
            for line, row in _table_rows(self.name, _rows(source), self.columns):  # type: ignore[arg-type]
                row.setdefault("id", str(line))
                yield line, _row_bytes(row), row
        else:
            for line, item in enumerate(source, start=1):
                if not isinstance(item, Item):
                    raise ItemError(self.name, line, None, f"not an Item but {type(item).__name__}")
                yield line, item.model_dump_json().encode(), item

    def parse(self, line: int, record: Any) -> Item:
        if isinstance(record, Item):
            return record
        if isinstance(record, str):
            row = _json_line(Path(self.name), line, record)
            if not isinstance(row, dict):
                raise ItemError(self.name, line, None, "each line must be a JSON object")
            record = row
        return _validate(self.name, line, record)  # type: ignore[arg-type]

    def _parser(self, raw: list[tuple[int, bytes, Any]], seen: set[int]) -> Callable[[], list[Item]]:
        """A parser for one chunk that also refuses an id seen earlier in the input."""
        def parse() -> list[Item]:
            items = []
            for line, _bytes, record in raw:
                item = self.parse(line, record)
                marker = int.from_bytes(hashlib.blake2b(item.id.encode(), digest_size=8).digest(), "big")
                if marker in seen:
                    first = self.first_line_of(item.id)
                    if first is not None and first != line:
                        raise ItemError(self.name, line, "id",
                                        f"duplicate id {item.id!r} (first on line {first})")
                seen.add(marker)
                items.append(item)
            return items

        return parse

    def first_line_of(self, item_id: str) -> int | None:
        """Where ``item_id`` first occurs (read again: only asked when a duplicate is found)."""
        for line, _raw, record in self._records():
            if self.parse(line, record).id == item_id:
                return line
        return None

    def _empty(self) -> ItemError:
        if isinstance(self.source, str | Path):
            from convoscope.items._io import _no_items

            return _no_items(Path(self.source))
        return ItemError(self.name, None, None, "no items")


def _grouped(records: Iterator[tuple[int, bytes, Any]], size: int, limit: int | None
             ) -> Iterator[list[tuple[int, bytes, Any]]]:
    group: list[tuple[int, bytes, Any]] = []
    for taken, record in enumerate(records):
        if limit is not None and taken >= limit:
            break
        group.append(record)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def _jsonl_lines(path: Path, encoding: str) -> Iterator[tuple[int, bytes, str]]:
    with open_text(path, encoding=encoding) as lines:  # BOMs, line ends, NUL bytes as every reader
        for number, text in enumerate(lines, start=1):
            if text.strip():
                line = text.rstrip("\r\n")
                yield number, line.encode("utf-8", "surrogatepass"), line


def _row_bytes(row: dict[str, Any]) -> bytes:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode()
