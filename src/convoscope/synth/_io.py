"""JSONL helpers for the synth stage: validated reading, and appending one record at a time.

Reading validates every line against a frozen model and fails with an
:class:`~convoscope.items.ItemError` naming file, line and field. Appending flushes each record
so that an interrupted run loses at most the line it was writing; :func:`repair_tail` drops such a
torn last line before a resumed run appends to the file again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from convoscope.items import ItemError, jsonl_records, validate_record

ModelT = TypeVar("ModelT", bound=BaseModel)


def jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; bad JSON names the file and line."""
    if not path.is_file():
        raise ItemError(path, None, None, "file not found")
    return jsonl_records(path)


def read_models(path: str | Path, model: type[ModelT],
                prepare: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None) -> list[ModelT]:
    """Every line of a JSONL file as ``model``; ``prepare`` may fill defaults from the line number."""
    path = Path(path)
    records: list[ModelT] = []
    for number, row in jsonl_rows(path):
        if prepare is not None:
            row = prepare(number, row)
        records.append(validate_record(model, path, number, row))
    if not records:
        raise ItemError(path, None, None, "no records in file")
    return records


def repair_tail(path: Path) -> None:
    """Cut a last line that an interrupted writer left without its newline (it is incomplete)."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as handle:
        handle.truncate(cut)


def ids_in(path: Path) -> set[str]:
    """The ``id`` of every complete line of a JSONL file (empty when the file does not exist)."""
    if not path.is_file():
        return set()
    return {str(row["id"]) for _, row in jsonl_rows(path) if "id" in row}


def append_jsonl(path: Path, record: BaseModel | dict[str, Any]) -> None:
    """Append one record and flush it to disk before returning."""
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(data, ensure_ascii=False) + "\n")
        handle.flush()
