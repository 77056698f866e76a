"""Krippendorff's alpha and its interval on continuous ratings (every value distinct).

Observed: at the interval level on ~1,000 items with continuous ratings, every distinct value
became a category and the interval built a values x values coincidence matrix per resampled
pattern (119 GiB for 991 items of 5 raters). Interval and ratio alpha now come from per-item sums,
ordinal alpha from mid-positions and nominal from value counts, so the test runs the real size
under a 512 MiB address-space limit. Values are pinned to the ``krippendorff`` package, and a
reweighted resample to alpha recomputed on the resampled items."""

import subprocess
import sys
import textwrap

import krippendorff
import numpy as np
import pytest

from convoscope.analysis import krippendorff_alpha, krippendorff_alpha_ci
from convoscope.analysis._agreement_ci import _alpha_rows, _draws, _patterns
from convoscope.analysis._bootstrap import _interval
from convoscope.analysis._krippendorff import nominal_alpha_rows, numeric_alpha_rows, ordinal_alpha_rows
from convoscope.analysis._validate import category_codes


def _continuous(raters, items, seed, missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.gamma(4.0, size=items)  # positive, so the ratio level applies too
    matrix = truth * np.exp(rng.normal(scale=0.3, size=(raters, items)))
    matrix[rng.random(matrix.shape) < missing] = np.nan
    return matrix


def test_the_interval_of_continuous_ratings_on_a_thousand_items_fits_in_half_a_gigabyte():
    script = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
        import numpy as np
        from convoscope.analysis import krippendorff_alpha_ci
        rng = np.random.default_rng(0)
        matrix = rng.gamma(4.0, size=1000) * np.exp(rng.normal(scale=0.3, size=(5, 1000)))
        matrix[rng.random(matrix.shape) < 0.2] = np.nan
        for level in ("interval", "ratio", "ordinal", "nominal"):
            result = krippendorff_alpha_ci(matrix, level=level, n_resamples=100)
            # nominal: every rating its own label, alpha near 0, its interval need not straddle it
            inside = result.low < result.estimate < result.high
            print(level, result.low < result.high and (level == "nominal" or inside))
    """)
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["interval", "True", "ratio", "True", "ordinal", "True", "nominal", "True"]


@pytest.mark.parametrize("level", ["interval", "ratio", "ordinal"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_on_continuous_ratings_with_missing_ones_equals_the_krippendorff_package(level, seed):
    matrix = _continuous(4, 40, seed)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert krippendorff_alpha(matrix, level=level) == pytest.approx(expected, abs=1e-12, rel=0)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_alpha_on_a_whole_number_scale_with_missing_ratings_equals_the_krippendorff_package(level):
    rng = np.random.default_rng(8)
    matrix = np.clip(rng.integers(1, 6, 30) + rng.integers(-1, 2, (5, 30)), 1, 5).astype(float)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert krippendorff_alpha(matrix, level=level) == pytest.approx(expected, abs=1e-12, rel=0)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_a_reweighted_resample_equals_alpha_recomputed_on_the_resampled_items(level):
    matrix = _continuous(3, 60, seed=4)
    values = matrix.T[(~np.isnan(matrix)).sum(axis=0) >= 2]
    rng = np.random.default_rng(5)
    for _ in range(10):
        drawn = rng.integers(0, len(values), len(values))
        weight = np.bincount(drawn, minlength=len(values)).astype(float)[None, :]
        recomputed = krippendorff_alpha(values[drawn].T, level=level)
        assert numeric_alpha_rows(weight, values, level)[0] == pytest.approx(recomputed, abs=1e-12, rel=0)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_the_interval_equals_the_quantiles_of_alpha_recomputed_on_the_same_resamples(level):
    matrix = _continuous(3, 50, seed=6)
    result = krippendorff_alpha_ci(matrix, level=level, n_resamples=60, seed=9)
    codes, categories = category_codes(matrix, name="test", ndim=2)
    keep = (codes >= 0).sum(axis=0) >= 2
    patterns, counts = _patterns(codes, keep)
    values = np.where(patterns >= 0, np.asarray(categories)[patterns.clip(0)], np.nan)
    draws = _draws(counts, 60, 9)[1:].astype(int)
    recomputed = np.array([krippendorff_alpha(np.repeat(values, draw, axis=0).T, level=level)
                           for draw in draws])
    expected = _interval(result.estimate, recomputed, 0.95, n_items=int(keep.sum()), name="test")
    assert (result.low, result.high) == pytest.approx((expected.low, expected.high), abs=1e-12, rel=0)


def _five_point_resamples(seed):
    """6 raters x 200 items on a 1-5 scale, 20 % missing: (categories, rating patterns of the
    items rated twice or more, 100 resample weights of those patterns)."""
    rng = np.random.default_rng(seed)
    matrix = np.clip(rng.integers(1, 6, 200) + rng.integers(-1, 2, (6, 200)), 1, 5).astype(float)
    matrix[rng.random(matrix.shape) < 0.2] = np.nan
    codes, categories = category_codes(matrix, name="test", ndim=2)
    patterns, counts = _patterns(codes, (codes >= 0).sum(axis=0) >= 2)
    return categories, patterns, _draws(counts, 100, 3)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_on_a_five_point_scale_the_resamples_match_the_coincidence_matrix_they_replace(level):
    categories, patterns, draws = _five_point_resamples(seed=2)
    values = np.where(patterns >= 0, np.asarray(categories)[patterns.clip(0)], np.nan)
    np.testing.assert_allclose(numeric_alpha_rows(draws, values, level),
                               _alpha_rows(draws, patterns, categories, level), rtol=0, atol=1e-12)


def test_numeric_levels_still_refuse_text_and_values_outside_the_labels():
    with pytest.raises(ValueError, match="interval level needs numeric ratings"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], level="interval")
    with pytest.raises(ValueError, match="not in labels"):
        krippendorff_alpha([[1, 2, 7], [1, 2, 3]], level="ratio", labels=[1, 2, 3])
    with pytest.raises(ValueError, match="alpha is undefined"):
        krippendorff_alpha([[2.5, 2.5], [2.5, 2.5]], level="interval")
    with pytest.raises(ValueError, match="no item has ratings from two"):
        krippendorff_alpha([[1.5, np.nan], [np.nan, 2.5]], level="interval")



def _rows_by_counts(level, weights, values):
    """ordinal_/nominal_alpha_rows on items x raters ``values`` (NaN missing), coded as the interval does."""
    codes, categories = category_codes(values.T, name="test", ndim=2)
    function = ordinal_alpha_rows if level == "ordinal" else nominal_alpha_rows
    return function(weights, codes.T, len(categories))


@pytest.mark.parametrize("level", ["ordinal", "nominal"])
def test_a_resample_of_continuous_ratings_by_value_counts_equals_alpha_recomputed_on_the_items(level):
    matrix = _continuous(4, 60, seed=10)
    if level == "nominal":  # a few repeated labels, so that some pairs agree
        matrix = np.round(matrix)
    values = matrix.T[(~np.isnan(matrix)).sum(axis=0) >= 2]
    rng = np.random.default_rng(11)
    drawn = rng.integers(0, len(values), (10, len(values)))
    weights = np.stack([np.bincount(row, minlength=len(values)) for row in drawn]).astype(float)
    recomputed = [krippendorff.alpha(reliability_data=values[row].T, level_of_measurement=level)
                  for row in drawn]
    np.testing.assert_allclose(_rows_by_counts(level, weights, values), recomputed, rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", ["ordinal", "nominal"])
def test_on_a_five_point_scale_the_value_counts_match_the_coincidence_matrices(level):
    categories, patterns, draws = _five_point_resamples(seed=12)
    function = ordinal_alpha_rows if level == "ordinal" else nominal_alpha_rows
    np.testing.assert_allclose(function(draws, patterns, len(categories)),
                               _alpha_rows(draws, patterns, categories, level), rtol=0, atol=1e-12)
