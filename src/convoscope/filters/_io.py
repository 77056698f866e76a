"""Reading answers from a file and writing one flag per answer, for ``convoscope gibberish``.

A plain text file holds one answer per line, and every line is an answer: an empty line stays in
the output (flagged ``empty`` by default), so output row N always belongs to input line N. CSV,
TSV and JSONL files name the answer column with ``column``.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict

from convoscope.errors import LocatedError
from convoscope.filters._filter import GibberishResult
from convoscope.items import read_text

TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}


class Answer(BaseModel):
    """One answer and the line of the file where it starts."""

    model_config = ConfigDict(frozen=True)

    line: int
    text: str
    lang: str | None = None  # the answer's declared language (a language column), when read


def read_answers(path: Path, *, column: str | None = None, encoding: str = "utf-8",
                 lang_column: str | None = None) -> list[Answer]:
    """Answers from a text (one per line), CSV/TSV or JSONL file; CSV and JSONL need ``column``.
    ``encoding``: the file's text encoding (read by :func:`convoscope.items.read_text`);
    ``lang_column``: a column or field of ISO 639 codes, each answer's declared language."""
    suffix = path.suffix.lower()
    structured = suffix in TABLE_SUFFIXES or suffix in JSONL_SUFFIXES
    if structured and not column:
        raise LocatedError(path, "a CSV/TSV/JSONL file needs --column naming the answer field")
    if not structured and lang_column:
        raise LocatedError(path, "--lang-col applies to CSV/TSV/JSONL files", field=lang_column)
    if not structured and column:
        raise LocatedError(path, "--column applies to CSV/TSV/JSONL files; this is read as plain "
                           "text, one answer per line", field=column)
    text = read_text(path, encoding=encoding)
    if suffix in TABLE_SUFFIXES:
        return _read_table(path, text, TABLE_SUFFIXES[suffix], str(column), lang_column)
    if suffix in JSONL_SUFFIXES:
        return _read_jsonl(path, text, str(column), lang_column)
    return [Answer(line=number, text=line) for number, line in enumerate(text.splitlines(), start=1)]


def _read_table(path: Path, text: str, delimiter: str, column: str,
                lang_column: str | None = None) -> list[Answer]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        raise LocatedError(path, "the file is empty; expected a header row", line=1)
    if column not in header:
        raise LocatedError(path, f"no such column; the header has {', '.join(header)}", line=1,
                           field=column)
    if lang_column is not None and lang_column not in header:
        raise LocatedError(path, f"no such column; the header has {', '.join(header)}", line=1,
                           field=lang_column)
    language = header.index(lang_column) if lang_column is not None else None
    position, answers, start = header.index(column), [], reader.line_num + 1
    for row in reader:
        if row and len(row) != len(header):
            raise LocatedError(path, f"{len(row)} fields where the header has {len(header)}",
                               line=start, field=column)
        code = row[language].strip() if row and language is not None else ""
        answers.append(Answer(line=start, text=row[position] if row else "", lang=code or None))
        start = reader.line_num + 1
    return answers


def _read_jsonl(path: Path, text: str, column: str, lang_column: str | None = None) -> list[Answer]:
    answers = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # blank lines separate nothing in JSONL; they are not answers
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise LocatedError(path, f"not valid JSON ({error.msg})", line=number) from None
        if not isinstance(record, dict) or column not in record:
            raise LocatedError(path, "missing; every object needs the answer field", line=number,
                               field=column)
        value = record[column]
        if value is not None and not isinstance(value, str | int | float):
            raise LocatedError(path, f"expected text, got {type(value).__name__}", line=number, field=column)
        code = record.get(lang_column) if lang_column is not None else None
        answers.append(Answer(line=number, text="" if value is None else str(value),
                              lang=str(code).strip() or None if code is not None else None))
    return answers


def flag_record(answer: Answer, result: GibberishResult) -> dict[str, object]:
    return {"line": answer.line, **result.model_dump(mode="json")}


def write_flags(answers: Iterable[Answer], results: Iterable[GibberishResult], handle: TextIO) -> None:
    """One JSON object per answer, in input order."""
    for answer, result in zip(answers, results, strict=True):
        handle.write(json.dumps(flag_record(answer, result), ensure_ascii=False) + "\n")


class GibberishSummary(BaseModel):
    """Counts for the CLI's closing table."""

    model_config = ConfigDict(frozen=True)

    total: int
    gibberish: int
    by_language: dict[str, tuple[int, int]]  # language -> (answers, gibberish)
    by_reason: dict[str, int]

    @property
    def rate(self) -> float:
        return self.gibberish / self.total if self.total else float("nan")


def summarize(results: Iterable[GibberishResult]) -> GibberishSummary:
    answers: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for result in results:
        answers[result.lang] += 1
        flagged[result.lang] += result.gibberish
        reasons.update(result.reasons)
    return GibberishSummary(
        total=sum(answers.values()), gibberish=sum(flagged.values()),
        by_language={lang: (answers[lang], flagged[lang]) for lang in sorted(answers)},
        by_reason=dict(reasons.most_common()),
    )
