"""Simulated studies whose right answer is known, for the decision tests and
``benchmarks/decisions.py``. Each function says what the truth is; nothing here calls convoscope."""

from __future__ import annotations

import numpy as np


def categorical_study(rng: np.random.Generator, *, n_items: int = 120, n_annotators: int = 3,
                      annotator_accuracy: float = 0.8, judge_accuracy: float = 0.8,
                      categories: int = 3, judge_errs_to_middle: bool = False
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(judge labels, annotators x items) as integer codes 0..categories-1 of unordered categories.

    Each annotator gives the true category with ``annotator_accuracy``, else another at random.
    The judge gives it with ``judge_accuracy``; when wrong it picks another at random, or — with
    ``judge_errs_to_middle`` — the middle code, which is the nearest *number* to every code: a
    judge that is wrong as a category but close as a number.
    Truth: the judge can replace an annotator when ``judge_accuracy`` is at least about
    ``annotator_accuracy``; it cannot when far below."""
    truth = rng.integers(0, categories, n_items)

    def noisy(accuracy: float, middle: bool) -> np.ndarray:
        wrong = (truth + rng.integers(1, categories, n_items)) % categories
        if middle:
            wrong = np.where(truth == categories // 2, wrong, categories // 2)
        return np.where(rng.random(n_items) < accuracy, truth, wrong)

    humans = np.array([noisy(annotator_accuracy, False) for _ in range(n_annotators)])
    return noisy(judge_accuracy, judge_errs_to_middle), humans


def as_words(codes: np.ndarray) -> np.ndarray:
    """The same labels as strings ("c0", "c1", ...): only the coding changes."""
    return np.vectorize(lambda code: f"c{int(code)}", otypes=[object])(codes)


def rare_binary_study(rng: np.random.Generator, *, n_labelled: int, n_unlabelled: int = 400,
                      share: float = 0.05, judge_sensitivity: float = 0.8, judge_fpr: float = 0.02,
                      positives: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(people's 0/1 labels, judge on them, judge on the unlabelled, true share) for a rare class.

    The judge finds a positive with ``judge_sensitivity`` and raises a false alarm with
    ``judge_fpr``. ``positives`` fixes how many positives the labelled sample holds (0 or 1: the
    cases that used to collapse an interval to a point). Truth: the share is ``share``."""
    y = (rng.random(n_labelled) < share).astype(float)
    if positives is not None:
        y = np.zeros(n_labelled)
        y[:positives] = 1.0
    pool = (rng.random(n_unlabelled) < share).astype(float)

    def judge(labels: np.ndarray) -> np.ndarray:
        hit = rng.random(len(labels))
        return np.where(labels == 1, hit < judge_sensitivity, hit < judge_fpr).astype(float)

    return y, judge(y), judge(pool), share


def systems_study(rng: np.random.Generator, *, n_systems: int = 6, n_inputs: int = 30, n_humans: int = 3,
                  judge_weight: float = 1.0, judge_noise: float = 0.5, human_noise: float = 1.0,
                  outlier: bool = False, leaked: bool = False, spread: float = 0.3
                  ) -> list[tuple[str, str, str, float]]:
    """(item, system, rater, score) rows: systems of known quality answering shared inputs.

    People rate ``quality + noise``; the judge ``judge_weight * quality + noise`` (0: a judge
    blind to quality). With ``outlier`` the last system is broken (quality far below the rest)
    and both see it — the case where one system alone can make a correlation look strong. With
    ``leaked`` the judge scores the very values people's mean converges to (it saw the
    answers): it beats the people's own agreement. ``spread`` is the SD of systems' quality."""
    quality = rng.normal(0, spread, n_systems)
    if outlier:
        quality[-1] = -3.0
    rows = []
    for s in range(n_systems):
        for i in range(n_inputs):
            item, truth = f"s{s}:i{i}", quality[s] + rng.normal(0, 0.5)
            for h in range(n_humans):
                rows.append((item, f"s{s}", f"human:h{h}", float(truth + rng.normal(0, human_noise))))
            judged = truth if leaked else judge_weight * quality[s] + rng.normal(0, judge_noise)
            if outlier and s == n_systems - 1:
                judged = -3.0 + rng.normal(0, judge_noise)
            rows.append((item, f"s{s}", "model:j", float(judged)))
    return rows


def panel_study(rng: np.random.Generator, *, n_items: int = 300, n_people: int = 3, noise: float = 1.0,
                leaked: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(judge, people x items) on a 1-7 scale: every person rates ``truth + noise`` rounded.

    The judge is one more person (the same noise, drawn the same way) unless ``leaked``: then it
    rates the truth itself, rounded the same way (it saw what people's mean converges to).
    Truth: one more person is not above the people's own agreement; a leaked judge is."""
    truth = rng.normal(size=n_items)

    def rate(noise_sd: float) -> np.ndarray:
        return np.clip(np.round(4 + 1.5 * (truth + rng.normal(0, noise_sd, n_items))), 1, 7)

    people = np.array([rate(noise) for _ in range(n_people)])
    return rate(0.0 if leaked else noise), people
