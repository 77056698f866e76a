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
    outermost object on the way there, if any); None when it does not. One pass, no recursion."""
    depth, newlines, in_string, escaped = 0, 0, False, False
    start, last_string, outer_key = 0, "", None
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
        elif char == ":" and outer_key is None and depth <= 2:
            outer_key = last_string  # a key of the record (depth 1) or of a record in a list (2)
        elif char in "[{":
            depth += 1
            if depth > limit:
                return newlines, outer_key
        elif char in "]}":
            depth -= 1
            if depth <= 1:
                outer_key = None
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
