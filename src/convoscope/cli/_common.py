"""Helpers shared by CLI commands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
from rich.console import Console


@contextmanager
def fail_on(console: Console) -> Iterator[None]:
    """Turn a problem the user can fix into a one-line message and exit code 2; keep Ctrl-C tidy.
    An endpoint that cannot be reached (or refuses the key) stops the command with one line and
    exit 3: the work is outstanding, and the same command resumes it.

    Only :class:`~convoscope.errors.ConvoscopeError` (and a missing file) is the user's to fix:
    any other exception is a bug and keeps its traceback. Click's own errors pass through to
    Click, which prints them with the command's usage."""
    from rich.markup import escape

    from convoscope.errors import ConvoscopeError

    try:
        yield
    except click.ClickException:
        raise
    except _endpoint_unreachable() as error:
        # Every call would fail alike: stopped at once, work outstanding (exit 3), not bad input.
        console.print(f"[red]error:[/red] {escape(str(error))}; stopped: what was finished is kept, run "
                      "the same command again once the endpoint answers", soft_wrap=True)
        raise SystemExit(3) from None
    except (ConvoscopeError, FileNotFoundError) as error:
        # One unwrapped line (a file path must stay greppable) and no markup read from the
        # message: paths and field names may hold square brackets.
        console.print(f"[red]error:[/red] {escape(str(error))}", soft_wrap=True)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        console.print("\n[yellow]Interrupted.[/yellow] Every verdict made so far is in the store; "
                      "run the same command again to resume.")
        raise SystemExit(130) from None
    except Exception as error:
        problem = database_problem(_first_leaf(error))
        if problem is None:
            raise
        console.print(f"[red]error:[/red] {escape(problem)}", soft_wrap=True)
        raise SystemExit(2) from None


def _endpoint_unreachable() -> type[BaseException]:
    """The models' EndpointUnreachable, or a class nothing raises when no model was ever imported
    (``gibberish`` reads no endpoint, and importing the models costs it ~0.1 s CPU)."""
    import sys

    if "convoscope.models._base" not in sys.modules:
        return _NeverRaised
    from convoscope.models._base import EndpointUnreachable

    return EndpointUnreachable


class _NeverRaised(Exception):
    pass


def _first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups, e.g. from an asyncio TaskGroup."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def database_problem(error: BaseException) -> str | None:
    """One line for a store or cache database that cannot be used (locked by another writer, not
    a database, unreachable, disk full), or None when ``error`` is not such a problem."""
    import sqlite3

    from sqlalchemy import exc

    cause = error.orig if isinstance(error, exc.DBAPIError) else error
    operational = (exc.OperationalError, sqlite3.OperationalError)
    unreadable = type(error) is exc.DatabaseError or type(cause) is sqlite3.DatabaseError
    if not isinstance(error, operational) and not isinstance(cause, operational) and not unreadable:
        return None
    first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    hint = ""
    if "locked" in first:
        hint = (" (another process is writing to this SQLite file; wait for it to finish, or let "
                "several processes share a PostgreSQL store)")
    elif "not a database" in first:
        hint = " (the store or cache path points at a file that is not a SQLite database)"
    return f"store or cache database: {first}{hint}"


F = TypeVar("F", bound=Callable[..., Any])
ENCODING_HELP = "Text encoding of the file, e.g. cp949 (Korean Windows) or latin-1."


def encoding_option(function: F) -> F:
    """``--encoding`` for a command that reads a text file (the one reader, convoscope.items)."""
    return click.option("--encoding", default="utf-8", show_default=True, help=ENCODING_HELP)(function)


@contextmanager
def naming_encoding_flag() -> Iterator[None]:
    """A file not in its encoding: the library's message, plus the flag that names one."""
    from convoscope.items import TextEncodingError

    try:
        yield
    except TextEncodingError as error:
        raise TextEncodingError(error.path or "", error.line, error.field,
                                f"{error.problem} (--encoding)") from None
