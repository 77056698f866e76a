"""``convoscope agree`` and ``convoscope metaeval``: agreement among raters, and judges against people."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text  # names from user data: never read as markup

from convoscope.cli._common import fail_on

LEVELS = ["nominal", "ordinal", "interval", "ratio"]
_COMPACT: dict[str, Any] = dict(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
                                collapse_padding=True, show_edge=False)
WIDE = 400  # columns when --wide: tables print at their natural width


def console_for(wide: bool) -> Console:
    """The terminal, or with ``wide`` a console as wide as any table (for logs and pipes)."""
    return Console(width=WIDE) if wide else Console()


def wrapped_table(title: str, headers: Sequence[str], *, keys: int = 1, caption: str | None = None) -> Table:
    """A compact table whose cells wrap instead of being cut: the first ``keys`` columns (names
    from the data) are left-aligned; no cell is ever shortened with an ellipsis."""
    table = Table(title=Text(title), caption=caption, **_COMPACT)
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index < keys else "right", overflow="fold")
    return table


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


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


@click.command("agree")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@_column_options
@click.option("--level", type=click.Choice(LEVELS), default="nominal", show_default=True,
              help="Level of measurement for Krippendorff's alpha and the kappa weights.")
@click.option("--by", type=click.Choice(["language", "system"]), help="Also break down by this column.")
@click.option("--idk", "idk", multiple=True, help="Values meaning \"I don't know\" (repeatable; "
              "default: idk, I don't know, unsure, ...).")
@click.option("--pair-by", type=click.Choice(["rater", "slot"]), default="rater", show_default=True,
              help="Pair ratings by rater identity, or by slot (the k-th rating of each item in file "
              "order, as USR's published agreement does).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the table as JSON.")
def agree(path: Path, level: str, by: str | None, idk: tuple[str, ...], pair_by: str, out: Path | None,
          **columns: str) -> None:
    """Inter-annotator agreement of the ratings in PATH (.csv, .tsv, .jsonl, .json), per criterion.

    Rows are long format: one rating per row (item, rater, value, optionally criterion). Shows
    items with 2+ ratings, raters, percent agreement, Fleiss' kappa, Krippendorff's alpha, the
    mean pairwise Cohen's kappa, agreement on strong judgements (items where someone said
    "I don't know" removed) and, for numbers, the correlation agreement: mean Spearman rho over
    rater pairs and each rater against the mean of the others (leave-one-out). Exits 1 when
    nothing could be computed (e.g. a single rater).

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

    console = Console()
    with fail_on(console):
        reader = read_frame if path.suffix.lower() in FAST_SUFFIXES else read_ratings
        ratings = reader(path, columns=_columns(columns, default_criterion=columns["value_col"]))
        if pair_by == "slot":
            ratings = by_slot(ratings)
        rows = agreement_table(ratings, level=level, by=by, idk=idk or IDK_ANSWERS)  # type: ignore[arg-type]
        console.print(_agreement_table(rows, by))
        console.print(f"[dim]{_legend(rows, level)}[/dim]")
        for row in rows:
            for note in row.notes:
                console.print(f"[dim]{row.criterion}{'/' + row.group if row.group else ''}: {note}[/dim]")
        if out is not None:
            _write_json(out, {"source": str(path), "level": level, "pair_by": pair_by,
                              "rows": [r.as_dict() for r in rows]}, console)
    if not any(row.computed for row in rows):
        console.print("[red]error:[/red] nothing could be computed (agreement needs two or more "
                      "raters on the same items)", soft_wrap=True)
        raise SystemExit(1)


