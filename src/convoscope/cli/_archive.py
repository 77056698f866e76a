"""``convoscope export-run`` and ``import-run``: a run carried out of its store in one file."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from convoscope.cli._common import fail_on


@click.command("export-run")
@click.argument("run")
@click.option("--store", default="convoscope.db", show_default=True, help="The store that holds the run.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The archive to write, named *.cvs.zip (default: RUN's id, first 12 characters).")
@click.option("--items", "items", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="The items file the run read: carried in the archive as items.jsonl.")
@click.option("--criteria-file", "criteria_file", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The criteria file the run read (YAML): carried as criteria.yaml.")
@click.option("--prompts", is_flag=True, default=False,
              help="Also carry each verdict's rendered prompt (prompts.jsonl), rendered again from "
              "--items and --criteria-file and kept where it hashes to what the run asked.")
def export_run_command(run: str, store: str, out: Path | None, items: Path | None,
                       criteria_file: Path | None, prompts: bool) -> None:
    """Write RUN (its id or first characters) of --store to one run archive: its spec, summary,
    every verdict (final and panel members') and, when given, its items and criteria.

    \b
    Example:
      convoscope export-run 3f9a2c --store convoscope.db --out baseline.cvs.zip

    `compare` opens the archive without the store; `import-run` puts it into another store.
    """
    from convoscope.archive import SUFFIX, export_run
    from convoscope.archive._export import find_run
    from convoscope.store import Store

    console = Console(stderr=True)
    with fail_on(console):
        if out is None:
            opened = Store(store, create=False)
            try:
                out = Path(find_run(opened, run)[:12] + SUFFIX)
            finally:
                opened.close()
        manifest = export_run(run, store, out, items=items, criteria_file=criteria_file, prompts=prompts)
    counts = manifest["counts"]
    if prompts:
        console.print(f"{counts['prompts']} rendered prompts carried; {counts['prompts_unmatched']} "
                      "verdicts' prompts could not be rendered to match what the run asked",
                      markup=False, highlight=False, soft_wrap=True)
    console.print(f"Wrote {out}: run {manifest['run']['run_id']}, {counts['final']} final verdicts "
                  f"({counts['members']} panel members'), {counts['items']} items",
                  markup=False, highlight=False, soft_wrap=True)


@click.command("import-run")
@click.argument("archive", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--store", default="convoscope.db", show_default=True,
              help="The store to put the run into (created when it does not exist).")
def import_run_command(archive: Path, store: str) -> None:
    """Put the run of ARCHIVE (a *.cvs.zip from export-run) into --store under its own run id.
    The archive is checked first (schema version, every member's sha256); a damaged one writes
    nothing. Importing the same archive twice changes nothing.

    \b
    Example:
      convoscope import-run baseline.cvs.zip --store team.db
    """
    from convoscope.archive import import_run

    console = Console(stderr=True)
    with fail_on(console):
        done = import_run(archive, store)
    state = "new run" if done.new_run else "run already there"
    console.print(f"Imported {done.run_id} into {store} ({state}): {done.verdicts} verdicts, "
                  f"{done.added} new to the store", markup=False, highlight=False, soft_wrap=True)


COMMANDS = [export_run_command, import_run_command]
