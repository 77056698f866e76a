"""Writing records (verdicts, items) to JSONL, CSV or Parquet: checked first, written atomically.

An output path is checked before any work is paid for (:func:`check_output`): its folder exists and
is writable, its type is known, it is none of the inputs, and Parquet has pyarrow. Every writer
writes a temporary file beside the target and moves it into place, so a crash or a full disk
never leaves a half-written file under the target's name (nor destroys an older one).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from convoscope.errors import LocatedError

OUTPUT_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
_PARQUET_HINT = "writing Parquet needs pyarrow: pip install 'convoscope[parquet]'"


def check_output(path: str | Path, *, inputs: Iterable[str | Path] = ()) -> Path:
    """``path`` if records can be written there, else a LocatedError saying why; nothing is written."""
    path = Path(path)
    suffix = path.suffix.lower()
    for source in inputs:  # compared by resolved path, so a store not yet created counts too
        if path.resolve() == Path(source).resolve():
            raise LocatedError(path, "is also an input file; write the output to another file")
    if suffix not in OUTPUT_SUFFIXES:
        raise LocatedError(path, f"unknown output type '{suffix}' (use {', '.join(OUTPUT_SUFFIXES)})")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise LocatedError(path, f"the folder {folder} does not exist")
    if path.is_dir():
        raise LocatedError(path, "is a folder; name a file")
    _try_writing(path, folder)
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise LocatedError(path, _PARQUET_HINT) from None
    return path


def _try_writing(path: Path, folder: Path) -> None:
    """Create (and remove) a file beside ``path``, as the real write will. Permission bits say
    nothing to root, and nothing of a read-only or virtual file system (/sys, /proc)."""
    if path.exists() and not os.access(path, os.W_OK):
        raise LocatedError(path, "cannot be written (no permission)")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{path.name}.", suffix=".check"):
            pass
    except OSError as error:
        raise LocatedError(path, f"cannot be written ({error.strerror or error})") from None


def write_records(records: Iterable[BaseModel | Mapping[str, Any]], path: str | Path) -> int:
    """Write records in the format the suffix names (.jsonl/.json lines, .csv, .parquet).

    A file system that refuses the write (full, read-only, gone) is a LocatedError naming the
    path; the target keeps whatever it held before."""
    suffix = Path(path).suffix.lower()
    try:
        if suffix == ".csv":
            return write_csv(records, path)
        if suffix == ".parquet":
            return write_parquet(records, path)
        return write_jsonl(records, path)
    except OSError as error:
        raise LocatedError(path, f"could not be written ({error.strerror or error})") from None


def write_jsonl(records: Iterable[BaseModel | Mapping[str, Any]], path: str | Path) -> int:
    """Write pydantic models or mappings as JSON lines; returns the count written."""
    def body(handle: IO[str]) -> int:
        count = 0
        for row in _rows(records):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
        return count

    return _atomic_text(Path(path), body)


def write_csv(records: Iterable[BaseModel | Mapping[str, Any]], path: str | Path) -> int:
    """Write records as CSV; nested values are JSON-encoded. Returns the count written."""
    rows = list(_rows(records))
    header: list[str] = []
    for row in rows:
        header.extend(key for key in row if key not in header)

    def body(handle: IO[str]) -> int:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v
                             for k, v in row.items()})
        return len(rows)

    return _atomic_text(Path(path), body)


def write_parquet(records: Iterable[BaseModel | Mapping[str, Any]], path: str | Path) -> int:
    """Write records as a Parquet table (pyarrow). Maps are stored as JSON text, lists as lists;
    a column mixing numbers and labels (``value`` of several scales) is stored as text."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise LocatedError(path, _PARQUET_HINT) from None
    rows = [{key: json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value
             for key, value in row.items()} for row in _rows(records)]
    columns: dict[str, list[Any]] = {}
    for index, row in enumerate(rows):
        for key in row:
            columns.setdefault(key, [None] * index)
        for key, values in columns.items():
            values.append(row.get(key))
    table = pa.table({key: _column(values) for key, values in columns.items()})
    target = Path(path)
    with _atomic(target, binary=True) as handle:
        pq.write_table(table, handle)
    return len(rows)


def _column(values: list[Any]) -> list[Any]:
    kinds = {type(value) for value in values if value is not None}
    if kinds == {int, float}:
        return [None if value is None else float(value) for value in values]
    if len(kinds) > 1:  # e.g. 3 and "positive": one Parquet column holds one type
        return [None if value is None else str(value) for value in values]
    return values


