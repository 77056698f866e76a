"""Percentile bootstrap confidence intervals, resampling items.

Items are drawn with replacement, the same draw for every input array (a 1-D array is one value
per item; a 2-D array is raters x items and its columns are drawn). Items missing a value in any
1-D input are removed first, so every resample has the same number of complete items.

:func:`pearson`, :func:`spearman` and :func:`kendall` (tau-b) take a vectorised path; any other
statistic is called once per resample. Resamples on which the statistic is undefined are left out
of the percentiles, counted in ``n_undefined`` and reported by a RuntimeWarning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from convoscope.analysis._correlation import kendall, pearson, spearman
from convoscope.analysis._resample import (
    Batch,
    index_chunks,
    kendall_batch,
    pearson_batch,
    spearman_batch,
)
from convoscope.analysis._validate import as_array, check_same_length, missing_mask, snap

Statistic = Callable[..., float]
_BATCHES: dict[Callable[..., float], Callable[[np.ndarray, np.ndarray], Batch | None]] = {
    pearson: pearson_batch, spearman: spearman_batch, kendall: kendall_batch,
}
_UNDEFINED = (ValueError, ZeroDivisionError, FloatingPointError)


@dataclass(frozen=True)
class BootstrapResult:
    """A point estimate on all items and its percentile confidence interval.

    ``n_undefined`` counts resamples on which the statistic was undefined (for instance every
    drawn item had the same human score); they are left out of the percentiles.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n_items: int
    n_resamples: int
    n_undefined: int = 0

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def bootstrap_ci(
    statistic: Statistic,
    *arrays: Any,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> BootstrapResult:
    """Confidence interval of ``statistic(*arrays)`` by the percentile bootstrap over items.

    >>> result = bootstrap_ci(spearman, [1, 2, 3, 4, 5, 6, 7, 8], [1, 3, 2, 4, 6, 5, 8, 7], n_resamples=200)
    >>> round(result.estimate, 3), result.n_resamples
    (0.929, 200)

    The same seed gives the same interval.
    """
    _check_options(n_resamples, confidence)
    data = _prepare(arrays, name="bootstrap_ci")
    estimate = float(statistic(*data))
    replicates = _replicates(statistic, data, n_resamples, seed)
    return _interval(estimate, replicates, confidence, n_items=data[0].shape[-1], name="bootstrap_ci")


def paired_bootstrap_diff(
    statistic: Statistic,
    human: Any,
    metric_a: Any,
    metric_b: Any,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> BootstrapResult:
    """Interval of ``statistic(human, metric_a) - statistic(human, metric_b)``, both computed on
    the same resampled items, so the shared noise of the human scores cancels.

    If the interval excludes 0, metric A's agreement with people differs from metric B's at
    that confidence (the test of seed 000, appendix C.2). Items missing in any input are dropped.

    >>> human, close, far = [1, 2, 3, 4, 5, 6], [1, 2, 3, 5, 4, 6], [6, 1, 5, 2, 4, 3]
    >>> round(paired_bootstrap_diff(kendall, human, close, far, n_resamples=200).estimate, 3)
    1.067
    """
    _check_options(n_resamples, confidence)
    human_values, a_values, b_values = _prepare((human, metric_a, metric_b), name="paired_bootstrap_diff")
    estimate = float(statistic(human_values, a_values)) - float(statistic(human_values, b_values))
    replicates_a = _replicates(statistic, (human_values, a_values), n_resamples, seed)
    replicates_b = _replicates(statistic, (human_values, b_values), n_resamples, seed)
    return _interval(estimate, replicates_a - replicates_b, confidence,
                     n_items=len(human_values), name="paired_bootstrap_diff")


def _check_options(n_resamples: int, confidence: float) -> None:
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise ValueError(f"bootstrap: n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"bootstrap: confidence must be between 0 and 1, got {confidence!r}")


def _prepare(arrays: tuple[Any, ...], *, name: str) -> tuple[np.ndarray, ...]:
    if not arrays:
        raise ValueError(f"{name}: give at least one array")
    data = tuple(as_array(array, name=f"{name}: input {i + 1}", ndim=np.ndim(array))
                 for i, array in enumerate(arrays))
    if any(array.ndim not in (1, 2) for array in data):
        raise ValueError(f"{name}: inputs must be 1-D (one value per item) or 2-D (raters x items)")
    check_same_length(*data, name=name)
    keep = np.ones(data[0].shape[-1], dtype=bool)
    for array in data:
        if array.ndim == 1:
            keep &= ~missing_mask(array)
    if not keep.any():
        raise ValueError(f"{name}: no item has a value in every input")
    return tuple(snap(array[..., keep]) if array.dtype.kind == "f" else array[..., keep] for array in data)


def _replicates(statistic: Statistic, data: tuple[np.ndarray, ...], n_resamples: int,
                seed: int | None) -> np.ndarray:
    n_items = data[0].shape[-1]
    batch = None
    maker = _BATCHES.get(statistic)
    if maker is not None and len(data) == 2 and all(a.ndim == 1 and a.dtype != object for a in data):
        batch = maker(*data)
    chunks = index_chunks(n_items, n_resamples, seed)
    if batch is not None:
        return np.concatenate([batch(indices) for indices in chunks])
    return np.concatenate([_loop(statistic, data, indices) for indices in chunks])


def _loop(statistic: Statistic, data: tuple[np.ndarray, ...], indices: np.ndarray) -> np.ndarray:
    values = np.empty(len(indices))
    for row, index in enumerate(indices):
        try:
            values[row] = statistic(*(array[..., index] for array in data))
        except _UNDEFINED:
            values[row] = np.nan
    return values


def _interval(estimate: float, replicates: np.ndarray, confidence: float, *, n_items: int,
              name: str) -> BootstrapResult:
    defined = replicates[np.isfinite(replicates)]
    undefined = len(replicates) - len(defined)
    if len(defined) < len(replicates) / 2:
        raise ValueError(f"{name}: the statistic was undefined on {undefined} of {len(replicates)} "
                         "resamples; too few items or too little variation for an interval")
    if undefined:
        warnings.warn(f"{name}: the statistic was undefined on {undefined} of {len(replicates)} resamples "
                      "(e.g. a resample drew a constant input); the interval uses the other "
                      f"{len(defined)}", RuntimeWarning, stacklevel=3)
    tail = (1 - confidence) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return BootstrapResult(estimate=estimate, low=float(low), high=float(high), confidence=confidence,
                           n_items=n_items, n_resamples=len(replicates), n_undefined=undefined)
