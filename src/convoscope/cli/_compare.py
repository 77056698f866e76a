"""``convoscope compare``: two runs side by side, with paired statistics and a CI exit status."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
from rich.console import Console

from convoscope.cli._common import fail_on

if TYPE_CHECKING:
    from convoscope.comparison._stats import Level

FORMATS = {".md": "markdown", ".json": "json", ".html": "html"}


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--store",
    default=None,
    help="The store that holds runs named by id (default convoscope.db when it exists).",
)
@click.option(
    "--store-b",
    default=None,
    help="The store that holds RUN_B when it is not --store's (two teams' stores, say).",
)
@click.option(
    "--items",
    "items_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The items the runs judged: the flips' prompts are rendered again from them (with "
    "--criteria-file) and shown as a diff when they hash to what each run asked.",
)
@click.option(
    "--human",
    "human_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="People's ratings of the same items (verdicts by human: raters): which run agrees better.",
)
@click.option(
    "--criteria-file",
    "criteria_files",
    multiple=True,
    metavar="FILE",
    help="The criteria the runs judged (YAML): their scales pick each criterion's test. Repeatable.",
)
@click.option(
    "--criteria-file-b",
    "criteria_files_b",
    multiple=True,
    metavar="FILE",
    help="RUN_B's criteria when it worded them differently (default: --criteria-file's).",
)
@click.option(
    "--level",
    "level_entries",
    multiple=True,
    metavar="CRITERION=LEVEL",
    help="binary, ordinal, interval or nominal for one criterion (overrides the scale). Repeatable.",
)
@click.option("--rater-a", default=None, help="The rater that is run A, when its file holds several.")
@click.option("--rater-b", default=None, help="The rater that is run B, when its file holds several.")
@click.option(
    "--correction",
    default="holm",
    show_default=True,
    type=click.Choice(["holm", "bh", "by", "none"]),
    help="How p-values are adjusted across criteria (Holm; Benjamini–Hochberg or –Yekutieli).",
)
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
@click.option(
    "--flips",
    "max_flips",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Items that changed most, shown per criterion.",
)
@click.option(
    "--out",
    "outs",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the comparison to .md, .json or .html (repeatable).",
)
@click.option(
    "--fail-if",
    "conditions",
    multiple=True,
    metavar="KIND:CRITERION>T",
    help="Exit 1 when it holds: worse:effort>0.1, better:C>T, changed:C>T, flips:C>0.2, "
    "significant:C; '*' for every criterion. Repeatable.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of significant:C.",
)
def compare_command(
    run_a: str,
    run_b: str,
    store: str | None,
    store_b: str | None,
    items_path: Path | None,
    human_path: Path | None,
    criteria_files: tuple[str, ...],
    criteria_files_b: tuple[str, ...],
    level_entries: tuple[str, ...],
    rater_a: str | None,
    rater_b: str | None,
    correction: str,
    confidence: float,
    max_flips: int,
    outs: tuple[Path, ...],
    conditions: tuple[str, ...],
    alpha: float,
) -> None:
    """Compare RUN_A with RUN_B: verdict files (judge --out: .jsonl, .csv, .parquet), run archives
    (export-run: .cvs.zip) or run ids in --store. Items are matched by item_id and criterion; the
    change is B − A.

    \b
    Example:
      convoscope compare examples/compare/gemma-a.jsonl examples/compare/gemma-b.jsonl \\
          --human examples/compare/human.jsonl --fail-if "worse:overall>0.5"

    Exit status: 0, or 1 when a --fail-if condition holds, or 2 for bad input.
    """
    from convoscope.comparison import Condition, compare, to_html, to_markdown
    from convoscope.criteria import select_criteria
    from convoscope.errors import ConfigError

    console = Console(stderr=True)
    with fail_on(console):
        gates = [Condition.parse(text) for text in conditions]
        levels = _levels(level_entries)
        criteria = select_criteria(files=list(criteria_files), names=[]) if criteria_files else []
        criteria_b = select_criteria(files=list(criteria_files_b), names=[]) if criteria_files_b else None
        for out in outs:
            if out.suffix.lower() not in FORMATS:
                raise ConfigError(f"--out {out}: a comparison is written as {', '.join(FORMATS)}")
        if store is None and Path("convoscope.db").is_file():
            store = "convoscope.db"
        comparison = compare(
            run_a,
            run_b,
            store=store,
            store_b=store_b,
            items=items_path,
            human=human_path,
            levels=levels,
            criteria=criteria,
            criteria_b=criteria_b,
            correction=correction,
            confidence=confidence,
            max_flips=max(max_flips, 50),
            rater_a=rater_a,
            rater_b=rater_b,
        )
        failed = [failure for gate in gates for failure in gate.failures(comparison, alpha=alpha)]
    for out in outs:
        kind = FORMATS[out.suffix.lower()]
        text = (
            comparison.to_json() + "\n"
            if kind == "json"
            else to_html(comparison, flips=max_flips)
            if kind == "html"
            else to_markdown(comparison, flips=max_flips)
        )
        out.write_text(text, encoding="utf-8")
        console.print(f"Wrote {out}", markup=False, highlight=False)
    if not outs:
        click.echo(to_markdown(comparison, flips=max_flips), nl=False)
    for failure in failed:
        console.print(f"fail-if: {failure}", markup=False, highlight=False)
    if failed:
        raise SystemExit(1)


def _levels(entries: tuple[str, ...]) -> dict[str, Level]:
    from convoscope.errors import ConfigError

    found = {}
    for entry in entries:
        name, _, level = entry.partition("=")
        if level not in ("binary", "ordinal", "interval", "nominal") or not name:
            raise ConfigError(
                f"--level {entry!r}: write CRITERION=LEVEL, LEVEL one of binary, ordinal, interval, nominal"
            )
        found[name] = cast("Level", level)
    return found


COMMANDS = [compare_command]
