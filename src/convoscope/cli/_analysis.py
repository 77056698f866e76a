"""``convoscope agree`` and ``convoscope metaeval``: agreement among raters, and judges against people."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text  # names from user data: never read as markup

from convoscope.cli._common import fail_on

LEVELS = ["nominal", "ordinal", "interval", "ratio"]
WIDE = 400  # columns when --wide: tables print at their natural width


def console_for(wide: bool) -> Console:
    """The terminal, or with ``wide`` a console as wide as any table (for logs and pipes)."""
    return Console(width=WIDE) if wide else Console()


def wrapped_table(title: str, headers: Sequence[str], *, keys: int = 1, caption: str | None = None) -> Table:
    """See :func:`convoscope.cli._metaeval_render.wrapped_table`."""
    from convoscope.cli._metaeval_render import wrapped_table as make

    return make(title, headers, keys=keys, caption=caption)


_WIDE_OPTION = click.option("--wide", is_flag=True,
                            help="Print tables at full width instead of wrapping cells.")


def _column_options(command: Any) -> Any:
    """The long-format column names, shared by both commands."""
    for name, default, what in reversed([
        ("--item-col", "item_id", "item ids (item_id, item or id: whichever the file has)"),
        ("--rater-col", "rater", "rater ids"),
        ("--value-col", "value", "ratings"),
        ("--criterion-col", "criterion", "criterion names (absent: one criterion)"),
        ("--language-col", "language", "languages"), ("--system-col", "system", "system ids"),
    ]):
        command = click.option(name, default=default, show_default=True, help=f"Column of {what}.")(command)
    return command


def _columns(options: dict[str, str], default_criterion: str | None) -> Any:
    from convoscope.items import ColumnMap

    return ColumnMap(id=options["item_col"], rater=options["rater_col"], value=options["value_col"],
                     criterion=options["criterion_col"], language=options["language_col"],
                     system=options["system_col"], default_criterion=default_criterion)


def _write_json(path: Path, payload: dict[str, Any], console: Console) -> None:
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=_jsonable) + "\n",
                    encoding="utf-8")
    console.print(f"Wrote {path}")


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


@click.command("agree")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@_column_options
@click.option("--level", type=click.Choice(LEVELS), help="Level of measurement for Krippendorff's alpha and "
              "the kappa weights (default: ordinal for numbers, nominal for labels, as in metaeval).")
@click.option("--by", type=click.Choice(["language", "system"]), help="Also break down by this column.")
@click.option("--idk", "idk", multiple=True, help="Values meaning \"I don't know\" (repeatable; "
              "default: idk, I don't know, unsure, ...).")
@click.option("--pair-by", type=click.Choice(["rater", "slot"]), default="rater", show_default=True,
              help="Pair ratings by rater identity, or by slot (the k-th rating of each item in file "
              "order, as USR's published agreement does).")
@click.option("--resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples of items for the intervals of alpha and kappa (0: none).")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@_WIDE_OPTION
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the table as JSON.")
def agree(path: Path, level: str | None, by: str | None, idk: tuple[str, ...], pair_by: str, resamples: int,
          seed: int, wide: bool, out: Path | None, **columns: str) -> None:
    """Inter-annotator agreement of the ratings in PATH (.csv, .tsv, .jsonl, .json), per criterion.

    Rows are long format: one rating per row (item, rater, value, optionally criterion). Shows
    items with 2+ ratings, raters, percent agreement, Fleiss' kappa, Krippendorff's alpha, the
    mean pairwise Cohen's kappa (each with a bootstrap interval over items), agreement on strong
    judgements (items where someone said "I don't know" removed) and, for numbers, the
    correlation agreement: mean Spearman rho over rater pairs and each rater against the mean of
    the others (leave-one-out). Exits 1 when nothing could be computed (e.g. a single rater).

    \b
    Example:
      convoscope agree annotations.csv --item-col id --rater-col annotator --value-col label --level ordinal
    """
    from convoscope.analysis import (
        FAST_SUFFIXES,
        IDK_ANSWERS,
        agreement_table,
        by_slot,
        read_frame,
        read_ratings,
    )
    from convoscope.cli import _metaeval_render as render

    console = console_for(wide)
    with fail_on(console):
        reader = read_frame if path.suffix.lower() in FAST_SUFFIXES else read_ratings
        ratings = reader(path, columns=_columns(columns, default_criterion=columns["value_col"]))
        if pair_by == "slot":
            ratings = by_slot(ratings)
        rows = agreement_table(ratings, level=level, by=by, idk=idk or IDK_ANSWERS,  # type: ignore[arg-type]
                               n_resamples=resamples, seed=seed)
        console.print(render.agreement_table(rows, by))
        console.print(Text(render.agreement_legend(rows, resamples), style="dim"))
        for row in rows:
            for note in row.notes:
                where = f"{row.criterion}{'/' + row.group if row.group else ''}"
                console.print(Text(f"{where}: {note}", style="dim"))
        if out is not None:
            _write_json(out, {"source": str(path), "level": level or "default", "pair_by": pair_by,
                              "resamples": resamples, "rows": [r.as_dict() for r in rows]}, console)
    if not any(row.computed for row in rows):
        console.print("[red]error:[/red] nothing could be computed (agreement needs two or more "
                      "raters on the same items)", soft_wrap=True)
        raise SystemExit(1)


def _metaeval_options(command: Any) -> Any:
    """The statistical options of metaeval, each default stated in --help."""
    options = [
        click.option("--resamples", type=int, default=2000, show_default=True,
                     help="Bootstrap resamples."),
        click.option("--confidence", type=float, default=0.95, show_default=True,
                     help="Interval coverage."),
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Bootstrap and permutation seed."),
        click.option("--level", type=click.Choice(LEVELS), help="Level for the humans' alpha "
                     "(default: ordinal for numbers, nominal for labels, as in agree)."),
        click.option("--ties", type=click.Choice(["low", "high", "missing", "median"]), default="low",
                     show_default=True, help="How the human majority breaks a tie (for kappa, F1, McNemar): "
                     "the lowest or highest tied value, none, or the median of the tied values."),
        click.option("--alpha", "alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
                     default=0.05, show_default=True, help="Significance level of every mark and test."),
        click.option("--correction", type=click.Choice(["holm", "bh", "by", "none"]), default="holm",
                     show_default=True, help="Multiple-comparison correction over the judge x criterion "
                     "table (Holm, Benjamini–Hochberg, Benjamini–Yekutieli, none)."),
        click.option("--permutations", type=click.IntRange(min=0), default=1000, show_default=True,
                     help="Paired permutation test of Spearman rho between judges (resamples; 0: none)."),
        click.option("--alt-epsilon", type=click.FloatRange(0, 1), default=0.2, show_default=True,
                     help="Margin of the alternative annotator test: .2 experts, .15 skilled, .1 crowd "
                     "(Calderon et al. 2025)."),
        click.option("--no-alt-test", is_flag=True, help="Do not run the alternative annotator test."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _system_options(command: Any) -> Any:
    options = [
        click.option("--system-level", "system", is_flag=True, help="Add the system level: correlations "
                     "of system means with intervals, pairwise ranking accuracy, outlier systems, "
                     "judge-vs-judge tests on system means, and people's ranking with rank intervals and "
                     "clusters."),
        click.option("--system-resample", type=click.Choice(["both", "systems", "items"]), default="both",
                     show_default=True, help="What the system-level intervals resample: systems and items "
                     "(Deutsch et al. 2021), systems only, or items only (within systems / shared inputs)."),
        click.option("--input-pattern", help="Regular expression whose first group is an item's shared input "
                     "(e.g. the context several systems answered): items are then resampled by input."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _export_options(command: Any) -> Any:
    options = [
        click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
                     help="Write the criterion x judge table: .csv, .md or .tex (booktabs); repeatable."),
        click.option("--latex-layout", type=click.Choice(["resize", "narrow", "full"]), default="resize",
                     show_default=True, help="How a .tex table fits a two-column paper: every column in "
                     "two one-column tables (resize), the key columns in one (narrow), or every column "
                     "across both columns (full, table*). None is shrunk below 7/8 of its size."),
        click.option("--report", type=click.Path(dir_okay=False, path_type=Path),
                     help="Write an HTML report with figures (needs the plots extra: matplotlib)."),
        click.option("--figures", "figures_dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Write every figure as SVG and PDF into this folder (matplotlib)."),
        _WIDE_OPTION,
        click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
                     help="Write the rows as JSON."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


METAEVAL_EXAMPLES = """
\b
Examples:
  convoscope metaeval verdicts.jsonl --human humans.csv --criterion overall --by language
  convoscope metaeval verdicts.jsonl --human human.jsonl --items items.jsonl \\
      --baseline length --baseline embedding --baseline tfidf
  convoscope metaeval verdicts.jsonl --human human.jsonl --system-level --correction bh \\
      --table table.tex --latex-layout narrow --figures figures/