def _agreement_table(rows: list[Any], by: str | None) -> Table:
    table = Table(title="Inter-annotator agreement", **_COMPACT)
    headers = ["criterion", *([by] if by else []), "items", "raters", "agree", "Fleiss κ", "α",
               "Cohen κ", "pair ρ", "LOO ρ", "strong", "strong κ", "idk"]
    for header in headers:
        text_column = header in ("criterion", by)
        table.add_column(header, justify="left" if text_column else "right", no_wrap=text_column)
    for row in rows:
        strong = row.strong
        table.add_row(
            Text(row.criterion), *([Text(row.group or "–")] if by else []), str(row.n_items),
            str(row.n_raters),
            _percent(row.percent_agreement), _fmt(row.fleiss_kappa), _fmt(row.krippendorff_alpha),
            _fmt(row.mean_cohen_kappa), _fmt(row.pairwise_spearman), _fmt(row.loo_spearman),
            _percent(strong.percent_agreement if strong else None),
            _fmt(strong.kappa if strong else None), str(strong.n_removed) if strong else "–",
        )
    return table


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _legend(rows: list[Any], level: str) -> str:
    weights = rows[0].cohen_weights if rows else None
    return (f"α: Krippendorff's alpha ({level}); Cohen κ: mean over rater pairs"
            f"{f' ({weights} weights)' if weights else ''}; pair ρ: mean Spearman over rater pairs; "
            "LOO ρ: each rater against the mean of the others; strong: items where a rater said "
            "\"I don't know\" removed (idk: how many).")


@click.command("metaeval")
@click.argument("verdicts_path", metavar="VERDICTS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--human", "human_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Human ratings (long-format CSV/JSONL, or verdict JSONL). Default: the human: "
              "raters in VERDICTS.")
@_column_options
@click.option("--criterion", "criteria", multiple=True, help="Only these criteria (repeatable).")
@click.option("--by", type=click.Choice(["language", "system"]), help="Add rows per language or system.")
@click.option("--resamples", type=int, default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Interval coverage.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--level", type=click.Choice(LEVELS), help="Level for the humans' alpha "
              "(default: ordinal for numbers, nominal for labels).")
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
@click.option("--system-level", "system", is_flag=True,
              help="Add system-level correlations (system means) with intervals from resampling items.")
@click.option("--permutations", type=int, default=0, show_default=True,
              help="Also compare judges by a paired permutation test of Kendall's tau (resamples).")
@click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the criterion x judge table: .csv, .md or .tex (booktabs); repeatable.")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path),
              help="Write an HTML report with figures (needs the plots extra: matplotlib).")
@click.option("--own-family", multiple=True, metavar="SYSTEM",
              help="A system built on the judges' own model family: the bias table then measures "
              "self-preference. Repeatable.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the rows as JSON.")
