"""Agreement intervals by reweighting per-item contributions (issue 39, observation 9): a resample
of items is a weight per item, and the mean pairwise Cohen's kappa of every resample comes from one
matrix product per block of rater pairs. Pinned exactly to the statistic recomputed on the
resampled items (the same resample indices give the same value to 1e-12), and the intervals with
the same seeds equal those of the per-pair computation they replace."""

from itertools import combinations

import numpy as np
import pytest

from convoscope.analysis import pairwise_cohen_kappa
from convoscope.analysis._agreement_ci import (
    _kappa_rows,
    _pairwise_kappa_rows,
    _patterns,
    pairwise_cohen_kappa_ci,
)
from convoscope.analysis._validate import category_codes


def _ratings(raters, items, seed, missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, items)
    matrix = np.clip(truth + rng.integers(-1, 2, (raters, items)), 1, 5).astype(float)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    return matrix


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_a_reweighted_resample_equals_the_statistic_recomputed_on_the_resampled_items(weights):
    matrix = _ratings(6, 300, seed=3)
    labels = [1.0, 2.0, 3.0, 4.0, 5.0]
    codes, _ = category_codes(matrix, name="test", ndim=2, labels=labels)
    items = codes.T  # every item its own pattern: weights are the times each item is drawn
    pairs = list(combinations(range(len(matrix)), 2))
    rng = np.random.default_rng(7)
    for _ in range(20):
        drawn = rng.integers(0, matrix.shape[1], matrix.shape[1])
        weight = np.bincount(drawn, minlength=matrix.shape[1]).astype(float)[None, :]
        reweighted = _pairwise_kappa_rows(weight, items, pairs, len(labels), weights)[0]
        recomputed = pairwise_cohen_kappa(matrix[:, drawn], weights=weights, labels=labels).mean
        assert reweighted == pytest.approx(recomputed, abs=1e-12, rel=0)


def test_the_intervals_equal_the_per_pair_computation_they_replace_with_the_same_seeds():
    matrix = _ratings(8, 400, seed=5)
    labels = [1.0, 2.0, 3.0, 4.0, 5.0]
    result = pairwise_cohen_kappa_ci(matrix, weights="linear", labels=labels, n_resamples=300, seed=4)
    codes, _ = category_codes(matrix, name="test", ndim=2, labels=labels)
    keep = (codes >= 0).sum(axis=0) >= 2
    patterns, counts = _patterns(codes, keep)
    rng = np.random.default_rng(4)  # the draws pairwise_cohen_kappa_ci makes with seed 4
    total = int(counts.sum())
    draws = np.vstack([counts[None, :], rng.multinomial(total, counts / total, size=300)]).astype(float)
    per_pair = []
    for i, j in combinations(range(len(matrix)), 2):  # the code this replaces, pair by pair
        shared = (patterns[:, i] >= 0) & (patterns[:, j] >= 0)
        per_pair.append(_kappa_rows(draws[:, shared], patterns[shared, i], patterns[shared, j], 5, "linear"))
    rows = np.nanmean(np.vstack(per_pair), axis=0)
    fast = _pairwise_kappa_rows(draws, patterns, list(combinations(range(len(matrix)), 2)), 5, "linear")
    np.testing.assert_allclose(fast, rows, rtol=0, atol=1e-12)
    assert rows[0] == pytest.approx(result.estimate, abs=1e-12)  # the observed weights: the statistic
    assert (result.low, result.high) == pytest.approx(tuple(np.quantile(rows[1:], [0.025, 0.975])), abs=1e-12)


def test_pairs_without_a_defined_kappa_are_left_out_of_the_mean_as_before():
    matrix = _ratings(4, 60, seed=9)
    matrix[3] = 2.0  # one rater who always says 2: kappa with anyone may be undefined in a resample
    result = pairwise_cohen_kappa_ci(matrix, labels=[1.0, 2.0, 3.0, 4.0, 5.0], n_resamples=200, seed=1)
    assert result.low <= result.estimate <= result.high
