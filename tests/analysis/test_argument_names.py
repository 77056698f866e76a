"""scikit-learn's argument names across the statistics, old names kept one release (issue 12)."""

import pytest

from convoscope import analysis as A

Y_TRUE = [1, 0, 1, 1, 0, 0, 1, 0]
Y_PRED = [1, 0, 0, 1, 0, 1, 1, 0]
Y_SCORE = [0.9, 0.2, 0.4, 0.8, 0.3, 0.6, 0.7, 0.1]


@pytest.mark.parametrize("function", [A.precision, A.recall, A.f1, A.accuracy, A.binary_scores,
                                      A.confusion_counts])
def test_classification_takes_y_true_and_y_pred(function):
    expected = function(Y_TRUE, Y_PRED)
    assert function(y_true=Y_TRUE, y_pred=Y_PRED) == expected
    with pytest.warns(DeprecationWarning, match="reference= is now y_true="):
        assert function(reference=Y_TRUE, predicted=Y_PRED) == expected


@pytest.mark.parametrize("function", [A.roc_auc, A.roc_curve, A.equal_error_rate])
def test_detection_takes_y_score(function):
    expected = function(Y_TRUE, Y_SCORE)
    with pytest.warns(DeprecationWarning, match="scores= is now y_score="):
        old = function(Y_TRUE, scores=Y_SCORE)
    assert repr(old) == repr(expected) == repr(function(y_true=Y_TRUE, y_score=Y_SCORE))


def test_old_and_new_name_together_is_an_error():
    with pytest.raises(TypeError, match="give y_true= only"):
        A.f1(reference=Y_TRUE, y_true=Y_TRUE, y_pred=Y_PRED)
