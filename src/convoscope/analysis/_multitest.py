"""Many comparisons: adjusted p-values for a family of tests (a judge x criterion table).

A table that marks significance for every judge on every criterion runs one test per cell; at
alpha = .05 about one cell in twenty is marked by chance. Each table names the family and the
correction it applied:

- ``holm``: Holm (1979) step-down, controls the family-wise error rate (the default);
- ``bh``: Benjamini–Hochberg (1995), controls the false discovery rate under independence or
  positive dependence;
- ``by``: Benjamini–Yekutieli (2001), the false discovery rate under any dependence (the
  alternative annotator test uses it);
- ``none``: the raw p-values.

The adjusted p-values equal ``statsmodels.stats.multitest.multipletests`` (methods ``holm``,
``fdr_bh``, ``fdr_by``); tests pin them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Correction = Literal["holm", "bh", "by", "none"]
CORRECTIONS = ("holm", "bh", "by", "none")
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg", "by": "Benjamini–Yekutieli",
                    "none": "no correction"}


def adjust_pvalues(pvalues: Sequence[float], *, method: Correction = "holm") -> np.ndarray:
    """Adjusted p-values of a family of tests, in the input order (NaN stays NaN and is not
    counted in the family).

    >>> adjust_pvalues([0.01, 0.04, 0.03], method="holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], method="bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise ValueError(f"adjust_pvalues: method must be one of {CORRECTIONS}, got {method!r}")
    values = np.asarray(pvalues, dtype=float).reshape(-1)
    if np.any((values < 0) | (values > 1)):
        raise ValueError("adjust_pvalues: p-values must lie in [0, 1]")
    out = values.copy()
    present = ~np.isnan(values)
    if method == "none" or not present.any():
        return out
    out[present] = _adjusted(values[present], method)
    return out


def _adjusted(p: np.ndarray, method: str) -> np.ndarray:
    m = len(p)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        steps = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        factor = np.sum(1.0 / np.arange(1, m + 1)) if method == "by" else 1.0
        steps = np.minimum.accumulate((ranked * m * factor / np.arange(1, m + 1))[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(steps, 1.0)
    return adjusted


def reject(pvalues: Sequence[float], *, alpha: float = 0.05, method: Correction = "holm",
           inclusive: bool = False) -> np.ndarray:
    """Which tests of the family are significant after the correction: adjusted p < ``alpha``
    (``<=`` with ``inclusive``, as step-up procedures are often stated); False for NaN."""
    adjusted = adjust_pvalues(pvalues, method=method)
    passed = adjusted <= alpha if inclusive else adjusted < alpha
    return np.where(np.isnan(adjusted), False, passed)


def permutations_for(requested: int, n_tests: int, alpha: float) -> int:
    """Permutations enough for a corrected p over ``n_tests`` tests to reach ``alpha``.

    A permutation p-value is never below 1/(B + 1) (2/(B + 1) two-sided); Holm or Bonferroni
    multiply the smallest by the number of tests, so with B = 1,000 a table of more than ~25
    tests cannot reach .05 whatever the data. B grows so that the floor, multiplied by
    ``n_tests``, is at most half of ``alpha``: B + 1 ≥ 4 n_tests / alpha. Never fewer than
    ``requested``; 0 (no permutation test) stays 0.

    >>> permutations_for(1000, 10, 0.05), permutations_for(1000, 30, 0.05)
    (1000, 2399)
    """
    if requested <= 0 or n_tests <= 0:
        return requested
    return max(requested, int(np.ceil(4 * n_tests / alpha)) - 1)


def pvalue_floor(permutations: int, n_tests: int) -> float:
    """The smallest corrected two-sided permutation p a family of ``n_tests`` can show."""
    return min(1.0, n_tests * 2 / (permutations + 1))
