"""``convoscope pairwise``: which of two chatbots answers the same context better."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from convoscope.cli._common import fail_on

EXAMPLE = """
\b
Examples:
  convoscope pairwise candidates.jsonl --criterion response-candidates:appropriateness --out pairs.jsonl
  convoscope pairwise answers.jsonl --criterion overall --criteria-file mine.yaml \\
      --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1 --judge openai:llama3.1-8b@http://127.0.0.1:8001/v1
"""


@click.command("pairwise", epilog=EXAMPLE)
@click.argument("items_path", metavar="ITEMS",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--criterion", "criterion_ref", required=True, help="The criterion to compare on.")
@click.option("--criteria-file", "criteria_files", multiple=True, type=click.Path(exists=True))
@click.option("--judge", "judges", multiple=True, default=("embedded",), show_default=True,
              help="Model spec, or a judge written in Python ('python:MODULE:NAME': it scores each "
              "response and the better score wins); repeat for several judges (each reported on its own).")
@click.option("--mode", type=click.Choice(["auto", "chat", "completion"]), default="auto",
              show_default=True)
@click.option("--system", "systems", multiple=True, help="Compare only these systems. Repeatable.")
@click.option("--pairs-per-context", type=click.IntRange(min=1), default=None,
              help="Ask this many pairs per context, rotating through every pair of systems from one "
                   "context to the next (default: every pair). A pairwise campaign with the same "
                   "pairs_per_context and items asks people the same pairs.")
@click.option("--store", "store_target", default="convoscope.db", show_default=True)
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--resamples", type=int, default=1000, show_default=True,
              help="Bootstrap resamples for the CIs.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the pairwise verdicts (JSONL).")
@click.option("--human", "human_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="People's pairwise verdicts on the same pairs (a pairwise campaign's export, JSONL or "
                   "CSV): adds their win rates and each judge's agreement with their majority.")
def pairwise_command(items_path: Path, criterion_ref: str, criteria_files: tuple[str, ...],
                     judges: tuple[str, ...], mode: str, systems: tuple[str, ...],
                     pairs_per_context: int | None, store_target: str, concurrency: int, resamples: int,
                     out: Path | None, human_path: Path | None) -> None:
    """Compare systems two at a time on the same contexts, each pair asked in both orders.

    ITEMS hold one response per system and context (items share a context by
    meta.context_id, or by identical question and turns). A judge whose answer follows the
    order, not the responses, scores that pair a tie: its rate is the judge's position bias.
    Prints win rates with bootstrap CIs and a Bradley-Terry ranking per judge.
    """
    from convoscope.criteria import select_criteria
    from convoscope.items import read_items, write_jsonl
    from convoscope.judges import read_verdicts
    from convoscope.pairwise import judge_pairs

    console = Console()
    with fail_on(console):
        criterion = select_criteria(names=[criterion_ref], files=criteria_files)[0]
        people = read_verdicts(human_path) if human_path else []
        report = judge_pairs(read_items(items_path), criterion, judges, mode=mode, systems=systems,
                             store=store_target, concurrency=concurrency, n_resamples=resamples,
                             people=people, per_context=pairs_per_context)
        for rater, section in report.by_judge.items():
            bias = section.bias
            title = (f"{criterion.name}, judged by {rater}: position bias {bias.rate:.1%} "
                     f"({bias.flips} of {bias.pairs} pairs)")
            _rates(console, title, section.win_rates, section.strengths)
        if human_path and report.people is None:
            console.print(Text(f"{human_path} holds no scored verdict on pairwise:{criterion.name}."))
        if report.people is not None:
            crowd = report.people
            title = f"{criterion.name}, judged by people: {crowd.answers} answers on {crowd.pairs} pairs"
            _rates(console, title, crowd.win_rates, crowd.strengths)
            table = Table("judge", "pairs", "same answer as the people's majority", "Cohen's kappa",
                          box=box.SIMPLE_HEAD, title="Judges against people", title_justify="left")
            for row in report.agreement.values():
                table.add_row(Text(row.rater), str(row.pairs), f"{row.agreement:.1%}",
                              "–" if row.kappa is None else f"{row.kappa:.3f}")
            console.print(table)
        if report.unscored:
            console.print(f"{report.unscored} pairwise verdicts are unscored (see --out).")
        if out:
            write_jsonl(report.verdicts, out)
            console.print(f"Wrote {len(report.verdicts)} verdicts to {out}")
    raise SystemExit(report.exit_code)


def _rates(console: Console, title: str, rates: list[Any], strengths: list[Any]) -> None:
    """A title line (never wrapped to the table's width) and the win-rate table."""
    console.print(Text(title), soft_wrap=True)
    table = Table(box=box.SIMPLE_HEAD)
    for column in ("system", "comparisons", "win rate [95% CI]", "Bradley-Terry [95% CI]"):
        table.add_column(column)
    by_system = {row.system: row for row in strengths}
    for row in rates:
        strength = by_system[row.system]
        bt = f"{strength.strength:+.2f}" + (f" [{strength.ci[0]:+.2f}, {strength.ci[1]:+.2f}]"
                                            if strength.ci else "")
        table.add_row(Text(row.system), str(row.comparisons),
                      f"{row.rate:.3f}" + (f" [{row.ci[0]:.3f}, {row.ci[1]:.3f}]" if row.ci else ""), bt)
    console.print(table)


COMMANDS = [pairwise_command]
