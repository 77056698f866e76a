"""Which systems does a system-level correlation rest on?

Two questions, kept apart:

- *Is a system off the trend?* The Bonferroni outlier test (Cook and Weisberg 1982): regress
  people's system means on the judge's, take each system's externally studentized residual
  (the line fitted without it), and flag it when its two-sided p (t with n − 3 degrees of
  freedom) times the number of systems is below ``alpha``. A system that is best (or worst) for
  both the judge and people lies on the trend and is not flagged for being best — the old screen
  on the means alone (:func:`outlier_systems`) did that. Pinned to statsmodels'
  ``OLSResults.outlier_test(method="bonf")``.
- *How much does the figure lean on one system?* Leave-one-system-out influence (Deutsch et al.
  2021 ask the same of system-level correlations): the correlation without each system in
  turn; the card and the console show the lowest beside the main figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

MIN_FOR_OUTLIER_TEST = 4  # n − 3 degrees of freedom: at least one


@dataclass(frozen=True)
class Influence:
    """``outliers``: systems off the trend (Bonferroni outlier test at ``alpha``), with
    ``pearson_without_outliers``; ``weakest``: the system whose removal lowers Pearson r most,
    and r without it."""

    outliers: tuple[str, ...]
    pearson_without_outliers: float | None
    weakest: tuple[str, float] | None


def bonferroni_outliers(judge_means: Mapping[str, float], human_means: Mapping[str, float], *,
                        alpha: float = 0.05) -> tuple[str, ...]:
    """Systems whose people's mean lies off the line the other systems follow (see module)."""
    names = sorted(judge_means)
    n = len(names)
    if n < MIN_FOR_OUTLIER_TEST:
        return ()
    x = np.array([judge_means[name] for name in names], dtype=float)
    y = np.array([human_means[name] for name in names], dtype=float)
    if np.ptp(x) == 0:
        return ()
    design = np.column_stack([np.ones(n), x])
    hat = np.diag(design @ np.linalg.pinv(design.T @ design) @ design.T)
    residual = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    sse = float(residual @ residual)
    df = n - 3
    found = []
    for i, name in enumerate(names):
        if hat[i] >= 1 - 1e-12:
            continue
        deleted = (sse - residual[i] ** 2 / (1 - hat[i])) / df  # residual variance without system i
        if deleted <= 0:
            continue
        t = residual[i] / np.sqrt(deleted * (1 - hat[i]))
        if min(1.0, 2 * stats.t.sf(abs(t), df) * n) < alpha:
            found.append(name)
    return tuple(found)


def influence(judge_means: Mapping[str, float], human_means: Mapping[str, float], *,
              alpha: float = 0.05) -> Influence:
    """The outlier test and the leave-one-system-out Pearson r (module docstring)."""
    names = sorted(judge_means)
    flagged = bonferroni_outliers(judge_means, human_means, alpha=alpha)
    rest = [name for name in names if name not in flagged]
    without = _pearson(rest, judge_means, human_means) if flagged else None
    dropped = [(name, _pearson([n for n in names if n != name], judge_means, human_means)) for name in names]
    defined = [(name, r) for name, r in dropped if r is not None]
    weakest = min(defined, key=lambda pair: pair[1]) if len(names) >= MIN_FOR_OUTLIER_TEST and defined \
        else None
    return Influence(flagged, without, weakest)


def _pearson(names: list[str], x: Mapping[str, float], y: Mapping[str, float]) -> float | None:
    if len(names) < 3:
        return None
    a, b = np.array([x[n] for n in names]), np.array([y[n] for n in names])
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])
