"""``convoscope view``: look at verdicts in the browser."""

from __future__ import annotations

import click
from rich.console import Console

from convoscope.cli._common import fail_on

EXAMPLE = """
\b
Examples:
  convoscope view convoscope.db --items dialogues.jsonl
  convoscope view convoscope.db --verdicts people.jsonl --items dialogues.jsonl --port 8800
  convoscope view --verdicts verdicts.jsonl --items dialogues.jsonl
  convoscope view convoscope.db --items answers.jsonl --criteria-file my-criteria.yaml
"""


@click.command("view", epilog=EXAMPLE)
@click.argument("store", required=False)
@click.option("--items", "item_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="The judged items, to show each one's context and response. Repeatable.")
@click.option("--verdicts", "verdict_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="More verdicts from files (e.g. people's, from `campaign export`). Repeatable.")
@click.option("--criteria-file", "criteria_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="Your own criteria (YAML), to name their values (e.g. a binary scale's labels); "
              "built-in and installed suites are read without it. Repeatable.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on. Keep 127.0.0.1 unless a reverse proxy with TLS is in front.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
def view_command(store: str | None, item_paths: tuple[str, ...], verdict_paths: tuple[str, ...],
                 criteria_files: tuple[str, ...], host: str, port: int) -> None:
    """Serve a local, read-only page of STORE's verdicts (a SQLite file or a PostgreSQL URL).

    Filter by run, criterion, rater, value, system, language or unscored reason (the filters
    stay in the page's address, so a view can be bookmarked and returned to); items are listed in
    the order of the --items files, with their question; values show their names (a binary
    scale's labels, a level's name). Open an item to see its context and every judge's and
    person's verdict and reason side by side.
    """
    from convoscope.viewer import load, serve

    console = Console(stderr=True)
    with fail_on(console):
        if store is None and not verdict_paths:
            raise click.UsageError("give a STORE, --verdicts files, or both")
        data = load(store, items=item_paths, verdict_files=verdict_paths, criteria_files=criteria_files)
        console.print(f"Serving {len(data.rows)} verdicts on http://{host}:{port}/ (Ctrl-C to stop)")
        serve(data, host=host, port=port)


COMMANDS = [view_command]
