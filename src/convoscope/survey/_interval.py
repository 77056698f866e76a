"""Intervals for the AUC a decision rule reports, and what they say against answer length
(issue 38, observation 4).

A model fitted since issue 38 keeps the out-of-fold score of every labelled answer, for the rule
and for each feature set it was compared with. The rule and answer length alone are then two
scores of the same answers, and DeLong, DeLong and Clarke-Pearson (1988) give each AUC's
interval and the interval of their difference from the two scores' placement values, paired:
the covariance of the two AUCs enters the difference's variance (``delong_paired``).

A model saved without those scores keeps only its AUCs and class counts; its intervals are the
ones those alone determine, Hanley and McNeil (1982), unpaired. Comparing two unpaired intervals
is conservative, so "better than length" is then only said when they do not overlap at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm, rankdata

LEVEL = 0.95
METHOD = ("Hanley-McNeil, from the AUC and the class counts (the out-of-fold scores are not "
          "stored, and the inputs were chosen on the same answers: an upper bound)")
PAIRED_METHOD = ("DeLong, paired on the out-of-fold scores of the same answers (the inputs were "
                 "chosen on those answers: an upper bound)")


@dataclass(frozen=True)
class PairedAUC:
    """Two AUCs on the same answers and their difference (``a`` minus ``b``), DeLong intervals."""

    auc_a: float
    auc_b: float
    interval_a: tuple[float, float]
    interval_b: tuple[float, float]
    difference: float
    difference_interval: tuple[float, float]
    z: float
    p_value: float  # two-sided, for "the two AUCs are equal"


def _placements(positive: np.ndarray, negative: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values: for each positive, the share of negatives it outranks (ties
    half); for each negative, the share of positives that outrank it. Read off midranks."""
    both = rankdata(np.r_[positive, negative])
    m, n = len(positive), len(negative)
    of_positive = (both[:m] - rankdata(positive)) / n
    of_negative = 1.0 - (both[m:] - rankdata(negative)) / m
    return of_positive, of_negative


def delong_paired(accepted: Any, scores_a: Any, scores_b: Any, *, level: float = LEVEL) -> PairedAUC:
    """AUCs of two scores of the same answers (``accepted`` true for the positive class), each
    with its DeLong interval, and their difference with the paired interval and test."""
    labels = np.asarray(accepted, dtype=bool)
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    if not (len(labels) == len(a) == len(b)):
        raise ValueError("a paired AUC comparison needs one score of each kind per answer")
    m, n = int(labels.sum()), int((~labels).sum())
    if m < 2 or n < 2:
        raise ValueError("a DeLong interval needs two or more answers of each class")
    placed = [_placements(score[labels], score[~labels]) for score in (a, b)]
    aucs = np.array([positive.mean() for positive, _ in placed])
    covariance = (np.cov(np.vstack([positive for positive, _ in placed])) / m
                  + np.cov(np.vstack([negative for _, negative in placed])) / n)
    spread = float(norm.ppf(0.5 + level / 2))
    difference = float(aucs[0] - aucs[1])
    se = math.sqrt(max(float(covariance[0, 0] + covariance[1, 1] - 2 * covariance[0, 1]), 0.0))
    z = difference / se if se > 0 else (0.0 if difference == 0 else math.copysign(math.inf, difference))
    return PairedAUC(
        auc_a=float(aucs[0]), auc_b=float(aucs[1]),
        interval_a=_clipped(aucs[0], covariance[0, 0], spread),
        interval_b=_clipped(aucs[1], covariance[1, 1], spread),
        difference=difference, difference_interval=(difference - spread * se, difference + spread * se),
        z=float(z), p_value=float(2 * norm.sf(abs(z))))


def _clipped(auc: float, variance: float, spread: float) -> tuple[float, float]:
    half = spread * math.sqrt(max(float(variance), 0.0))
    return max(0.0, float(auc) - half), min(1.0, float(auc) + half)


