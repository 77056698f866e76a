"""Read a verdict file (JSONL as ``convoscope judge --out`` writes it, or its CSV form) back
into Verdicts, with errors that name the file, the line and the field. The records come from the
shared reader :func:`convoscope.items.records`; CSV cells are turned back into typed values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from convoscope.items import ItemError, records
from convoscope.judges._verdict import Verdict

_LIST_FIELDS = ("options",)
_DICT_FIELDS = ("distribution",)
_UNION_TAGS = {"int", "str", "float", "bool", "dict[str,float]"}
_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False}


def read_verdicts(path: str | Path | Any, *, split: str | None = None) -> list[Verdict]:
    """Every verdict in a .jsonl, .json, .csv, .tsv or .parquet verdict file, validated (or the
    final verdicts of a ``.cvs.zip`` run archive) — or in a
    table in memory (pandas, polars, pyarrow, a Hugging Face ``Dataset`` or one ``split`` of a
    ``DatasetDict``, a list of dicts), as :func:`convoscope.items.verdicts_to_table` writes it."""
    from convoscope.items._tables import not_a_source, table_kind, table_name, table_rows

    if table_kind(path) is not None:
        name = table_name(path)
        found = [_validate(name, line, _from_parquet(name, line, row))  # type: ignore[arg-type]
                 for line, row in table_rows(path, split=split)]
        if not found:
            raise ItemError(name, None, None, "no verdicts in the table")
        return found
    if not isinstance(path, str | Path):
        raise not_a_source(path)
    path = Path(path)
    from convoscope.archive._format import is_archive

    if is_archive(path):  # a run archive (export-run): its final verdicts
        from convoscope.archive import read_run_archive

        return read_run_archive(path).verdicts()
    if not path.exists():
        raise ItemError(path, None, None, "file not found")
    suffix = path.suffix.lower()
    convert = _from_csv if suffix in (".csv", ".tsv") else _from_parquet if suffix == ".parquet" else None
    verdicts = [_validate(path, line, convert(path, line, row) if convert else row)
                for line, row in records(path)]
    if not verdicts:
        raise ItemError(path, None, None, "no verdicts in file")
    return verdicts


def _validate(path: Path, line: int, row: dict[str, Any]) -> Verdict:
    try:
        return Verdict.model_validate(row)
    except ValidationError as error:
        first = error.errors()[0]
        parts = [str(part) for part in first["loc"]]
        message = first["msg"]
        if len(parts) > 1 and parts[-1] in _UNION_TAGS:  # 'value.int': one branch of a union
            parts, message = parts[:-1], "expected a number, a label or null"
        location = ".".join(parts) or None
        if first["type"] == "extra_forbidden":
            message = "unknown field in a verdict"
        raise ItemError(path, line, location, message) from None


def _from_parquet(path: Path, line: int, row: dict[str, Any]) -> dict[str, Any]:
    """Parquet columns are typed; maps were stored as JSON text (lists too, by earlier versions of
    ``verdicts_to_table(kind="hf")``), and a ``value`` column mixing numbers and labels as text
    (see ``convoscope.items.write_parquet``)."""
    data = {key: value for key, value in row.items() if value is not None or key == "value"}
    for key in (*_DICT_FIELDS, *_LIST_FIELDS):
        if isinstance(data.get(key), str):
            try:
                data[key] = json.loads(data[key])
            except json.JSONDecodeError:
                raise ItemError(path, line, key, "expected JSON text") from None
    value = data.get("value")
    if isinstance(value, str) and value.lstrip("-").isdigit():
        data["value"] = int(value)
    return data


def _from_csv(path: Path, line: int, row: dict[str, Any]) -> dict[str, Any]:
    """CSV cells are text: empty means absent, lists and maps are JSON, numbers become numbers."""
    data: dict[str, Any] = {}
    for key, text in row.items():
        if text is None or text == "":
            if key == "value":
                data[key] = None  # an unscored verdict
            continue
        if key in _LIST_FIELDS or key in _DICT_FIELDS:
            try:
                data[key] = json.loads(text)
            except json.JSONDecodeError:
                raise ItemError(path, line, key, "expected JSON text") from None
        elif key == "value":
            data[key] = int(text) if text.lstrip("-").isdigit() else text
        elif key in ("relevant", "cached", "shared_call"):
            if text.lower() not in _BOOL_TEXT:
                raise ItemError(path, line, key, f"expected true or false, got {text!r}")
            data[key] = _BOOL_TEXT[text.lower()]
        else:
            data[key] = text
    return data
