"""The one text reader behind every input file (items, survey exports, gibberish answers, labels,
verdict imports): bytes to lines, with the problems people meet in real exports named.

* **Encoding**: UTF-8 by default; a UTF-8 byte-order mark (Excel writes one) is dropped; a file
  that starts with a UTF-16 byte-order mark (Excel's "Unicode text" export) is read as UTF-16
  whatever was asked. Text that is not in the encoding fails with the line of the first bad byte
  and, where another common encoding reads the whole file, that encoding's name as a hint.
* **Line ends**: ``\\n``, ``\\r\\n`` and ``\\r`` all end a line; lines are counted as a text
  editor counts them, so an error names the line a person would look at.
* **NUL bytes** never belong in text: a file with one (a binary file, or UTF-16 without its
  byte-order mark) is refused with the line, before any row is read.

Library messages name the encoding, never a command-line flag; the CLI adds ``(--encoding)``.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from convoscope.errors import LocatedError

# Tried, in order, on a file that failed to decode, to suggest what it is. cp949 first: Korean
# Windows exports are the common case, and Latin text rarely decodes as cp949, while cp949 text
# often decodes (as mojibake) in cp1252.
HINT_ENCODINGS: tuple[tuple[str, str], ...] = (
    ("utf-8", "UTF-8"), ("cp949", "Korean Windows"), ("cp1252", "Western Windows"),
)
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class ItemError(LocatedError):
    """A malformed input file or row. The message names file, line and field."""

    def __init__(self, path: Path | str, line: int | None, field_name: str | None, problem: str):
        super().__init__(path, problem, line=line, field=field_name)


class TextEncodingError(ItemError):
    """Bytes that are not text in the encoding the file was read with (the line of the first one)."""


def effective_encoding(path: Path, encoding: str = "utf-8") -> str:
    """The codec a file is read with: ``utf-8-sig`` for UTF-8 (a byte-order mark is dropped),
    ``utf-16`` for a file that starts with a UTF-16 byte-order mark, else ``encoding``."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ItemError(path, None, None, f"unknown text encoding {encoding!r}") from None
    with path.open("rb") as handle:
        start = handle.read(2)
    if start in _UTF16_BOMS:
        return "utf-16"
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


@contextmanager
def open_text(path: str | Path, *, encoding: str = "utf-8",
              start: tuple[int, int] = (0, 0)) -> Iterator[Iterator[str]]:
    """The lines of a text file (line ends kept, as ``open(newline="")`` gives them, so the csv
    module reads quoted line breaks), checked as they are read: a NUL byte or an undecodable byte
    raises an :class:`ItemError` naming the file and the line.

    Example::

        with open_text("answers.csv", encoding="cp949") as lines:
            rows = list(csv.reader(lines))

    ``start``: (byte offset, lines before it) to read from the start of a line within the file.
    """
    path = Path(path)
    if not path.is_file():
        raise ItemError(path, None, None, "file not found")
    codec = effective_encoding(path, encoding)
    offset, before = start
    if offset and codec == "utf-8-sig":
        codec = "utf-8"  # a byte-order mark is only ever at the very start
    with path.open(encoding=codec, newline="") as handle:
        if offset:
            handle.seek(offset)  # a fresh decoder: the position is the byte offset
        try:
            yield _checked(path, handle, before + 1)
        except UnicodeDecodeError as error:
            raise _not_in_encoding(path, codec, error) from None


def read_text(path: str | Path, *, encoding: str = "utf-8") -> str:
    """The whole text of a file, read and checked as :func:`open_text` reads it."""
    with open_text(path, encoding=encoding) as lines:
        return "".join(lines)


def _checked(path: Path, lines: Iterator[str], number: int = 1) -> Iterator[str]:
    for text in lines:
        if "\x00" in text:
            before = text[: text.index("\x00")]
            raise ItemError(path, number + _breaks(before), None,
                            "a NUL byte: this is not a text file (or it is UTF-16 without a "
                            "byte-order mark; name its encoding, e.g. utf-16-le)")
        number += _breaks(text)
        yield text


def _breaks(text: str) -> int:
    """Line breaks in ``text``: ``\\r\\n`` counts once, a lone ``\\r`` or ``\\n`` once."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _not_in_encoding(path: Path, codec: str, error: UnicodeDecodeError) -> TextEncodingError:
    raw = path.read_bytes()
    offset = _byte_offset(raw, codec, error)
    line = 1 + _breaks(raw[:offset].decode("latin-1"))
    byte = raw[offset:offset + 1].hex()
    shown = "utf-8" if codec == "utf-8-sig" else codec
    hint = next((f"it reads as {name} ({what}): name that encoding or save the file as UTF-8"
                 for name, what in HINT_ENCODINGS if name != shown and _decodes(raw, name)),
                "name the file's encoding, e.g. cp949 (Korean Windows) or latin-1")
    return TextEncodingError(path, line, None,
                             f"not {shown} text (byte 0x{byte} cannot be decoded); {hint}")


def _byte_offset(raw: bytes, codec: str, error: UnicodeDecodeError) -> int:
    """Where in the file the first undecodable byte is (the error's offset is within a buffer)."""
    try:
        raw.decode(codec)
    except UnicodeDecodeError as whole:
        return whole.start
    return error.start


def _decodes(raw: bytes, encoding: str) -> bool:
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        return False
    return b"\x00" not in raw
