"""ROC, AUC, equal error rate and thresholds against scikit-learn."""

import numpy as np
import pytest
from scipy.interpolate import interp1d
from scipy.optimize import brentq
from sklearn import metrics

from convoscope.analysis import equal_error_rate, roc_auc, roc_curve, threshold_at


def _scored(seed, n=200, ties=False):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    scores = labels * 0.8 + rng.normal(size=n)
    return labels, np.round(scores, 1) if ties else scores


@pytest.mark.parametrize("ties", [False, True])
def test_roc_curve_and_auc_match_sklearn(seed, ties):
    labels, scores = _scored(seed, ties=ties)
    fpr, tpr, thresholds = roc_curve(labels, scores)
    ref_fpr, ref_tpr, ref_thresholds = metrics.roc_curve(labels, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr)
    np.testing.assert_allclose(tpr, ref_tpr)
    np.testing.assert_allclose(thresholds[1:], ref_thresholds[1:])
    assert thresholds[0] == np.inf
    assert roc_auc(labels, scores) == pytest.approx(metrics.roc_auc_score(labels, scores), abs=1e-12)


def test_text_labels_positive_and_missing():
    labels = np.array(["ok", "gibberish", "ok", "gibberish", None, "ok"], dtype=object)
    scores = np.array([0.1, 0.9, 0.4, 0.35, 0.5, np.nan])
    keep = [0, 1, 2, 3]
    expected = metrics.roc_auc_score((labels[keep] == "gibberish").astype(int), scores[keep])
    assert roc_auc(labels, scores, positive="gibberish") == pytest.approx(expected)


def test_equal_error_rate_matches_the_interpolation_recipe(seed):
    labels, scores = _scored(seed)
    fpr, tpr, thresholds = metrics.roc_curve(labels, scores)
    # The usual recipe: where the interpolated ROC curve meets fpr = 1 - tpr.
    expected = brentq(lambda x: 1.0 - x - interp1d(fpr, tpr)(x), 0.0, 1.0)
    rate, threshold = equal_error_rate(labels, scores)
    assert rate == pytest.approx(expected, abs=1e-9)
    # At the returned threshold the two error rates are the closest available to each other.
    flagged = scores >= threshold
    false_positive = np.mean(flagged[labels == 0])
    false_negative = np.mean(~flagged[labels == 1])
    gaps = [abs(np.mean(scores[labels == 0] >= t) - np.mean(scores[labels == 1] < t)) for t in scores]
    assert abs(false_positive - false_negative) == pytest.approx(min(gaps))


def test_equal_error_rate_of_separable_scores_is_zero():
    rate, threshold = equal_error_rate([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9])
    assert rate == 0.0 and threshold == 0.7


def test_threshold_at_respects_the_false_positive_budget(seed):
    labels, scores = _scored(seed)
    for budget in (0.0, 0.05, 0.2, 1.0):
        point = threshold_at(labels, scores, fpr=budget)
        flagged = scores >= point.threshold
        assert np.mean(flagged[labels == 0]) == pytest.approx(point.fpr) and point.fpr <= budget
        assert np.mean(flagged[labels == 1]) == pytest.approx(point.tpr)
        # Any lower threshold would exceed the budget.
        lower = scores[scores < point.threshold]
        if lower.size:
            assert np.mean(scores[labels == 0] >= lower.max()) > budget


def test_threshold_at_flags_nothing_when_even_the_top_score_is_a_false_alarm():
    point = threshold_at([0, 1, 1], [0.9, 0.5, 0.4], fpr=0.0)
    assert point == (np.inf, 0.0, 0.0)


def test_errors():
    with pytest.raises(ValueError, match="y_true has no negative items"):
        roc_auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="y_true has no positive items"):
        roc_curve(["a", "a"], [0.1, 0.2], positive="b")
    with pytest.raises(ValueError, match="y_true must be binary"):
        roc_auc([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="fpr must be between 0 and 1"):
        threshold_at([0, 1], [0.1, 0.2], fpr=5)
    with pytest.raises(ValueError, match="scores: needs numbers"):
        roc_auc([0, 1], ["low", "high"])
