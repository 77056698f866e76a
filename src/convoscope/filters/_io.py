"""Reading answers from a file and writing one flag per answer, for ``convoscope gibberish``.

A plain text file holds one answer per line, and every line is an answer: an empty line stays in
the output (flagged ``empty`` by default), so output row N always belongs to input line N. CSV,
TSV and JSONL files name the answer column with ``column``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from itertools import islice
from json.encoder import encode_basestring
from math import isfinite
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict

from convoscope.errors import LocatedError
from convoscope.filters._result import GibberishResult
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
    any size costs the memory of a few lines (plain text is read a block of lines at a time). A
    bad line raises when it is reached, after every answer before it."""
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
            yield from _plain_answers(lines)


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


# Physical lines read together: one ``splitlines`` and one list of answers per block, not a
# generator step and a ``splitlines`` call per line.
_BLOCK_LINES = 1024


def _plain_answers(lines: Iterator[str]) -> Iterator[Answer]:
    """The answers of a plain text file: ``_split_lines`` numbered from 1, a block at a time. A
    block's lines each end at a line break (only the file's last may not), so the breaks
    ``splitlines`` finds in their joined text are theirs, and the same. A bad line (a NUL byte,
    an undecodable byte) still raises only after every answer before it is given."""
    number = 1
    while True:
        block: list[str] = []
        try:
            block.extend(islice(lines, _BLOCK_LINES))  # keeps the lines read before an error
        except Exception:
            yield from _numbered(number, block)
            raise
        if not block:
            return
        number = yield from _numbered(number, block)


def _numbered(number: int, block: list[str]) -> Generator[Answer, None, int]:
    texts = "".join(block).splitlines()
    yield from map(_plain_answer, range(number, number + len(texts)), texts)
    return number + len(texts)


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
    handle.writelines(_json_line(answer, result) for answer, result in zip(answers, results, strict=True))


# Types JSON writes as pydantic does; ints only in the int fields (an int in a float field would
# be written 1 where pydantic writes 1.0).
_JSON_NATIVE = frozenset({str, bool, tuple, type(None)})
_INT_FIELDS = frozenset({"longest_class_run", "distinct_jamo"})
_RESULT_FIELDS = tuple(GibberishResult.model_fields)  # the template writes them in this order
_encode_record = json.JSONEncoder(ensure_ascii=False).encode
_names_json: dict[tuple[str, ...], str] = {}  # ("low_likelihood",) -> '["low_likelihood"]'
_float_repr = float.__repr__


def _json_line(answer: Answer, result: GibberishResult) -> str:
    """The line ``json.dumps(flag_record(answer, result), ensure_ascii=False)`` writes, from a
    template when every field is of the kind the template writes as json does (str, bool,
    tuples of names, finite floats, ints, None): about a third of the cost of building a dict
    and encoding it, per line. Anything else goes through ``_plain_record``."""
    fields, number = result.__dict__, answer.line
    if tuple(fields) != _RESULT_FIELDS or type(number) is not int:
        return _encode_record(_plain_record(answer, result)) + "\n"
    (text, lang, gibberish, reasons, notes, likelihood, ratio, run, syllables, jamo, morpheme,
     probability, segment) = fields.values()
    # ``x - x == 0.0`` is true for a finite float only (inf - inf and nan - nan are nan).
    if (type(text) is not str or type(lang) is not str or type(gibberish) is not bool
            or not (segment is None or type(segment) is str)
            or not (run is None or type(run) is int) or not (jamo is None or type(jamo) is int)
            or not (morpheme is None or type(morpheme) is bool)
            or not (likelihood is None or (type(likelihood) is float and likelihood - likelihood == 0.0))
            or not (ratio is None or (type(ratio) is float and ratio - ratio == 0.0))
            or not (syllables is None or (type(syllables) is float and syllables - syllables == 0.0))
            or not (probability is None
                    or (type(probability) is float and probability - probability == 0.0))):
        return _encode_record(_plain_record(answer, result)) + "\n"
    reasons_json: str | None
    notes_json: str | None
    try:  # the names of the reasons and notes met before (a handful of tuples)
        reasons_json, notes_json = _names_json[reasons], _names_json[notes]
    except (KeyError, TypeError):  # TypeError: not hashable, so not a tuple of names
        reasons_json, notes_json = _names(reasons), _names(notes)
        if reasons_json is None or notes_json is None:
            return _encode_record(_plain_record(answer, result)) + "\n"
    return (f'{{"line": {number}, "text": {encode_basestring(text)}, "lang": {encode_basestring(lang)}, '
            f'"gibberish": {"true" if gibberish else "false"}, "reasons": {reasons_json}, '
            f'"notes": {notes_json}, '
            f'"log_likelihood": {"null" if likelihood is None else _float_repr(likelihood)}, '
            f'"valid_word_ratio": {"null" if ratio is None else _float_repr(ratio)}, '
            f'"longest_class_run": {"null" if run is None else run}, '
            f'"complete_syllable_ratio": {"null" if syllables is None else _float_repr(syllables)}, '
            f'"distinct_jamo": {"null" if jamo is None else jamo}, '
            f'"morpheme_found": {"null" if morpheme is None else "true" if morpheme else "false"}, '
            f'"language_probability": {"null" if probability is None else _float_repr(probability)}, '
            f'"segment": {"null" if segment is None else encode_basestring(segment)}}}\n')


def _names(names: object) -> str | None:
    """A tuple of reason or note names as JSON, or None when it is not a tuple of str."""
    if type(names) is not tuple or not all(type(name) is str for name in names):
        return None
    found = _names_json.get(names)
    if found is None:
        found = _names_json[names] = json.dumps(list(names), ensure_ascii=False)
    return found


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
    tally.add_many(list(results))
    return tally.summary()


class _Tally:
    """The summary's counts, kept as results stream past."""

    def __init__(self) -> None:
        self.answers: Counter[str] = Counter()
        self.flagged: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def add(self, result: GibberishResult) -> None:
        self.add_many([result])

    def add_many(self, results: list[GibberishResult]) -> None:
        """A chunk's counts in three C-level passes (``Counter.update`` on iterables)."""
        self.answers.update([result.lang for result in results])
        self.flagged.update([result.lang for result in results if result.gibberish])
        self.reasons.update([reason for result in results for reason in result.reasons])

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
        tally.add_many(results)
    return tally.summary()
