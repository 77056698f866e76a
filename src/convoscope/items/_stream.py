"""Items read lazily, in chunks, from a file, a table or any iterable.

A run of a million items never holds them all: :class:`ItemStream` yields :class:`RawChunk`s of
``chunk_size`` records in input order. A chunk's ``fingerprint`` is a hash of its records as read
(the raw lines of a JSONL file), so a resumed run can tell a chunk it has finished from a changed
one without parsing or rendering it; :meth:`RawChunk.items` parses and validates on demand, with
errors that name the file, the line and the field. Duplicate ids are found across the whole input
(64-bit hashes of the ids seen, most kept in sorted arrays: :class:`SeenIds`). A JSON-lines file
the run finished the first chunks of is read from after them (a done prefix: see items._prefix).
"""

from __future__ import annotations

import hashlib
import json
from array import array
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
from convoscope.items._prefix import Prefix, digest_upto, in_sorted, jsonl_path, next_prefix, stable_markers
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
    ids: Callable[[], None] = lambda: None

    def items(self) -> list[Item]:
        return self.parse()

    def check_ids(self) -> None:
        """Refuse an id seen earlier in the input, without validating or rendering the chunk (a
        finished chunk that is skipped still holds ids a later chunk may repeat). Its ids are
        counted once, whether it is checked, parsed, or both."""
        self.ids()


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
        self._prefix: Prefix | None = None  # finished chunks skipped unread (see items._prefix)
        self._prefix_lookup: array[int] | None = None
        self.layout: dict[int, tuple[int, int, str]] = {}  # chunk -> (last line, size, fingerprint)
        self._markers: dict[int, array[int]] = {}  # chunk -> stable markers of its ids
        self._stamp = self._file_stamp()
        self._where = Path(self.name)  # for errors: made once, not once a line (issue 39)

    def chunks(self) -> Iterator[RawChunk]:
        """Every chunk, in input order (after a skipped prefix: from the first chunk beyond it,
        numbered as ever); the input is read again on every call."""
        seen = SeenIds()
        prefix = self._prefix
        first, count = (prefix.chunks, prefix.chunks * self.chunk_size) if prefix else (0, 0)
        records = self._records(prefix)
        for index, raw in enumerate(_grouped(records, self.chunk_size, self.limit), start=first):
            # Each record followed by a newline, hashed in one call (a resume reads every line).
            digest = hashlib.sha256(b"\n".join([record[1] for record in raw]) + b"\n")
            parse, ids = self._parser(raw, seen, index)
            self.layout[index] = (raw[-1][0], len(raw), digest.hexdigest())
            yield RawChunk(index, digest.hexdigest(), len(raw), count, parse, ids)
            count += len(raw)
        if count == 0:
            raise self._empty()

    def _jsonl(self) -> Path | None:
        return jsonl_path(self.source, self.encoding, self.limit)

    def _file_stamp(self) -> tuple[int, int] | None:
        path = self._jsonl()
        if path is None:
            return None
        status = path.stat()
        return status.st_mtime_ns, status.st_size

    def skip(self, prefix: Prefix | None) -> bool:
        """Skip ``prefix`` unread if the file still starts with exactly its bytes (None: skip
        nothing, as before any call)."""
        path = self._jsonl()
        if prefix is None:
            self._prefix, self._prefix_lookup = None, None
            return False
        if path is None or prefix.chunk_size != self.chunk_size \
                or digest_upto(path, prefix.offset) != prefix.digest:
            return False
        self._prefix, self._prefix_lookup = prefix, None
        return True

    @property
    def skipped(self) -> Prefix | None:
        """The done prefix this stream skips, if any."""
        return self._prefix

    def _prefix_ids(self) -> array[int]:
        if self._prefix_lookup is None:
            self._prefix_lookup = self._prefix.lookup()  # type: ignore[union-attr]
        return self._prefix_lookup

    def done_prefix(self, finished: Callable[[int, str], bool]) -> Prefix | None:
        """The longest run of full chunks from the first that ``finished(index, fingerprint)``
        says are done, as a :class:`Prefix` (None: nothing new to record, or a file that changed
        while the run read it)."""
        path = self._jsonl()
        if path is None or self._file_stamp() != self._stamp:
            return None
        return next_prefix(path, self._prefix, self.chunk_size, self.layout, self._markers, finished)

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
                found = _line_count(path)
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

    def _records(self, prefix: Prefix | None = None) -> Iterator[tuple[int, bytes, Any]]:
        """(line, bytes to fingerprint, the record for the parser) for every record (beyond
        ``prefix`` if given)."""
        from convoscope.items._frames import _rows, is_table

        source = self.source
        if isinstance(source, str | Path):
            path = Path(source)
            if path.suffix.lower() in (".jsonl", ".ndjson"):
                yield from _jsonl_lines(path, self.encoding, prefix)
                return
            rows: Iterable[tuple[int, dict[str, Any]]] = records(path, encoding=self.encoding)
            if path.suffix.lower() in TABLE_SUFFIXES:
                rows = _table_rows(path, rows, self.columns)
            for line, row in rows:
                yield line, _row_bytes(row), row
        elif is_table(source):
            for line, row in _table_rows(self.name, _rows(source), self.columns,  # type: ignore[arg-type]
                                         empty_is_missing=False):
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
            row = _json_line(self._where, line, record)
            if not isinstance(row, dict):
                raise ItemError(self.name, line, None, "each line must be a JSON object")
            record = row
        return _validate(self.name, line, record)  # type: ignore[arg-type]

    def _parser(self, raw: list[tuple[int, bytes, Any]], seen: SeenIds, index: int
                ) -> tuple[Callable[[], list[Item]], Callable[[], None]]:
        """A parser for one chunk that also refuses an id seen earlier in the input, and a check of
        its ids alone. A row that does not parse is reported after any duplicate before it, as if
        checked one by one. Whichever runs first adds the chunk's ids to ``seen``; the other does
        not add them again (so a chunk checked, then parsed, is not its own duplicate)."""
        counted = [False]

        def parse() -> list[Item]:
            items: list[Item] = []
            lines: list[int] = []
            try:
                for line, _bytes, record in raw:
                    items.append(self.parse(line, record))
                    lines.append(line)
            finally:  # on a bad row, the rows before it are still checked (and a duplicate wins)
                if not counted[0]:
                    counted[0] = True
                    self._refuse_duplicates([item.id for item in items], lines, seen, index)
            return items

        def ids() -> None:
            if counted[0]:
                return
            counted[0] = True
            found: list[str] = []
            for line, _bytes, record in raw:
                # The common row first, a JSON line whose id is a non-empty string, in one call:
                # a resume checks the ids of every line it has finished before.
                row = _decoded(record)
                value = row.get("id") if type(row) is dict else None
                found.append(value if type(value) is str and value else self._id_of(line, record))
            self._refuse_duplicates(found, [line for line, _bytes, _record in raw], seen, index)

        return parse, ids

    def _id_of(self, line: int, record: Any) -> str:
        """A record's id as the item would have it, read without validating the rest; a record
        whose id cannot be read that way is parsed in full (and its error raised)."""
        if isinstance(record, Item):
            return record.id
        try:
            row = json.loads(record) if isinstance(record, str) else record
        except ValueError:
            return self.parse(line, record).id  # raises the error that names the line
        value = row.get("id") if isinstance(row, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(int(value)) if float(value).is_integer() else str(value)
        if isinstance(value, str) and value:
            return value
        return self.parse(line, record).id

    def _refuse_duplicates(self, ids: list[str], lines: list[int], seen: SeenIds, chunk: int) -> None:
        if not ids:
            return
        repeated = seen.add(_markers(ids))
        if self._stamp is not None:  # a JSON-lines file: its ids may make a done prefix later
            stable = stable_markers(ids)
            self._markers[chunk] = array("Q", stable)  # 8 bytes an id
            if self._prefix is not None:
                repeated = sorted(set(repeated) | set(in_sorted(self._prefix_ids(), stable)))
        for index in repeated:
            item_id, line = ids[index], lines[index]
            first = self.first_line_of(item_id)  # a marker collision
            if first is not None and first != line:
                raise ItemError(self.name, line, "id", f"duplicate id {item_id!r} (first on line {first})")

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


class SeenIds:
    """A set of 64-bit id markers: a Python set for the first :attr:`SMALL` (about 70 bytes an
    id, and no numpy to import for a small input), then sorted numpy runs (8 bytes an id). Each
    spill of the set becomes a run and runs of like size are merged (a binary counter), so a
    lookup searches about log2(n / SMALL) runs and each marker is copied about as many times."""

    SMALL = 1 << 16

    def __init__(self) -> None:
        self._recent: set[int] = set()
        self._runs: list[Any] = []

    def __len__(self) -> int:
        return len(self._recent) + sum(len(run) for run in self._runs)

    def add(self, markers: list[int]) -> list[int]:
        """Add ``markers`` (in input order); return, in order, the positions whose marker was
        already there (earlier in the input, or earlier in ``markers``)."""
        known = self._in_runs(markers) if self._runs else None
        repeated = []
        recent = self._recent
        for index, marker in enumerate(markers):
            if marker in recent or (known is not None and known[index]):
                repeated.append(index)
            else:
                recent.add(marker)
        if len(recent) >= self.SMALL:
            self._spill()
        return repeated

    def _in_runs(self, markers: list[int]) -> list[bool]:
        import numpy as np

        wanted = np.array(markers, dtype=np.uint64)
        found = np.zeros(len(wanted), dtype=bool)
        for run in self._runs:
            where = np.minimum(np.searchsorted(run, wanted), len(run) - 1)
            found |= run[where] == wanted
        return found.tolist()

    def _spill(self) -> None:
        import numpy as np

        run = np.sort(np.fromiter(self._recent, dtype=np.uint64, count=len(self._recent)))
        self._recent = set()
        while self._runs and len(self._runs[-1]) <= len(run):
            run = np.union1d(self._runs.pop(), run)
        self._runs.append(run)


def _decoded(record: Any) -> Any:
    """A JSON line's value, or None (not a line, or not JSON: the slow path then says why)."""
    if type(record) is not str:
        return None
    try:
        return _DECODE(record)
    except ValueError:
        return None


_DECODE = json.JSONDecoder().decode


def _markers(ids: Iterable[str]) -> list[int]:
    """64-bit markers from Python's own string hash (SipHash, salted per process: the markers
    never leave it), a third of blake2b's cost on a resume that checks every id; a collision is
    told from a duplicate by reading the input again (:meth:`ItemStream.first_line_of`)."""
    return [hash(item_id) & _MASK for item_id in ids]


_MASK = (1 << 64) - 1


def _line_count(path: Path) -> int:
    """Lines of a text file, counted in 1 MiB blocks in C (a million-line file in a fraction of a
    second, the GIL mostly free for the run); a last line without its newline counts, blank lines
    too (the count is for progress)."""
    count, last = 0, b"\n"
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


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


def _jsonl_lines(path: Path, encoding: str, prefix: Prefix | None = None) -> Iterator[tuple[int, bytes, str]]:
    start = (prefix.offset, prefix.line) if prefix else (0, 0)
    with open_text(path, encoding=encoding, start=start) as lines:  # BOMs, line ends, NUL bytes
        for number, text in enumerate(lines, start=start[1] + 1):
            if text.strip():
                line = text.rstrip("\r\n")
                yield number, line.encode("utf-8", "surrogatepass"), line


def _row_bytes(row: dict[str, Any]) -> bytes:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode()
