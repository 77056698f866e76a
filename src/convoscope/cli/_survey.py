"""``convoscope survey``: score open-ended survey answers and fit aggregation weights."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from convoscope.cli._common import fail_on

SCORE_EXAMPLE = """
\b
Examples:
  convoscope survey score answers.csv --question-col q --answer-col a --out scored.csv --report report.html
  convoscope survey score new.csv --question-col q --answer-col a --model fitted.json --out scored.csv
  convoscope survey score answers.csv --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1 --aggregate llm
  convoscope survey score answers.csv --baseline length --baseline tfidf --out scored.csv
"""

FIT_EXAMPLE = """
\b
Example:
  convoscope survey fit scored.csv --labels expert.csv --out fitted.json
"""

GROUP_EXAMPLE = """
\b
Example:
  convoscope survey score answers.csv --question-col q --answer-col a --out scored.csv
"""


@click.group("survey", epilog=GROUP_EXAMPLE)
def survey_group() -> None:
    """Score answers to open-ended survey questions (effort, relevance, completeness)."""


@survey_group.command("score", epilog=SCORE_EXAMPLE)
@click.argument("items_path", metavar="ANSWERS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id-col", default="id", show_default=True, help="Column of answer ids.")
@click.option("--question-col", default="question", show_default=True)
@click.option("--answer-col", default="response", show_default=True)
@click.option("--language-col", default="language", show_default=True)
@click.option("--judge", "judges", multiple=True, default=("embedded",), show_default=True,
              help="Model spec, as for 'convoscope judge'. Repeat for a panel.")
@click.option("--mode", type=click.Choice(["auto", "chat", "completion"]), default="auto",
              show_default=True)
@click.option("--aggregate", "aggregation", type=click.Choice(["sum", "llm"]), default="sum",
              show_default=True, help="Overall score: normalised sum, or LLM synthesis with the "
              "survey 'overall' criterion. --model switches to fitted ridge weights.")
@click.option("--model", "model_path", type=click.Path(dir_okay=False, path_type=Path),
              help="fitted.json from 'survey fit': its weights, threshold and hold band.")
@click.option("--threshold", type=float, default=0.5, show_default=True,
              help="Accept threshold on the 0-1 overall score (ignored with --model).")
@click.option("--hold-band", type=float, default=0.05, show_default=True,
              help="Scores this close to the threshold are held for a person.")
@click.option("--lang", type=click.Choice(["auto", "en", "ko"]), default="auto", show_default=True,
              help="Language for the gibberish filter.")
@click.option("--rubrics", type=click.Choice(["auto", "en"]), default="auto", show_default=True,
              help="auto: Korean answers are judged with the Korean rubrics (suite survey-ko); "
              "en: every answer with the English ones.")
@click.option("--baseline", "baselines", multiple=True, type=click.Choice(["length", "tfidf", "embedding"]),
              help="Add a judge-free score column (repeatable): answer length in words, or "
              "question-answer similarity by TF-IDF or by the embedded model's embeddings.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Scored CSV.")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), help="HTML report.")
@click.option("--store", "store_target", default="convoscope.db", show_default=True)
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False))
@click.option("--no-cache", is_flag=True)
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--limit", type=int, help="Score only the first N answers.")
def score_command(items_path: Path, id_col: str, question_col: str, answer_col: str,
                  language_col: str, judges: tuple[str, ...], mode: str, aggregation: str,
                  model_path: Path | None, threshold: float, hold_band: float, lang: str,
                  rubrics: str, baselines: tuple[str, ...], out: Path | None, report: Path | None,
                  store_target: str,
                  cache_path: str | None, no_cache: bool, concurrency: int,
                  limit: int | None) -> None:
    """Score ANSWERS (.csv, .jsonl): gibberish filter, then effort / relevance / completeness
    from the judge, overall quality, accept / hold / reject and a follow-up question.

    Gibberish answers are rejected without a model call. Verdicts go to the store as they are
    made, so re-running the same command resumes.
    """
    from convoscope.cli._judge import _default_cache, _judge_specs
    from convoscope.items import ColumnMap, read_items
    from convoscope.runs import OFFLINE_WARNING, is_embedded
    from convoscope.store import Store
    from convoscope.survey import load_model, write_report, write_scored_csv

    console = Console(stderr=True)
    with fail_on(console):
        columns = ColumnMap(id=id_col, question=question_col, response=answer_col,
                            language=language_col)
        items = read_items(items_path, columns=columns)[: limit or None]
        fitted = load_model(model_path) if model_path else None
        specs = _judge_specs(judges, mode, ())
        store = Store(store_target)
        cache = None if no_cache else cache_path or _default_cache(store)
        if any(is_embedded(spec.model) for spec in specs):
            console.print(f"[yellow]{OFFLINE_WARNING}[/yellow]")
        result = _run(console, items, specs, store, cache, aggregation=aggregation, fitted=fitted,
                      threshold=threshold, hold_band=hold_band, lang=lang, concurrency=concurrency,
                      rubrics=rubrics, baselines=baselines)
        if out is not None:
            console.print(f"Wrote {write_scored_csv(result.answers, out)} answers to {out}")
        if report is not None:
            write_report(result, report)
            console.print(f"Wrote the report to {report}")
        _print_summary(result)


def _run(console: Console, items, specs, store, cache, **options):  # type: ignore[no-untyped-def]
    from convoscope.survey import score_survey_async

    calls = 3 + (options["aggregation"] == "llm")
    with Progress("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not console.is_terminal and not sys.stderr.isatty()) as bar:
        task = bar.add_task("judging", total=len(items) * calls)
        return asyncio.run(score_survey_async(items, specs, store=store, cache_path=cache,
                                              on_progress=lambda n: bar.advance(task, n), **options))


def _print_summary(result) -> None:  # type: ignore[no-untyped-def]
    table = Table(title="Survey answers", show_header=False)
    decisions = [answer.decision for answer in result.answers]
    rows = [("answers", len(result.answers)),
            ("gibberish (not judged)", sum(a.gibberish for a in result.answers)),
            ("judged", result.judged), ("model calls", result.model_calls),
            ("cache hits / resumed", f"{result.cache_hits} / {result.resumed}"),
            *((name, decisions.count(name)) for name in ("accept", "hold", "reject")),
            ("overall", result.aggregation),
            ("threshold", f"{result.threshold:.3f} ± {result.hold_band:.3f}"),
            ("follow-ups by source", _sources(result.answers)),
            ("runs", ", ".join(result.run_ids) or "-")]
    for name, value in rows:
        table.add_row(name, str(value))
    Console().print(table)


def _sources(answers) -> str:  # type: ignore[no-untyped-def]
    # Says whether follow-ups were written by a model or built from the weakest-dimension template.
    counts = Counter(a.follow_up_source for a in answers if a.follow_up_source)
    return ", ".join(f"{source} x{count}" for source, count in sorted(counts.items())) or "-"


@survey_group.command("fit", epilog=FIT_EXAMPLE)
@click.argument("scored_path", metavar="SCORED", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--labels", "labels_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="CSV of expert labels: an id column and accept / hold / reject.")
@click.option("--id-col", default="id", show_default=True, help="Id column in the labels CSV.")
@click.option("--label-col", default="label", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("fitted.json"),
              show_default=True)
@click.option("--target-fpr", type=float,
              help="Pick the threshold allowing at most this false-accept rate (default: EER).")
@click.option("--hold-band", type=float, default=0.05, show_default=True)
def fit_command(scored_path: Path, labels_path: Path, id_col: str, label_col: str, out: Path,
                target_fpr: float | None, hold_band: float) -> None:
    """Fit ridge weights (alpha by cross-validation) and the accept threshold on the ROC curve,
    from SCORED (the CSV of 'survey score') and expert labels. Hold counts as reject."""
    from convoscope.survey import fit_model, read_labels, read_scored_features, save_model

    console = Console(stderr=True)
    with fail_on(console):
        features = read_scored_features(scored_path)
        labels = read_labels(labels_path, id_col=id_col, label_col=label_col)
        paired = [(features[i], label) for i, label in labels.items() if features.get(i)]
        if len(paired) < 4:
            raise ValueError(f"{labels_path}: only {len(paired)} labelled answers match fully "
                             f"scored rows of {scored_path}; need at least 4")
        fitted = fit_model([f for f, _ in paired], [label for _, label in paired],
                           target_fpr=target_fpr, hold_band=hold_band)
        save_model(fitted, out)
        console.print(f"Fitted on {len(paired)} answers ({len(labels) - len(paired)} labels "
                      f"unmatched); wrote {out}")
        Console().print(f"weights {dict(zip(fitted.dimensions, fitted.weights, strict=True))} "
                        f"intercept {fitted.intercept:.3f} alpha {fitted.alpha:g} "
                        f"threshold {fitted.threshold:.3f} ({fitted.threshold_rule}) "
                        f"AUC {fitted.auc:.3f} EER {fitted.equal_error_rate:.3f}")


COMMANDS: list[click.Command] = [survey_group]