def metaeval(verdicts_path: Path, human_path: Path | None, criteria: tuple[str, ...], by: str | None,
             resamples: int, confidence: float, seed: int, level: str | None, positive: str | None,
             expected: bool, items_path: Path | None, baselines: tuple[str, ...], embedding_model: str,
             context_turns: int, criteria_file: Path | None, human_sets: str, view: str,
             dialogue_pattern: str, system: bool, permutations: int, tables: tuple[Path, ...],
             report: Path | None, own_family: tuple[str, ...], out: Path | None, **columns: str) -> None:
    """Meta-evaluate judges: compare the verdicts in VERDICTS with human ratings.

    For each judge and criterion: Spearman, Kendall and Pearson correlation with the mean human
    score (bootstrap confidence intervals), Cohen's kappa with the human majority (quadratic
    weights for numbers), F1 for both classes and the ROC AUC on binary criteria, and the
    humans' own agreement (Krippendorff's alpha; leave-one-out correlation with 3+ humans) as
    the ceiling; then each judge's biases against people (length — with --items —, language
    gaps, self-preference with --own-family). The column options describe the --human file.
    --baseline adds rows computed
    from the --items file (raters baseline:length, baseline:embedding-sim, baseline:tfidf-sim):
    correlations and AUC only, since their scores have no threshold.

    \b
    Examples:
      convoscope metaeval verdicts.jsonl --human humans.csv --criterion overall --by language
      convoscope metaeval verdicts.jsonl --human human.jsonl --items items.jsonl \\
          --baseline length --baseline embedding --baseline tfidf
    """
    from rich.markup import escape

    from convoscope.analysis import metaeval_study as run_metaeval
    from convoscope.analysis import read_ratings

    console = Console()
    with fail_on(console):
        judged = read_ratings(verdicts_path)
        humans = None
        if human_path is not None:
            default = criteria[0] if len(criteria) == 1 else None
            humans = read_ratings(human_path, columns=_columns(columns, default_criterion=default))
        if baselines:
            judged += _baseline_ratings(items_path, baselines, criteria or _judged_criteria(judged),
                                        embedding_model, context_turns, console)
        study = run_metaeval(judged, humans, criteria=list(criteria) or None, by=by,
                             n_resamples=resamples, confidence=confidence, seed=seed,
                             level=level,
                             positive=_label(positive), score="expected_value" if expected else "value",
                             definitions=_definitions(criteria_file), view=view,  # type: ignore[arg-type]
                             dialogue_pattern=dialogue_pattern, human_sets=human_sets,  # type: ignore[arg-type]
                             system=system, permutations=permutations)
        rows = study.rows
        for table in _metaeval_tables(rows):
            console.print(table)
        console.print(f"[dim]{_metaeval_legend(confidence)}[/dim]")
        for extra in _study_tables(study):
            console.print(extra)
        for row in rows:
            for note in row.notes:
                console.print(f"[dim]{row.judge} on {row.criterion}: {note}[/dim]")
        extra_rows: list[Any] = [*study.comparisons, *study.systems]
        for extra_row in extra_rows:
            for note in extra_row.notes:
                text = escape(f"{_who(extra_row)} on {extra_row.criterion}: {note}")
                console.print(f"[dim]{text}[/dim]", soft_wrap=True)
        bias = _bias_reports(judged, humans, criteria, items_path, own_family, expected)
        if bias:
            console.print(_bias_table(bias))
        for path in tables:
            study.write_table(path)
            console.print(f"Wrote {path}")
        if report is not None:
            report.write_text(study.report_html(title=f"Meta-evaluation of {verdicts_path.name}"),
                              encoding="utf-8")
            console.print(f"Wrote {report}")
        if out is not None:
            _write_json(out, {"verdicts": str(verdicts_path), "human": str(human_path or verdicts_path),
                              "resamples": resamples, "confidence": confidence, "seed": seed,
                              "view": view, **study.as_dict(),
                              "bias": [dataclasses.asdict(report) for report in bias]}, console)
    if not study.computed:
        console.print("[red]error:[/red] nothing could be computed (no item has both a judge score and a "
                      "human rating on a comparable scale)", soft_wrap=True)
        raise SystemExit(1)


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


def _bias_table(reports: list[Any]) -> Table:
    table = Table(title="Judge bias against people (residual = judge − people, both standardised)",
                  **_COMPACT)
    for header in ["judge", "criterion", "n", "length ρ (p)", "per language: mean residual",
                   "self-preference"]:
        table.add_column(header)
    for report in reports:
        length = "–" if report.length is None else f"{report.length.rho:+.2f} ({report.length.pvalue:.2g})"
        languages = ", ".join(f"{name} {gap.mean_residual:+.2f}" for name, gap in report.languages.items())
        own = report.self_preference
        table.add_row(Text(report.judge), Text(report.criterion), str(report.n), length, languages,
                      "–" if own is None else f"{own.mean_residual:+.2f} (n {own.n})")
    return table


def _who(row: Any) -> str:
    return f"{row.judge_a} vs {row.judge_b}" if hasattr(row, "judge_a") else f"{row.judge} (system level)"


