"""``convoscope card``: how far each judge can be trusted, and for what."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from convoscope.cli._common import fail_on

FORMATS = (".md", ".json", ".html")


@click.command("card")
@click.argument("judges", nargs=-1, required=True)
@click.option("--items", "items_path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The items the people rated (.jsonl, .csv, .tsv, .parquet).")
@click.option("--human", "human_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="People's ratings of those items (long-format CSV/JSONL: item_id, criterion, rater, "
                   "value).")
@click.option("--criteria", "criteria_refs", multiple=True, required=True, metavar="NAME|FILE",
              help="A criterion people rated: a YAML file of criteria or a built-in name (suite:name). "
                   "Repeatable.")
@click.option("--languages", default="", metavar="LIST", help="Languages reported one by one, e.g. en,ko.")
@click.option("--store", default="convoscope.db", show_default=True,
              help="Where verdicts are kept: a second card judges only what is missing.")
@click.option("--out", "outs", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the card to card.md, card.json or card.html (repeatable). Default: Markdown "
                   "on standard output.")
@click.option("--baseline", "baselines", multiple=True, default=("length", "tfidf"), show_default=True,
              type=click.Choice(["length", "tfidf", "embedding"]), help="Baselines shown beside each judge.")
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Ask each judge N times (self-consistency).")
@click.option("--pairs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Pairs of systems per context asked in both orders (position bias); 0: none.")
@click.option("--no-probes", is_flag=True, help="Do not judge the card's manipulation probes.")
@click.option("--family", "families", multiple=True, metavar="JUDGE=SYSTEM,...",
              help="The systems built on a judge's own model family (self-preference).")
@click.option("--resamples", type=click.IntRange(min=100), default=1000, show_default=True,
              help="Bootstrap resamples for every interval.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--score", type=click.Choice(["value", "expected_value"]), default="value", show_default=True,
              help="A judge's chosen value, or its probability-weighted score where it has one.")
@click.option("--mode", type=click.Choice(["auto", "chat", "completion"]), default="auto", show_default=True)
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--data-source", help="Where the items and people's ratings come from (printed as provenance).")
@click.option("--licence", help="The data's licence (printed as provenance).")
@click.option("--intended-use", help="What the card is meant to decide (default: a stated general use).")
def card_command(judges: tuple[str, ...], items_path: Path, human_path: Path, criteria_refs: tuple[str, ...],
                 languages: str, store: str, outs: tuple[Path, ...], baselines: tuple[str, ...],
                 repeats: int, pairs: int, no_probes: bool, families: tuple[str, ...], resamples: int,
                 seed: int, score: str, mode: str, concurrency: int, data_source: str | None,
                 licence: str | None, intended_use: str | None) -> None:
    """A judge card for each JUDGE: agreement with people beside their own ceiling and the cheap
    baselines, system level, biases, manipulation probes, self-consistency, cost, and a verdict
    in plain words from the thresholds printed on the card.

    JUDGE is a model spec (embedded, openai:MODEL@URL), a python:MODULE:NAME judge, or
    baseline:length / baseline:tfidf. Verdicts go to --store, so a second card judges only what
    is missing.

    \b
    Example:
      convoscope card embedded baseline:length --items items.jsonl --human human.jsonl \\
          --criteria usr-overall.yaml --languages en --out card.html --out card.json
    """
    from convoscope.card import judge_card
    from convoscope.criteria import select_criteria
    from convoscope.errors import ConfigError

    console = Console(stderr=True)
    with fail_on(console):
        for out in outs:
            if out.suffix.lower() not in FORMATS:
                raise ConfigError(f"--out {out}: the card is written as {', '.join(FORMATS)}")
        files = [ref for ref in criteria_refs if Path(ref).is_file()]
        names = [ref for ref in criteria_refs if not Path(ref).is_file()]
        criteria = select_criteria(files=files, names=names)
        card = judge_card(list(judges), items_path, human_path, criteria=criteria,
                          languages=[part.strip() for part in languages.split(",") if part.strip()],
                          store=store, baselines=baselines, repeats=repeats, probes=not no_probes,
                          pairs=pairs, families=_families(families), n_resamples=resamples, seed=seed,
                          score=score, mode=mode, concurrency=concurrency,
                          data_source=data_source or str(human_path), licence=licence,
                          intended_use=intended_use)
        for out in outs:
            out.write_text(_render(card, out.suffix.lower()), encoding="utf-8")
            console.print(f"Wrote {out}", markup=False, highlight=False)
    if not outs:
        click.echo(card.to_markdown(), nl=False)


def _families(entries: tuple[str, ...]) -> dict[str, list[str]]:
    from convoscope.errors import ConfigError

    found = {}
    for entry in entries:
        judge, sep, systems = entry.partition("=")
        if not sep or not judge or not systems:
            raise ConfigError(f"--family {entry!r}: write JUDGE=SYSTEM,SYSTEM")
        found[judge] = [part.strip() for part in systems.split(",") if part.strip()]
    return found


def _render(card: Any, suffix: str) -> str:
    import json

    if suffix == ".json":
        return json.dumps(card.to_dict(), ensure_ascii=False, indent=2) + "\n"
    return card.to_html() if suffix == ".html" else card.to_markdown()


COMMANDS = [card_command]
