"""Regression floor on the labelled dev sets in benchmarks/data (written for this project).

The full figures, with the Markov-only baseline, come from benchmarks/gibberish_eval.py; this test
only guards against a change that breaks the filter. It holds with or without the optional
packages (wordfreq, kiwipiepy), whose fallbacks score lower."""

import csv
from pathlib import Path

import pytest

from convoscope.filters import detect_many

DATA = Path(__file__).parents[2] / "benchmarks" / "data"


def f1_of(path):
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    truth = [row["label"] == "gibberish" for row in rows]
    predicted = [result.gibberish for result in detect_many([row["text"] for row in rows])]
    tp = sum(t and p for t, p in zip(truth, predicted, strict=True))
    fp = sum(p and not t for t, p in zip(truth, predicted, strict=True))
    fn = sum(t and not p for t, p in zip(truth, predicted, strict=True))
    return 2 * tp / (2 * tp + fp + fn), len(rows), sum(truth)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_dev_set_f1_floor(lang):
    f1, rows, positives = f1_of(DATA / f"gibberish_{lang}.tsv")
    assert rows >= 400 and 0.4 < positives / rows < 0.6  # a few hundred, both classes
    assert f1 >= 0.9
