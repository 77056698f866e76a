"""Every rater pair's contingency table on the items both rated, from one matrix product.

With R raters on a scale of C values, the one-hot ratings X (items x R·C, all zero where a
rating is missing) give X^T X: block (i, j) counts the items on which rater i said c and rater
j said d. Missing ratings drop out by themselves, so this is the table of the items both rated.
Cohen's kappa and Spearman's rho of a pair are functions of that table alone (Spearman's ranks
of a discrete scale are each value's average position), so the pairwise means `agree` prints
cost one product instead of a pass over the items per pair (4,950 of them at 100 raters).
"""

from __future__ import annotations

import numpy as np

# Beyond this many rater-values the table of tables (its square, in float64) grows past ~70 MB;
# the callers then go pair by pair as before.
MAX_RATER_VALUES = 3000


def pair_tables(codes: np.ndarray, size: int) -> np.ndarray | None:
    """raters x raters x size x size counts from a raters x items matrix of codes (-1 missing),
    or None when there are too many raters and values for one product."""
    raters, items = codes.shape
    if raters * size > MAX_RATER_VALUES or size == 0:
        return None
    one_hot = np.zeros((items, raters * size))
    rated = codes >= 0
    rater_index, item_index = np.nonzero(rated)
    one_hot[item_index, rater_index * size + codes[rated]] = 1.0
    product = one_hot.T @ one_hot  # whole counts, exact in float64
    return product.reshape(raters, size, raters, size).transpose(0, 2, 1, 3)


def spearman_from_table(table: np.ndarray) -> float | None:
    """Spearman's rho of a size x size table of two raters' ordered values (rows: the first
    rater's values in ascending order), or None when undefined (fewer than three items, or
    either rater constant). Ties share their average rank, as scipy's spearmanr does."""
    n = float(table.sum())
    first, second = table.sum(axis=1), table.sum(axis=0)
    if n < 3 or np.count_nonzero(first) < 2 or np.count_nonzero(second) < 2:
        return None
    middle = (n + 1) / 2
    rank_first = np.cumsum(first) - first + (first + 1) / 2 - middle
    rank_second = np.cumsum(second) - second + (second + 1) / 2 - middle
    covariance = rank_first @ table @ rank_second
    spread = np.sqrt((first @ rank_first**2) * (second @ rank_second**2))
    return max(-1.0, min(1.0, float(covariance / spread)))
