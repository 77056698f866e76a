"""Limits and diagnoses for input files: JSON nesting depth and text that is not in its encoding.

Python's JSON parser recurses once per nesting level, so a line of ``[[[[...`` ten thousand
deep ends in a RecursionError that names nothing; later stages (validation, prompts, the store)
recurse too. Items never need deep nesting, so a record nested deeper than :data:`MAX_NESTING`
is refused with the line and the top-level field it is under, before it is parsed.
"""

from __future__ import annotations

from pathlib import Path

MAX_NESTING = 64


def nesting_problem(text: str, limit: int = MAX_NESTING) -> tuple[int, str | None] | None:
    """Where ``text`` (JSON) nests deeper than ``limit``: (lines before that point, the key of the
    record field on the way there, if any); None when it does not. One pass, no recursion.

    The record is the first object met (a JSONL line, or an entry of a .json list)."""
    depth, newlines, in_string, escaped = 0, 0, False, False
    start, last_string, record_depth, key = 0, "", 0, None
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string, last_string = False, text[start:index]
            continue
        if char == '"':
            in_string, start = True, index + 1
        elif char == ":" and depth == record_depth:
            key = last_string
        elif char in "[{":
            depth += 1
            record_depth = record_depth or (depth if char == "{" else 0)
            if depth > limit:
                return newlines, key
        elif char in "]}":
            depth -= 1
        elif char == "\n":
            newlines += 1
    return None


def decoding_problem(path: Path, encoding: str, error: UnicodeDecodeError) -> tuple[int | None, str]:
    """(1-based line of the first undecodable byte, the problem in words) for a file that is not
    ``encoding`` text. Reads the file again in binary; only called once decoding has failed."""
    line = None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as bad:
                line, error = number, bad
                break
    byte = error.object[error.start:error.start + 1].hex()
    others = "cp949 (Korean Windows), latin-1" if encoding.lower() != "cp949" else "utf-8, latin-1"
    return line, (f"not {encoding} text (byte 0x{byte} cannot be decoded); name the file's encoding, "
                  f"e.g. {others}")
