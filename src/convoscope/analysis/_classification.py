"""A rater's binary decisions against a reference: confusion counts, precision, recall, F1 for the
positive and the negative class (F1+ / F1-, as seed 001 reports issue detection), accuracy, and
McNemar's test for two raters judged against the same reference.

Items missing in either input are dropped. ``positive`` names the positive label; every other
label is the negative class, and there may be only one other label. A ratio whose denominator
is zero (precision with no positive predictions, say) is undefined: it raises a ValueError
unless ``zero_division`` gives the value to use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import special

from convoscope.analysis._deprecation import renamed
from convoscope.analysis._validate import as_array, check_same_length, missing_mask

ZeroDivision = float | Literal["error"]
EXACT_BELOW = 25  # discordant pairs; below this the chi-square approximation is poor
# p-values use scipy.special, the functions behind scipy.stats' binom and chi2 without their
# per-call overhead.


@dataclass(frozen=True)
class Confusion:
    """Counts of a binary decision against a reference."""

    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int

    @property
    def n(self) -> int:
        return self.true_positive + self.false_positive + self.false_negative + self.true_negative

    def flipped(self) -> Confusion:
        """The same counts with the negative class treated as positive."""
        return Confusion(self.true_negative, self.false_negative, self.false_positive, self.true_positive)


def _pairs(y_true: Any, y_pred: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    ref = as_array(y_true, name=f"{name}: y_true", ndim=1)
    pred = as_array(y_pred, name=f"{name}: y_pred", ndim=1)
    check_same_length(ref, pred, name=name)
    keep = ~(missing_mask(ref) | missing_mask(pred))
    if not keep.any():
        raise ValueError(f"{name}: no item has both a reference and a prediction")
    return ref[keep], pred[keep]


_OLD_NAMES = dict(reference="y_true", predicted="y_pred")


@renamed(**_OLD_NAMES)
def confusion_counts(y_true: Any, y_pred: Any, *, positive: Any = 1) -> Confusion:
    """True/false positives and negatives of ``y_pred`` against the reference ``y_true``.

    >>> confusion_counts([1, 1, 0, 0], [1, 0, 1, 0])
    Confusion(true_positive=1, false_positive=1, false_negative=1, true_negative=1)
    """
    ref, pred = _pairs(y_true, y_pred, "confusion_counts")
    others = {v for v in np.concatenate([ref, pred]).tolist() if v != positive}
    if len(others) > 1:
        shown = sorted(others, key=str)
        raise ValueError(f"confusion_counts: binary labels expected, but besides positive={positive!r} "
                         f"found {shown}; pass the positive label as positive=")
    ref_pos, pred_pos = ref == positive, pred == positive
    return Confusion(int(np.sum(ref_pos & pred_pos)), int(np.sum(~ref_pos & pred_pos)),
                     int(np.sum(ref_pos & ~pred_pos)), int(np.sum(~ref_pos & ~pred_pos)))


def _ratio(numerator: int, denominator: int, zero_division: ZeroDivision, what: str) -> float:
    if denominator:
        return numerator / denominator
    if zero_division == "error":
        raise ValueError(f"{what} is undefined (0/0); pass zero_division=0.0 or 1.0 to choose a value")
    return float(zero_division)


@renamed(**_OLD_NAMES)
def precision(y_true: Any, y_pred: Any, *, positive: Any = 1,
              zero_division: ZeroDivision = "error") -> float:
    """Share of positive predictions that are right.

    >>> precision([1, 1, 0, 0], [1, 1, 1, 0])
    0.6666666666666666
    """
    c = confusion_counts(y_true, y_pred, positive=positive)
    return _ratio(c.true_positive, c.true_positive + c.false_positive, zero_division,
                  f"precision: no item is predicted {positive!r}, so precision")


@renamed(**_OLD_NAMES)
def recall(y_true: Any, y_pred: Any, *, positive: Any = 1,
           zero_division: ZeroDivision = "error") -> float:
    """Share of reference positives that are found.

    >>> recall([1, 1, 0, 0], [1, 0, 0, 0])
    0.5
    """
    c = confusion_counts(y_true, y_pred, positive=positive)
    return _ratio(c.true_positive, c.true_positive + c.false_negative, zero_division,
                  f"recall: no reference item is {positive!r}, so recall")


def _f1(c: Confusion, zero_division: ZeroDivision, label: str) -> float:
    # 2TP / (2TP + FP + FN) equals the harmonic mean of precision and recall wherever both are
    # defined, and stays defined (0) when the rater never predicts the class but the reference has it.
    return _ratio(2 * c.true_positive, 2 * c.true_positive + c.false_positive + c.false_negative,
                  zero_division, f"f1: neither reference nor prediction contains {label}, so F1")


@renamed(**_OLD_NAMES)
def f1(y_true: Any, y_pred: Any, *, positive: Any = 1, zero_division: ZeroDivision = "error") -> float:
    """F1 of the positive class.

    >>> f1(["issue", "ok", "issue", "ok"], ["issue", "issue", "ok", "ok"], positive="issue")
    0.5
    """
    c = confusion_counts(y_true, y_pred, positive=positive)
    return _f1(c, zero_division, repr(positive))


@renamed(**_OLD_NAMES)
def accuracy(y_true: Any, y_pred: Any) -> float:
    """Share of items where ``y_pred`` equals ``y_true`` (any number of labels).

    >>> accuracy(["a", "b", "c", "a"], ["a", "b", "a", "a"])
    0.75
    """
    ref, pred = _pairs(y_true, y_pred, "accuracy")
    return float(np.mean(ref == pred))


@dataclass(frozen=True)
class BinaryScores:
    """Precision, recall and F1 for the positive (``*_pos``) and negative (``*_neg``) class.
    An undefined value is None and listed in ``undefined``."""

    confusion: Confusion
    accuracy: float
    precision_pos: float | None
    recall_pos: float | None
    f1_pos: float | None
    precision_neg: float | None
    recall_neg: float | None
    f1_neg: float | None
    undefined: tuple[str, ...] = ()


@renamed(**_OLD_NAMES)
def binary_scores(y_true: Any, y_pred: Any, *, positive: Any = 1) -> BinaryScores:
    """Every binary score at once, both classes (F1+ and F1- of seed 001).

    >>> round(binary_scores([1, 1, 0, 0, 0], [1, 0, 0, 0, 1]).f1_neg, 4)
    0.6667
    """
    counts = confusion_counts(y_true, y_pred, positive=positive)
    values: dict[str, float | None] = {}
    for suffix, c in (("pos", counts), ("neg", counts.flipped())):
        for name, numerator, denominator in (
            ("precision", c.true_positive, c.true_positive + c.false_positive),
            ("recall", c.true_positive, c.true_positive + c.false_negative),
            ("f1", 2 * c.true_positive, 2 * c.true_positive + c.false_positive + c.false_negative),
        ):
            values[f"{name}_{suffix}"] = numerator / denominator if denominator else None
    undefined = tuple(name for name, value in values.items() if value is None)
    correct = counts.true_positive + counts.true_negative
    return BinaryScores(counts, correct / counts.n, undefined=undefined, **values)


@dataclass(frozen=True)
class McNemarResult:
    """``only_a``: items rater A got right and B wrong; ``only_b`` the reverse. ``statistic`` is
    the chi-square value, or for the exact test the smaller discordant count."""

    statistic: float
    pvalue: float
    only_a: int
    only_b: int
    exact: bool


def mcnemar(a_correct: Any, b_correct: Any, *, exact: bool | None = None,
            correction: bool = True) -> McNemarResult:
    """McNemar's test: do raters A and B differ in how often they match the same reference?

    ``exact=None`` uses the exact binomial test when there are fewer than 25 discordant items and
    the chi-square test (with continuity ``correction``) otherwise. Both follow statsmodels'
    ``mcnemar``: the corrected statistic is (|b - c| - 1)^2 / (b + c) without clipping, so equal
    discordant counts b = c = 3 give 1/6 and p = .683, not p = 1. With no discordant items there
    is no evidence of a difference: statistic 0, p-value 1.

    >>> result = mcnemar([1, 1, 1, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 1], exact=False)
    >>> round(result.statistic, 4), round(result.pvalue, 4)
    (0.1667, 0.6831)
    """
    a = as_array(a_correct, name="mcnemar: a_correct", ndim=1)
    b = as_array(b_correct, name="mcnemar: b_correct", ndim=1)
    check_same_length(a, b, name="mcnemar")
    if a.dtype == object or b.dtype == object:
        raise ValueError("mcnemar: a_correct and b_correct must be booleans (was each rater right?)")
    a_right, b_right = a == 1, b == 1
    answered = (a_right | (a == 0)) & (b_right | (b == 0))
    if np.any(~answered & ~np.isnan(a) & ~np.isnan(b)):
        raise ValueError("mcnemar: a_correct and b_correct must be booleans (was each rater right?)")
    only_a = int(np.count_nonzero(answered & a_right & ~b_right))
    only_b = int(np.count_nonzero(answered & ~a_right & b_right))
    discordant = only_a + only_b
    use_exact = discordant < EXACT_BELOW if exact is None else exact
    if discordant == 0:
        return McNemarResult(0.0, 1.0, 0, 0, use_exact)
    if use_exact:
        smaller = min(only_a, only_b)
        pvalue = min(1.0, 2.0 * float(special.bdtr(smaller, discordant, 0.5)))  # binomial cdf
        return McNemarResult(float(smaller), pvalue, only_a, only_b, True)
    gap = abs(only_a - only_b) - (1 if correction else 0)  # statsmodels' convention: not clipped
    statistic = gap * gap / discordant
    return McNemarResult(statistic, float(special.chdtrc(1, statistic)), only_a, only_b, False)
