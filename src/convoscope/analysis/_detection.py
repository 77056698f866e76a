"""Detection with a score: ROC curve, area under it, equal error rate and operating thresholds.

An item is flagged when its score is at or above the threshold (the scikit-learn convention).
``y_true`` holds the reference labels; ``positive`` names the positive one (default 1). Items
missing a label or a score are dropped. Both classes must be present: with one class the false
(or true) positive rate is 0/0, which raises a ValueError.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from convoscope.analysis._correlation import average_ranks
from convoscope.analysis._deprecation import renamed
from convoscope.analysis._validate import as_array, as_numbers, check_same_length, missing_mask


class RocCurve(NamedTuple):
    """Rates at every distinct score threshold, from the highest (``inf``: flag nothing) down."""

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray


class EqualErrorRate(NamedTuple):
    rate: float
    threshold: float


class OperatingPoint(NamedTuple):
    threshold: float
    fpr: float
    tpr: float


def _labelled(y_true: Any, y_score: Any, positive: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    labels = as_array(y_true, name=f"{name}: y_true", ndim=1)
    values = as_numbers(y_score, name=f"{name}: y_score, the scores")
    check_same_length(labels, values, name=name)
    keep = ~(missing_mask(labels) | np.isnan(values))
    labels, values = labels[keep], values[keep]
    others = {value for value in labels.tolist() if value != positive}
    if len(others) > 1:
        raise ValueError(f"{name}: y_true must be binary; besides positive={positive!r} it holds "
                         f"{sorted(others, key=str)}")
    is_positive = labels == positive
    n_positive = int(is_positive.sum())
    if n_positive == 0 or n_positive == len(labels):
        missing = "positive" if n_positive == 0 else "negative"
        raise ValueError(f"{name}: y_true has no {missing} items, so the ROC curve is undefined")
    return is_positive, values


@renamed(scores="y_score")
def roc_curve(y_true: Any, y_score: Any, *, positive: Any = 1) -> RocCurve:
    """False and true positive rates at each distinct score, as ``sklearn.metrics.roc_curve``
    with ``drop_intermediate=False``.

    >>> roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).tpr.tolist()
    [0.0, 0.5, 0.5, 1.0, 1.0]
    """
    is_positive, values = _labelled(y_true, y_score, positive, "roc_curve")
    order = np.argsort(values, kind="mergesort")[::-1]
    ordered, hits = values[order], is_positive[order]
    last_of_value = np.r_[np.flatnonzero(np.diff(ordered)), len(ordered) - 1]
    true_pos = np.cumsum(hits)[last_of_value]
    false_pos = (last_of_value + 1) - true_pos
    return RocCurve(
        fpr=np.r_[0.0, false_pos / false_pos[-1]],
        tpr=np.r_[0.0, true_pos / true_pos[-1]],
        thresholds=np.r_[np.inf, ordered[last_of_value]],
    )


@renamed(scores="y_score")
def roc_auc(y_true: Any, y_score: Any, *, positive: Any = 1) -> float:
    """Area under the ROC curve: the chance that a random positive scores above a random negative,
    ties counting half (the Mann-Whitney U statistic, scaled).

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    is_positive, values = _labelled(y_true, y_score, positive, "roc_auc")
    ranks = average_ranks(values)
    n_pos = int(is_positive.sum())
    n_neg = len(values) - n_pos
    return float((ranks[is_positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@renamed(scores="y_score")
def equal_error_rate(y_true: Any, y_score: Any, *, positive: Any = 1) -> EqualErrorRate:
    """The error rate where false positives and false negatives are equally likely, and the
    threshold that comes closest to it.

    The rate is where the ROC polyline crosses fpr = 1 - tpr (linear between ROC points). The
    threshold is that of the nearer of the two ROC points around the crossing (on a tie, the
    lower threshold); flag items whose score is at or above it.

    >>> equal_error_rate([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    EqualErrorRate(rate=0.5, threshold=0.4)
    """
    fpr, tpr, thresholds = roc_curve(y_true, y_score, positive=positive)
    gap = (1.0 - tpr) - fpr  # positive before the crossing, non-increasing along the curve
    after = int(np.argmax(gap <= 0))
    before = after - 1
    share = gap[before] / (gap[before] - gap[after])
    rate = fpr[before] + share * (fpr[after] - fpr[before])
    nearer = after if abs(gap[after]) <= abs(gap[before]) else before
    return EqualErrorRate(float(rate), float(thresholds[nearer]))


@renamed(scores="y_score")
def threshold_at(y_true: Any, y_score: Any, *, fpr: float, positive: Any = 1) -> OperatingPoint:
    """The lowest threshold whose false positive rate is at most ``fpr``, i.e. the most detections
    that budget of false alarms allows. If even the top score exceeds the budget, the result is
    ``inf`` (flag nothing), with rates 0.

    >>> threshold_at([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], fpr=0.0).threshold
    0.8
    """
    if not 0.0 <= fpr <= 1.0:
        raise ValueError(f"threshold_at: fpr must be between 0 and 1, got {fpr!r}")
    rates, hits, thresholds = roc_curve(y_true, y_score, positive=positive)
    index = int(np.searchsorted(rates, fpr, side="right")) - 1
    return OperatingPoint(float(thresholds[index]), float(rates[index]), float(hits[index]))
