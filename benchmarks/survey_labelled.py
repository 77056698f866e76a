#!/usr/bin/env python3
"""The judge and the decision on our own labelled survey answers (issues 13 and 26).

Two sets, both written and labelled by us (effort 0-7, relevance 0-4, completeness 0-4,
overall 0-4, accept / hold / reject; Apache-2.0 like the code):

* A, benchmarks/data/survey_labelled.csv: 60 answers, 30 English and 30 Korean (the Korean
  ones mirror the English ones), three questions per language, no gibberish;
* B, benchmarks/data/survey_labelled_2.csv: 80 answers, 40 English and 40 Korean written
  independently, eight new questions, with gibberish, grader-directed answers, long answers
  that say nothing and short ones that say enough (so length alone can be wrong).

Scores every answer with a judge (default: the embedded model), then reports
* Spearman's rho of each dimension against our labels (argmax, expected score, length);
* the decision, accept vs hold + reject, for every feature set (judge alone, length alone,
  judge + length, the judge-free text features, all): AUC / EER by stratified 5-fold
  cross-validation on A, on B and on both, and trained on one set, tested on the other;
* what the plain thresholds and the shipped model decide on both sets.

    python3 benchmarks/survey_labelled.py                         # embedded judge, 420 calls
    python3 benchmarks/survey_labelled.py --write-shipped judge+length   # refit the shipped model

Verdicts are stored in --store (default benchmarks/results/survey_labelled.db), so a re-run is
instant. The sets were written by the people who wrote the rules: a sanity check, not
evidence of validity.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
from collections import Counter
from pathlib import Path

import numpy as np

from convoscope.analysis import equal_error_rate, roc_auc, spearman
from convoscope.items import Item
from convoscope.runs import judge_specs
from convoscope.store import Store
from convoscope.survey import (
    DIMENSION_MAXIMA,
    DIMENSIONS,
    FEATURE_SETS,
    compare_feature_sets,
    decide,
    fit_model,
    parse_features,
    save_model,
    score_survey_async,
    shipped_model,
)
from convoscope.survey._shipped import prompt_fingerprint

HERE = Path(__file__).resolve().parent
SETS = {"A": "survey_labelled.csv", "B": "survey_labelled_2.csv"}
SHIPPED = HERE.parent / "src" / "convoscope" / "survey" / "data" / "decision-embedded.json"


def load(name: str) -> list[dict[str, str]]:
    with open(HERE / "data" / SETS[name], encoding="utf-8", newline="") as handle:
        return [row | {"set": name} for row in csv.DictReader(handle)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--judge", default="embedded")
    parser.add_argument("--store", type=Path, default=HERE / "results" / "survey_labelled.db")
    parser.add_argument("--write-shipped", metavar="FEATURES",
                        help="fit the shipped model on A + B with these features and write it")
    args = parser.parse_args()
    args.store.parent.mkdir(parents=True, exist_ok=True)
    rows = load("A") + load("B")
    items = [Item(id=row["id"], question=row["question"], response=row["answer"],
                  language=row["language"]) for row in rows]
    result = asyncio.run(score_survey_async(
        items, judge_specs([args.judge]), store=Store(str(args.store)),
        cache_path=args.store.with_suffix(".cache.db"), concurrency=2))
    scored = {answer.id: answer for answer in result.answers}
    print(f"judge {args.judge}: {len(rows)} answers, {result.judged} judged, "
          f"{len(rows) - result.judged} gibberish (dimensions 0), {result.model_calls} model calls")
    for name in ("A", "B", "A+B"):
        chosen = [row for row in rows if row["set"] in name]
        correlations(name, chosen, scored)
    comparisons(rows, scored)
    transfer(rows, scored)
    if args.write_shipped:
        write_shipped(rows, scored, parse_features(args.write_shipped), args.judge)
    decisions(rows, scored)


def columns(rows: list[dict[str, str]], scored, kind: str = "expected") -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    """Every feature per row: dimensions normalised (gibberish 0), then the judge-free ones."""
    out: dict[str, list[float]] = {name: [] for name in (*DIMENSIONS, *scored[rows[0]["id"]].features)}
    for row in rows:
        answer = scored[row["id"]]
        for name in DIMENSIONS:
            out[name].append(_value(answer, name, kind) / DIMENSION_MAXIMA[name])
        for name, value in answer.features.items():
            out[name].append(value)
    return out


def _value(answer, name: str, kind: str) -> float:  # type: ignore[no-untyped-def]
    if answer.gibberish:
        return 0.0
    value = answer.scores.get(name) if kind == "argmax" else answer.expected.get(name)
    return np.nan if value is None else float(value)


def correlations(name: str, rows: list[dict[str, str]], scored) -> None:  # type: ignore[no-untyped-def]
    print(f"\n### set {name} (n={len(rows)}): Spearman's rho against our labels")
    print("| dimension | judge argmax | judge expected | length (words) |")
    print("|---|---:|---:|---:|")
    length = columns(rows, scored)["log_words"]
    for dimension in (*DIMENSIONS, "overall"):
        truth = [float(row[dimension]) for row in rows]
        cells = []
        for kind in ("argmax", "expected"):
            values = columns(rows, scored, kind)
            cells.append(rho(np.mean([values[d] for d in DIMENSIONS], axis=0) if dimension == "overall"
                             else values[dimension], truth))
        print(f"| {dimension}{' (Sum)' if dimension == 'overall' else ''} | {cells[0]} | {cells[1]} "
              f"| {rho(length, truth)} |")


def rho(x, y) -> str:  # type: ignore[no-untyped-def]
    try:
        return f"{spearman(x, y):.3f}"
    except ValueError:  # one side constant (the tiny judge gave every answer the same score)
        return "const"


def comparisons(rows: list[dict[str, str]], scored) -> None:  # type: ignore[no-untyped-def]
    print("\n### decision (accept vs hold + reject): AUC / EER by stratified 5-fold CV")
    print("| features | A: AUC | A: EER | B: AUC | B: EER | A+B: AUC | A+B: EER |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    table: dict[str, list[str]] = {}
    for name in ("A", "B", "A+B"):
        chosen = [row for row in rows if row["set"] in name]
        for score in compare_feature_sets(columns(chosen, scored), [row["label"] for row in chosen],
                                          overall=[float(row["overall"]) for row in chosen]):
            table.setdefault(score.name, []).extend([f"{score.auc_cv:.3f}", f"{score.eer_cv:.3f}"])
    for name, cells in table.items():
        print(f"| {name} | {' | '.join(cells)} |")


def transfer(rows: list[dict[str, str]], scored) -> None:  # type: ignore[no-untyped-def]
    print("\n### trained on one set, tested on the other (ridge to overall; EER threshold from training)")
    print("| features | A to B: AUC | A to B: EER | B to A: AUC | B to A: EER |")
    print("|---|---:|---:|---:|---:|")
    for name, features in FEATURE_SETS.items():
        cells = []
        for train, test in (("A", "B"), ("B", "A")):
            fitted = _fit([row for row in rows if row["set"] == train], scored, features)
            held = [row for row in rows if row["set"] == test]
            values = columns(held, scored)
            predicted = [fitted.predict({f: values[f][i] for f in features}) for i in range(len(held))]
            accepted = [row["label"] == "accept" for row in held]
            eer = equal_error_rate(accepted, predicted).rate
            cells += [f"{roc_auc(accepted, predicted):.3f}", f"{eer:.3f}"]
        print(f"| {name} | {' | '.join(cells)} |")


def _fit(rows, scored, features, **options):  # type: ignore[no-untyped-def]
    values = columns(rows, scored)
    return fit_model([[values[f][i] for f in features] for i in range(len(rows))],
                     [row["label"] for row in rows], overall=[float(row["overall"]) for row in rows],
                     aggregate="ridge", features=features, **options)


def decisions(rows: list[dict[str, str]], scored) -> None:  # type: ignore[no-untyped-def]
    print("\n### decisions on A + B (labels: " + _counts(row["label"] for row in rows) + ")")
    plain = Counter(scored[row["id"]].decision for row in rows)
    print(f"* plain thresholds (accept >= 0.55, reject < 0.45 on the Sum): {_counts(plain.elements())}")
    model = shipped_model()
    values = columns(rows, scored)
    made = []
    for index, row in enumerate(rows):
        answer = scored[row["id"]]
        overall = 0.0 if answer.gibberish else model.predict({f: values[f][index] for f in model.dimensions})
        made.append(decide(overall, accept_at=model.accept_at, reject_below=model.reject_below)[0])
    agree = sum(m == row["label"] for m, row in zip(made, rows, strict=True))
    print(f"* shipped model (in-sample: fitted on these answers): {_counts(made)}; "
          f"same as our label for {agree} of {len(rows)}")


def _counts(labels) -> str:  # type: ignore[no-untyped-def]
    counted = Counter(labels)
    return ", ".join(f"{name} {counted[name]}" for name in ("accept", "hold", "reject"))


def write_shipped(rows, scored, features, judge: str) -> None:  # type: ignore[no-untyped-def]
    fitted = _fit(rows, scored, features, hold_far=0.1, hold_frr=0.1)
    every = compare_feature_sets(columns(rows, scored), [row["label"] for row in rows],
                                 overall=[float(row["overall"]) for row in rows])
    fitted = fitted.model_copy(update={
        "compared": every, "score_basis": "expected", "prompt_fingerprint": prompt_fingerprint(),
        "fitted_for": f"embedded judge ({judge}, SmolLM2-135M in completion mode)",
        "source": "benchmarks/data/survey_labelled.csv and survey_labelled_2.csv, "
                  "English and Korean, written and labelled by the convoscope authors"})
    SHIPPED.parent.mkdir(exist_ok=True)
    save_model(fitted, SHIPPED)
    print(f"\nwrote {SHIPPED} (features {', '.join(features)}; accept >= {fitted.accept_at:.3f}, "
          f"reject < {fitted.reject_below:.3f}; CV AUC {fitted.auc_cv:.3f}, EER {fitted.eer_cv:.3f})")


if __name__ == "__main__":
    main()
