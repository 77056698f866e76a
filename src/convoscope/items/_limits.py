"""Limits for input files: JSON nesting depth (text encodings are read in ``_text``).

Python's JSON parser recurses once per nesting level, so a line of ``[[[[...`` ten thousand
deep ends in a RecursionError that names nothing; later stages (validation, prompts, the store)
recurse too. Items never need deep nesting, so a record nested deeper than :data:`MAX_NESTING`
is refused with the line and the top-level field it is under, before it is parsed.
"""

from __future__ import annotations

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
