"""Majority vote with its tie rules; mean and median pooling ignoring missing ratings."""

import numpy as np
import pytest
from analysis_data import rating_matrix
from scipy import stats

from convoscope.analysis import majority_vote, mean_pool, median_pool

nan = np.nan


def test_majority_vote_is_the_mode_where_there_is_one(seed):
    matrix = rating_matrix(seed, raters=5, items=40, missing=0.1)
    votes = majority_vote(matrix, ties="missing")
    for item in range(matrix.shape[1]):
        column = matrix[:, item][~np.isnan(matrix[:, item])]
        values, counts = np.unique(column, return_counts=True)
        if (counts == counts.max()).sum() == 1:
            assert votes[item] == values[np.argmax(counts)]
            assert votes[item] == stats.mode(column).mode
        else:
            assert np.isnan(votes[item])


def test_tie_rules():
    matrix = [[1, 2, 3, nan], [2, 2, 5, nan], [nan, nan, 4, nan]]
    np.testing.assert_array_equal(majority_vote(matrix, ties="low"), [1, 2, 3, nan])
    np.testing.assert_array_equal(majority_vote(matrix, ties="high"), [2, 2, 5, nan])
    np.testing.assert_array_equal(majority_vote(matrix, ties="missing"), [nan, 2, nan, nan])


def test_labels_follow_the_given_scale_order():
    matrix = [["good", "bad", None], ["bad", "bad", None]]
    assert list(majority_vote(matrix)) == ["bad", "bad", None]  # alphabetical by default
    scale = ["good", "okay", "bad"]
    assert list(majority_vote(matrix, labels=scale)) == ["good", "bad", None]
    assert list(majority_vote(matrix, labels=scale, ties="high")) == ["bad", "bad", None]


def test_majority_vote_errors():
    with pytest.raises(ValueError, match="ties must be"):
        majority_vote([[1, 2]], ties="random")
    with pytest.raises(ValueError, match="value 'great' is not in labels"):
        majority_vote([["great"]], labels=["good", "bad"])


def test_mean_and_median_ignore_missing(seed):
    matrix = rating_matrix(seed, raters=4, items=30, missing=0.3)
    matrix[:, 0] = nan
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected_mean, expected_median = np.nanmean(matrix, axis=0), np.nanmedian(matrix, axis=0)
    np.testing.assert_allclose(mean_pool(matrix), expected_mean)
    np.testing.assert_allclose(median_pool(matrix), expected_median)
    assert np.isnan(mean_pool(matrix)[0])


def test_min_ratings():
    matrix = [[1, 2, nan], [3, nan, nan]]
    np.testing.assert_array_equal(mean_pool(matrix, min_ratings=2), [2, nan, nan])
    np.testing.assert_array_equal(median_pool(matrix, min_ratings=1), [2, 2, nan])
    with pytest.raises(ValueError, match="min_ratings must be at least 1"):
        mean_pool(matrix, min_ratings=0)
    with pytest.raises(ValueError, match="needs numbers"):
        mean_pool([["good", "bad"]])
