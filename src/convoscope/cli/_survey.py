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

from convoscope.cli._common import encoding_option, fail_on, naming_encoding_flag
from convoscope.cli._gibberish import language_option
from convoscope.errors import ConfigError

SCORE_EXAMPLE = """
\b
Examples:
  convoscope survey score answers.csv --question-col q --answer-col a --out scored.csv --report report.html
  convoscope survey score new.csv --question-col q --answer-col a --model fitted.json --out scored.csv
  convoscope survey score answers.csv --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1 --aggregate llm
  convoscope survey score answers.csv --baseline length --baseline tfidf --out scored.csv
  convoscope survey score answers.csv --judge python:myrules:effort --judge embedded --pool mean
  convoscope survey score korean-export.csv --answer-col answer --encoding cp949 --out scored.csv
"""

FIT_EXAMPLE = """
\b
Examples:
  convoscope survey fit scored.csv --labels expert.csv --out fitted.json
  convoscope survey fit scored.csv --labels expert.csv --aggregate ridge --hold-far 0.05 --hold-frr 0.05
  convoscope survey fit scored.csv --labels expert.csv --features judge+length --out fitted.json
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
@click.option("--id-col", help="Column of answer ids [default: id, else Qualtrics' ResponseId, "
              "else the line number].")
@click.option("--question-col", help="Column of questions [default: question, if present].")
@click.option("--answer-col", help="Column of answers [default: response or answer].")
@click.option("--language-col", help="Column of language codes [default: language, if present].")
@click.option("--skip-rows", type=int, help="Skip N rows under the header (other tools' extra "
              "header rows). Qualtrics' two extra rows are recognised without it.")
@click.option("--judge", "judges", multiple=True, default=("embedded",), show_default=True,
              help="Model spec, as for 'convoscope judge', or a judge written in Python "
              "('python:MODULE:NAME' or 'python:ENTRY_POINT', docs/python-judges.md). Repeat for a panel.")
@click.option("--pool", type=click.Choice(["majority", "max-vote", "mean", "median"]), default="majority",
              show_default=True, help="How a panel pools its judges, as for 'convoscope judge'.")
@click.option("--ties", type=click.Choice(["low", "high", "unscored"]), default="unscored",
              show_default=True, help="A majority (max-vote) tie: left unscored (the answer is held), "
              "or broken to the lower or higher score.")
@click.option("--mode", type=click.Choice(["auto", "chat", "completion"]), default="auto",
              show_default=True)
@click.option("--aggregate", "aggregation", type=click.Choice(["sum", "llm"]), default="sum",
              show_default=True, help="Overall score: normalised sum, or LLM synthesis with the "
              "survey 'overall' criterion. --model switches to the fitted rule.")
@click.option("--model", "model_choice", metavar="FITTED|shipped|none",
              help="The decision rule: fitted.json from 'survey fit' (its aggregate, inputs, "
              "thresholds and hold band), 'shipped' (the model fitted on convoscope's own "
              "labelled answers for the embedded judge), or 'none' (the plain thresholds) "
              "[default: shipped with the embedded judge, else none].")
@click.option("--threshold", type=float, help="Accept threshold on the 0-1 overall score "
              "[default: 0.5; giving it chooses the plain thresholds].")
@click.option("--hold-band", type=float, help="Scores this close to the threshold are held "
              "[default: 0.05; giving it chooses the plain thresholds].")
@click.option("--lang", default="auto", show_default=True,
              callback=lambda _c, _p, value: language_option(value),
              help="Language for the gibberish filter: auto (identify per answer), or any ISO 639 code "
              "(en, ko, pt, hi, th...). A language column (--language-col) wins where it has a code.")
@click.option("--rubrics", type=click.Choice(["auto", "en"]), default="auto", show_default=True,
              help="auto: Korean answers are judged with the Korean rubrics (suite survey-ko); "
              "en: every answer with the English ones.")
@click.option("--baseline", "baselines", multiple=True, type=click.Choice(["length", "tfidf", "embedding"]),
              help="Add a judge-free score column (repeatable): answer length in words, or "
              "question-answer similarity by TF-IDF or by the embedded model's embeddings.")
@click.option("--on-grader", type=click.Choice(["reject", "hold"]), default="reject",
              show_default=True, help="Answers that ask the grader for a score or imitate the "
              "judge (forged verdicts, fake tags, result blocks...): reject them, or hold them for "
              "a person.")
@click.option("--include-flagged", is_flag=True, help="Count the scores of answers that address or "
              "imitate the grader in aggregates and 'survey fit' (default: kept for audit only).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Scored CSV.")
@click.option("--report", is_flag=False, flag_value="survey-report.html",
              type=click.Path(dir_okay=False, path_type=Path),
              help="HTML report (--report alone writes survey-report.html).")
@click.option("--store", "store_target", default="convoscope.db", show_default=True)
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), envvar="CONVOSCOPE_CACHE",
              show_envvar=True, help="Response cache file (default: next to a SQLite store).")
@click.option("--no-cache", is_flag=True)
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--limit", type=int, help="Score only the first N answers.")
@encoding_option
def score_command(items_path: Path, id_col: str | None, question_col: str | None,
                  answer_col: str | None, language_col: str | None, skip_rows: int | None,
                  judges: tuple[str, ...], pool: str, ties: str, mode: str, aggregation: str,
                  model_choice: str | None, threshold: float | None, hold_band: float | None, lang: str,
                  rubrics: str, baselines: tuple[str, ...], on_grader: str, include_flagged: bool,
                  out: Path | None, report: Path | None,
                  store_target: str, cache_path: str | None, no_cache: bool, concurrency: int,
                  limit: int | None, encoding: str) -> None:
    """Score ANSWERS (.csv, .tsv, .jsonl): gibberish filter, then effort / relevance /
    completeness from the judge, overall quality, accept / hold / reject and a follow-up question.

    Gibberish answers are rejected without a model call; answers that address the grader are
    never accepted. Verdicts go to the store as they are made, so re-running resumes.
    """
    from convoscope.runs import OFFLINE_WARNING, default_cache_path, is_embedded, judge_specs
    from convoscope.store import Store
    from convoscope.survey import (
        SurveyColumns,
        decision_model,
        read_survey,
        write_scored_csv,
        write_survey_report,
    )

    console = Console(stderr=True)
    with fail_on(console):
        model_path = Path(model_choice) if model_choice not in (None, "shipped", "none") else None
        _refuse_overwriting(out, items_path, model_path)
        _refuse_overwriting(report, items_path, model_path, out)
        with naming_encoding_flag():
            export = read_survey(items_path, SurveyColumns(id=id_col, question=question_col,
                                                           answer=answer_col, language=language_col),
                                 skip_rows=skip_rows, encoding=encoding)
        for note in export.notes:
            console.print(f"[cyan]{items_path}:[/cyan] {note}", soft_wrap=True)
        items = export.items[: limit or None]
        specs = judge_specs(judges, mode=mode)
        fitted, rule = decision_model(model_choice, specs, thresholds_given=(
            threshold is not None or hold_band is not None or aggregation == "llm"))
        store = Store(store_target)
        cache = None if no_cache else cache_path or default_cache_path(store)
        if any(is_embedded(spec.model) for spec in specs):
            console.print(f"[yellow]{OFFLINE_WARNING}[/yellow]")
        console.print(rule, soft_wrap=True, markup=False)
        result = _run(console, items, specs, store, cache, aggregation=aggregation, fitted=fitted,
                      threshold=0.5 if threshold is None else threshold,
                      hold_band=0.05 if hold_band is None else hold_band, lang=lang,
                      concurrency=concurrency, rubrics=rubrics, baselines=baselines,
                      on_grader=on_grader, include_flagged=include_flagged, pool=pool, ties=ties)
        if out is not None:
            console.print(f"Wrote {write_scored_csv(result.answers, out)} answers to {out}")
        if report is not None:
            write_survey_report(result, report)
            console.print(f"Wrote the report to {report}")
        _print_summary(result)


def _refuse_overwriting(out: Path | None, *inputs: Path | None) -> None:
    if out is None:
        return
    for given in inputs:
        if given is not None and given.exists() and out.resolve() == given.resolve():
            raise ConfigError(f"{out}: refusing to overwrite an input file; choose another output name")


def _run(console: Console, items, specs, store, cache, **options):
    from convoscope.survey import score_survey_async

    calls = 3 + (options["aggregation"] == "llm")
    with Progress("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not console.is_terminal and not sys.stderr.isatty()) as bar:
        task = bar.add_task("judging", total=len(items) * calls)
        return asyncio.run(score_survey_async(items, specs, store=store, cache_path=cache,
                                              on_progress=lambda n: bar.advance(task, n), **options))


def _print_summary(result) -> None:
    table = Table(title="Survey answers", show_header=False)
    decisions = [answer.decision for answer in result.answers]
    rows = [("answers", len(result.answers)),
            ("gibberish (not judged)", sum(a.gibberish for a in result.answers)),
            ("judged", result.judged), ("model calls", result.model_calls),
            ("cache hits / resumed", f"{result.cache_hits} / {result.resumed}"),
            *((name, decisions.count(name)) for name in ("accept", "hold", "reject")),
            ("overall", result.aggregation),
            ("decision rule", _rule(result.fitted)),
            ("accept at / reject below", f"{result.accept_at:.3f} / {result.reject_below:.3f}"),
            ("scores used", _bases(result.answers)),
            ("addresses the grader", sum(bool(a.grader_signals) for a in result.answers)),
            ("scores excluded (kept for audit)", sum(a.scores_excluded for a in result.answers)),
            ("follow-ups by source", _sources(result.answers)),
            ("runs", ", ".join(result.run_ids) or "-")]
    for name, value in rows:
        table.add_row(name, str(value))
    Console().print(table)


def _rule(fitted) -> str:
    if fitted is None:
        return "plain thresholds"
    inputs = ", ".join(fitted.dimensions)
    return f"shipped model ({inputs})" if fitted.source else f"fitted model ({fitted.aggregate}: {inputs})"


def _bases(answers) -> str:
    # Says whether the overall used probability-weighted (expected) or most likely scores.
    counts = Counter(a.score_basis for a in answers if a.scores)
    shown = {"expected": "expected (token probabilities)", "argmax": "argmax (most likely)"}
    return ", ".join(f"{shown[basis]} x{count}" for basis, count in sorted(counts.items())) or "-"


def _sources(answers) -> str:
    # Says whether follow-ups were written by a model or built from the weakest-dimension template.
    counts = Counter(a.follow_up_source for a in answers if a.follow_up_source)
    return ", ".join(f"{source} x{count}" for source, count in sorted(counts.items())) or "-"


@survey_group.command("fit", epilog=FIT_EXAMPLE)
@click.argument("scored_path", metavar="SCORED", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--labels", "labels_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="CSV of expert labels: an id column, and accept / hold / reject and/or a "
              "numeric overall-quality rating.")
@click.option("--id-col", default="id", show_default=True, help="Id column in the labels CSV.")
@click.option("--label-col", default="label", show_default=True,
              help="accept / hold / reject column (optional when --overall-col is there).")
@click.option("--overall-col", help="Numeric overall-quality column [default: overall, if present].")
@click.option("--overall-max", type=float, default=4.0, show_default=True,
              help="Top of the overall-quality scale (seed 000: 0-4).")
@click.option("--accept-min", type=float, help="Without accept/reject labels: ratings at or "
              "above this count as accepted [default: 3 on a 0-4 scale].")
@click.option("--aggregate", type=click.Choice(["sum", "ridge", "llm"]),
              help="Overall score the threshold is set on: Sum (seed 000's default), ridge weights "
              "fitted to the overall ratings, or the LLM synthesis (needs SCORED from --aggregate "
              "llm) [default: sum; ridge when --features names more than the judge].")
@click.option("--features", "feature_spec", default="judge", show_default=True,
              help="Inputs of the ridge weights: a set (judge, length, judge+length, text, all) "
              "or names (effort, relevance, completeness, log_words, distinct_ratio, tfidf, "
              "gibberish), comma-separated. Every set is compared by cross-validation either way.")
@click.option("--hold-far", type=float, help="Hold band: accept only where the false-accept "
              "rate is at most this (e.g. 0.05).")
@click.option("--hold-frr", type=float, help="Hold band: reject only where the false-reject "
              "rate is at most this (e.g. 0.05).")
@click.option("--scores", "basis", type=click.Choice(["auto", "expected", "argmax"]), default="auto",
              show_default=True, help="Dimension scores to use: expected (token probabilities), "
              "argmax, or auto (expected when every judged answer has them).")
@click.option("--folds", type=int, default=5, show_default=True, help="Cross-validation folds.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("fitted.json"),
              show_default=True)
@encoding_option
def fit_command(scored_path: Path, labels_path: Path, id_col: str, label_col: str,
                overall_col: str | None, overall_max: float, accept_min: float | None,
                aggregate: str | None, feature_spec: str, hold_far: float | None,
                hold_frr: float | None, basis: str, folds: int, out: Path, encoding: str) -> None:
    """Fit seed 000's decision rule on SCORED (the CSV of 'survey score') and expert labels:
    the accept threshold at the equal-error rate of the chosen aggregate (hold counts as not
    accepted), an optional hold band from two ROC operating points, AUC / EER by k-fold
    cross-validation beside the in-sample figures. Ridge weights may also weigh judge-free
    features (--features); every feature set is compared by cross-validated AUC / EER, so you
    see whether the judge adds anything to answer length. Prints the ROC with the chosen points.
    Every labelled id must be in SCORED (the count of those that are not is the error)."""
    from convoscope.survey import DIMENSIONS, fit_labelled, parse_features, save_model

    console = Console(stderr=True)
    with fail_on(console):
        _refuse_overwriting(out, scored_path, labels_path)
        features = parse_features(feature_spec)
        aggregate = aggregate or ("sum" if features == DIMENSIONS else "ridge")
        with naming_encoding_flag():
            fitted, report = fit_labelled(
                scored_path, labels_path, id_col=id_col, label_col=label_col,
                overall_col=overall_col, overall_max=overall_max, accept_min=accept_min,
                aggregate=aggregate, hold_far=hold_far, hold_frr=hold_frr,  # type: ignore[arg-type]
                basis=basis, folds=folds, features=features, encoding=encoding)
        save_model(fitted, out)
        for line in report:
            console.print(line, soft_wrap=True, markup=False)
        console.print(f"wrote {out}")
        _print_fit(fitted)


def _print_fit(fitted) -> None:
    from convoscope.survey import roc_rows

    out = Console()
    table = Table(title=f"ROC of the {fitted.aggregate} score (accept vs hold+reject)")
    for name in ("threshold", "false accept", "true accept", "chosen"):
        table.add_column(name, justify="right" if name != "chosen" else "left")
    for threshold, far, tar, chosen in roc_rows(fitted):
        table.add_row(threshold, f"{far:.3f}", f"{tar:.3f}", chosen)
    out.print(table)
    weights = ", ".join(f"{d} {w:.3f}" for d, w in zip(fitted.dimensions, fitted.weights, strict=True))
    cv = ("-" if fitted.auc_cv is None else f"{fitted.auc_cv:.3f}")
    cv_eer = ("-" if fitted.eer_cv is None else f"{fitted.eer_cv:.3f}")
    out.print(f"aggregate {fitted.aggregate} ({weights}; intercept {fitted.intercept:.3f}); "
              f"accept at >= {fitted.accept_at:.3f}, reject below {fitted.reject_below:.3f} "
              f"({fitted.hold_rule}); positives: {fitted.positives}", soft_wrap=True)
    out.print(f"AUC in-sample {fitted.auc_in_sample:.3f}, cross-validated {cv}; "
              f"EER in-sample {fitted.eer_in_sample:.3f}, cross-validated {cv_eer} "
              f"({fitted.cv_note}); {fitted.labelled} labelled answers", soft_wrap=True)
    from convoscope.survey._interval import compare_with_length, method

    against = compare_with_length(fitted) if fitted.aggregate != "llm" else ""
    if against:
        out.print(f"{against[0].upper()}{against[1:]} (intervals: {method(fitted)})",
                  soft_wrap=True, markup=False)
    for note in fitted.notes:
        out.print(f"note: {note}", soft_wrap=True)
    _print_compared(out, fitted)


def _print_compared(out: Console, fitted) -> None:
    if not fitted.compared:
        return
    table = Table(title="Feature sets (accept vs hold+reject; ridge cross-validated, Sum needs no fit)")
    for name in ("features", "inputs", "AUC (CV)", "EER (CV)", "AUC in-sample", "EER in-sample"):
        table.add_column(name, justify="left" if name in ("features", "inputs") else "right")
    for row in fitted.compared:
        table.add_row(row.name, ", ".join(row.features), *(_rate(value) for value in (
            row.auc_cv, row.eer_cv, row.auc_in_sample, row.eer_in_sample)))
    out.print(table)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


EVALUATE_EXAMPLE = """
\b
Examples:
  convoscope survey evaluate scored.csv --labels expert.csv
  convoscope survey evaluate scored.csv --labels expert.csv --id-col ResponseId --out evaluation.json
