"""``convoscope view``: look at verdicts in the browser."""

from __future__ import annotations

from urllib.parse import urlencode

import click
from rich.console import Console

from convoscope.cli._common import fail_on

EXAMPLE = """
\b
Examples:
  convoscope view convoscope.db --items dialogues.jsonl
  convoscope view before.cvs.zip after.cvs.zip        # two run archives side by side, no store
  convoscope view convoscope.db colleague.cvs.zip     # a store's runs and an archive's
  convoscope view convoscope.db --card card.json       # and a judge card (convoscope card --out)
  convoscope view convoscope.db --verdicts people.jsonl --items dialogues.jsonl --port 8800
  convoscope view --verdicts verdicts.jsonl --items dialogues.jsonl
  convoscope view convoscope.db --items answers.jsonl --criteria-file my-criteria.yaml
"""


@click.command("view", epilog=EXAMPLE)
@click.argument("sources", nargs=-1, metavar="[STORE] [ARCHIVE.cvs.zip]...")
@click.option("--items", "item_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="The judged items, to show each one's context and response. Repeatable.")
@click.option("--verdicts", "verdict_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="More verdicts from files (e.g. people's, from `campaign export`); a `judge --out` "
              "file (one run, one judge) is a run to put side by side. Repeatable.")
@click.option("--criteria-file", "criteria_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="Your own criteria (YAML), to name their values (e.g. a binary scale's labels) and "
              "to render the runs' prompts again (each checked against its task key); built-in and "
              "installed suites are read without it. Repeatable: give each file the runs read.")
@click.option("--card", "card_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A judge card's JSON (`convoscope card --out card.json`), shown at /cards. Repeatable.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on. Keep 127.0.0.1 unless a reverse proxy with TLS is in front.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
def view_command(sources: tuple[str, ...], item_paths: tuple[str, ...], verdict_paths: tuple[str, ...],
                 criteria_files: tuple[str, ...], card_paths: tuple[str, ...], host: str, port: int) -> None:
    """Serve a local, read-only page of the verdicts of STORE (a SQLite file or a PostgreSQL URL)
    and of run archives (files named *.cvs.zip, from `export-run`; no store needed for them).

    Runs are listed at /runs; any two of them side by side at /compare?a=RUN&b=RUN: per
    criterion the change with its interval, the paired test, p after Holm and the agreement
    between the runs, then every item with both verdicts, both reasons and the prompt
    difference, filtered and sorted in the page's address.

    Filter by run, criterion, rater, value, system, language or unscored reason (the filters
    stay in the page's address, so a view can be bookmarked and returned to); items are listed in
    the order of the --items files, with their question; values show their names (a binary
    scale's labels, a level's name). Open an item to see its context and every judge's and
    person's verdict and reason side by side.
    """
    from convoscope.viewer import load, serve

    console = Console(stderr=True)
    with fail_on(console):
        store, archives = _split(sources)
        if store is None and not archives and not verdict_paths and not card_paths:
            raise click.UsageError("give a STORE, run archives (*.cvs.zip), --verdicts files, --card files, "
                                   "or some of these")
        data = load(store, items=item_paths, verdict_files=verdict_paths, criteria_files=criteria_files,
                    archives=archives, cards=card_paths)
        console.print(f"Serving {len(data.rows)} verdicts on http://{host}:{port}/ (Ctrl-C to stop)")
        if len(data.runs) >= 2:
            pair = urlencode({"a": data.runs[0], "b": data.runs[1]})
            console.print(f"{len(data.runs)} runs at /runs; the first two side by side at /compare?{pair}")
        serve(data, host=host, port=port)


def _split(sources: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """One store at most, and the archives (named *.cvs.zip, as `compare` tells them apart)."""
    from convoscope.archive import is_archive

    archives = [source for source in sources if is_archive(source)]
    stores = [source for source in sources if not is_archive(source)]
    if len(stores) > 1:
        raise click.UsageError(f"one store at a time ({', '.join(stores)}); run archives are named *.cvs.zip")
    return (stores[0] if stores else None), archives


COMMANDS = [view_command]
