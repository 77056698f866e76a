"""``convoscope datasets``: public benchmarks with human ratings, as items and human verdicts."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from convoscope.cli._common import fail_on


@click.group("datasets")
def datasets_group() -> None:
    """Load public dialogue-evaluation benchmarks (FED, USR, GRADE, ConTurE, ABC-Eval, MAIA-DQE,
    Ji et al. 2022) from their published files and export items plus human verdicts.

    \b
    Example:
      convoscope datasets export fed-turn data/fed --items fed.jsonl --human fed-human.jsonl
    """


@datasets_group.command("list")
@click.option("--path", "data_path", type=click.Path(exists=True, path_type=Path),
              help="A folder holding the benchmarks' folders (e.g. fed/, usr/): also count what is there.")
def list_command(data_path: Path | None) -> None:
    """List the benchmarks convoscope can read; with --path, load each and count it.

    \b
    Example:
      convoscope datasets list --path data/
    """
    from convoscope.datasets import list_benchmarks, load_benchmark
    from convoscope.items import ItemError

    table = Table()
    table.add_column("benchmark", no_wrap=True)
    table.add_column("description")
    if data_path is not None:
        for column in ("items", "raters", "criteria", "human verdicts"):
            table.add_column(column, justify="right")
    for name, description in list_benchmarks().items():
        if data_path is None:
            table.add_row(name, description)
            continue
        try:
            counts = load_benchmark(name, data_path).summary()
        except ItemError as error:
            # One missing or broken benchmark must not hide the others.
            table.add_row(name, f"[red]{error.problem}[/red]", "", "", "", "")
            continue
        table.add_row(name, description, *(str(counts[key]) for key in
                                           ("items", "raters", "criteria", "human_verdicts")))
    Console().print(table)


@datasets_group.command("show")
@click.argument("name")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def show_command(name: str, path: Path) -> None:
    """Show a benchmark's counts, criteria (with scales) and what the loader noticed.

    \b
    Example:
      convoscope datasets show usr-topicalchat data/usr
    """
    from convoscope.datasets import load_benchmark

    console = Console()
    with fail_on(Console(stderr=True)):
        benchmark = load_benchmark(name, path)
    summary = benchmark.summary()
    console.print(f"[bold]{benchmark.name}[/bold] ({benchmark.granularity}) — {benchmark.source}")
    console.print(", ".join(f"{key}: {value}" for key, value in summary.items()
                            if key not in ("name", "granularity")))
    table = Table("criterion", "meaning and scale")
    for criterion, description in benchmark.criteria.items():
        table.add_row(criterion, description)
    console.print(table)
    for key, value in benchmark.meta.items():
        console.print(f"{key}: {value}")
    for note in benchmark.notes:
        console.print(f"[yellow]note:[/yellow] {note}")


@datasets_group.command("export")
@click.argument("name")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--items", "items_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the items here (JSONL), ready for 'convoscope judge'.")
@click.option("--human", "human_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the human verdicts here (JSONL), for 'convoscope metaeval --human'.")
@click.option("--published", "published_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write automatic labels published with the benchmark (e.g. ABC-Eval's GPT-3.5).")
@click.option("--no-reference", is_flag=True,
              help="Drop the items' reference turns (USR's ground truth), for reference-free judging.")
def export_command(name: str, path: Path, items_path: Path, human_path: Path,
                   published_path: Path | None, no_reference: bool) -> None:
    """Read benchmark NAME from PATH (its file, its folder, or a folder holding its folder) and
    write its items and human verdicts as JSONL.

    \b
    Example:
      convoscope datasets export fed-turn data/fed --items fed.jsonl --human fed-human.jsonl
    """
    from convoscope.datasets import load_benchmark, write_benchmark

    console = Console(stderr=True)
    with fail_on(console):
        benchmark = load_benchmark(name, path, reference_free=no_reference)
        counts = write_benchmark(benchmark, items_path, human_path, published_path=published_path)
    console.print(f"{benchmark.name}: wrote {counts['items']} items to {items_path} and "
                  f"{counts['human']} human verdicts ({len(benchmark.raters)} raters, "
                  f"{len(benchmark.criteria)} criteria) to {human_path}")
    if published_path is not None:
        console.print(f"wrote {counts['published']} published automatic verdicts to {published_path}")
    for note in benchmark.notes:
        console.print(f"[yellow]note:[/yellow] {note}")


COMMANDS = [datasets_group]
