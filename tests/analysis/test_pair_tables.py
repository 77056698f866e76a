"""Pairwise statistics from every pair's contingency table (one matrix product; issue 39,
observation 9), pinned to scipy and scikit-learn pair by pair, and the single-precision resamples
of the pairwise kappa pinned to the double-precision ones and to recomputation."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from convoscope.analysis import _agreement_ci, pairwise_cohen_kappa, pairwise_correlation
from convoscope.analysis._agreement import _pairs_one_by_one
from convoscope.analysis._validate import category_codes


def _ratings(raters, items, seed, missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, items)
    matrix = np.clip(truth + rng.integers(-1, 2, (raters, items)), 1, 5).astype(float)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    return matrix


def test_pairwise_spearman_with_missing_ratings_equals_scipy_pair_by_pair():
    matrix = _ratings(7, 120, seed=11)
    matrix[6, :] = np.where(np.isnan(matrix[6]), np.nan, 3.0)  # a constant rater: undefined pairs
    matrix[5, 3:] = np.nan  # three shared items at most: defined only if neither side is constant
    expected = []
    for i, j in combinations(range(len(matrix)), 2):
        both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
        a, b = matrix[i, both], matrix[j, both]
        if both.sum() >= 3 and np.ptp(a) > 0 and np.ptp(b) > 0:
            expected.append(stats.spearmanr(a, b).statistic)
    assert pairwise_correlation(matrix) == pytest.approx(np.mean(expected), abs=1e-12, rel=0)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_pairwise_kappa_from_tables_equals_sklearn_and_the_pair_by_pair_path(weights):
    matrix = _ratings(9, 150, seed=2)
    matrix[8, :148] = np.nan  # two shared items at most
    matrix[7] = np.where(np.isnan(matrix[7]), np.nan, 4.0)
    labels = [1.0, 2.0, 3.0, 4.0, 5.0]
    result = pairwise_cohen_kappa(matrix, weights=weights, labels=labels)
    pairs, skipped = _pairs_one_by_one(matrix, weights, labels)
    assert [(p.first, p.second, p.n_items) for p in result.pairs] == [(p.first, p.second, p.n_items)
                                                                        for p in pairs]
    assert list(result.skipped) == skipped
    for pair in result.pairs:
        both = ~np.isnan(matrix[pair.first]) & ~np.isnan(matrix[pair.second])
        reference = cohen_kappa_score(matrix[pair.first, both], matrix[pair.second, both],
                                      weights=weights, labels=labels)
        assert pair.kappa == pytest.approx(reference, abs=1e-12, rel=0)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_single_precision_resamples_equal_double_precision_and_recomputation(weights, monkeypatch):
    matrix = _ratings(6, 400, seed=8)
    labels = [1.0, 2.0, 3.0, 4.0, 5.0]
    codes, _ = category_codes(matrix, name="test", ndim=2, labels=labels)
    pairs = list(combinations(range(len(matrix)), 2))
    rng = np.random.default_rng(5)
    drawn = [rng.integers(0, 400, 400) for _ in range(30)]
    weight = np.array([np.bincount(d, minlength=400) for d in drawn], dtype=float)
    single = _agreement_ci._pairwise_kappa_rows(weight, codes.T, pairs, 5, weights)
    monkeypatch.setattr(_agreement_ci, "_EXACT_SINGLE", 0)  # every sum "too large": float64
    double = _agreement_ci._pairwise_kappa_rows(weight, codes.T, pairs, 5, weights)
    np.testing.assert_array_equal(single, double)
    for row, d in enumerate(drawn):
        recomputed = pairwise_cohen_kappa(matrix[:, d], weights=weights, labels=labels).mean
        assert single[row] == pytest.approx(recomputed, abs=1e-12, rel=0)


def test_the_same_seeded_draw_is_made_once_and_handed_out_read_only():
    counts = np.array([3, 1, 4, 1, 5])
    first = _agreement_ci._draws(counts, 50, 7)
    assert _agreement_ci._draws(counts, 50, 7) is first  # alpha, Fleiss and kappa share it
    assert not first.flags.writeable
    fresh = np.random.default_rng(7).multinomial(14, counts / 14, size=50)
    np.testing.assert_array_equal(first[1:], fresh)
    np.testing.assert_array_equal(first[0], counts)
    assert _agreement_ci._draws(counts, 50, 8) is not first
    assert _agreement_ci._draws(counts + 1, 50, 7) is not first
    assert _agreement_ci._draws(counts, 50, None) is not _agreement_ci._draws(counts, 50, None)
