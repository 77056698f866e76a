"""One error hierarchy for everything a user can fix.

The CLI catches :class:`ConvoscopeError` and prints its message on one line with exit code 2;
any other exception is a bug and keeps its traceback. Located errors carry the file, line and
field so the message can say where to look.
"""

from __future__ import annotations

from pathlib import Path


class ConvoscopeError(Exception):
    """A problem the user can fix: bad input, a bad setting, an unusable backend."""


class LocatedError(ConvoscopeError, ValueError):
    """Bad input at a known place. The message reads ``path, line N, field 'f': problem``.

    ``ValueError`` stays a base class so code written against the older errors keeps working."""

    def __init__(self, path: Path | str | None, problem: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.line, self.field, self.problem = line, field, problem
        super().__init__(located_message(self.path, problem, line=line, field=field))


class ConfigError(ConvoscopeError, ValueError):
    """A setting or a combination of options that cannot work (no file position to name)."""


def located_message(path: str | None, problem: str, *, line: int | None = None,
                    field: str | None = None) -> str:
    where = path or ""
    where += (", " if where else "") + f"line {line}" if line is not None else ""
    where += (", " if where else "") + f"field '{field}'" if field else ""
    return f"{where}: {problem}" if where else problem


__all__ = ["ConfigError", "ConvoscopeError", "LocatedError", "located_message"]