"""


@click.command("metaeval", epilog=METAEVAL_EXAMPLES)
@click.argument("verdicts_path", metavar="VERDICTS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--human", "human_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Human ratings (long-format CSV/JSONL, or verdict JSONL). Default: the human: "
              "raters in VERDICTS.")
@_column_options
@click.option("--criterion", "criteria", multiple=True, help="Only these criteria (repeatable).")
@click.option("--by", type=click.Choice(["language", "system"]), help="Add rows per language or system.")
@_metaeval_options
@click.option("--positive", help="Positive label for F1+ on label scales (numbers: the larger).")
@click.option("--expected", is_flag=True, help="Use judges' probability-weighted scores where present.")
@click.option("--items", "items_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The judged items (.jsonl, .csv, .parquet): needed by --baseline.")
@click.option("--baseline", "baselines", multiple=True, type=click.Choice(["length", "embedding", "tfidf"]),
              help="Add a baseline row (repeatable): response length in words, or the cosine "
              "between context and response by embedding (the embedded model) or TF-IDF.")
@click.option("--embedding-model", default="smollm2", show_default=True,
              help="Embedded model for --baseline embedding: smollm2, gemma3-270m or a .gguf path.")
@click.option("--context-turns", type=int, default=3, show_default=True,
              help="Context turns the similarity baselines compare the response with.")
@click.option("--criteria-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Criteria YAML: human labels (present/absent, yes/no, ...) are mapped to the values "
              "judges store by each criterion's scale.")
@click.option("--human-sets", type=click.Choice(["pooled", "each"]), default="pooled", show_default=True,
              help="each: also score every judge against each human rater alone and average "
              "(GPT-ABCEval's protocol).")
@click.option("--view", type=click.Choice(["turn", "dialogue"]), default="turn", show_default=True,
              help="dialogue: average turn ratings per dialogue first.")
@click.option("--dialogue-pattern", default=r"^(.*):[^:]*$", show_default=True,
              help="Regular expression whose first group is an item's dialogue (for --view dialogue).")
@_system_options
@click.option("--own-family", multiple=True, metavar="SYSTEM",
              help="A system built on the judges' own model family: the bias table then measures "
              "self-preference. Repeatable.")
@_export_options
def metaeval(verdicts_path: Path, human_path: Path | None, criteria: tuple[str, ...], by: str | None,
             positive: str | None, expected: bool, items_path: Path | None, baselines: tuple[str, ...],
             embedding_model: str, context_turns: int, criteria_file: Path | None, human_sets: str, view: str,
             dialogue_pattern: str, own_family: tuple[str, ...], **options: Any) -> None:
    """Meta-evaluate judges: compare the verdicts in VERDICTS with human ratings.

    For each judge and criterion: Spearman, Kendall and Pearson correlation with the mean human
    score (bootstrap confidence intervals), Cohen's kappa with the human majority (quadratic
    weights for numbers) with its interval, F1 for both classes and the ROC AUC on binary
    criteria, the alternative annotator test (can the judge replace one of the people?), and
    the humans' own agreement (Krippendorff's alpha; leave-one-out correlation with 3+ humans)
    as the ceiling; judges against each other (Williams, Steiger, permutation, McNemar); then
    each judge's biases against people (length — with --items —, language gaps, self-preference
    with --own-family). The column options describe the --human file. --baseline adds rows
    computed from the --items file (raters baseline:length, baseline:embedding-sim,
    baseline:tfidf-sim): correlations and AUC only, since their scores have no threshold.
    """
    from convoscope.analysis import read_ratings

    columns = {key: options.pop(key) for key in list(options) if key.endswith("_col")}
    console = console_for(options["wide"])
    with fail_on(console):
        judged = read_ratings(verdicts_path)
        humans = None
        if human_path is not None:
            default = criteria[0] if len(criteria) == 1 else None
            humans = read_ratings(human_path, columns=_columns(columns, default_criterion=default))
        if baselines:
            judged += _baseline_ratings(items_path, baselines, criteria or _judged_criteria(judged),
                                        embedding_model, context_turns, console)
        study = _study(judged, humans, criteria, by, positive, expected, criteria_file, human_sets, view,
                       dialogue_pattern, options)
        _print_study(console, study, options)
        bias = _bias_reports(judged, humans, criteria, items_path, own_family, expected)
        if bias:
            from convoscope.cli._metaeval_render import bias_table

            console.print(bias_table(bias))
        _exports(console, study, verdicts_path, human_path, bias, options)
    if not study.computed:
        console.print("[red]error:[/red] nothing could be computed (no item has both a judge score and a "
                      "human rating on a comparable scale)", soft_wrap=True)
        raise SystemExit(1)


def _study(judged: list[Any], humans: list[Any] | None, criteria: tuple[str, ...], by: str | None,
           positive: str | None, expected: bool, criteria_file: Path | None, human_sets: str, view: str,
           dialogue_pattern: str, options: dict[str, Any]) -> Any:
    from convoscope.analysis import metaeval_study

    return metaeval_study(
        judged, humans, criteria=list(criteria) or None, by=by, n_resamples=options["resamples"],
        confidence=options["confidence"], seed=options["seed"], level=options["level"],
        positive=_label(positive), score="expected_value" if expected else "value",
        definitions=_definitions(criteria_file), view=view,  # type: ignore[arg-type]
        dialogue_pattern=dialogue_pattern, human_sets=human_sets,  # type: ignore[arg-type]
        system=options["system"], system_resample=options["system_resample"],
        inputs=_inputs(judged, humans, options["input_pattern"]), permutations=options["permutations"],
        ties=options["ties"], alpha=options["alpha"], correction=options["correction"],
        alt_epsilon=None if options["no_alt_test"] else options["alt_epsilon"])


def _inputs(judged: list[Any], humans: list[Any] | None, pattern: str | None) -> dict[str, str] | None:
    """Item id -> shared input, from the first group of ``pattern``; an id it does not match is its
    own input."""
    if pattern is None:
        return None
    import re

    from convoscope.errors import ConfigError

    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ConfigError(f"--input-pattern is not a regular expression: {error}") from None
    found: dict[str, str] = {}
    for rating in [*judged, *(humans or [])]:
        item = str(rating.item_id)
        match = compiled.match(item)
        found[item] = match.group(1) if match and match.groups() else item
    return found


def _print_study(console: Console, study: Any, options: dict[str, Any]) -> None:
    from rich.markup import escape

    from convoscope.cli import _metaeval_render as render

    for table in render.metaeval_tables(study.rows):
        console.print(table)
    epsilon = None if options["no_alt_test"] else options["alt_epsilon"]
    console.print(Text(render.metaeval_legend(options["confidence"], study.alpha, study.correction,
                                              options["ties"], epsilon), style="dim"))
    if study.comparisons:
        console.print(render.comparison_table(study.comparisons))
        if study.permutations and study.permutations != options["permutations"]:
            console.print(Text(f"Permutation tests used {study.permutations:,} permutations (asked "
                               f"{options['permutations']:,}): enough for a {study.correction}-corrected p "
                               f"over the table's tests to reach α = {study.alpha:g}.", style="dim"))
    for table in render.system_tables(study):
        console.print(table)
    if study.per_set:
        console.print(render.per_set_table(study.per_set))
    if study.self_consistency:
        console.print(render.self_consistency_table(study.self_consistency))
    for row in study.rows:
        for note in row.notes:
            console.print(Text(f"{row.judge} on {row.criterion}: {note}", style="dim"))
    extra_rows: list[Any] = [*study.comparisons, *study.systems, *study.system_comparisons, *study.rankings]
    for extra_row in extra_rows:
        for note in extra_row.notes:
            console.print(f"[dim]{escape(f'{_who(extra_row)} on {extra_row.criterion}: {note}')}[/dim]",
                          soft_wrap=True)


def _exports(console: Console, study: Any, verdicts_path: Path, human_path: Path | None, bias: list[Any],
             options: dict[str, Any]) -> None:
    for path in options["tables"]:
        for written in study.write_table(path, layout=options["latex_layout"]):
            console.print(f"Wrote {written}")
    if options["report"] is not None:
        from convoscope.analysis._report import figures_unavailable

        options["report"].write_text(study.report_html(title=f"Meta-evaluation of {verdicts_path.name}"),
                                     encoding="utf-8")
        console.print(f"Wrote {options['report']}")
        missing = figures_unavailable()
        if missing:  # the report holds every table all the same, and says why it has no figures
            click.echo(f"note: the report has no figures: {missing}", err=True)
    if options["out"] is not None:
        _write_json(options["out"], {"verdicts": str(verdicts_path),
                                     "human": str(human_path or verdicts_path),
                                     "resamples": options["resamples"], "confidence": options["confidence"],
                                     "seed": options["seed"], "ties": options["ties"], **study.as_dict(),
                                     "bias": [dataclasses.asdict(report) for report in bias]}, console)
    if options["figures_dir"] is not None:  # last: without matplotlib, every other output is written
        written = study.write_figures(options["figures_dir"])
        console.print(f"Wrote {len(written)} figure files (SVG and PDF) to {options['figures_dir']}")


def _bias_reports(judged: list[Any], humans: list[Any] | None, criteria: tuple[str, ...],
                  items_path: Path | None, own_family: tuple[str, ...], expected: bool) -> list[Any]:
    from convoscope.estimate import study_bias

    lengths = None
    if items_path is not None:
        from convoscope.baselines import item_length
        from convoscope.items import read_items

        lengths = {item.id: item_length(item) for item in read_items(items_path)}
    return study_bias(judged, humans, criteria=criteria or None, lengths=lengths, own_family=own_family,
                      score="expected_value" if expected else "value")


def _who(row: Any) -> str:
    if hasattr(row, "judge_a"):
        return f"{row.judge_a} vs {row.judge_b}" + (" (system level)" if hasattr(row, "n_systems") else "")
    return f"{row.judge} (system level)" if hasattr(row, "judge") else "people's ranking"


def _definitions(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    from convoscope.criteria import load_criteria

    return {criterion.name: criterion for criterion in load_criteria(path)}


def _judged_criteria(ratings: list[Any]) -> tuple[str, ...]:
    from convoscope.judges import RaterKind

    return tuple(dict.fromkeys(r.criterion for r in ratings if RaterKind.of(r.rater) is not RaterKind.HUMAN))


def _baseline_ratings(items_path: Path | None, baselines: tuple[str, ...], criteria: tuple[str, ...],
                      embedding_model: str, context_turns: int, console: Console) -> list[Any]:
    """The baselines' ratings of the items, one per criterion the judges answered."""
    if items_path is None:
        raise click.UsageError("--baseline needs --items: the file the judges judged")
    from convoscope.baselines import LlamaEmbedder, baseline_ratings
    from convoscope.items import read_items

    items = read_items(items_path)
    embedder = LlamaEmbedder(embedding_model) if "embedding" in baselines else None
    try:
        ratings = baseline_ratings(items, baselines, criteria, context_turns=context_turns,
                                   embedder=embedder)
    finally:
        if embedder is not None:
            embedder.close()
    console.print(f"[dim]Baselines {', '.join(baselines)} on {len(items)} items of {items_path}[/dim]")
    return ratings


def _label(text: str | None) -> Any:
    if text is None:
        return None
    from convoscope.analysis import parse_value

    return parse_value(text)


COMMANDS = [agree, metaeval]
