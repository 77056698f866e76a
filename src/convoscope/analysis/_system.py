"""System-level views: rank systems rather than items.

A metric that ranks dialogue systems the way people do is useful even when its item-level
correlation is modest, so papers report both. The system-level correlation averages each side
per system and correlates the means (:func:`system_correlation`); its interval resamples systems
and items by default (:func:`system_bootstrap_ci`): resampling items alone keeps every system
and says nothing about other systems (issue 25 saw, on 8 systems, [.58, .97] items only and
[.25, .99] both).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from convoscope.analysis._bootstrap import BootstrapResult
from convoscope.analysis._correlation import CORRELATIONS, MIN_PAIRS, Method
from convoscope.analysis._system_level import Resample
from convoscope.analysis._validate import snap


def system_bootstrap_ci(x: Any, y: Any, systems: Any, *, method: Method = "pearson",
                        resample: Resample = "both", inputs: Any = None, n_resamples: int = 1000,
                        confidence: float = 0.95, seed: int | None = 0) -> BootstrapResult:
    """System-level correlation with a percentile interval from resampling systems and items
    (``resample="both"``, Deutsch et al. 2021), systems only, or items only (within systems, or
    shared ``inputs`` together): see :mod:`convoscope.analysis._system_level`.

    >>> x = [1, 2, 2, 3, 5, 4, 6, 7, 7, 8, 9, 9, 4, 4, 5, 2, 1, 2]
    >>> y = [1, 1, 2, 2, 4, 5, 7, 6, 8, 9, 8, 9, 3, 5, 4, 1, 2, 2]
    >>> result = system_bootstrap_ci(x, y, list("aaabbbcccdddeeefff"), n_resamples=200)
    >>> round(result.estimate, 3), result.n_items
    (0.997, 6)
    """
    from convoscope.analysis._system_level import system_level_ci

    if method not in CORRELATIONS:
        raise ValueError(f"system_bootstrap_ci: method must be one of {sorted(CORRELATIONS)}, got {method!r}")
    return system_level_ci(x, y, systems, method=method, resample=resample, inputs=inputs,
                           n_resamples=n_resamples, confidence=confidence, seed=seed)


def _row_correlations(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """The correlation of each row pair (NaN where a row is constant)."""
    x, y = snap(x), snap(y)
    if method == "kendall":
        return np.array([_defined(CORRELATIONS["kendall"], a, b) for a, b in zip(x, y, strict=True)])
    if method == "spearman":
        from scipy import stats  # imported when used: scipy.stats is slow to import

        x, y = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _defined(statistic: Any, a: np.ndarray, b: np.ndarray) -> float:
    try:
        return float(statistic(a, b))
    except ValueError:
        return float("nan")


def run_agreement(run_a: Any, run_b: Any, *, method: Method = "pearson") -> float:
    """Correlation of two runs' system scores (dicts system -> score) over the systems both
    have: the self-replication figure of Ji et al. (2022), r = .969 on their free-topic runs.

    >>> run_agreement({"A": 0.1, "B": 0.4, "C": -0.2, "D": 0.3}, {"A": 0.2, "B": 0.3, "C": -0.1, "E": 1})
    0.9607689228305227
    """
    shared = sorted(set(run_a) & set(run_b))
    if len(shared) < MIN_PAIRS:
        raise ValueError(f"run_agreement: the runs share {len(shared)} system(s); need {MIN_PAIRS}")
    return CORRELATIONS[method]([run_a[s] for s in shared], [run_b[s] for s in shared])


def system_means(ratings: Any, *, criteria: Any = None, exclude: Any = ()) -> dict[str, float]:
    """Mean score per system over the ratings (anything with ``system`` and ``value``, e.g.
    :class:`Rating` or Verdict), optionally only ``criteria``, leaving out ``exclude`` systems.
    A rating without a system or a value is skipped.

    >>> from convoscope.analysis import Rating
    >>> system_means([Rating("1", "q", "h", 2.0, system="A"), Rating("2", "q", "h", 4.0, system="A")])
    {'A': 3.0}
    """
    wanted = None if criteria is None else set(criteria)
    totals: dict[str, list[float]] = {}
    for rating in ratings:
        system, value = getattr(rating, "system", None), rating.value
        if system is None or system in exclude or not isinstance(value, int | float):
            continue
        if wanted is not None and rating.criterion not in wanted:
            continue
        totals.setdefault(system, []).append(float(value))
    if not totals:
        raise ValueError("system_means: no rating has both a system and a numeric value")
    return {system: float(np.mean(values)) for system, values in sorted(totals.items())}
