"""Reading answers from a file and writing one flag per answer, for ``convoscope gibberish``.

A plain text file holds one answer per line, and every line is an answer: an empty line stays in
the output (flagged ``empty`` by default), so output row N always belongs to input line N. CSV,
TSV and JSONL files name the answer column with ``column``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from math import isfinite
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict

from convoscope.errors import LocatedError
from convoscope.filters._filter import GibberishResult
from convoscope.items import open_text

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
    ``lang_column``: a column or field of ISO 639 codes, each answer's declared language.
    :func:`iter_answers` gives the same answers one at a time."""
    return list(iter_answers(path, column=column, encoding=encoding, lang_column=lang_column))


def iter_answers(path: Path, *, column: str | None = None, encoding: str = "utf-8",
                 lang_column: str | None = None) -> Iterator[Answer]:
    """:func:`read_answers` as a stream: the file is read as the answers are taken, so a file of
    any size costs the memory of one line. A bad line raises when it is reached."""
    suffix = path.suffix.lower()
    structured = suffix in TABLE_SUFFIXES or suffix in JSONL_SUFFIXES
    if structured and not column:
        raise LocatedError(path, "a CSV/TSV/JSONL file needs --column naming the answer field")
    if not structured and lang_column:
        raise LocatedError(path, "--lang-col applies to CSV/TSV/JSONL files", field=lang_column)
    if not structured and column:
        raise LocatedError(path, "--column applies to CSV/TSV/JSONL files; this is read as plain "
                           "text, one answer per line", field=column)
    return _stream(path, suffix, str(column), encoding, lang_column)


def _stream(path: Path, suffix: str, column: str, encoding: str, lang_column: str | None) -> Iterator[Answer]:
    with open_text(path, encoding=encoding) as lines:
        if suffix in TABLE_SUFFIXES:
            yield from _read_table(path, lines, TABLE_SUFFIXES[suffix], column, lang_column)
        elif suffix in JSONL_SUFFIXES:
            yield from _read_jsonl(path, _split_lines(lines), column, lang_column)
        else:
            for number, line in enumerate(_split_lines(lines), start=1):
                yield _plain_answer(number, line)


_ANSWER_FIELDS = {"line", "text"}  # shared: the answers are frozen and never copied in place
_new_model = object.__new__
_set_attribute = object.__setattr__


def _plain_answer(number: int, text: str) -> Answer:
    """``Answer(line=number, text=text)`` without validating an int and a str again (validation,
    or even ``model_construct``, cost about as much per line as the English rules); same fields,
    same fields set."""
    answer = _new_model(Answer)
    _set_attribute(answer, "__dict__", {"line": number, "text": text, "lang": None})
    _set_attribute(answer, "__pydantic_fields_set__", _ANSWER_FIELDS)
    _set_attribute(answer, "__pydantic_extra__", None)
    _set_attribute(answer, "__pydantic_private__", None)
    return answer


def _split_lines(lines: Iterable[str]) -> Iterator[str]:
    """The lines ``str.splitlines`` finds in the whole text, from its physical lines one by one
    (which end only at \\n, \\r or \\r\\n; splitlines also breaks at \\f, \\u2028 and the like)."""
    for line in lines:
        yield from line.splitlines()


def _read_table(path: Path, lines: Iterable[str], delimiter: str, column: str,
                lang_column: str | None = None) -> Iterator[Answer]:
    reader = csv.reader(lines, delimiter=delimiter)
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
    position, start = header.index(column), reader.line_num + 1
    for row in reader:
        if row and len(row) != len(header):
            raise LocatedError(path, f"{len(row)} fields where the header has {len(header)}",
                               line=start, field=column)
        code = row[language].strip() if row and language is not None else ""
        yield Answer(line=start, text=row[position] if row else "", lang=code or None)
        start = reader.line_num + 1


def _read_jsonl(path: Path, lines: Iterable[str], column: str,
                lang_column: str | None = None) -> Iterator[Answer]:
    for number, line in enumerate(lines, start=1):
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
        yield Answer(line=number, text="" if value is None else str(value),
                     lang=str(code).strip() or None if code is not None else None)


def flag_record(answer: Answer, result: GibberishResult) -> dict[str, object]:
    return {"line": answer.line, **result.model_dump(mode="json")}


def write_flags(answers: Iterable[Answer], results: Iterable[GibberishResult], handle: TextIO) -> None:
    """One JSON object per answer, in input order."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    handle.writelines(dumps(_plain_record(answer, result)) + "\n"
                      for answer, result in zip(answers, results, strict=True))


# Types JSON writes as pydantic does; ints only in the int fields (an int in a float field would
# be written 1 where pydantic writes 1.0).
_JSON_NATIVE = frozenset({str, bool, tuple, type(None)})
_INT_FIELDS = frozenset({"longest_class_run", "distinct_jamo"})


def _plain_record(answer: Answer, result: GibberishResult) -> dict[str, object]:
    """``flag_record`` without pydantic's serialiser when every field is already what JSON writes
    alike (text, flags, tuples of names, finite numbers, None): the fields in the same order, so
    the line is byte for byte the one ``model_dump(mode="json")`` gives. Anything else (an
    infinite float, which pydantic writes as null) goes through ``model_dump``."""
    fields = result.__dict__
    for name, value in fields.items():
        kind = type(value)
        if kind not in _JSON_NATIVE and not (kind is float and isfinite(value)) and not (
                kind is int and name in _INT_FIELDS):
            return flag_record(answer, result)
    return {"line": answer.line, **fields}


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
    tally = _Tally()
    for result in results:
        tally.add(result)
    return tally.summary()


class _Tally:
    """The summary's counts, kept as results stream past."""

    def __init__(self) -> None:
        self.answers: Counter[str] = Counter()
        self.flagged: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def add(self, result: GibberishResult) -> None:
        self.answers[result.lang] += 1
        self.flagged[result.lang] += result.gibberish
        self.reasons.update(result.reasons)

    def summary(self) -> GibberishSummary:
        return GibberishSummary(
            total=sum(self.answers.values()), gibberish=sum(self.flagged.values()),
            by_language={lang: (self.answers[lang], self.flagged[lang]) for lang in sorted(self.answers)},
            by_reason=dict(self.reasons.most_common()),
        )


# Answers judged together: enough for repeated answers to be judged once and Korean morphemes
# analysed in one batch call, few enough that memory never depends on the file's length.
CHUNK_ANSWERS = 2000


def flag_answers(answers: Iterable[Answer], handle: TextIO, *,
                 judge: Callable[[list[Answer]], list[GibberishResult]],
                 chunk: int = CHUNK_ANSWERS) -> GibberishSummary:
    """Judge a stream of answers ``chunk`` at a time with ``judge`` (e.g. ``detect_many`` with
    options), writing each chunk's flags before the next is read; returns the summary counts."""
    tally, stream = _Tally(), iter(answers)
    while batch := list(islice(stream, chunk)):
        results = judge(batch)
        write_flags(batch, results, handle)
        for result in results:
            tally.add(result)
    return tally.summary()
