"""Correlations against scipy, with missing values, degenerate inputs and the system level."""

import numpy as np
import pytest
from analysis_data import likert_pair
from scipy import stats

from convoscope.analysis import (
    kendall,
    kendall_test,
    pearson,
    pearson_test,
    spearman,
    spearman_test,
    system_correlation,
)


def _complete(x, y):
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_point_estimates_match_scipy(seed, missing):
    human, judge = likert_pair(seed, missing=missing)
    x, y = _complete(human, judge)
    assert pearson(human, judge) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert spearman(human, judge) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert kendall(human, judge) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_tests_match_scipy_pvalues(seed, alternative):
    human, judge = likert_pair(seed, n=25, missing=0.1)
    x, y = _complete(human, judge)
    for ours, theirs in ((pearson_test, stats.pearsonr), (spearman_test, stats.spearmanr),
                         (kendall_test, stats.kendalltau)):
        result = ours(human, judge, alternative=alternative)
        reference = theirs(x, y, alternative=alternative)
        assert result.statistic == pytest.approx(reference.statistic, abs=1e-12)
        assert result.pvalue == pytest.approx(reference.pvalue, rel=1e-9)
        assert result.n == len(x)


@pytest.mark.parametrize("y", [[1, 2, 3, 4, 5], [5, 4, 3, 2, 1], [1, 2, 3, 5, 4]])
def test_pvalues_of_perfect_and_near_perfect_rankings(y):
    x = [1, 2, 3, 4, 5]
    for alternative in ("two-sided", "greater", "less"):
        for ours, theirs in ((pearson_test, stats.pearsonr), (spearman_test, stats.spearmanr)):
            result, reference = ours(x, y, alternative=alternative), theirs(x, y, alternative=alternative)
            assert result.statistic == pytest.approx(reference.statistic, abs=1e-12)
            assert result.pvalue == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)


def test_kendall_exact_pvalue_without_ties():
    # No ties and n <= 33: scipy's exact null distribution, which we pass through.
    x = np.arange(10.0)
    y = np.array([0, 2, 1, 3, 5, 4, 6, 8, 7, 9.0])
    assert kendall_test(x, y).pvalue == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue)


def test_textbook_values():
    assert pearson([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    assert kendall([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)


def test_symmetry_and_rank_invariance(seed):
    human, judge = likert_pair(seed, missing=0.1)
    for statistic in (pearson, spearman, kendall):
        assert statistic(human, judge) == pytest.approx(statistic(judge, human), abs=1e-12)
    # Rank correlations ignore any increasing transform of the scores.
    assert spearman(np.exp(human), judge) == pytest.approx(spearman(human, judge), abs=1e-12)
    assert kendall(human**3, judge) == pytest.approx(kendall(human, judge), abs=1e-12)


def test_accepts_none_as_missing_and_lists():
    assert pearson([1, None, 3, 4, 5], [2, 9, 3, 5, 4]) == pytest.approx(pearson([1, 3, 4, 5], [2, 3, 5, 4]))


def test_constant_input_is_an_error_naming_the_side():
    with pytest.raises(ValueError, match=r"spearman: x is constant"):
        spearman([3, 3, 3, 3], [1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"pearson: y is constant"):
        pearson([1, 2, 3, 4], [2, 2, 2, 2])


def test_too_few_pairs_and_bad_input():
    with pytest.raises(ValueError, match="at least 3 items rated in both"):
        kendall([1, 2, np.nan], [1, 2, 3])
    with pytest.raises(ValueError, match="different numbers of items"):
        pearson([1, 2, 3], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="needs numbers, found the label 'good'"):
        spearman(["good", "bad", "good"], [1, 2, 3])
    with pytest.raises(ValueError, match="1-D"):
        pearson([[1, 2], [3, 4]], [1, 2])


def test_system_correlation_correlates_system_means():
    systems = np.array(["a", "a", "b", "b", "c", "c", "d", "d"])
    metric = np.array([1, 2, 2, 3, 5, 6, 9, np.nan])
    human = np.array([1, 1, 3, 3, 4, 4, 5, 5.0])
    result = system_correlation(metric, human, systems, method="pearson")
    # System d only has its complete item (metric 9, human 5); means: a 1.5/1, b 2.5/3, c 5.5/4, d 9/5.
    expected = stats.pearsonr([1.5, 2.5, 5.5, 9.0], [1.0, 3.0, 4.0, 5.0])
    assert result.n == 4
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.pvalue == pytest.approx(expected.pvalue)


def test_system_correlation_needs_three_systems():
    with pytest.raises(ValueError, match="at least 3 systems"):
        system_correlation([1, 2, 3, 4], [1, 2, 3, 4], ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="method must be one of"):
        system_correlation([1, 2, 3], [1, 2, 3], ["a", "b", "c"], method="cosine")