"""


@survey_group.command("evaluate", epilog=EVALUATE_EXAMPLE)
@click.argument("scored_path", metavar="SCORED", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--labels", "labels_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="CSV with an id column and any of effort, relevance, completeness (rubric "
              "scales), overall (0-4) and label (accept / hold / reject).")
@click.option("--id-col", default="id", show_default=True, help="Id column in the labels CSV.")
@click.option("--label-col", default="label", show_default=True, help="accept / hold / reject column.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the figures as JSON.")
@encoding_option
def evaluate_command(scored_path: Path, labels_path: Path, id_col: str, label_col: str,
                     out: Path | None, encoding: str) -> None:
    """Score the judge's dimensions and the decision in SCORED (the CSV of 'survey score')
    against labels, in one command: Spearman, Kendall and weighted kappa per dimension; the
    label-by-decision table, accuracy, kappa, precision and recall of accept, and the AUC / EER
    of the overall score. Every labelled id must be in SCORED (unknown ids are refused, with
    their count)."""
    from convoscope.survey import evaluate_labelled

    console = Console(stderr=True)
    with fail_on(console):
        _refuse_overwriting(out, scored_path, labels_path)
        with naming_encoding_flag():
            evaluation = evaluate_labelled(scored_path, labels_path, id_col=id_col,
                                           label_col=label_col, encoding=encoding)
        if out is not None:
            out.write_text(evaluation.model_dump_json(indent=2) + "\n", encoding="utf-8")
            console.print(f"wrote {out}")
    _print_evaluation(evaluation)


def _print_evaluation(evaluation) -> None:
    out = Console()
    out.print(f"{evaluation.labelled} labelled answers, {evaluation.gibberish} of them gibberish "
              "(never judged: left out of the dimension rows, in the overall and decision rows)")
    if evaluation.dimensions:
        table = Table(title="The judge against the labels")
        for name in ("dimension", "n", "Spearman", "Kendall", "weighted kappa", "Spearman (expected)"):
            table.add_column(name, justify="left" if name == "dimension" else "right")
        for row in evaluation.dimensions:
            table.add_row(row.name, str(row.n), *(_rate(value) for value in (
                row.spearman, row.kendall, row.weighted_kappa, row.spearman_expected)))
        out.print(table)
    decision = evaluation.decision
    if decision is not None:
        table = Table(title="Decisions (rows: label, columns: decision)")
        for name in ("label", "accept", "hold", "reject"):
            table.add_column(name, justify="left" if name == "label" else "right")
        for label, made in decision.table.items():
            table.add_row(label, *(str(made[name]) for name in ("accept", "hold", "reject")))
        out.print(table)
        out.print(f"accuracy {decision.accuracy:.3f}; kappa {_rate(decision.kappa)} (quadratic "
                  f"{_rate(decision.weighted_kappa)}); accept precision {_rate(decision.accept_precision)}, "
                  f"recall {_rate(decision.accept_recall)}; overall score AUC {_rate(decision.auc)}, "
                  f"EER {_rate(decision.eer)} (accept vs hold + reject)", soft_wrap=True)
    for note in evaluation.notes:
        out.print(f"note: {note}", soft_wrap=True, markup=False)


COMMANDS: list[click.Command] = [survey_group]