def _definitions(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    from convoscope.criteria import load_criteria

    return {criterion.name: criterion for criterion in load_criteria(path)}


def _comparison_row(c: Any) -> list[str | Text]:
    williams, boot = c.williams, c.bootstrap
    difference = "–" if boot is None else f"{boot.estimate:+.3f} [{boot.low:+.2f}, {boot.high:+.2f}]"
    return [Text(c.criterion), Text(c.judge_a), Text(c.judge_b), str(c.n_items),
            _fmt(williams.r_a if williams else None),
            _fmt(williams.r_b if williams else None), _fmt(williams.pvalue if williams else None),
            _fmt(c.steiger.pvalue if c.steiger else None), difference,
            _fmt(c.mcnemar.pvalue if c.mcnemar else None)]


def _study_tables(study: Any) -> list[Table]:
    """Judge against judge, system level and per annotation set, when the study has them."""
    tables = []
    if study.comparisons:
        table = Table(title="Judge against judge (Spearman ρ with the human mean)", **_COMPACT)
        for header in ["criterion", "A", "B", "n", "ρ A", "ρ B", "Williams p", "Steiger p",
                       "ρ A − ρ B [bootstrap]", "McNemar p"]:
            table.add_column(header, justify="left" if header in ("criterion", "A", "B") else "right")
        for c in study.comparisons:
            table.add_row(*_comparison_row(c))
        tables.append(table)
    if study.systems:
        table = Table(title="System level (system means; items resampled within systems)", **_COMPACT)
        for header in ["criterion", "judge", "systems", "Pearson r", "Spearman ρ"]:
            table.add_column(header, justify="left" if header in ("criterion", "judge") else "right")
        for row in study.systems:
            table.add_row(Text(row.criterion), Text(row.judge), str(row.n_systems), _interval(row.pearson),
                          _interval(row.spearman))
        tables.append(table)
    if study.per_set:
        table = Table(title="Against each human rater alone, averaged (per annotation set)", **_COMPACT)
        for header in ["criterion", "judge", "sets", "F1+", "F1−", "accuracy", "Spearman ρ"]:
            table.add_column(header, justify="left" if header in ("criterion", "judge") else "right")
        for row in study.per_set:
            table.add_row(Text(row.criterion), Text(row.judge), str(row.n_sets), _fmt(row.f1_pos),
                          _fmt(row.f1_neg), _fmt(row.accuracy), _fmt(row.spearman))
        tables.append(table)
    return tables


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


def _interval(result: Any) -> str:
    if result is None:
        return "–"
    return f"{result.estimate:.3f}\n[{result.low:.2f}, {result.high:.2f}]"


def _metaeval_legend(confidence: float) -> str:
    return (f"Correlations are with the mean human score, [{confidence:.0%} bootstrap interval]; "
            "Cohen κ is with the human majority (quadratic weights for numbers); F1+ / F1− score "
            "the positive and the negative class of binary criteria, AUC ranks their items by "
            "score. baseline: rows have no threshold, so no κ or F1. The humans' own agreement, "
            "under each table, is the ceiling.")


def _metaeval_tables(rows: Sequence[Any]) -> list[Table]:
    """One table per criterion and group: judges as rows, the human ceiling in the caption."""
    sections: dict[tuple[str, str | None], list[Any]] = {}
    for row in rows:
        sections.setdefault((row.criterion, row.group), []).append(row)
    tables = []
    for (criterion, group), section in sections.items():
        humans = section[0].humans
        title = f"{criterion}" + (f" · {group}" if group else "")
        caption = (f"humans: {humans.n_humans}, α {_fmt(humans.alpha)} ({humans.alpha_level}), "
                   f"leave-one-out ρ {_fmt(humans.loo_spearman)}")
        table = Table(title=Text(title), caption=caption, **_COMPACT)
        binary = any(row.binary or row.auc is not None for row in section)
        for header in ["judge", "n", "Spearman ρ", "Kendall τ", "Pearson r", "Cohen κ",
                       *(["F1+", "F1−", "AUC"] if binary else [])]:
            judge_column = header == "judge"
            table.add_column(header, justify="left" if judge_column else "right", no_wrap=judge_column)
        for row in section:
            kappa = _fmt(row.kappa) + ("" if row.kappa_weights == "quadratic" or row.kappa is None
                                       else " (unweighted)")
            f1s = [_fmt(row.binary.f1_pos if row.binary else None),
                   _fmt(row.binary.f1_neg if row.binary else None), _fmt(row.auc)] if binary else []
            table.add_row(Text(row.judge), str(row.n_items), _interval(row.spearman), _interval(row.kendall),
                          _interval(row.pearson), kappa, *f1s)
        tables.append(table)
    return tables


COMMANDS = [agree, metaeval]
