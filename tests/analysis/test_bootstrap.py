"""Bootstrap intervals: the vectorised paths equal the plain loop, the percentiles agree with
scipy.stats.bootstrap, and the options and degenerate cases behave as documented."""

import numpy as np
import pytest
from analysis_data import likert_pair
from scipy import stats

from convoscope.analysis import (
    bootstrap_ci,
    kendall,
    krippendorff_alpha,
    paired_bootstrap_diff,
    pearson,
    spearman,
)


def _as_loop(statistic):
    # A wrapper is not recognised as a fast-path statistic, so it takes the per-resample loop.
    return lambda *arrays: statistic(*arrays)


@pytest.mark.parametrize("statistic", [pearson, spearman, kendall], ids=lambda f: f.__name__)
def test_vectorised_path_equals_the_loop(seed, statistic):
    human, judge = likert_pair(seed, n=50, missing=0.1)
    fast = bootstrap_ci(statistic, judge, human, n_resamples=300, seed=seed)
    slow = bootstrap_ci(_as_loop(statistic), judge, human, n_resamples=300, seed=seed)
    assert fast.estimate == pytest.approx(statistic(judge, human))
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)
    assert fast.n_undefined == slow.n_undefined
    assert fast.n_items == int((~np.isnan(human) & ~np.isnan(judge)).sum())


def test_undefined_resamples_are_counted_the_same_way():
    # Five items, two distinct values: some resamples draw a single value and are undefined.
    x = np.array([1, 1, 1, 2, 2.0])
    y = np.array([1, 2, 3, 4, 5.0])
    for statistic in (pearson, spearman, kendall):
        fast = bootstrap_ci(statistic, x, y, n_resamples=400, seed=3)
        slow = bootstrap_ci(_as_loop(statistic), x, y, n_resamples=400, seed=3)
        assert fast.n_undefined == slow.n_undefined > 0
        assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_paired_difference_fast_equals_loop(seed):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=80)
    metric_a = human + rng.normal(scale=0.5, size=80)
    metric_b = human + rng.normal(scale=1.5, size=80)
    for statistic in (spearman, kendall, pearson):
        fast = paired_bootstrap_diff(statistic, human, metric_a, metric_b, n_resamples=200, seed=seed)
        slow = paired_bootstrap_diff(_as_loop(statistic), human, metric_a, metric_b,
                                     n_resamples=200, seed=seed)
        assert fast.estimate == pytest.approx(statistic(human, metric_a) - statistic(human, metric_b))
        assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)


def test_paired_difference_detects_the_better_metric():
    rng = np.random.default_rng(7)
    human = rng.normal(size=300)
    better = human + rng.normal(scale=0.3, size=300)
    worse = human + rng.normal(scale=2.0, size=300)
    result = paired_bootstrap_diff(spearman, human, better, worse, seed=0)
    assert result.low > 0  # the interval excludes 0: a significant improvement, as in seed 000 Table 5
    same = paired_bootstrap_diff(spearman, human, better, better, n_resamples=200, seed=0)
    assert same.estimate == same.low == same.high == 0.0


@pytest.mark.parametrize("statistic", [pearson, spearman], ids=lambda f: f.__name__)
def test_percentiles_agree_with_scipy_bootstrap(statistic):
    rng = np.random.default_rng(11)
    x = rng.normal(size=120)
    y = 0.6 * x + rng.normal(size=120)
    ours = bootstrap_ci(statistic, x, y, n_resamples=2000, seed=1)
    theirs = stats.bootstrap((x, y), statistic, paired=True, vectorized=False, n_resamples=2000,
                             method="percentile", random_state=1).confidence_interval
    # Different random draws, so the intervals agree only up to Monte Carlo error.
    assert ours.low == pytest.approx(theirs.low, abs=0.04)
    assert ours.high == pytest.approx(theirs.high, abs=0.04)


def test_same_seed_same_interval_and_confidence_widens():
    human, judge = likert_pair(0, n=60)
    first = bootstrap_ci(spearman, judge, human, seed=5, n_resamples=500)
    again = bootstrap_ci(spearman, judge, human, seed=5, n_resamples=500)
    assert first == again
    wide = bootstrap_ci(spearman, judge, human, seed=5, n_resamples=500, confidence=0.99)
    assert wide.low <= first.low and wide.high >= first.high
    assert first.contains(first.estimate)


def test_generic_statistic_on_a_rater_matrix_resamples_items():
    rng = np.random.default_rng(2)
    truth = rng.integers(1, 6, 60)
    matrix = np.clip(truth + rng.integers(-1, 2, (3, 60)), 1, 5).astype(float)
    matrix[0, :5] = np.nan  # NaN inside a matrix is a missing rating, not a dropped item
    result = bootstrap_ci(lambda m: krippendorff_alpha(m, level="ordinal"), matrix, n_resamples=200)
    assert result.n_items == 60
    assert result.estimate == pytest.approx(krippendorff_alpha(matrix, level="ordinal"))
    assert result.low < result.estimate < result.high


def test_errors_state_the_rule():
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        bootstrap_ci(spearman, [1, 2, 3], [1, 2, 3], n_resamples=0)
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        bootstrap_ci(spearman, [1, 2, 3], [1, 2, 3], confidence=95)
    with pytest.raises(ValueError, match="different numbers of items"):
        bootstrap_ci(spearman, [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="x is constant"):
        bootstrap_ci(spearman, [2, 2, 2, 2], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="undefined on .* resamples"):
        # Each input has one odd item; a resample missing either is constant (about 59% of them).
        bootstrap_ci(spearman, [2, 1, 1, 1, 1, 1, 1, 1], [1, 2, 1, 1, 1, 1, 1, 1], n_resamples=400)


def test_kendall_above_the_quadratic_limit_uses_the_n_log_n_path(monkeypatch):
    # Issue 15: above the limit the bootstrap no longer loops over scipy; Knight's O(n log n)
    # algorithm must give the same interval as the quadratic path.
    from convoscope.analysis import _resample

    human, judge = likert_pair(5, n=40)
    fast = bootstrap_ci(kendall, judge, human, n_resamples=100, seed=2)
    monkeypatch.setattr(_resample, "KENDALL_FAST_MAX_ITEMS", 10)
    assert _resample.kendall_batch(judge, human).__qualname__.startswith("_kendall_tree_batch")
    tree = bootstrap_ci(kendall, judge, human, n_resamples=100, seed=2)
    assert (tree.low, tree.high) == pytest.approx((fast.low, fast.high), abs=1e-12)