def _rows(records: Iterable[BaseModel | Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    for record in records:
        yield record.model_dump(mode="json") if isinstance(record, BaseModel) else dict(record)


def _atomic_text(path: Path, body: Callable[[IO[str]], int]) -> int:
    with _atomic(path, binary=False) as handle:
        return body(handle)


@contextlib.contextmanager
def _atomic(path: Path, *, binary: bool) -> Iterator[Any]:
    """A temporary file beside ``path``, moved over it when the block ends without error."""
    folder = path.parent if str(path.parent) else Path(".")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    try:
        mode = "wb" if binary else "w"
        options: dict[str, Any] = {} if binary else {"encoding": "utf-8", "newline": ""}
        with os.fdopen(descriptor, mode, **options) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else _default_mode())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _default_mode() -> int:
    """What a plain ``open(path, "w")`` would have given the file (0o666 less the umask)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


class RecordStream:
    """Records written as they come, to a .jsonl, .csv or .parquet file checked beforehand.

    For runs too long to hold: JSON lines are flushed after every call to :meth:`write` (a
    reader sees whole lines only), CSV rows under a fixed header (``fields``), Parquet row groups
    of ``row_group`` records under a fixed schema. The file is written from the start: a run
    writes everything it has, and an interrupted one leaves what it wrote (``append``: after what
    the file holds, a CSV without a second header; not for Parquet). :meth:`close` ends it;
    a file system that refuses a write is a LocatedError naming the path.
    """

    def __init__(self, path: str | Path, *, fields: Sequence[str] | None = None,
                 row_group: int = 10_000, text_columns: Iterable[str] = (),
                 number_columns: Iterable[str] = (), model: type[BaseModel] | None = None,
                 append: bool = False) -> None:
        self.path = check_output(path)
        self.suffix = self.path.suffix.lower()
        self.count = 0
        self._fields = list(fields or ())
        self._text_columns = set(text_columns)
        self._pending: list[dict[str, Any]] = []
        self._row_group = row_group
        self._parquet: Any = None
        self._model = model
        self._number_columns = set(number_columns)
        try:
            self._handle: IO[str] | None = (None if self.suffix == ".parquet" else self.path.open(
                "a" if append else "w", encoding="utf-8", newline=""))
        except OSError as error:
            raise LocatedError(self.path, f"could not be written ({error.strerror or error})") from None
        self._csv = None
        if self.suffix == ".csv" and self._handle is not None:
            self._csv = csv.DictWriter(self._handle, fieldnames=self._fields, extrasaction="ignore")
            if not append:
                self._csv.writeheader()

    def write(self, records: Iterable[BaseModel | Mapping[str, Any]]) -> None:
        try:
            rows = list(_rows(records))
            self.count += len(rows)
            if self._csv is not None:
                for row in rows:
                    self._csv.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict)
                                        else v for k, v in row.items()})
            elif self._handle is not None:
                self._handle.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
            else:
                self._pending.extend(rows)
                if len(self._pending) >= self._row_group:
                    self._write_row_group()
            if self._handle is not None:
                self._handle.flush()
        except OSError as error:
            raise LocatedError(self.path, f"could not be written ({error.strerror or error})") from None

    def _write_row_group(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [{key: json.dumps(value, ensure_ascii=False) if isinstance(value, dict)
                 else (None if value is None else str(value)) if key in self._text_columns else value
                 for key, value in row.items()} for row in self._pending]
        self._pending = []
        if self._parquet is None:
            if self._model is not None:
                schema = arrow_schema(self._model, text_columns=self._text_columns,
                                      number_columns=self._number_columns)
            else:
                inferred = pa.Table.from_pylist(rows).schema
                schema = pa.schema([field.with_type(pa.string()) if pa.types.is_null(field.type) else field
                                    for field in inferred])
            self._parquet = pq.ParquetWriter(str(self.path), schema)
        table = pa.Table.from_pylist(rows, schema=self._parquet.schema)
        self._parquet.write_table(table)

    def close(self) -> None:
        try:
            if self.suffix == ".parquet":
                if self._pending or self._parquet is None:
                    if self._pending:
                        self._write_row_group()
                    else:
                        write_parquet([], self.path)
                if self._parquet is not None:
                    self._parquet.close()
            elif self._handle is not None:
                self._handle.close()
        except OSError as error:
            raise LocatedError(self.path, f"could not be written ({error.strerror or error})") from None


def arrow_schema(model: type[BaseModel], *, text_columns: Iterable[str] = (),
                 number_columns: Iterable[str] = ()) -> Any:
    """A Parquet schema for rows of ``model``: fixed before the first row, so a column that is
    empty at first never changes type. A union of a number and a text is text unless named in
    ``number_columns`` (e.g. ``value`` when every scale is numeric); ``text_columns`` are text.
    Maps are stored as JSON text, sequences as lists of text."""
    import types
    import typing

    import pyarrow as pa

    text, numbers = set(text_columns), set(number_columns)
    simple = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}

    def arrow(annotation: Any) -> Any:
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType):
            kinds = [arrow(part) for part in typing.get_args(annotation) if part is not type(None)]
            return kinds[0] if len(set(kinds)) == 1 else pa.string()
        if origin is typing.Literal:
            return pa.string()
        if origin in (tuple, list):
            return pa.list_(pa.string())
        if origin is dict or annotation is dict:
            return pa.string()
        return simple.get(annotation, pa.string())

    return pa.schema([(name, pa.string() if name in text else pa.int64() if name in numbers
                       else arrow(field.annotation)) for name, field in model.model_fields.items()])
