"""Is judge A closer to people than judge B? Tests for two correlations that share the human
scores (dependent, overlapping correlations), and a paired permutation test.

Both judges are correlated with the same human scores on the same items, so their correlations
are not independent: a test for independent samples would be far too conservative. Williams'
t (Williams, 1959; recommended by Steiger, 1980, and used for machine-translation metrics by
Graham and Baldwin, 2014) and Steiger's Z (Steiger, 1980, eq. 14 with the pooled correlation)
take the correlation between the two judges into account. Spearman's rho is tested as Pearson's
r of the ranks, as is usual; Kendall's tau has no such test here (use the permutation test or
:func:`paired_bootstrap_diff`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np
from scipy import special

from convoscope.analysis._correlation import MIN_PAIRS, _pearson_core, average_ranks
from convoscope.analysis._validate import as_numbers, check_same_length

Method = Literal["pearson", "spearman"]


class DependentCorrelationTest(NamedTuple):
    """``r_a`` and ``r_b``: each judge's correlation with the reference; ``r_ab``: between the
    judges. ``statistic`` is t (Williams, n - 3 degrees of freedom) or Z (Steiger)."""

    r_a: float
    r_b: float
    r_ab: float
    statistic: float
    pvalue: float
    n: int


def _three(y_true: Any, y_pred_a: Any, y_pred_b: Any, method: Method,
           name: str) -> tuple[float, float, float, int]:
    if method not in ("pearson", "spearman"):
        raise ValueError(f"{name}: method must be 'pearson' or 'spearman', got {method!r}")
    truth = as_numbers(y_true, name=f"{name}: y_true")
    a = as_numbers(y_pred_a, name=f"{name}: y_pred_a")
    b = as_numbers(y_pred_b, name=f"{name}: y_pred_b")
    check_same_length(truth, a, b, name=name)
    keep = ~(np.isnan(truth) | np.isnan(a) | np.isnan(b))
    n = int(keep.sum())
    if n < MIN_PAIRS + 1:
        raise ValueError(f"{name}: needs at least {MIN_PAIRS + 1} items scored by all three, got {n}")
    columns = [truth[keep], a[keep], b[keep]]
    for label, values in zip(("y_true", "y_pred_a", "y_pred_b"), columns, strict=True):
        if values.min() == values.max():
            raise ValueError(f"{name}: {label} is constant, so its correlation is undefined")
    if method == "spearman":
        columns = [average_ranks(values) for values in columns]
    truth_values, a_values, b_values = columns
    return (_pearson_core(truth_values, a_values), _pearson_core(truth_values, b_values),
            _pearson_core(a_values, b_values), n)


def williams_t(r_a: float, r_b: float, r_ab: float, n: int) -> tuple[float, float]:
    """Williams' t and its two-sided p-value from the three correlations and the item count.

    >>> t, p = williams_t(0.4, 0.5, 0.1, 103)
    >>> round(t, 2), round(p, 2)  # R psych::r.test(103, .4, .5, .1): t = -0.89, p = .37
    (-0.89, 0.37)
    """
    if n < 4:
        raise ValueError(f"williams_t: needs at least 4 items, got {n}")
    determinant = 1 - r_a**2 - r_b**2 - r_ab**2 + 2 * r_a * r_b * r_ab
    mean = (r_a + r_b) / 2
    denominator = 2 * (n - 1) / (n - 3) * determinant + mean**2 * (1 - r_ab) ** 3
    if denominator <= 0:
        return (0.0, 1.0) if r_a == r_b else (math.copysign(math.inf, r_a - r_b), 0.0)
    t = (r_a - r_b) * math.sqrt((n - 1) * (1 + r_ab) / denominator)
    return t, float(2 * special.stdtr(n - 3, -abs(t)))


def williams_test(y_true: Any, y_pred_a: Any, y_pred_b: Any, *,
                  method: Method = "pearson") -> DependentCorrelationTest:
    """Does judge A correlate with ``y_true`` differently from judge B? Williams' t test for two
    dependent correlations sharing ``y_true``, two-sided. Items missing any value are dropped.

    >>> truth = [1, 2, 3, 4, 5, 6, 7, 8]
    >>> result = williams_test(truth, [1, 3, 2, 4, 6, 5, 8, 7], [3, 1, 4, 2, 8, 5, 7, 6])
    >>> round(result.r_a, 3), round(result.r_b, 3), round(result.pvalue, 3)
    (0.929, 0.714, 0.143)
    """
    r_a, r_b, r_ab, n = _three(y_true, y_pred_a, y_pred_b, method, "williams_test")
    t, pvalue = williams_t(r_a, r_b, r_ab, n)
    return DependentCorrelationTest(r_a, r_b, r_ab, t, pvalue, n)


def steiger_test(y_true: Any, y_pred_a: Any, y_pred_b: Any, *,
                 method: Method = "pearson") -> DependentCorrelationTest:
    """Steiger's (1980) Z test for two dependent correlations sharing ``y_true``: Fisher z of
    each correlation, with their covariance from the pooled correlation. Two-sided.

    >>> truth = [1, 2, 3, 4, 5, 6, 7, 8]
    >>> round(steiger_test(truth, [1, 3, 2, 4, 6, 5, 8, 7], [3, 1, 4, 2, 8, 5, 7, 6]).pvalue, 3)
    0.12
    """
    r_a, r_b, r_ab, n = _three(y_true, y_pred_a, y_pred_b, method, "steiger_test")
    z, pvalue = steiger_z(r_a, r_b, r_ab, n)
    return DependentCorrelationTest(r_a, r_b, r_ab, z, pvalue, n)


def steiger_z(r_a: float, r_b: float, r_ab: float, n: int) -> tuple[float, float]:
    """Steiger's Z (1980, eq. 14, pooled correlation) and its two-sided p-value.

    >>> z, p = steiger_z(0.4, 0.5, 0.1, 103)  # the case of R psych::r.test's documentation
    >>> round(z, 3), round(p, 3)
    (-0.889, 0.374)
    """
    if n < 4:
        raise ValueError(f"steiger_z: needs at least 4 items, got {n}")
    mean = (r_a + r_b) / 2
    psi = r_ab * (1 - 2 * mean**2) - 0.5 * mean**2 * (1 - 2 * mean**2 - r_ab**2)
    covariance = psi / (1 - mean**2) ** 2
    spread = 2 - 2 * covariance
    clipped = [min(max(r, -0.999999999), 0.999999999) for r in (r_a, r_b)]
    if spread <= 0:
        return (0.0, 1.0) if r_a == r_b else (math.copysign(math.inf, r_a - r_b), 0.0)
    z = (math.atanh(clipped[0]) - math.atanh(clipped[1])) * math.sqrt(n - 3) / math.sqrt(spread)
    return z, float(2 * special.ndtr(-abs(z)))


class PermutationResult(NamedTuple):
    difference: float  # statistic(y_true, a) - statistic(y_true, b)
    pvalue: float
    n_resamples: int


def permutation_test(statistic: Callable[[Any, Any], float], y_true: Any, y_pred_a: Any,
                     y_pred_b: Any, *, n_resamples: int = 2000, seed: int | None = 0) -> PermutationResult:
    """Paired permutation test of ``statistic(y_true, a) - statistic(y_true, b)``: under the null
    hypothesis the two judges are exchangeable on each item, so their scores are swapped item
    by item at random (scipy's ``permutation_test`` with ``permutation_type='samples'``).
    Works for any statistic, Kendall's tau and F1 included; Spearman and Pearson run all
    permutations at once. Two-sided.

    >>> from convoscope.analysis import spearman
    >>> truth = list(range(12))
    >>> near = [0, 2, 1, 3, 5, 4, 6, 8, 7, 9, 11, 10]
    >>> far = [5, 1, 9, 0, 11, 3, 2, 10, 4, 8, 6, 7]
    >>> permutation_test(spearman, truth, near, far, n_resamples=499).pvalue < 0.05
    True
    """
    truth = np.asarray(as_numbers(y_true, name="permutation_test: y_true"))
    a = as_numbers(y_pred_a, name="permutation_test: y_pred_a")
    b = as_numbers(y_pred_b, name="permutation_test: y_pred_b")
    check_same_length(truth, a, b, name="permutation_test")
    keep = ~(np.isnan(truth) | np.isnan(a) | np.isnan(b))
    truth, a, b = truth[keep], a[keep], b[keep]

    def difference(first: np.ndarray, second: np.ndarray) -> float:
        try:
            return float(statistic(truth, first)) - float(statistic(truth, second))
        except ValueError:
            return float("nan")

    observed = difference(a, b)
    if math.isnan(observed):
        raise ValueError("permutation_test: the statistic is undefined on the observed data")
    from scipy import stats  # imported when used: scipy.stats is slow to import

    batched = _batched_difference(statistic, truth)
    result = stats.permutation_test((a, b), batched or difference, permutation_type="samples",
                                    vectorized=batched is not None, n_resamples=n_resamples,
                                    alternative="two-sided", rng=np.random.default_rng(seed))
    return PermutationResult(observed, float(result.pvalue), n_resamples)


def _batched_difference(statistic: Any, truth: np.ndarray) -> Callable[..., np.ndarray] | None:
    """For Spearman and Pearson, the statistic over a whole batch of permutations at once (rows
    along the last axis); the same numbers as the item-by-item path, much faster."""
    from convoscope.analysis._correlation import pearson, spearman
    from convoscope.analysis._system import _row_correlations

    if statistic not in (spearman, pearson):
        return None
    method = "spearman" if statistic is spearman else "pearson"

    def batched(first: np.ndarray, second: np.ndarray, axis: int = -1) -> np.ndarray:
        first, second = np.moveaxis(first, axis, -1), np.moveaxis(second, axis, -1)
        shape = first.shape[:-1]
        rows_a, rows_b = first.reshape(-1, first.shape[-1]), second.reshape(-1, second.shape[-1])
        target = np.broadcast_to(truth, rows_a.shape)
        found = _row_correlations(rows_a, target, method) - _row_correlations(rows_b, target, method)
        return found.reshape(shape)

    return batched
