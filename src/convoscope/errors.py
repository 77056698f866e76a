"""One error hierarchy for everything a user can fix.

The CLI catches :class:`ConvoscopeError` and prints its message on one line with exit code 2;
any other exception is a bug and keeps its traceback. Located errors carry the file, line and
field so the message can say where to look.

Library messages describe the problem in the library's own terms (a parameter, a field, a file);
they never name command-line flags: the CLI layer adds that wording where it catches them.
"""

from __future__ import annotations

from pathlib import Path


class ConvoscopeError(Exception):
    """A problem the user can fix: bad input, a bad setting, an unusable backend."""


class LocatedError(ConvoscopeError, ValueError):
    """Bad input at a known place. The message reads ``path, line N, field 'f': problem``.

    ``ValueError`` stays a base class so code written against the older errors keeps working.
    A subclass whose messages have an established form overrides :meth:`describe`."""

    def __init__(self, path: Path | str | None, problem: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.line, self.field, self.problem = line, field, problem
        super().__init__(self.describe())

    def describe(self) -> str:
        """The one-line message: where, then what."""
        return located_message(self.path, self.problem, line=self.line, field=self.field)


class ConfigError(ConvoscopeError, ValueError):
    """A setting or a combination of options that cannot work (no file position to name)."""


def located_message(path: str | None, problem: str, *, line: int | None = None,
                    field: str | None = None) -> str:
    """``path, line N, field 'f': problem``, leaving out the parts that are not known."""
    parts = [part for part in (path, None if line is None else f"line {line}",
                               f"field '{field}'" if field else None) if part]
    return f"{', '.join(parts)}: {problem}" if parts else problem


__all__ = ["ConfigError", "ConvoscopeError", "LocatedError", "located_message"]
