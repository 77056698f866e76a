"""Reading survey exports as a fieldwork team gets them.

* Qualtrics CSV exports carry two extra rows under the header: the question text and a row of
  ``{"ImportId":"QID…"}`` cells. They are recognised and skipped, and the reader says so.
* ``skip_rows`` skips a fixed number of rows after the header for other tools' exports.
* Without an id column, the answer's line number in the file is its id.
* Every column the user names must exist; an unnamed default that is absent is simply unused.
* Text goes through the one reader (:func:`convoscope.items.open_text`): ``encoding`` names a
  Korean or Western Windows export, a byte-order mark is dropped, any line end works, a NUL byte
  or a byte not in the encoding is refused with the line.

JSONL and Parquet files go through ``convoscope.items.read_items`` unchanged.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from convoscope.errors import LocatedError
from convoscope.items import ColumnMap, Item, open_text, read_items

_IMPORT_ID = '{"ImportId"'
_QUALTRICS_HEADER = {"StartDate", "EndDate", "ResponseId", "Finished", "Progress"}
DEFAULT_ANSWER_COLUMNS = ("response", "answer")


@dataclass(frozen=True)
class SurveyColumns:
    """Column names; ``None`` means "use the default if the file has it"."""

    id: str | None = None
    question: str | None = None
    answer: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class SurveyExport:
    items: list[Item]
    notes: tuple[str, ...] = ()  # what the reader did on its own (skipped rows, ids from lines)


def read_survey(path: str | Path, columns: SurveyColumns = SurveyColumns(), *,
                skip_rows: int | None = None, encoding: str = "utf-8") -> SurveyExport:
    """Answers from a CSV/TSV export (or JSONL/Parquet through ``read_items``); ``encoding`` is
    the text encoding of the file (e.g. ``cp949``, ``latin-1``)."""
    path = Path(path)
    if not path.exists():
        raise LocatedError(path, "file not found")
    if path.suffix.lower() not in (".csv", ".tsv"):
        if skip_rows:
            raise LocatedError(path, "skip_rows (--skip-rows) applies to CSV/TSV exports only")
        mapped = ColumnMap(id=columns.id or "id", question=columns.question or "question",
                           response=columns.answer or "response",
                           language=columns.language or "language")
        return SurveyExport(read_items(path, columns=mapped, encoding=encoding))
    return _read_table(path, columns, skip_rows, encoding)


def _read_table(path: Path, columns: SurveyColumns, skip_rows: int | None,
                encoding: str) -> SurveyExport:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with open_text(path, encoding=encoding) as lines:
        reader = csv.reader(lines, delimiter=delimiter)
        header = next(reader, None)
        if not header:
            raise LocatedError(path, "the file is empty; expected a header row", line=1)
        rows: list[tuple[int, list[str]]] = []
        start = reader.line_num + 1
        for row in reader:
            rows.append((start, row))
            start = reader.line_num + 1
    notes: list[str] = []
    rows = _skip_extra_headers(path, header, rows, skip_rows, notes)
    names = _resolve_columns(path, header, columns, notes)
    return SurveyExport(_items(path, header, rows, names), tuple(notes))


def _skip_extra_headers(path: Path, header: list[str], rows: list[tuple[int, list[str]]],
                        skip_rows: int | None, notes: list[str]) -> list[tuple[int, list[str]]]:
    if skip_rows is not None:
        if skip_rows < 0:
            raise LocatedError(path, f"skip_rows (--skip-rows) must be 0 or more, got {skip_rows}")
        if skip_rows:
            notes.append(f"skipped {skip_rows} row(s) after the header (--skip-rows), "
                         f"lines 2-{rows[skip_rows - 1][0] if skip_rows <= len(rows) else '?'}")
        return rows[skip_rows:]
    for position, (_, row) in enumerate(rows[:3]):
        filled = [cell for cell in row if cell.strip()]
        if filled and sum(cell.startswith(_IMPORT_ID) for cell in filled) >= len(filled) / 2:
            skipped = ", ".join(str(number) for number, _ in rows[: position + 1])
            notes.append(f"recognised a Qualtrics export: skipped the question-text and ImportId "
                         f"rows under the header (line(s) {skipped})")
            return rows[position + 1:]
    if _QUALTRICS_HEADER <= set(header):
        notes.append("the header looks like Qualtrics but no ImportId row was found; "
                     "nothing skipped (use --skip-rows N if the export has extra header rows)")
    return rows


def _resolve_columns(path: Path, header: list[str], columns: SurveyColumns,
                     notes: list[str]) -> dict[str, str | None]:
    for field, name in (("id", columns.id), ("question", columns.question),
                        ("answer", columns.answer), ("language", columns.language)):
        if name is not None and name not in header:
            raise LocatedError(path, f"no {field} column named {name!r}; the header has "
                               f"{', '.join(header)}", line=1, field=name)
    answer = columns.answer or next((c for c in DEFAULT_ANSWER_COLUMNS if c in header), None)
    if answer is None:
        raise LocatedError(path, "no answer column: name it with SurveyColumns(answer=…) or "
                           f"--answer-col; the header has {', '.join(header)}", line=1)
    identifier = columns.id or next((c for c in ("id", "ResponseId") if c in header), None)
    if identifier is None:
        notes.append("no id column: each answer's line number in the file is its id")
    question = columns.question or ("question" if "question" in header else None)
    language = columns.language or ("language" if "language" in header else None)
    return {"id": identifier, "question": question, "answer": answer, "language": language}


def _items(path: Path, header: list[str], rows: list[tuple[int, list[str]]],
           names: dict[str, str | None]) -> list[Item]:
    index = {name: position for position, name in enumerate(header)}
    items: list[Item] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise LocatedError(path, f"{len(row)} fields where the header has {len(header)}",
                               line=line)
        cell = {field: (row[index[name]] if name is not None else None) for field, name in names.items()}
        identifier = str(line) if names["id"] is None else (cell["id"] or "").strip()
        if not identifier:
            raise LocatedError(path, "empty id", line=line, field=names["id"])
        if identifier in seen:
            raise LocatedError(path, f"id {identifier!r} already used on line {seen[identifier]}",
                               line=line, field=names["id"])
        seen[identifier] = line
        items.append(Item(id=identifier, question=(cell["question"] or None),
                          response=cell["answer"] or "", language=(cell["language"] or None),
                          meta={"line": line}))
    return items
