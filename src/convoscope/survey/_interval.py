"""Intervals for the AUC a decision rule reports, and what they say against answer length
(issue 38, observation 4).

A saved model keeps its cross-validated AUCs and its class counts, not its out-of-fold scores,
so the interval is the one the AUC and the counts alone determine: Hanley and McNeil (1982),
whose standard error assumes the score distributions of the two classes relate as exponentials.
On binormal scores it agrees with a percentile bootstrap of the AUC to about 0.02 at our sizes
(tests/survey/test_survey_auc_interval.py). Two AUCs measured on the same answers are
correlated; comparing two unpaired intervals is conservative, so "better than length" is only
said when they do not overlap at all.
"""

from __future__ import annotations

import math
from typing import Any

from scipy.stats import norm

LEVEL = 0.95
METHOD = ("Hanley-McNeil, from the AUC and the class counts (the out-of-fold scores are not "
          "stored, and the inputs were chosen on the same answers: an upper bound)")


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


def compare_with_length(model: Any) -> str:
    """The cross-validated AUC of the rule and of answer length alone, each with its interval,
    and what they say: "mostly answer length" when length's AUC lies inside the rule's interval
    (these answers cannot tell the two apart), "better than answer length" when the intervals do
    not overlap, and that they cannot tell how much the rule adds otherwise. Empty without a
    cross-validated AUC or class counts."""
    accepted, others = class_counts(model)
    if model.auc_cv is None or not accepted or not others:
        return ""
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
