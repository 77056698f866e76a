"""Binary scores against scikit-learn, McNemar against statsmodels and a published example."""

import numpy as np
import pytest
from sklearn import metrics
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from convoscope.analysis import (
    accuracy,
    binary_scores,
    confusion_counts,
    f1,
    mcnemar,
    precision,
    recall,
)


def _labels(seed, n=80, agreement=0.7):
    rng = np.random.default_rng(seed)
    reference = rng.integers(0, 2, n)
    predicted = np.where(rng.random(n) < agreement, reference, 1 - reference)
    return reference, predicted


def test_scores_match_sklearn_for_both_classes(seed):
    reference, predicted = _labels(seed)
    scores = binary_scores(reference, predicted)
    for label, suffix in ((1, "pos"), (0, "neg")):
        assert getattr(scores, f"precision_{suffix}") == pytest.approx(
            metrics.precision_score(reference, predicted, pos_label=label))
        assert getattr(scores, f"recall_{suffix}") == pytest.approx(
            metrics.recall_score(reference, predicted, pos_label=label))
        assert getattr(scores, f"f1_{suffix}") == pytest.approx(
            metrics.f1_score(reference, predicted, pos_label=label))
    assert scores.accuracy == pytest.approx(metrics.accuracy_score(reference, predicted))
    tn, fp, fn, tp = metrics.confusion_matrix(reference, predicted).ravel()
    assert scores.confusion == confusion_counts(reference, predicted)
    assert (scores.confusion.true_positive, scores.confusion.false_positive,
            scores.confusion.false_negative, scores.confusion.true_negative) == (tp, fp, fn, tn)


def test_single_functions_and_text_labels(seed):
    reference, predicted = _labels(seed)
    names = np.array(["no issue", "issue"], dtype=object)
    ref_text, pred_text = names[reference], names[predicted]
    assert f1(ref_text, pred_text, positive="issue") == pytest.approx(f1(reference, predicted))
    assert precision(ref_text, pred_text, positive="no issue") == pytest.approx(
        metrics.precision_score(reference, predicted, pos_label=0))
    assert recall(reference, predicted) == pytest.approx(metrics.recall_score(reference, predicted))
    assert accuracy(ref_text, pred_text) == pytest.approx(metrics.accuracy_score(reference, predicted))


def test_missing_pairs_are_dropped():
    assert accuracy([1, 0, None, 1], [1, 1, 0, np.nan]) == 0.5
    assert confusion_counts([1, 0, None], [1, 0, 1]).n == 2


def test_undefined_ratios():
    # The judge never says "issue": precision 0/0, but F1 = 2TP / (2TP + FP + FN) = 0 is defined.
    reference, predicted = [1, 0, 0, 1], [0, 0, 0, 0]
    assert f1(reference, predicted) == 0.0
    with pytest.raises(ValueError, match="precision: no item is predicted 1"):
        precision(reference, predicted)
    assert precision(reference, predicted, zero_division=0.0) == 0.0
    assert metrics.precision_score(reference, predicted, zero_division=0.0) == 0.0
    with pytest.raises(ValueError, match="neither reference nor prediction contains 1"):
        f1([0, 0], [0, 0])
    scores = binary_scores([0, 0, 0], [0, 0, 0])
    assert scores.f1_neg == 1.0 and scores.f1_pos is None
    assert set(scores.undefined) == {"precision_pos", "recall_pos", "f1_pos"}


def test_more_than_two_labels_is_an_error():
    with pytest.raises(ValueError, match=r"binary labels expected.*positive="):
        f1([1, 2, 3], [1, 2, 2])
    with pytest.raises(ValueError, match="binary labels expected"):
        f1(["yes", "no"], ["yes", "no"])  # positive=1 is not one of them: name it


def test_mcnemar_wikipedia_example():
    # Wikipedia, "McNemar's test": discordant counts b = 121 and c = 59 give chi-square
    # (121 - 59)^2 / 180 = 21.35 without continuity correction.
    a_correct = [1] * 101 + [1] * 121 + [0] * 59 + [0] * 33
    b_correct = [1] * 101 + [0] * 121 + [1] * 59 + [0] * 33
    result = mcnemar(a_correct, b_correct, correction=False)
    assert (result.only_a, result.only_b, result.exact) == (121, 59, False)
    assert round(result.statistic, 2) == 21.36  # 21.3556
    reference = sm_mcnemar([[101, 121], [59, 33]], exact=False, correction=False)
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.pvalue == pytest.approx(reference.pvalue)


@pytest.mark.parametrize("exact", [True, False, None])
def test_mcnemar_matches_statsmodels(seed, exact):
    rng = np.random.default_rng(seed)
    size = 40 if exact is None else 120  # None: fewer than 25 discordant pairs -> exact
    reference = rng.integers(0, 2, size)
    a = np.where(rng.random(size) < 0.8, reference, 1 - reference) == reference
    b = np.where(rng.random(size) < 0.65, reference, 1 - reference) == reference
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    ours = mcnemar(a, b, exact=exact)
    use_exact = exact if exact is not None else (table[0][1] + table[1][0]) < 25
    theirs = sm_mcnemar(table, exact=use_exact, correction=True)
    assert ours.exact == use_exact
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.pvalue == pytest.approx(theirs.pvalue)


def test_mcnemar_degenerate_and_errors():
    for exact in (None, True, False):
        result = mcnemar([1, 0, 1], [1, 0, 1], exact=exact)
        assert (result.statistic, result.pvalue, result.only_a, result.only_b) == (0.0, 1.0, 0, 0)
    # Balanced discordance follows statsmodels (issue 15 reversed the old clamp at 0): the
    # corrected statistic is (|b - c| - 1)^2 / (b + c) = 1/60 here.
    balanced = mcnemar([1] * 30 + [0] * 30, [0] * 30 + [1] * 30, exact=False)
    theirs = sm_mcnemar([[0, 30], [30, 0]], exact=False, correction=True)
    assert balanced.statistic == pytest.approx(theirs.statistic) == pytest.approx(1 / 60)
    assert balanced.pvalue == pytest.approx(theirs.pvalue)
    with pytest.raises(ValueError, match="must be booleans"):
        mcnemar([1, 2, 0], [1, 0, 0])
    with pytest.raises(ValueError, match="must be booleans"):
        mcnemar(["yes", "no"], [1, 0])
