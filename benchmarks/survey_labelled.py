#!/usr/bin/env python3
"""Closing figures for issue 13 on our own labelled survey set (benchmarks/data/survey_labelled.csv:
60 answers, 30 English and 30 Korean, labelled by us with effort 0-7, relevance 0-4,
completeness 0-4, overall 0-4 and accept / hold / reject).

Scores every answer with a judge (default: the embedded model), then reports
* Spearman's rho of each dimension against our labels, for the argmax score and the
  probability-weighted expected score, beside the length baseline (words);
* Spearman of the overall (Sum of expected, Sum of argmax) against our overall rating;
* the decision: AUC / EER of the Sum score against accept-vs-(hold+reject) (no fitted
  parameter, so in-sample is out-of-sample) and of ridge weights fitted to the overall ratings,
  cross-validated (stratified 5-fold) beside in-sample.

    python3 benchmarks/survey_labelled.py                       # embedded judge, ~180 calls
    python3 benchmarks/survey_labelled.py --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1

Verdicts are stored in --store (default benchmarks/results/survey_labelled.db), so a re-run is
instant. The set was written by the same people who wrote the rules: treat it as a sanity check,
not as evidence of validity.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
from pathlib import Path

import numpy as np

from convoscope.analysis import spearman
from convoscope.items import Item
from convoscope.runs import judge_specs
from convoscope.store import Store
from convoscope.survey import DIMENSION_MAXIMA, DIMENSIONS, fit_model, score_survey_async

HERE = Path(__file__).resolve().parent


def load() -> list[dict[str, str]]:
    with open(HERE / "data" / "survey_labelled.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--judge", default="embedded")
    parser.add_argument("--store", type=Path, default=HERE / "results" / "survey_labelled.db")
    args = parser.parse_args()
    args.store.parent.mkdir(parents=True, exist_ok=True)
    rows = load()
    items = [Item(id=row["id"], question=row["question"], response=row["answer"],
                  language=row["language"]) for row in rows]
    store = Store(str(args.store))
    result = asyncio.run(score_survey_async(
        items, judge_specs([args.judge]), store=store, cache_path=args.store.with_suffix(".cache.db"),
        baselines=("length",), concurrency=2))
    scored = {answer.id: answer for answer in result.answers}
    print(f"judge {args.judge}: {len(rows)} answers, {result.judged} judged, "
          f"{len(rows) - result.judged} gibberish (scored 0), {result.model_calls} model calls")
    for language in ("all", "en", "ko"):
        chosen = [row for row in rows if language == "all" or row["language"] == language]
        report(language, chosen, scored)
    decision(rows, scored)


def _value(answer, name: str, kind: str) -> float:  # type: ignore[no-untyped-def]
    if answer.gibberish:
        return 0.0
    value = answer.scores.get(name) if kind == "argmax" else answer.expected.get(name)
    return np.nan if value is None else float(value)


def report(language: str, rows: list[dict[str, str]], scored) -> None:  # type: ignore[no-untyped-def]
    print(f"\n### {language} (n={len(rows)}): Spearman's rho against our labels")
    print("| dimension | judge argmax | judge expected | length baseline |")
    print("|---|---:|---:|---:|")
    length = [scored[row["id"]].baselines.get("length") or 0.0 for row in rows]
    for name in DIMENSIONS:
        truth = [float(row[name]) for row in rows]
        cells = [rho([_value(scored[row["id"]], name, kind) for row in rows], truth)
                 for kind in ("argmax", "expected")]
        print(f"| {name} | {cells[0]} | {cells[1]} | {rho(length, truth)} |")
    truth = [float(row["overall"]) for row in rows]
    cells = [rho([_sum(scored[row["id"]], kind) for row in rows], truth)
             for kind in ("argmax", "expected")]
    print(f"| overall (Sum) | {cells[0]} | {cells[1]} | {rho(length, truth)} |")


def rho(x: list[float], y: list[float]) -> str:
    try:
        return f"{spearman(x, y):.3f}"
    except ValueError:  # one side constant (the tiny judge gave every answer the same score)
        return "const"


def _sum(answer, kind: str) -> float:  # type: ignore[no-untyped-def]
    values = [_value(answer, name, kind) / DIMENSION_MAXIMA[name] for name in DIMENSIONS]
    return float(np.mean(values))


def decision(rows: list[dict[str, str]], scored) -> None:  # type: ignore[no-untyped-def]
    labels = [row["label"] for row in rows]
    overall = [float(row["overall"]) for row in rows]
    print("\n### decision: accept vs hold + reject (hold counts as not accepted, as in seed 000)")
    print("| scores | aggregate | AUC in-sample | AUC cross-validated | EER in-sample | "
          "EER cross-validated |")
    print("|---|---|---:|---:|---:|---:|")
    for kind in ("expected", "argmax"):
        features = [[_value(scored[row["id"]], name, kind) / DIMENSION_MAXIMA[name]
                     for name in DIMENSIONS] for row in rows]
        for aggregate in ("sum", "ridge"):
            fitted = fit_model(features, labels, overall=overall, aggregate=aggregate, folds=5)
            auc_cv = fitted.auc_cv if fitted.auc_cv is not None else fitted.auc_in_sample
            eer_cv = fitted.eer_cv if fitted.eer_cv is not None else fitted.eer_in_sample
            print(f"| {kind} | {aggregate} | {fitted.auc_in_sample:.3f} | {auc_cv:.3f} | "
                  f"{fitted.eer_in_sample:.3f} | {eer_cv:.3f} |")
    length = [[scored[row["id"]].baselines.get("length") or 0.0] for row in rows]
    top = max(value[0] for value in length) or 1.0
    fitted = fit_model([[value[0] / top] for value in length], labels, overall=overall)
    print(f"| length baseline | words | {fitted.auc_in_sample:.3f} | {fitted.auc_in_sample:.3f} | "
          f"{fitted.eer_in_sample:.3f} | {fitted.eer_in_sample:.3f} |")


if __name__ == "__main__":
    main()
