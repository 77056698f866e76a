"""Helpers shared by CLI commands."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click
from rich.console import Console


@contextmanager
def fail_on(console: Console) -> Iterator[None]:
    """Turn a problem the user can fix into a one-line message and exit code 2; keep Ctrl-C tidy.

    Only :class:`~convoscope.errors.ConvoscopeError` (and a missing file) is the user's to fix:
    any other exception is a bug and keeps its traceback. Click's own errors pass through to
    Click, which prints them with the command's usage."""
    from rich.markup import escape

    from convoscope.errors import ConvoscopeError

    try:
        yield
    except click.ClickException:
        raise
    except (ConvoscopeError, FileNotFoundError) as error:
        # One unwrapped line (a file path must stay greppable) and no markup read from the
        # message: paths and field names may hold square brackets.
        console.print(f"[red]error:[/red] {escape(str(error))}", soft_wrap=True)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        console.print("\n[yellow]Interrupted.[/yellow] Every verdict made so far is in the store; "
                      "run the same command again to resume.")
        raise SystemExit(130) from None
