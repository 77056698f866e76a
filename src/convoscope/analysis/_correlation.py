"""Correlation between two raters' (or a metric's and people's) scores on the same items.

Pairs where either value is missing (NaN or None) are dropped. At least three complete pairs
are needed: with two points every correlation is +1 or -1, which says nothing. A constant input
has no ranking and no variance, so its correlation is undefined and raises a ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np
from scipy import special

from convoscope.analysis._validate import (
    as_array,
    as_numbers,
    check_same_length,
    complete_pairs,
    missing_mask,
    snap,
)

Method = Literal["pearson", "spearman", "kendall"]
Alternative = Literal["two-sided", "less", "greater"]
MIN_PAIRS = 3


class CorrelationTest(NamedTuple):
    """A correlation with its p-value and the number of complete pairs it used."""

    statistic: float
    pvalue: float
    n: int


def _pairs(name: str, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = complete_pairs(x, y, name=name, minimum=MIN_PAIRS)
    for label, values in (("x", xs), ("y", ys)):
        if values.min() == values.max():
            raise ValueError(f"{name}: {label} is constant (every item is {values[0]:g}), so the "
                             "correlation is undefined")
    return xs, ys


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties sharing their average rank (scipy's rankdata "average", without its
    generality and about twice as fast, which matters inside Spearman and the AUC)."""
    values = snap(values)
    order = np.argsort(values)
    ordered = values[order]
    is_start = np.empty(len(values), dtype=bool)
    is_start[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=is_start[1:])
    starts = np.flatnonzero(is_start)
    sizes = np.diff(np.append(starts, len(values)))
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(starts + (sizes + 1) / 2, sizes)
    return ranks


def _pearson_core(xs: np.ndarray, ys: np.ndarray) -> float:
    dx, dy = xs - xs.mean(), ys - ys.mean()
    # einsum's own loop, not BLAS: a BLAS dot starts threads that only cost time at these sizes.
    r = float(np.einsum("i,i->", dx, dy) / np.sqrt(np.einsum("i,i->", dx, dx) * np.einsum("i,i->", dy, dy)))
    return max(-1.0, min(1.0, r))


def pearson(x: Any, y: Any) -> float:
    """Pearson's linear correlation r of the complete pairs.

    >>> pearson([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    """
    return _pearson_core(*_pairs("pearson", x, y))


def spearman(x: Any, y: Any) -> float:
    """Spearman's rank correlation rho (Pearson's r of average ranks, so ties are handled).

    >>> spearman([1, 2, 3, 4], [10, 30, 20, 40])
    0.8
    """
    xs, ys = _pairs("spearman", x, y)
    return _pearson_core(average_ranks(xs), average_ranks(ys))


def kendall(x: Any, y: Any) -> float:
    """Kendall's tau-b, which corrects for ties in either input.

    >>> round(kendall([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.6667
    """
    xs, ys = _pairs("kendall", x, y)
    from scipy import stats  # scipy.stats takes seconds to import; only Kendall needs it

    return float(stats.kendalltau(snap(xs), snap(ys), variant="b").statistic)


def _pvalue(cdf: float, sf: float, alternative: Alternative) -> float:
    if alternative == "greater":
        return float(sf)
    if alternative == "less":
        return float(cdf)
    if alternative != "two-sided":
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    return float(min(1.0, 2.0 * min(cdf, sf)))


def pearson_test(x: Any, y: Any, *, alternative: Alternative = "two-sided") -> CorrelationTest:
    """Pearson's r with the p-value of the exact test of zero correlation for normal data, as
    scipy's pearsonr (r follows a beta distribution on [-1, 1] with both shapes n/2 - 1).

    >>> r, p, n = pearson_test([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    >>> round(r, 3), round(p, 3), n
    (0.8, 0.104, 5)
    """
    xs, ys = _pairs("pearson", x, y)
    r, n = _pearson_core(xs, ys), len(xs)
    shape, position = n / 2 - 1, (r + 1) / 2
    # scipy.special directly: the same functions as scipy.stats.beta without its per-call overhead.
    pvalue = _pvalue(special.betainc(shape, shape, position), special.betaincc(shape, shape, position),
                     alternative)
    return CorrelationTest(r, pvalue, n)


def spearman_test(x: Any, y: Any, *, alternative: Alternative = "two-sided") -> CorrelationTest:
    """Spearman's rho with the p-value of the t approximation on n - 2 degrees of freedom, as
    scipy's spearmanr.

    >>> round(spearman_test([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], alternative="greater").pvalue, 4)
    0.052
    """
    xs, ys = _pairs("spearman", x, y)
    rho, n = _pearson_core(average_ranks(xs), average_ranks(ys)), len(xs)
    if abs(rho) == 1.0:  # a perfect ranking: t is infinite
        t = float(np.copysign(np.inf, rho))
    else:
        t = rho * float(np.sqrt((n - 2) / ((rho + 1.0) * (1.0 - rho))))
    return CorrelationTest(rho, _pvalue(special.stdtr(n - 2, t), special.stdtr(n - 2, -t), alternative), n)


def kendall_test(x: Any, y: Any, *, alternative: Alternative = "two-sided") -> CorrelationTest:
    """Kendall's tau-b with scipy's p-value (exact for small samples without ties, otherwise
    the normal approximation with tie correction).

    >>> round(kendall_test([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]).statistic, 4)
    0.6
    """
    xs, ys = _pairs("kendall", x, y)
    from scipy import stats

    result = stats.kendalltau(snap(xs), snap(ys), variant="b", alternative=alternative)
    return CorrelationTest(float(result.statistic), float(result.pvalue), len(xs))


CORRELATIONS: dict[str, Callable[[Any, Any], float]] = {
    "pearson": pearson, "spearman": spearman, "kendall": kendall,
}
_TESTS: dict[str, Callable[..., CorrelationTest]] = {
    "pearson": pearson_test, "spearman": spearman_test, "kendall": kendall_test,
}


def system_correlation(x: Any, y: Any, systems: Any, *, method: Method = "spearman") -> CorrelationTest:
    """System-level correlation: average ``x`` and ``y`` per system, then correlate the means.

    Only items scored in both ``x`` and ``y`` count, so both means cover the same items. Items
    with no system are skipped. ``n`` in the result is the number of systems (at least three).

    >>> systems = ["a", "a", "b", "c", "d"]
    >>> system_correlation([1, 2, 5, 6, 9], [1, 3, 4, 6, 8], systems, method="kendall").statistic
    1.0
    """
    if method not in _TESTS:
        raise ValueError(f"system_correlation: method must be one of {sorted(_TESTS)}, got {method!r}")
    xs = as_numbers(x, name="system_correlation: x")
    ys = as_numbers(y, name="system_correlation: y")
    labels = as_array(systems, name="system_correlation: systems", ndim=1)
    check_same_length(xs, ys, labels, name="system_correlation")
    keep = ~(np.isnan(xs) | np.isnan(ys) | missing_mask(labels))
    names, index = np.unique(labels[keep].astype(str), return_inverse=True)
    if len(names) < MIN_PAIRS:
        raise ValueError(f"system_correlation: needs at least {MIN_PAIRS} systems with scored items, "
                         f"got {len(names)}")
    counts = np.bincount(index, minlength=len(names))
    mean_x = np.bincount(index, weights=xs[keep], minlength=len(names)) / counts
    mean_y = np.bincount(index, weights=ys[keep], minlength=len(names)) / counts
    return _TESTS[method](mean_x, mean_y)