def hanley_mcneil_interval(auc: float, n_pos: int, n_neg: int, *,
                           level: float = LEVEL) -> tuple[float, float]:
    """The normal interval of an AUC from its standard error (Hanley & McNeil 1982, eq. 2),
    clipped to 0-1. ``n_pos`` / ``n_neg``: answers in each class."""
    if n_pos < 1 or n_neg < 1:
        raise ValueError("an AUC interval needs answers of both classes")
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    variance = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc)
                + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    half = float(norm.ppf(0.5 + level / 2)) * math.sqrt(max(variance, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def class_counts(model: Any) -> tuple[int, int]:
    """Accepted and not-accepted answers the model was fitted on: stored since issue 38, else
    read off the in-sample ROC, whose rates step by one answer of each class."""
    if model.n_accepted and model.n_not_accepted:
        return int(model.n_accepted), int(model.n_not_accepted)
    return _grid(model.roc_tpr, model.labelled), _grid(model.roc_fpr, model.labelled)


def _grid(rates: Any, most: int) -> int:
    """The smallest count n for which every rate is a whole number of answers out of n."""
    for n in range(1, most + 1):
        if all(abs(rate * n - round(rate * n)) < 1e-6 for rate in rates):
            return n
    return 0


def shown(auc: float, interval: tuple[float, float]) -> str:
    return f"{auc:.2f} (95% interval {interval[0]:.2f}-{interval[1]:.2f})"


def method(model: Any) -> str:
    """How ``compare_with_length`` made its intervals for ``model``."""
    return PAIRED_METHOD if _paired_scores(model) is not None else METHOD


def _paired_scores(model: Any) -> tuple[Any, Any, Any] | None:
    """(accepted, the rule's out-of-fold scores, length's) when the model stores them."""
    length = next((entry for entry in getattr(model, "compared", ()) if entry.name == "length"), None)
    rule, accepted = getattr(model, "out_of_fold", ()), getattr(model, "out_of_fold_accepted", ())
    if length is None or not rule or len(rule) != len(accepted) or len(length.out_of_fold) != len(rule):
        return None
    return accepted, rule, length.out_of_fold


def compare_with_length(model: Any) -> str:
    """The cross-validated AUC of the rule and of answer length alone, each with its interval,
    and what they say. With stored out-of-fold scores the comparison is paired (DeLong): "better
    than answer length" or "length alone does better" when the difference's interval leaves out
    0, else "mostly answer length" when length's AUC lies inside the rule's interval, else that
    these answers cannot tell how much the rule adds. Without them, Hanley-McNeil intervals
    compared unpaired. Empty without a cross-validated AUC or class counts."""
    accepted, others = class_counts(model)
    if model.auc_cv is None or not accepted or not others:
        return ""
    paired = _paired_scores(model)
    if paired is not None:
        return _paired_verdict(delong_paired(*paired))
    rule = hanley_mcneil_interval(model.auc_cv, accepted, others)
    said = f"cross-validated AUC {shown(model.auc_cv, rule)}"
    length = next((entry for entry in model.compared if entry.name == "length"), None)
    if length is None or length.auc_cv is None:
        return said
    alone = hanley_mcneil_interval(length.auc_cv, accepted, others)
    said += f"; answer length alone {shown(length.auc_cv, alone)}"
    if rule[0] <= length.auc_cv <= rule[1]:
        return said + " - the rule is mostly answer length (length alone lies inside its interval)"
    if rule[0] > alone[1]:
        return said + " - the rule does better than answer length alone (the intervals do not overlap)"
    if alone[0] > rule[1]:
        return said + " - answer length alone does better than the rule (the intervals do not overlap)"
    return said + " - these answers cannot tell how much the rule adds to answer length"


def _paired_verdict(found: PairedAUC) -> str:
    low, high = found.difference_interval
    said = (f"cross-validated AUC {shown(found.auc_a, found.interval_a)}; answer length alone "
            f"{shown(found.auc_b, found.interval_b)}; difference {found.difference:+.2f} "
            f"(95% interval {low:+.2f} to {high:+.2f}, paired p {found.p_value:.2g})")
    if low > 0:
        return said + " - the rule does better than answer length alone"
    if high < 0:
        return said + " - answer length alone does better than the rule"
    if found.interval_a[0] <= found.auc_b <= found.interval_a[1]:
        return said + " - the rule is mostly answer length (the difference's interval holds 0)"
    return said + " - these answers cannot tell how much the rule adds to answer length"
