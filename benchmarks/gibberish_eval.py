#!/usr/bin/env python3
"""Precision, recall, F1 and accuracy of the gibberish filter on the labelled dev sets, with the
Markov-only baseline of seed 000 beside it; optionally the public gibberish sets too.

    python3 benchmarks/gibberish_eval.py                       # dev and held-out sets (EN, KO)
    python3 benchmarks/gibberish_eval.py --errors              # also list every misclassified answer
    python3 benchmarks/gibberish_eval.py --shared ../shared/data   # + rrenaud and Voynich sets,
                                                               # + gibberish-detector if installed
    python3 benchmarks/gibberish_eval.py --multi               # F1 per language, pt es de fr ja zh

``--multi`` scores the multilingual sets (``gibberish_multi.tsv``, the dev set the multilingual
rules were written against, and ``gibberish_multi_heldout.tsv``, written before them and scored
once) twice: with each answer's declared language (the survey's language column) and without
it (identification), with F1 per language and the recall on keyboard mashes.

"Markov only" flags an answer when its mean bigram log-likelihood is under the language's
threshold (or when there is nothing to score). P/R/F1 treat gibberish as the positive class; the
weighted average over both classes is printed too, because seed 000's Table 4 reports that kind of
average (its recall equals its accuracy in every row).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import string
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from convoscope.filters import DEFAULT_THRESHOLDS, GibberishThresholds, detect_many, markov_log_likelihood

HERE = Path(__file__).resolve().parent
# The dev sets guided the whitelist and exceptions; the held-out sets were written afterwards and
# scored once, untouched by tuning.
LABELLED_SETS = {f"{kind} {lang}": HERE / "data" / f"gibberish_{lang}{suffix}.tsv"
                 for kind, suffix in (("dev", ""), ("held-out", "_heldout")) for lang in ("en", "ko")}


def read_tsv(path: Path) -> tuple[list[str], list[bool]]:
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [row["text"] for row in rows], [row["label"] == "gibberish" for row in rows]


def scores(truth: list[bool], predicted: list[bool]) -> dict[str, float]:
    def prf(positive: bool) -> tuple[float, float, float, int]:
        tp = sum(t == positive and p == positive for t, p in zip(truth, predicted, strict=True))
        fp = sum(t != positive and p == positive for t, p in zip(truth, predicted, strict=True))
        fn = sum(t == positive and p != positive for t, p in zip(truth, predicted, strict=True))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1, tp + fn

    (p1, r1, f1, n1), (_, _, f0, n0) = prf(True), prf(False)
    total = n1 + n0
    return {"precision": p1, "recall": r1, "f1": f1,
            "accuracy": sum(t == p for t, p in zip(truth, predicted, strict=True)) / total,
            "weighted_f1": (f1 * n1 + f0 * n0) / total}


def markov_only(texts: list[str], thresholds: GibberishThresholds) -> list[bool]:
    flags = []
    for result in detect_many(texts, thresholds=thresholds):
        lang = result.lang if result.lang in ("en", "ko") else "en"
        score = markov_log_likelihood(result.text, lang=lang)  # type: ignore[arg-type]
        floor = thresholds.en_min_log_likelihood if lang == "en" else thresholds.ko_min_log_likelihood
        flags.append(score is None or score < floor)
    return flags


def voynich_lines(data: Path) -> list[str]:
    archive = zipfile.ZipFile(data / "gibberish-voynich" / "gibberish_transcriptions.zip")
    lines = []
    for name in sorted(archive.namelist()):
        lines += [line.strip(" -") for line in archive.read(name).decode("utf-8").splitlines()]
    return [line for line in lines if len(line) >= 3]


def report(name: str, truth: list[bool], texts: list[str], thresholds: GibberishThresholds,
           show_errors: bool, others: dict[str, Callable[[str], bool]]) -> None:
    results = detect_many(texts, thresholds=thresholds)
    methods = {"markov only": markov_only(texts, thresholds),
               **{method: [flag(text) for text in texts] for method, flag in others.items()},
               "full filter": [r.gibberish for r in results]}
    for method, predicted in methods.items():
        s = scores(truth, predicted)
        print(f"| {name} | {method} | {len(texts)} | {s['precision']:.3f} | {s['recall']:.3f} | "
              f"{s['f1']:.3f} | {s['accuracy']:.3f} | {s['weighted_f1']:.3f} |")
    if show_errors:
        for result, label in zip(results, truth, strict=True):
            if result.gibberish != label:
                kind = "missed" if label else "false alarm"
                print(f"    {kind}: {result.text!r} {result.lang} {result.reasons} {result.notes} "
                      f"ll={result.log_likelihood}", file=sys.stderr)


MULTI_SETS = {"multilingual dev": HERE / "data" / "gibberish_multi.tsv",
              "multilingual held-out": HERE / "data" / "gibberish_multi_heldout.tsv"}


def multilingual(thresholds: GibberishThresholds, show_errors: bool) -> None:
    print("\n| set | languages | language | n | gibberish | precision | recall | F1 |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name, path in MULTI_SETS.items():
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        texts = [row["text"] for row in rows]
        for mode in ("declared", "identified"):
            languages = [row["language"] for row in rows] if mode == "declared" else None
            results = detect_many(texts, languages=languages, thresholds=thresholds)
            for language in [*sorted({row["language"] for row in rows}), "all"]:
                chosen = [(row["label"] == "gibberish", result.gibberish, result)
                          for row, result in zip(rows, results, strict=True)
                          if language in ("all", row["language"])]
                truth = [t for t, _, _ in chosen]
                s = scores(truth, [p for _, p, _ in chosen])
                print(f"| {name} | {mode} | {language} | {len(chosen)} | {sum(truth)} | "
                      f"{s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} |")
                if show_errors and language != "all":
                    for label, flagged, result in chosen:
                        if label != flagged:
                            print(f"    {'missed' if label else 'false alarm'}: {result.text!r} "
                                  f"{result.lang} {result.reasons} {result.notes}", file=sys.stderr)


def gibberish_detector(shared: Path) -> dict[str, Callable[[str], bool]]:
    """The `gibberish-detector` package (no model shipped), trained on the shared English corpora
    with its own defaults (ASCII letters, limit 4.0), when installed."""
    if importlib.util.find_spec("gibberish_detector") is None:
        return {}
    from gibberish_detector import detector, trainer

    lines = (shared / "human-chat" / "human_chat.txt").read_text(encoding="utf-8").splitlines()
    texts = [line.split(":", 1)[-1] for line in lines]
    for name in ("valid_freq.json", "valid_rare.json"):
        data = json.loads((shared / "topical-chat" / name).read_text(encoding="utf-8"))
        texts += [turn["message"] for conversation in data.values() for turn in conversation["content"]]
    model = trainer.train_on_content("\n".join(texts), string.ascii_letters)
    return {"gibberish-detector (en model)": detector.Detector(model, threshold=4.0).is_gibberish}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--errors", action="store_true", help="list misclassified answers on stderr")
    parser.add_argument("--shared", type=Path, help="shared/data folder: also score the public sets")
    parser.add_argument("--dictionary", choices=["auto", "wordfreq", "corpus"], default="auto")
    parser.add_argument("--morphemes", choices=["auto", "kiwi", "off"], default="auto")
    parser.add_argument("--multi", action="store_true", help="only the multilingual sets")
    args = parser.parse_args()
    thresholds = DEFAULT_THRESHOLDS.model_copy(
        update={"en_dictionary": args.dictionary, "ko_morphemes": args.morphemes})
    if args.multi:
        multilingual(thresholds, args.errors)
        return
    print("| set | method | n | precision | recall | F1 | accuracy | weighted F1 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    others = gibberish_detector(args.shared) if args.shared else {}
    for name, path in LABELLED_SETS.items():
        texts, truth = read_tsv(path)
        report(name, truth, texts, thresholds, args.errors, others)
    if args.shared:
        rr = args.shared / "gibberish-rrenaud"
        good = [t for t in (rr / "good.txt").read_text().splitlines() if t.strip()]
        bad = [t for t in (rr / "bad.txt").read_text().splitlines() if t.strip()]
        report("rrenaud good/bad", [False] * len(good) + [True] * len(bad), good + bad, thresholds,
               args.errors, others)
        lines = voynich_lines(args.shared)
        report("Voynich human gibberish (all positive)", [True] * len(lines), lines, thresholds, False,
               others)


if __name__ == "__main__":
    main()
